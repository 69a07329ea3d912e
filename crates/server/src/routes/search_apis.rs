//! The saved web-search APIs (`tavo search-api`), as the app's Settings edits them: list (keys
//! masked), add or replace (a replace without `apiKey` keeps the stored key), remove, make the
//! default. Thin doors over `tavo_tools::search_apis`.

use axum::Json;
use axum::extract::{Path, State};
use serde_json::Value;
use tavo_tools::search_apis::{self, SearchApiInput};

use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::state::AppState;

/// `{defaultId, apis: [{id, name, provider, searchDepth, chunksPerSource, maxResults, complete,
/// apiKey}]}`, keys masked (`tvly… (40 chars)`); `complete` false means it cannot run (no key).
#[utoipa::path(get, path = "/api/search-apis", tag = "web",
    responses((status = 200, description = "`{defaultId, apis}`; keys masked", body = Object)))]
pub async fn list(State(state): State<AppState>) -> ApiResult<Json<Value>> {
    Ok(Json(
        state.blocking_api(|s| Ok(search_apis::list(s))).await?,
    ))
}

/// Adds (`id` absent) or replaces one API: `{id?, name, apiKey?, searchDepth?, chunksPerSource?,
/// maxResults?, default?}` → the list as `GET` shows it.
#[utoipa::path(post, path = "/api/search-apis", tag = "web",
    request_body(content = Object, description = "`{id?, name, apiKey?, searchDepth?, chunksPerSource?, maxResults?, default?}`"),
    responses((status = 200, description = "`{defaultId, apis}`", body = Object),
              (status = 400, description = "A field out of range (the message names it)", body = ErrorBody),
              (status = 404, description = "No API with that id", body = ErrorBody)))]
pub async fn save(
    State(state): State<AppState>,
    Json(body): Json<Value>,
) -> ApiResult<Json<Value>> {
    let input: SearchApiInput = serde_json::from_value(body)
        .map_err(|e| ApiError::bad_request(format!("the search API: {e}")))?;
    Ok(Json(
        state
            .blocking_api(move |s| Ok(search_apis::save(s, input)?))
            .await?,
    ))
}

/// Removes one API; the first remaining one becomes the default.
#[utoipa::path(delete, path = "/api/search-apis/{id}", tag = "web",
    responses((status = 200, description = "`{defaultId, apis}`", body = Object),
              (status = 404, description = "No API with that id", body = ErrorBody)))]
pub async fn remove(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    Ok(Json(
        state
            .blocking_api(move |s| Ok(search_apis::remove(s, &id)?))
            .await?,
    ))
}

/// Makes one API the default (the one `tavo_web_search` runs with, when it has a key).
#[utoipa::path(post, path = "/api/search-apis/{id}/default", tag = "web",
    responses((status = 200, description = "`{defaultId, apis}`", body = Object),
              (status = 404, description = "No API with that id", body = ErrorBody)))]
pub async fn make_default(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    Ok(Json(
        state
            .blocking_api(move |s| Ok(search_apis::set_default(s, &id)?))
            .await?,
    ))
}
