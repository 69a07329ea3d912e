//! A chat's long-term memory: `GET|PUT /api/chats/{id}/memory` and "extract now",
//! `POST /api/chats/{id}/memory/extract` — thin doors over `tools::memories` and
//! `Engine::extract_memory` (the same code `tavo memory` runs).

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::Value;
use tavo_engine::memory::MemoryError;
use tavo_model::{ChatId, Memory};

use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::state::AppState;

/// The chat's memory, `{id, enabled, memories}` (created disabled and empty on first read).
#[utoipa::path(get, path = "/api/chats/{id}/memory", tag = "chats",
    params(("id" = i64, Path)),
    responses((status = 200, description = "`{id, enabled, memories}`", body = Object),
              (status = 404, description = "No such chat", body = ErrorBody)))]
pub async fn get(State(state): State<AppState>, Path(id): Path<ChatId>) -> ApiResult<Json<Memory>> {
    let memory = state
        .blocking_api(move |s| Ok(tavo_tools::memories::memory(s, id)?))
        .await?;
    Ok(Json(memory))
}

/// A change to a chat's memory (TavoJS `tavo.memory.update`'s object, or part of it).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MemoryPatch {
    /// Ignored (the memory is the chat's): accepted so the object `GET` gave can be sent back.
    #[serde(default)]
    #[allow(dead_code)]
    pub id: Option<i64>,
    /// Inject memories into prompts.
    #[serde(default)]
    pub enabled: Option<bool>,
    /// The whole new list.
    #[serde(default)]
    pub memories: Option<Vec<String>>,
}

/// Changes `enabled` and/or replaces the list; answers the memory.
#[utoipa::path(put, path = "/api/chats/{id}/memory", tag = "chats",
    params(("id" = i64, Path)),
    request_body = MemoryPatch,
    responses((status = 200, description = "`{id, enabled, memories}`", body = Object),
              (status = 400, description = "An empty memory text", body = ErrorBody),
              (status = 404, description = "No such chat", body = ErrorBody)))]
pub async fn put(
    State(state): State<AppState>,
    Path(id): Path<ChatId>,
    Json(patch): Json<MemoryPatch>,
) -> ApiResult<Json<Memory>> {
    // The write of `tavo memory set` and `tavo_memory_update`: a blank text is refused at
    // `memories[i]`, a missing chat as `resource_not_found`, and nothing is written.
    let memory = state
        .blocking_api(move |s| {
            Ok(tavo_tools::memories::update_memory(
                s,
                id,
                patch.enabled,
                patch.memories.as_deref(),
            )?)
        })
        .await?;
    state.hub.library("chat", "memory", Some(id.get()));
    Ok(Json(memory))
}

/// Options of an extraction.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExtractOptions {
    /// Connection name (default: the `memory.connection` setting, else the default connection).
    #[serde(default)]
    pub connection: Option<String>,
    /// Model instead of the connection's.
    #[serde(default)]
    pub model: Option<String>,
}

fn memory_error(e: MemoryError) -> ApiError {
    let status = match &e {
        MemoryError::ChatNotFound(_) => StatusCode::NOT_FOUND,
        MemoryError::Busy(_) => StatusCode::CONFLICT,
        MemoryError::NoMessages(_) | MemoryError::Connection(_) => StatusCode::BAD_REQUEST,
        MemoryError::Provider(_) => StatusCode::BAD_GATEWAY,
        MemoryError::Store(_) | MemoryError::Internal(_) => {
            return ApiError::internal("the memory extraction", &e);
        }
    };
    ApiError::new(status, e.code(), e.to_string())
}

/// "Extract now": one request on the chat's connection with the extraction prompt; the new
/// memories are appended, de-duplicated against the chat's, without overwriting an edit made
/// meanwhile. Answers `{memory, added, duplicates, messages, mergedWithEdit}`.
#[utoipa::path(post, path = "/api/chats/{id}/memory/extract", tag = "chats",
    params(("id" = i64, Path)),
    request_body(content = ExtractOptions, description = "optional; `{}` or no body for the defaults"),
    responses((status = 200, description = "What the extraction added", body = Object),
              (status = 400, description = "No messages, or no usable connection", body = ErrorBody),
              (status = 404, description = "No such chat", body = ErrorBody),
              (status = 409, description = "An extraction of this chat is running", body = ErrorBody),
              (status = 502, description = "The provider failed", body = ErrorBody)))]
pub async fn extract(
    State(state): State<AppState>,
    Path(id): Path<ChatId>,
    body: Option<Json<ExtractOptions>>,
) -> ApiResult<Json<Value>> {
    let options = body.map(|Json(b)| b).unwrap_or_default();
    let extraction = state
        .replies
        .engine()
        .extract_memory(id, options.connection, options.model)
        .await
        .map_err(memory_error)?;
    if !extraction.added.is_empty() {
        state.hub.library("chat", "memory", Some(id.get()));
    }
    let value = serde_json::to_value(&extraction)
        .map_err(|e| ApiError::internal("the memory extraction", e))?;
    Ok(Json(value))
}
