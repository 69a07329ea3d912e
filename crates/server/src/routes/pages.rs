//! `/api/pages/*`: the door by which a browser page offers function tools to replies (seed
//! 001's `registerFunctionTool`, from plugin code) and answers the engine's requests.
//!
//! A page opens `GET /api/pages/events?chat=ID` (SSE) and keeps it open: the first event is
//! `page` `{id, toolCalling}`; then each `request` event `{id, method, params}` asks it to run
//! something (`tool.call` with `{name, arguments, chatId, timeoutMs}`: the page bounds its own
//! wait by `timeoutMs`, the server's time-out), answered by
//! `POST /api/pages/{page}/answers/{request}` `{ok: true, result}` or `{ok: false, error}`.
//! `PUT /api/pages/{page}/tools` replaces the tools the page registered; `PUT
//! /api/pages/{page}/chat` says which chat it shows. Closing the stream detaches the page: its
//! tools leave the registry and the calls it had open fail at once (`unavailable`).

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use futures_util::stream;
use serde::Deserialize;
use serde_json::{Value, json};
use tavo_engine::pages::{PageError, PageToolSpec};
use tavo_model::ChatId;

use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::sse;
use crate::state::AppState;

/// `?chat=`.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
pub struct ChatQuery {
    /// The chat the page shows.
    pub chat: Option<i64>,
}

/// `{tools: [...]}`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct ToolsBody {
    /// `[{name, displayName?, description, parameters, stealth?}]`.
    #[schema(value_type = Vec<Object>)]
    pub tools: Vec<PageToolSpecBody>,
}

/// One tool (seed 001's registration fields that leave the page).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PageToolSpecBody {
    name: String,
    #[serde(default)]
    display_name: Option<String>,
    #[serde(default)]
    description: String,
    #[serde(default)]
    parameters: Value,
    #[serde(default)]
    stealth: bool,
}

/// `{chat}`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct ChatBody {
    /// The chat the page shows now (null: none).
    pub chat: Option<i64>,
}

/// An answer.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct AnswerBody {
    /// Whether the request succeeded.
    pub ok: bool,
    /// The result (a tool's: a string, or anything, JSON-serialised for the model).
    #[serde(default)]
    pub result: Value,
    /// Why it failed (a string, or `{message}`).
    #[serde(default)]
    pub error: Value,
}

fn gone(e: PageError) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "resource_not_found",
        format!("{e}; open the event stream again"),
    )
}

/// The page's event stream: `page`, then `request` events.
#[utoipa::path(get, path = "/api/pages/events", tag = "pages", params(ChatQuery),
    responses((status = 200, description = "text/event-stream: `page` `{id, toolCalling}`, then `request` `{id, method, params}`", content_type = "text/event-stream")))]
pub async fn events(
    State(state): State<AppState>,
    Query(q): Query<ChatQuery>,
) -> ApiResult<Response> {
    let tool_calling = tool_calling_on(&state).await?;
    let link = state.pages.attach(q.chat.map(ChatId));
    let first = sse::json_frame(
        None,
        "page",
        &json!({"id": link.id, "toolCalling": tool_calling}),
    );
    // The link lives as long as the stream: a client that goes away drops it, which detaches
    // the page (its calls fail, its tools go).
    let frames = stream::unfold((Some(first), link), |(first, mut link)| async move {
        if let Some(f) = first {
            return Some((f, (None, link)));
        }
        let req = link.requests.recv().await?;
        Some((sse::json_frame(None, "request", &req), (None, link)))
    });
    Ok(sse::response(frames, state.shutdown.clone()))
}

/// What a page's `isToolCallingSupported()` answers (the engine's rule).
async fn tool_calling_on(state: &AppState) -> ApiResult<bool> {
    state
        .blocking_api(|s| {
            tavo_engine::connections::tool_calling_supported(s)
                .map_err(|e| ApiError::internal("reading the tool settings and connections", e))
        })
        .await
}

/// `{toolCalling}`: whether pages' function tools can be offered now (what
/// `isToolCallingSupported()` says). The app asks again when a setting or a connection changes,
/// so a page's answer follows Settings without a reload.
#[utoipa::path(get, path = "/api/pages/tool-calling", tag = "pages",
    responses((status = 200, description = "`{toolCalling}`", body = Object)))]
pub async fn tool_calling(State(state): State<AppState>) -> ApiResult<Json<Value>> {
    let on = tool_calling_on(&state).await?;
    Ok(Json(json!({ "toolCalling": on })))
}

/// Replaces the tools the page registered; answers per tool `{name, registered, error?}`.
#[utoipa::path(put, path = "/api/pages/{page}/tools", tag = "pages", params(("page" = String, Path, description = "page id")),
    request_body = ToolsBody,
    responses((status = 200, description = "`{tools: [{name, registered, error?}]}`", body = Object),
              (status = 404, description = "the page is not attached", body = ErrorBody)))]
pub async fn set_tools(
    State(state): State<AppState>,
    Path(page): Path<String>,
    Json(body): Json<ToolsBody>,
) -> ApiResult<Json<Value>> {
    let specs = body
        .tools
        .into_iter()
        .map(|t| PageToolSpec {
            name: t.name,
            display_name: t.display_name,
            description: t.description,
            parameters: t.parameters,
            stealth: t.stealth,
        })
        .collect();
    let results = state.pages.set_tools(&page, specs).map_err(gone)?;
    let tools: Vec<Value> = results
        .into_iter()
        .map(|(name, err)| match err {
            None => json!({"name": name, "registered": true}),
            Some(e) => json!({"name": name, "registered": false, "error": e}),
        })
        .collect();
    Ok(Json(json!({"tools": tools})))
}

/// Records the chat the page shows.
#[utoipa::path(put, path = "/api/pages/{page}/chat", tag = "pages", params(("page" = String, Path, description = "page id")),
    request_body = ChatBody,
    responses((status = 204, description = "recorded"), (status = 404, description = "the page is not attached", body = ErrorBody)))]
pub async fn set_chat(
    State(state): State<AppState>,
    Path(page): Path<String>,
    Json(body): Json<ChatBody>,
) -> ApiResult<StatusCode> {
    state
        .pages
        .set_chat(&page, body.chat.map(ChatId))
        .map_err(gone)?;
    Ok(StatusCode::NO_CONTENT)
}

/// Answers one request.
#[utoipa::path(post, path = "/api/pages/{page}/answers/{request}", tag = "pages",
    params(("page" = String, Path, description = "page id"), ("request" = String, Path, description = "request id")),
    request_body = AnswerBody,
    responses((status = 204, description = "delivered"), (status = 410, description = "nobody waits for it any more (timed out)", body = ErrorBody),
              (status = 404, description = "the page is not attached", body = ErrorBody)))]
pub async fn answer(
    State(state): State<AppState>,
    Path((page, request)): Path<(String, String)>,
    Json(body): Json<AnswerBody>,
) -> ApiResult<StatusCode> {
    let result = if body.ok {
        Ok(body.result)
    } else {
        Err(PageError::Failed(match body.error {
            Value::String(s) => s,
            Value::Object(o) => o
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("the page reported an error")
                .to_owned(),
            _ => "the page reported an error".to_owned(),
        }))
    };
    if state.pages.answer(&page, &request, result).map_err(gone)? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::new(
            StatusCode::GONE,
            "cancelled",
            format!("request {request} is no longer awaited (it timed out or its reply ended)"),
        ))
    }
}
