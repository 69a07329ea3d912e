//! What the browser app's bubble bridge needs besides `POST /api/ops/{name}` (TavoJS in chat
//! bubbles, seed 002): the variables a frame starts with, and the virtual file paths
//! (`files/chat/NAME`, `files/global/NAME`) a bubble's scripts use.
//!
//! - `tavo.get` is synchronous in the seed, so a bubble's frame starts with a snapshot of the
//!   chat's, the global and its own message's variables (`GET /api/chats/{id}/variables`);
//!   every write still goes through the `tavo_variable_*` operations.
//! - `tavo.file.save` returns `files/chat/NAME` (or `files/global/NAME`), which cards put in
//!   `<img src>`. A bubble frame's base address is `/api/chats/{id}/`, so those relative paths
//!   land on the two file routes here, which serve what `/api/chats/{id}/files/{name}` and
//!   `/api/files/{name}` serve.
//!
//! The frame itself never reaches these routes with credentials: it has an opaque origin, so
//! its `fetch` is refused (`opaque_origin`); only the app (and `<img>` loads) read them.

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::response::Response;
use serde::Deserialize;
use serde_json::Value;
use tavo_model::{ChatId, MessageId};
use tavo_tools::variables;

use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::routes::media;
use crate::state::AppState;

/// Which message's variables to include.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct VariablesQuery {
    /// A message of this chat (the bubble's own); its message-scope variables come too.
    pub message: Option<i64>,
}

/// The variables a bubble script starts with: `{chat, global, message}` (each an object of
/// name → value; `message` is null without `?message=`). Read in one snapshot.
#[utoipa::path(get, path = "/api/chats/{id}/variables", tag = "chats",
    params(("id" = i64, Path), VariablesQuery),
    responses((status = 200, description = "`{chat, global, message}`", body = Object),
              (status = 404, description = "No such chat, or a message of another chat", body = ErrorBody)))]
pub async fn variables(
    State(state): State<AppState>,
    Path(id): Path<i64>,
    Query(q): Query<VariablesQuery>,
) -> ApiResult<Json<Value>> {
    let chat = ChatId(id);
    state
        .blocking_api(move |s| {
            let snapshot = variables::snapshot(s, chat, q.message.map(MessageId))?;
            serde_json::to_value(snapshot).map_err(|e| ApiError::internal("the variables", e))
        })
        .await
        .map(Json)
}

/// A chat file by the seed's virtual path `files/chat/NAME`, relative to a bubble's base.
#[utoipa::path(get, path = "/api/chats/{id}/files/chat/{name}", tag = "media",
    params(("id" = i64, Path), ("name" = String, Path)),
    responses((status = 200, description = "The file with its MIME type"),
              (status = 404, description = "No such file", body = ErrorBody)))]
pub async fn chat_virtual_file(
    state: State<AppState>,
    path: Path<(i64, String)>,
) -> ApiResult<Response> {
    media::chat_file(state, path).await
}

/// A global file by the seed's virtual path `files/global/NAME`, relative to a bubble's base.
#[utoipa::path(get, path = "/api/chats/{id}/files/global/{name}", tag = "media",
    params(("id" = i64, Path), ("name" = String, Path)),
    responses((status = 200, description = "The file with its MIME type"),
              (status = 404, description = "No such file", body = ErrorBody)))]
pub async fn global_virtual_file(
    state: State<AppState>,
    Path((_chat, name)): Path<(i64, String)>,
) -> ApiResult<Response> {
    media::global_file(state, Path(name)).await
}
