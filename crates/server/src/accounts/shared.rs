//! The shared library of a server with accounts: what admins publish for every user, read-only
//! for them (`tavo_tools::shared_library` does the work; this is its HTTP door).
//!
//! - `GET /api/shared` → `{items: [{kind, id, name, publishedBy, publishedAt}]}`
//! - `GET /api/shared/{kind}/{id}` → the item as its kind's JSON, with `shared: {publishedBy,
//!   publishedAt}`; `GET /api/shared/character/{id}/avatar` → the card's image
//! - `POST /api/shared/{kind}/{id}/copy` → `201 {kind, id, name, from: {id}, created,
//!   warnings}`: a copy in the user's own library, theirs to change
//! - `POST /api/admin/shared {kind, id}` (admins) → `201 {item}`: publishes asset `id` of the
//!   admin's own library (a copy: later edits of the admin's own stay the admin's)
//! - `DELETE /api/admin/shared/{kind}/{id}` (admins) → `204`; users' copies stay theirs
//!
//! There is no route that writes a shared item in place: an admin changes one by publishing
//! the new version and unpublishing the old. `kind` is character, persona, preset, lorebook,
//! regex or theme (plurals accepted). The library lives in `<data>/shared/`, opened on first use.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};
use tavo_store::Store;
use tavo_tools::shared_library::{self as shared, SharedKind};

use super::admin::require_admin;
use super::door::{Door, require_user, tenant};
use crate::error::{ApiError, ApiResult};

/// The shared library, opened on first use; writes one at a time (the published list is one
/// setting, read, changed and written back).
#[derive(Default)]
pub struct SharedLibrary {
    store: tokio::sync::OnceCell<Store>,
    writing: tokio::sync::Mutex<()>,
}

impl SharedLibrary {
    pub(super) async fn store(&self, door: &Door) -> ApiResult<Store> {
        let dir = door.tenants.accounts.shared_dir();
        self.store
            .get_or_try_init(|| async move {
                door.tenants
                    .open_library(dir, tavo_accounts::SHARED_LIBRARY.to_owned())
                    .await
                    .map_err(|e| ApiError::internal("opening the shared library", e))
            })
            .await
            .cloned()
    }
}

fn kind(s: &str) -> ApiResult<SharedKind> {
    Ok(s.parse::<SharedKind>()?)
}

/// Runs shared-library work off the executor.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, tavo_tools::ToolError> + Send + 'static,
) -> ApiResult<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::internal("the shared library", e))?
        .map_err(ApiError::from)
}

/// `GET /api/shared`.
pub async fn list(State(door): State<Arc<Door>>, headers: HeaderMap) -> ApiResult<Json<Value>> {
    require_user(&door, &headers).await?;
    let store = door.shared.store(&door).await?;
    let items = blocking(move || shared::list(&store)).await?;
    let items: Vec<Value> = items
        .into_iter()
        .map(|i| {
            json!({"kind": i.kind, "id": i.id, "name": i.name,
                   "publishedBy": i.published_by, "publishedAt": i.published_at})
        })
        .collect();
    Ok(Json(json!({ "items": items })))
}

/// `GET /api/shared/{kind}/{id}`.
pub async fn get(
    State(door): State<Arc<Door>>,
    headers: HeaderMap,
    Path((k, id)): Path<(String, i64)>,
) -> ApiResult<Json<Value>> {
    require_user(&door, &headers).await?;
    let k = kind(&k)?;
    let store = door.shared.store(&door).await?;
    Ok(Json(blocking(move || shared::get(&store, k, id)).await?))
}

/// `GET /api/shared/character/{id}/avatar`.
pub async fn avatar(
    State(door): State<Arc<Door>>,
    headers: HeaderMap,
    Path((k, id)): Path<(String, i64)>,
) -> ApiResult<Response> {
    require_user(&door, &headers).await?;
    if kind(&k)? != SharedKind::Character {
        return Err(ApiError::not_found("only a shared character has an avatar"));
    }
    let store = door.shared.store(&door).await?;
    let image = blocking(move || shared::avatar(&store, id))
        .await?
        .ok_or_else(|| ApiError::not_found(format!("shared character {id} has no avatar")))?;
    Ok(crate::routes::bytes_response(&image.mime_type, image.bytes))
}

/// `POST /api/shared/{kind}/{id}/copy`.
pub async fn copy(
    State(door): State<Arc<Door>>,
    headers: HeaderMap,
    Path((k, id)): Path<(String, i64)>,
) -> ApiResult<Response> {
    let user = require_user(&door, &headers).await?;
    let k = kind(&k)?;
    let store = door.shared.store(&door).await?;
    let mine = tenant(&door, &user).await?;
    door.admit(&mine, &axum::http::Method::POST, "/api/shared")
        .await?;
    let to = mine.state.store.clone();
    let copied = blocking(move || shared::copy(&store, &to, k, id)).await?;
    match &copied.imported {
        Some(file) => {
            for (kind, id) in file.created() {
                mine.state.hub.library(kind.as_str(), "imported", Some(id));
            }
        }
        None => {
            mine.state.hub.publish(
                "library",
                json!({"kind": "operation", "action": "theme.create", "id": copied.id}),
            );
        }
    }
    tracing::info!(user = %user.name, kind = k.as_str(), id, "copied a shared item");
    Ok((StatusCode::CREATED, Json(copied.to_json())).into_response())
}

/// `POST /api/admin/shared {kind, id}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishBody {
    kind: String,
    id: i64,
}

/// `POST /api/admin/shared`.
pub async fn publish(
    State(door): State<Arc<Door>>,
    headers: HeaderMap,
    body: Result<Json<PublishBody>, axum::extract::rejection::JsonRejection>,
) -> ApiResult<Response> {
    let admin = require_admin(&door, &headers).await?;
    let Json(body) = body.map_err(|e| {
        ApiError::bad_request(format!(
            "the body must be {{kind, id}} (an asset of your own library): {e}"
        ))
    })?;
    let k = kind(&body.kind)?;
    let store = door.shared.store(&door).await?;
    let from = tenant(&door, &admin).await?.state.store.clone();
    let _one_at_a_time = door.shared.writing.lock().await;
    let by = admin.name.clone();
    let item = blocking(move || shared::publish(&from, &store, k, body.id, &by)).await?;
    tracing::info!(admin = %admin.name, kind = k.as_str(), id = item.id, "published to the shared library");
    Ok((StatusCode::CREATED, Json(json!({ "item": item }))).into_response())
}

/// `DELETE /api/admin/shared/{kind}/{id}`.
pub async fn unpublish(
    State(door): State<Arc<Door>>,
    headers: HeaderMap,
    Path((k, id)): Path<(String, i64)>,
) -> ApiResult<StatusCode> {
    let admin = require_admin(&door, &headers).await?;
    let k = kind(&k)?;
    let store = door.shared.store(&door).await?;
    let _one_at_a_time = door.shared.writing.lock().await;
    blocking(move || shared::unpublish(&store, k, id)).await?;
    tracing::info!(admin = %admin.name, kind = k.as_str(), id, "unpublished from the shared library");
    Ok(StatusCode::NO_CONTENT)
}
