//! Routes the browser app needs that the library routes do not give: chats listed with their
//! members, a chat created with its greeting (alternate greetings as swipes, as Tavo's picker
//! offers them), choosing which swipe of a message is shown, and the display copies of
//! messages and card text (macros expanded, the chat's `display` regex rules applied — by the
//! engine's `display` module, so the page holds no macro or regex logic of its own).

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tavo_engine::display::{CardDisplay, DisplayContext, DisplayCopy, card_display};
use tavo_engine::settings::{self, SettingSpec};
use tavo_model::{CharacterId, CharacterSummary, ChatId, Message, MessageId, Role};

use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::state::AppState;

/// Which chats to list.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ChatsQuery {
    /// Only chats this character is a member of.
    pub character: Option<i64>,
}

/// One chat in a listing.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatRow {
    /// Id.
    pub id: i64,
    /// Name.
    pub name: String,
    /// Current revision.
    pub revision: u64,
    /// Members, in order.
    #[schema(value_type = Vec<Object>)]
    pub characters: Vec<CharacterSummary>,
    /// Messages in the chat.
    pub messages: u64,
    /// RFC 3339.
    pub updated_at: String,
}

/// Chats with their members and message counts, most recently changed first.
#[utoipa::path(get, path = "/api/chats", tag = "chats",
    params(ChatsQuery),
    responses((status = 200, description = "The chats", body = [ChatRow])))]
pub async fn list_chats(
    State(state): State<AppState>,
    Query(q): Query<ChatsQuery>,
) -> ApiResult<Json<Vec<ChatRow>>> {
    let rows = state
        .blocking_api(move |s| Ok(tavo_tools::reads::chats(s, q.character.map(CharacterId))?))
        .await?
        .into_iter()
        .map(|row| ChatRow {
            id: row.summary.id,
            name: row.summary.name,
            revision: row.summary.revision,
            characters: row.chat.characters,
            messages: row.messages,
            updated_at: row.summary.updated_at,
        })
        .collect();
    Ok(Json(rows))
}

/// Creates a chat as `tavo chat create` and `tavo_chat_create` do — all three call
/// `tavo_tools::chats::create_chat`: every binding checked in one transaction, the members'
/// own lorebooks and regex groups bound, the first character's greeting (macro-expanded) as
/// message 0 with the other greetings as its swipes. The body is that function's `NewChat`
/// (`characters` required; `persona`, `preset`, `lorebooks`, `regexes`, `background`,
/// `cardBindings`, `greeting`, `name` optional). Answers `{id, revision, greeting}`.
#[utoipa::path(post, path = "/api/chats", tag = "chats",
    request_body(content = Object, description = "`{characters, persona?, preset?, lorebooks?, regexes?, name?, background?, cardBindings?, greeting?}`"),
    responses((status = 201, description = "`{id, revision, greeting}`", body = Object),
              (status = 400, description = "No characters, or an invalid field (named by its path)", body = ErrorBody),
              (status = 404, description = "A member or a bound asset does not exist", body = ErrorBody)))]
pub async fn create_chat(
    State(state): State<AppState>,
    Json(body): Json<tavo_tools::chats::NewChat>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let created = state
        .blocking_api(move |s| Ok(tavo_tools::chats::create_chat(s, body)?))
        .await?;
    state.hub.library("chat", "created", Some(created.id.0));
    let revision = created.chat.get("revision").cloned().unwrap_or(json!(1));
    Ok((
        StatusCode::CREATED,
        Json(json!({
            "id": created.id.0,
            "revision": revision,
            "greeting": created.greeting.map(|m| m.0),
        })),
    ))
}

/// The swipe to show.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SwipeChoice {
    /// 0-based index into the message's swipes.
    pub index: u64,
}

/// Shows another swipe of a message: the text shown now is kept in its slot (so an edit is
/// not lost), then the chosen swipe becomes the message's content. Answers the message.
#[utoipa::path(put, path = "/api/chats/{id}/messages/{message}/swipe", tag = "chats",
    params(("id" = i64, Path), ("message" = i64, Path)),
    request_body = SwipeChoice,
    responses((status = 200, description = "The message", body = Object),
              (status = 400, description = "No such swipe", body = ErrorBody),
              (status = 404, description = "No such message in this chat", body = ErrorBody)))]
pub async fn choose_swipe(
    State(state): State<AppState>,
    Path((chat, message)): Path<(i64, i64)>,
    Json(choice): Json<SwipeChoice>,
) -> ApiResult<Json<Message>> {
    if state.replies.for_chat(ChatId(chat)).is_some() {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "busy",
            "the chat has a live reply; wait for it or stop it first",
        ));
    }
    let updated = state
        .blocking_api(move |s| {
            Ok(tavo_tools::messages::choose_swipe(
                s,
                ChatId(chat),
                MessageId(message),
                choice.index,
            )?)
        })
        .await?;
    state.hub.library("message", "updated", Some(message));
    Ok(Json(updated))
}

/// Which page of a chat to show.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ViewQuery {
    /// Messages per page (1–500, default 50).
    pub limit: Option<u64>,
    /// Only messages before this floor (exclusive); absent: the latest page.
    pub before: Option<u64>,
}

/// A stored message with the copy the user sees.
#[derive(Debug, Serialize)]
pub struct ViewMessage {
    /// The message as stored (edit this).
    #[serde(flatten)]
    pub message: Message,
    /// What is shown: macros expanded, `display`/`sendAndDisplay` regex rules applied.
    pub display: DisplayCopy,
}

/// A page of messages as shown, oldest first.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ViewPage {
    /// The messages, oldest first, each with its `display` copy.
    #[schema(value_type = Vec<Object>)]
    pub messages: Vec<ViewMessage>,
    /// Messages in the chat.
    pub total: u64,
    /// Whether older messages exist (request `before` = the first floor of this page).
    pub has_more: bool,
    /// Enabled `display`/`sendAndDisplay` rules bound to the chat: when 0, a reply still
    /// streaming looks the same shown as stored, and needs no `POST …/display`.
    pub display_rules: usize,
}

/// A page of a chat's messages as `GET /api/chats/{id}/messages` gives it, each message with
/// its display copy (`display: {content, reasoning}`), read with the rules in one snapshot.
/// Depth for `minDepth`/`maxDepth` is counted from the chat's newest message (0).
#[utoipa::path(get, path = "/api/chats/{id}/view", tag = "chats",
    params(("id" = i64, Path), ViewQuery),
    responses((status = 200, description = "The page", body = ViewPage),
              (status = 400, description = "limit out of range", body = ErrorBody),
              (status = 404, description = "No such chat", body = ErrorBody)))]
pub async fn view_page(
    State(state): State<AppState>,
    Path(id): Path<i64>,
    Query(q): Query<ViewQuery>,
) -> ApiResult<Json<ViewPage>> {
    let limit = q.limit.unwrap_or(50);
    if !(1..=500).contains(&limit) {
        return Err(ApiError::bad_request("limit must be 1..=500"));
    }
    let chat = ChatId(id);
    // One trip off the executor: the page and its rules read in one snapshot, then the rules
    // run in the JavaScript engine on the same blocking thread.
    let page = state
        .blocking_api(move |s| {
            let (page, context) = DisplayContext::with_page(s, chat, q.before, limit)?
                .ok_or_else(|| ApiError::not_found(format!("chat {id} does not exist")))?;
            let (total, start) = (page.total, page.start);
            let messages = page
                .messages
                .into_iter()
                .enumerate()
                .map(|(i, message)| {
                    let floor = message.floor.unwrap_or(start + i as u64);
                    let depth = total.saturating_sub(floor + 1) as i64;
                    let display = context.message(&message, depth);
                    ViewMessage { message, display }
                })
                .collect();
            Ok(ViewPage {
                messages,
                total,
                has_more: start > 0,
                display_rules: context.display_rules(),
            })
        })
        .await?;
    Ok(Json(page))
}

/// A text to show as one of the chat's messages (a reply still streaming).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DisplayRequest {
    /// `assistant` (default), `user` or `system`.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub role: Option<Role>,
    /// The text.
    pub content: String,
    /// The reasoning, if any.
    #[serde(default)]
    pub reasoning: Option<String>,
    /// Who speaks (`{{char}}`); the chat's first member when absent.
    #[serde(default)]
    pub character_id: Option<i64>,
    /// Depth (0 = newest, the default).
    #[serde(default)]
    pub depth: Option<i64>,
    /// Seeds random macros (the message id when it has one).
    #[serde(default)]
    pub message_id: Option<i64>,
}

/// The display copy of a text that is not stored yet — the reply the page is streaming — as
/// `GET /api/chats/{id}/view` would show it once stored. Writes nothing.
#[utoipa::path(post, path = "/api/chats/{id}/display", tag = "chats",
    params(("id" = i64, Path)),
    request_body = DisplayRequest,
    responses((status = 200, description = "`{content, reasoning?}`", body = Object),
              (status = 404, description = "No such chat", body = ErrorBody)))]
pub async fn display_text(
    State(state): State<AppState>,
    Path(id): Path<i64>,
    Json(body): Json<DisplayRequest>,
) -> ApiResult<Json<DisplayCopy>> {
    let copy = state
        .blocking(move |s| {
            let context = DisplayContext::load(s, ChatId(id))?;
            let mut m = Message::new(body.role.unwrap_or(Role::Assistant), body.content);
            m.reasoning = body.reasoning;
            m.character_id = body.character_id.map(CharacterId);
            m.id = body.message_id.map(MessageId);
            Ok(context.message(&m, body.depth.unwrap_or(0).max(0)))
        })
        .await?;
    Ok(Json(copy))
}

/// A character's card text as its page shows it: macros expanded (`{{char}}` = the
/// character, `{{user}}` = the default persona). The card itself is unchanged.
#[utoipa::path(get, path = "/api/characters/{id}/display", tag = "characters",
    params(("id" = i64, Path)),
    responses((status = 200, description = "`{description, personality, scenario, firstMes, alternateGreetings, creatorNotes}`", body = Object),
              (status = 404, description = "No such character", body = ErrorBody)))]
pub async fn character_display(
    State(state): State<AppState>,
    Path(id): Path<i64>,
) -> ApiResult<Json<CardDisplay>> {
    let card = state
        .blocking(move |s| card_display(s, CharacterId(id)))
        .await?;
    Ok(Json(card))
}

/// How to name a cloned chat.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CloneChat {
    /// The copy's name; "<name> (copy)" when absent.
    #[serde(default)]
    pub name: Option<String>,
}

/// Copies a chat with its messages, variables, state, memory and files, as `tavo chat clone`
/// does (both call `tavo_tools::chats::clone_chat`). Answers the copy's `{id}`.
#[utoipa::path(post, path = "/api/chats/{id}/clone", tag = "chats",
    params(("id" = i64, Path)),
    request_body = CloneChat,
    responses((status = 201, description = "`{id}`", body = Object),
              (status = 400, description = "A blank name", body = ErrorBody),
              (status = 404, description = "No such chat", body = ErrorBody)))]
pub async fn clone_chat(
    State(state): State<AppState>,
    Path(id): Path<i64>,
    Json(body): Json<CloneChat>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let copy = state
        .blocking_api(move |s| Ok(tavo_tools::chats::clone_chat(s, ChatId(id), body.name)?))
        .await?;
    state.hub.library("chat", "created", Some(copy.0));
    Ok((StatusCode::CREATED, Json(json!({ "id": copy.0 }))))
}

/// One setting of the catalogue, as the settings screen shows it.
fn setting_row(store: &tavo_store::Store, spec: &SettingSpec) -> ApiResult<Value> {
    let value = settings::get(store, spec.key).map_err(setting_error)?;
    let kind = match spec.kind {
        settings::Kind::Bool => json!({ "type": "bool" }),
        settings::Kind::Int { min, max } => json!({ "type": "int", "min": min, "max": max }),
        settings::Kind::Enum(values) => json!({ "type": "enum", "values": values }),
        settings::Kind::Secret { min_len } => json!({ "type": "secret", "minLength": min_len }),
        settings::Kind::Text { max_len } => json!({ "type": "text", "maxLength": max_len }),
    };
    Ok(json!({ "key": spec.key, "value": value, "kind": kind, "about": spec.about }))
}

fn setting_error(e: settings::SettingError) -> ApiError {
    match e {
        settings::SettingError::Unknown(_) => ApiError::not_found(e.to_string()),
        settings::SettingError::Invalid { .. } => ApiError::bad_request(e.to_string()),
        settings::SettingError::Store(s) => s.into(),
    }
}

/// The settings `tavo settings` knows (`tools.*`, `web.fetchAddresses`), each with its
/// effective value, type and bounds.
#[utoipa::path(get, path = "/api/settings", tag = "settings",
    responses((status = 200, description = "`[{key, value, kind, about}]`", body = Object)))]
pub async fn list_settings(State(state): State<AppState>) -> ApiResult<Json<Vec<Value>>> {
    let rows = state
        .blocking_api(|s| {
            settings::SETTINGS
                .iter()
                .map(|spec| setting_row(s, spec))
                .collect()
        })
        .await?;
    Ok(Json(rows))
}

/// A setting's new value.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SettingValue {
    /// true/false, an integer, or one of the named values.
    #[schema(value_type = Object)]
    pub value: Value,
}

/// Sets one setting, checked against the catalogue as `tavo settings set` checks it.
#[utoipa::path(put, path = "/api/settings/{key}", tag = "settings",
    params(("key" = String, Path)),
    request_body = SettingValue,
    responses((status = 200, description = "`{key, value, kind, about}`", body = Object),
              (status = 400, description = "Not a value this setting takes", body = ErrorBody),
              (status = 404, description = "Unknown setting", body = ErrorBody)))]
pub async fn set_setting(
    State(state): State<AppState>,
    Path(key): Path<String>,
    Json(body): Json<SettingValue>,
) -> ApiResult<Json<Value>> {
    let raw = match &body.value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let shown = key.clone();
    let row = state
        .blocking_api(move |s| {
            settings::set(s, &key, &raw).map_err(setting_error)?;
            let spec = settings::spec(&key)
                .ok_or_else(|| ApiError::not_found(format!("unknown setting {key:?}")))?;
            setting_row(s, spec)
        })
        .await?;
    state.hub.library("setting", "updated", None);
    tracing::debug!(key = %shown, "setting changed");
    Ok(Json(row))
}

/// Sends one tiny request through a connection, as `tavo connection test` does: the latency
/// and the reply, or the provider's error mapped to its kind.
#[utoipa::path(post, path = "/api/connections/{name}/test", tag = "connections",
    params(("name" = String, Path)),
    responses((status = 200, description = "`{ok, connection, latencyMs, reply|error}`", body = Object),
              (status = 404, description = "No such connection", body = ErrorBody)))]
pub async fn test_connection(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> ApiResult<Json<Value>> {
    use tavo_llm::{ChatRequest, Client, Endpoint};
    let book = state
        .blocking_api(|s| tavo_engine::connections::book(s).map_err(super::connections::book_error))
        .await?;
    let c = book
        .pick(Some(&name))
        .map_err(|e| ApiError::not_found(e.to_string()))?
        .clone();
    let mut req = ChatRequest::new(
        c.model.clone(),
        vec![tavo_llm::Message::text(
            tavo_llm::Role::User,
            "Reply with the single word: pong",
        )],
    );
    book.effective_parameters(&c).apply(&mut req);
    req.sampling.max_output_tokens = Some(req.sampling.max_output_tokens.unwrap_or(64).min(64));
    let started = std::time::Instant::now();
    let failure = |kind: Value, message: String, status: Option<u16>| {
        json!({ "ok": false, "connection": c.name, "latencyMs": started.elapsed().as_millis() as u64,
                "error": { "kind": kind, "message": message, "status": status } })
    };
    let endpoint = match c.resolve_key() {
        Ok(api_key) => Endpoint {
            protocol: c.protocol,
            base_url: c.base_url.clone(),
            api_key,
        },
        Err(e) => return Ok(Json(failure(json!("authentication"), e.to_string(), None))),
    };
    let client = Client::with(
        tavo_llm::retry::RetryPolicy::none(),
        tavo_llm::Timeouts {
            headers: std::time::Duration::from_secs(60),
            idle: std::time::Duration::from_secs(60),
            ..tavo_llm::Timeouts::default()
        },
    )
    .map_err(|e| ApiError::internal("the provider client", e.message))?;
    let answer = match client.complete(&endpoint, &req).await {
        Err(e) => failure(json!(e.kind), e.message.clone(), e.status),
        Ok(r) => match r.error.clone() {
            Some((kind, message)) => failure(json!(kind), message, None),
            None => json!({ "ok": true, "connection": c.name,
                            "latencyMs": started.elapsed().as_millis() as u64,
                            "reply": r.text(), "finish": r.finish, "usage": r.usage }),
        },
    };
    Ok(Json(answer))
}
