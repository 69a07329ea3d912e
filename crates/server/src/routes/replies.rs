//! Replies: start one, read its status, cancel it, answer what it waits for.
//!
//! A reply runs in the engine, not in the request: these routes answer as soon as the reply
//! has started (202) and the page follows it on `GET /api/replies/{id}/events`. Closing the
//! page, switching chats or losing the connection changes nothing for the reply.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};
use tavo_engine::send::{Attachment, Outgoing, Sent};
use tavo_engine::{EngineError, GenerationKind, ReplyKind, ReplyRequest, RespondError, Response};
use tavo_model::{CharacterId, ChatId};
use tavo_tools::{ToolError, UserAnswer};

use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::replies::describe;
use crate::state::AppState;
use tavo_engine::status::stored_record;

/// Maps a start failure onto the API's errors.
pub fn engine_error(e: EngineError) -> ApiError {
    match e {
        EngineError::ChatNotFound(_) | EngineError::NoSuchReply(_) => {
            ApiError::not_found(e.to_string())
        }
        EngineError::Busy(chat, ref reply) => {
            ApiError::new(StatusCode::CONFLICT, "busy", e.to_string())
                .with_details(json!({ "chatId": chat, "replyId": reply }))
        }
        EngineError::BusyElsewhere {
            chat,
            ref reply,
            pid,
        } => ApiError::new(StatusCode::CONFLICT, "busy", e.to_string())
            .with_details(json!({ "chatId": chat, "replyId": reply, "pid": pid })),
        EngineError::Operation(op) => op.into(),
        EngineError::NothingToContinue(_)
        | EngineError::NoMessage
        | EngineError::Connection(_)
        | EngineError::Prompt(_) => ApiError::bad_request(e.to_string()),
        EngineError::Store(s) => s.into(),
        EngineError::Provider(_) => {
            ApiError::new(StatusCode::BAD_GATEWAY, "provider_error", e.to_string())
        }
        EngineError::Registry(_) | EngineError::Internal(_) | EngineError::Pool(_) => {
            ApiError::internal("starting the reply", e)
        }
    }
}

fn respond_error(e: RespondError) -> ApiError {
    match e {
        RespondError::NotPending(_) | RespondError::Ended => {
            ApiError::new(StatusCode::CONFLICT, "not_pending", e.to_string())
        }
        RespondError::WrongKind(..) | RespondError::Invalid(_) => {
            ApiError::bad_request(e.to_string())
        }
    }
}

/// The user's message.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewMessage {
    /// The text.
    pub content: String,
    /// Connection name; the default connection when absent.
    #[serde(default)]
    pub connection: Option<String>,
    /// Group chats: the member (character id) who answers, instead of the chat's reply mode.
    #[serde(default)]
    pub speaker: Option<i64>,
    /// An image the message carries: a file saved first (`files/chat/NAME` or
    /// `files/global/NAME`); with it `content` may be empty.
    #[serde(default)]
    pub image: Option<String>,
}

/// Appends the user's message to a chat and starts a normal reply to it. Answers
/// `{"messageId", "replyId"}` at once; follow the reply on its event stream.
#[utoipa::path(post, path = "/api/chats/{id}/messages", tag = "replies",
    params(("id" = i64, Path)),
    request_body = NewMessage,
    responses((status = 202, description = "`{messageId, replyId}`", body = Object),
              (status = 400, description = "Empty message, or no usable connection", body = ErrorBody),
              (status = 404, description = "No such chat", body = ErrorBody),
              (status = 201, description = "`/imagine <prompt>`: the image message, `{messageId, path, mimeType, size, content, prompt}` (no reply)", body = Object),
              (status = 409, description = "The chat already has a live reply (`busy`)", body = ErrorBody)))]
pub async fn send_message(
    State(state): State<AppState>,
    Path(chat): Path<ChatId>,
    Json(body): Json<NewMessage>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    // The engine's one send: `/imagine`, the empty-send refusal and the attachment are its
    // rules, the same as `tavo chat`'s, `tavo reply`'s and `tavo_input_send`'s. It stores the
    // message as it starts the reply, in the same trip to the library; should the reply not
    // start (no connection configured), nothing is written.
    let out = Outgoing {
        chat,
        text: Some(body.content),
        image: body
            .image
            .filter(|i| !i.trim().is_empty())
            .map(Attachment::Stored),
        connection: body.connection,
        speaker: body.speaker,
    };
    match state.replies.send(out).await.map_err(send_error)? {
        Sent::Imagined(done) => Ok((StatusCode::CREATED, Json(imagined(&done)?))),
        Sent::Reply { handle, .. } => Ok((
            StatusCode::ACCEPTED,
            Json(json!({ "messageId": handle.user_message_id(), "replyId": handle.id() })),
        )),
    }
}

/// A send's failure: an image provider's is a bad gateway, as on the /imagine route.
fn send_error(e: EngineError) -> ApiError {
    match e {
        EngineError::Operation(op) => crate::routes::images::image_error(op),
        e => engine_error(e),
    }
}

/// The answer of a send that made an image.
fn imagined(done: &tavo_engine::image::Imagined) -> ApiResult<Value> {
    serde_json::to_value(done).map_err(|e| ApiError::internal("answering /imagine", e))
}

/// What kind of reply to start.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewReply {
    /// normal, regenerate, swipe, continue, impersonate or quiet.
    #[serde(rename = "type")]
    #[schema(value_type = String)]
    pub kind: GenerationKind,
    /// A normal reply's user message, sent as the composer sends it (`/imagine <prompt>`
    /// included); the other types take none.
    #[serde(default)]
    pub message: Option<String>,
    /// Connection name; the default connection when absent.
    #[serde(default)]
    pub connection: Option<String>,
    /// Group chats: the member (character id) who answers, muted or not, instead of the
    /// chat's reply mode (normal and regenerate replies; the other types take none).
    #[serde(default)]
    pub speaker: Option<i64>,
}

/// The engine's request from the wire body: `type` and what that kind takes, refused with the
/// field's path when the body gives a kind something it does not take (`message` for anything
/// but a normal reply, `speaker` for anything but normal and regenerate). A normal reply's
/// `message` is sent as the composer sends it (`Some`), through the engine's one send.
fn reply_kind(body: &NewReply) -> Result<(ReplyKind, Option<String>), ApiError> {
    let mut kind = ReplyKind::plain(body.kind);
    let message = match (&kind, &body.message) {
        (_, None) => None,
        (ReplyKind::Normal { .. }, Some(m)) => Some(m.clone()),
        (_, Some(_)) => {
            return Err(ToolError::invalid_at(
                "message",
                "no message (only a normal reply sends one)",
                "string",
            )
            .into());
        }
    };
    if let Some(speaker) = body.speaker {
        kind = kind.with_speaker(CharacterId(speaker), "speaker")?;
    }
    Ok((kind, message))
}

/// Starts a reply of a given type in a chat.
#[utoipa::path(post, path = "/api/chats/{id}/replies", tag = "replies",
    params(("id" = i64, Path)),
    request_body = NewReply,
    responses((status = 202, description = "`{replyId, chatId}` (and `messageId` when a message was sent)", body = Object),
              (status = 201, description = "A normal reply's `message` was `/imagine <prompt>`: the image message (no reply)", body = Object),
              (status = 400, description = "Nothing to continue, no usable connection, or a field the type does not take (`message`, `speaker`; `details.path` names it)", body = ErrorBody),
              (status = 404, description = "No such chat", body = ErrorBody),
              (status = 409, description = "The chat already has a live reply (`busy`)", body = ErrorBody)))]
pub async fn start(
    State(state): State<AppState>,
    Path(chat): Path<ChatId>,
    Json(body): Json<NewReply>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let (kind, message) = reply_kind(&body)?;
    if let Some(text) = message {
        // A normal reply with a message is a send, as the composer's route.
        let out = Outgoing {
            chat,
            text: Some(text),
            image: None,
            connection: body.connection,
            speaker: body.speaker,
        };
        return match state.replies.send(out).await.map_err(send_error)? {
            Sent::Imagined(done) => Ok((StatusCode::CREATED, Json(imagined(&done)?))),
            Sent::Reply { handle, .. } => Ok((
                StatusCode::ACCEPTED,
                Json(
                    json!({ "replyId": handle.id(), "chatId": chat, "messageId": handle.user_message_id() }),
                ),
            )),
        };
    }
    let request = ReplyRequest {
        connection: body.connection,
        ..ReplyRequest::new(chat, kind)
    };
    let handle = start_reply(&state, request).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({ "replyId": handle.id(), "chatId": chat })),
    ))
}

/// Starts a reply off the executor: `start` reads settings and writes what must exist before
/// the prompt is built (a regenerate removes the answer it replaces).
async fn start_reply(
    state: &AppState,
    request: ReplyRequest,
) -> ApiResult<tavo_engine::ReplyHandle> {
    let replies = state.replies.clone();
    state
        .off_executor(move || replies.start(request))
        .await?
        .map_err(engine_error)
}

/// Every live reply (a badge per chat).
#[utoipa::path(get, path = "/api/replies", tag = "replies",
    responses((status = 200, description = "`[{replyId, chatId, status, pending}]`", body = Object)))]
pub async fn live(State(state): State<AppState>) -> Json<Vec<Value>> {
    Json(state.replies.live().iter().map(describe).collect())
}

/// One reply: `{replyId, chatId, status, pending}` — `pending` is what a waiting reply waits
/// for (a confirmation or a question) with the `pendingId` to answer it.
#[utoipa::path(get, path = "/api/replies/{id}", tag = "replies",
    params(("id" = String, Path)),
    responses((status = 200, description = "The reply", body = Object),
              (status = 404, description = "No such reply", body = ErrorBody)))]
pub async fn get(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult<Json<Value>> {
    if let Some(handle) = state.replies.find(&id) {
        return Ok(Json(describe(&handle)));
    }
    let shown = id.clone();
    let record = state
        .blocking(move |s| stored_record(s, &id))
        .await?
        .ok_or_else(|| ApiError::not_found(format!("there is no reply with id {shown}")))?;
    Ok(Json(json!({
        "replyId": record.id,
        "chatId": record.chat_id,
        "status": record.status.as_str(),
        "messageId": record.message_id,
        "pending": null,
    })))
}

/// A reply in this process, or the record of one another replica runs (a shared database).
enum Found {
    Here(tavo_engine::ReplyHandle),
    Elsewhere(tavo_engine::ReplyRecord),
}

async fn find_anywhere(state: &AppState, id: &str) -> ApiResult<Found> {
    if let Some(h) = state.replies.find(id) {
        return Ok(Found::Here(h));
    }
    if state.replies.engine().replica_id().is_some() {
        let owned = id.to_owned();
        let located = state
            .blocking(move |s| tavo_engine::cluster::locate(s, &owned))
            .await?;
        if let Some(tavo_engine::cluster::Elsewhere::Live(record)) = located {
            return Ok(Found::Elsewhere(record));
        }
    }
    Err(ApiError::not_found(format!(
        "there is no live reply with id {id}"
    )))
}

/// What a door answers about a reply another replica runs: its stored state, and which
/// replica has it.
fn describe_elsewhere(record: &tavo_engine::ReplyRecord) -> Value {
    json!({
        "replyId": record.id,
        "chatId": record.chat_id,
        "status": record.status.as_str(),
        "messageId": record.message_id,
        "pending": null,
        "replica": record.replica,
    })
}

/// Relays an answer to the replica that runs the reply.
async fn respond_elsewhere(
    state: &AppState,
    record: &tavo_engine::ReplyRecord,
    pending_id: u64,
    response: Response,
) -> ApiResult<(StatusCode, Json<Value>)> {
    state
        .replies
        .engine()
        .respond_elsewhere(tavo_engine::cluster::Answer {
            reply_id: record.id.clone(),
            pending_id,
            response,
        })
        .await
        .map_err(engine_error)?;
    Ok((StatusCode::ACCEPTED, Json(describe_elsewhere(record))))
}

/// Cancels a reply (also while it waits). Idempotent.
#[utoipa::path(post, path = "/api/replies/{id}/cancel", tag = "replies",
    params(("id" = String, Path)),
    responses((status = 202, description = "Cancellation asked; the stream ends with `finished`", body = Object),
              (status = 404, description = "No such reply in memory", body = ErrorBody)))]
pub async fn cancel(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    match find_anywhere(&state, &id).await? {
        Found::Here(handle) => {
            handle.cancel();
            Ok((StatusCode::ACCEPTED, Json(describe(&handle))))
        }
        Found::Elsewhere(record) => {
            state
                .replies
                .engine()
                .cancel_elsewhere(&record.id)
                .await
                .map_err(engine_error)?;
            Ok((StatusCode::ACCEPTED, Json(describe_elsewhere(&record))))
        }
    }
}

/// A decision on a confirmation.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Decision {
    /// The `pendingId` of the `waiting` event.
    pub pending_id: u64,
    /// `allow` or `deny`.
    pub decision: AllowDeny,
    /// Remember the choice for this tool in this chat.
    #[serde(default)]
    pub remember: bool,
}

/// Allow or deny.
#[derive(Debug, Clone, Copy, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum AllowDeny {
    /// Run the call.
    Allow,
    /// Refuse it (the model receives `permission_denied`).
    Deny,
}

/// Allows or denies the call a reply waits on.
#[utoipa::path(post, path = "/api/replies/{id}/confirm", tag = "replies",
    params(("id" = String, Path)),
    request_body = Decision,
    responses((status = 202, description = "The reply goes on", body = Object),
              (status = 400, description = "The pending interaction is a question", body = ErrorBody),
              (status = 404, description = "No such reply in memory", body = ErrorBody),
              (status = 409, description = "Nothing waits under that pendingId", body = ErrorBody)))]
pub async fn confirm(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Json(d): Json<Decision>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let response = match d.decision {
        AllowDeny::Allow => Response::Approve {
            remember: d.remember,
        },
        AllowDeny::Deny => Response::Deny {
            remember: d.remember,
        },
    };
    let handle = match find_anywhere(&state, &id).await? {
        Found::Here(handle) => handle,
        Found::Elsewhere(record) => {
            return respond_elsewhere(&state, &record, d.pending_id, response).await;
        }
    };
    handle
        .respond(d.pending_id, response)
        .map_err(respond_error)?;
    Ok((StatusCode::ACCEPTED, Json(describe(&handle))))
}

/// An answer to `tavo_ask_user`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Answer {
    /// The `pendingId` of the `waiting` event.
    pub pending_id: u64,
    /// `{"kind":"option","value"}`, `{"kind":"custom","text"}` or `{"kind":"cancelled"}`.
    #[schema(value_type = Object)]
    pub answer: UserAnswer,
}

/// Answers the question a reply waits on. An answer the question does not allow is refused
/// (400) and the reply keeps waiting.
#[utoipa::path(post, path = "/api/replies/{id}/answer", tag = "replies",
    params(("id" = String, Path)),
    request_body = Answer,
    responses((status = 202, description = "The reply goes on", body = Object),
              (status = 400, description = "Not an allowed answer, or the interaction is a confirmation", body = ErrorBody),
              (status = 404, description = "No such reply in memory", body = ErrorBody),
              (status = 409, description = "Nothing waits under that pendingId", body = ErrorBody)))]
pub async fn answer(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Json(a): Json<Answer>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let handle = match find_anywhere(&state, &id).await? {
        Found::Here(handle) => handle,
        Found::Elsewhere(record) => {
            let response = Response::Answer { answer: a.answer };
            return respond_elsewhere(&state, &record, a.pending_id, response).await;
        }
    };
    handle
        .respond(a.pending_id, Response::Answer { answer: a.answer })
        .map_err(respond_error)?;
    Ok((StatusCode::ACCEPTED, Json(describe(&handle))))
}

/// The live reply of a chat, if any (its badge).
#[utoipa::path(get, path = "/api/chats/{id}/reply", tag = "replies",
    params(("id" = i64, Path)),
    responses((status = 200, description = "The chat's live reply", body = Object),
              (status = 404, description = "The chat has no live reply", body = ErrorBody)))]
pub async fn chat_reply(
    State(state): State<AppState>,
    Path(chat): Path<ChatId>,
) -> ApiResult<Json<Value>> {
    state
        .replies
        .for_chat(chat)
        .map(|h| Json(describe(&h)))
        .ok_or_else(|| ApiError::not_found(format!("chat {chat} has no live reply")))
}
