//! Avatars and stored files, with their MIME types.
//!
//! File names go through the store's name rules (no separators, no `..`, no `:`), so no name
//! can leave the chat's or the global folder. Every file is served with `nosniff` and a
//! sandboxing Content-Security-Policy: a model can save an `.html` or `.svg` file, and opening
//! it must not run its scripts with this origin's cookie.

use axum::extract::{Path, State};
use axum::http::{HeaderValue, header};
use axum::response::Response;
use tavo_model::{CharacterId, PersonaId};
use tavo_store::FileScope;

use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::routes::bytes_response;
use crate::state::AppState;

/// The policy every stored file is served with.
const FILE_CSP: &str =
    "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'; media-src 'self'";

/// A character's avatar image.
#[utoipa::path(get, path = "/api/characters/{id}/avatar", tag = "media",
    params(("id" = i64, Path)),
    responses((status = 200, description = "The image with its MIME type"),
              (status = 404, description = "No such character or no avatar", body = ErrorBody)))]
pub async fn character_avatar(
    State(state): State<AppState>,
    Path(id): Path<i64>,
) -> ApiResult<Response> {
    let avatar = state
        .blocking_api(move |s| Ok(tavo_tools::reads::character_avatar(s, CharacterId(id))?))
        .await?
        .ok_or_else(|| ApiError::not_found(format!("character {id} has no avatar")))?;
    Ok(served(&avatar.mime_type, avatar.bytes))
}

/// A persona's avatar image.
#[utoipa::path(get, path = "/api/personas/{id}/avatar", tag = "media",
    params(("id" = i64, Path)),
    responses((status = 200, description = "The image with its MIME type"),
              (status = 404, description = "No such persona or no avatar", body = ErrorBody)))]
pub async fn persona_avatar(
    State(state): State<AppState>,
    Path(id): Path<i64>,
) -> ApiResult<Response> {
    let avatar = state
        .blocking_api(move |s| Ok(tavo_tools::reads::persona_avatar(s, PersonaId(id))?))
        .await?
        .ok_or_else(|| ApiError::not_found(format!("persona {id} has no avatar")))?;
    Ok(served(&avatar.mime_type, avatar.bytes))
}

/// A file of a chat's storage (`tavo.file.url(name, "chat")`).
#[utoipa::path(get, path = "/api/chats/{id}/files/{name}", tag = "media",
    params(("id" = i64, Path), ("name" = String, Path)),
    responses((status = 200, description = "The file with its MIME type"),
              (status = 400, description = "A name that breaks the file-name rules", body = ErrorBody),
              (status = 404, description = "No such file", body = ErrorBody)))]
pub async fn chat_file(
    State(state): State<AppState>,
    Path((id, name)): Path<(i64, String)>,
) -> ApiResult<Response> {
    file(state, FileScope::Chat(id), name).await
}

/// A file of the global storage (`tavo.file.url(name, "global")`).
#[utoipa::path(get, path = "/api/files/{name}", tag = "media",
    params(("name" = String, Path)),
    responses((status = 200, description = "The file with its MIME type"),
              (status = 400, description = "A name that breaks the file-name rules", body = ErrorBody),
              (status = 404, description = "No such file", body = ErrorBody)))]
pub async fn global_file(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> ApiResult<Response> {
    file(state, FileScope::Global, name).await
}

async fn file(state: AppState, scope: FileScope, name: String) -> ApiResult<Response> {
    let shown = name.clone();
    let bytes = state
        .blocking_api(move |s| Ok(tavo_tools::reads::file(s, scope, &name)?))
        .await?
        .ok_or_else(|| {
            ApiError::not_found(format!("no {} file named {shown:?}", scope.as_str()))
        })?;
    let mime = mime_guess::from_path(&shown).first_or_octet_stream();
    Ok(served(mime.as_ref(), bytes))
}

fn served(mime: &str, bytes: Vec<u8>) -> Response {
    let mut response = bytes_response(mime, bytes);
    response.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(FILE_CSP),
    );
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, no-cache"),
    );
    response
}
