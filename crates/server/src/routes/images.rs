//! Image generation (Tavo §14.3) and the image connections it uses.
//!
//! - `POST /api/images/generate` `{prompt, chatId?, options?}` (options = `tavo_image_generate`'s):
//!   200 `{dataUrl, mimeType}` without `options.saveAs` (nothing stored), `{path, mimeType,
//!   size}` with it. No connection → 404 `resource_not_found`; a provider refusal → 403
//!   `permission_denied`; other provider failures → 502 (`internal_error`, `details.reason`).
//! - `POST /api/chats/{id}/imagine` `{prompt, connection?}`: `/imagine` — the image stored as a
//!   chat file and a message written with it (201 `{messageId, path, mimeType, size, content,
//!   prompt}`).
//! - `GET|POST /api/images/connections`, `PUT|DELETE /api/images/connections/{name}`,
//!   `POST /api/images/connections/{name}/default`: the image connection book
//!   (`image.connections`), keys write-only (masked in every answer).
//!
//! Everything goes through `tavo_engine::image`, the code the tool and the CLI run.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Map, Value};
use tavo_engine::image::imagine_prompt;
use tavo_llm::media::image::{ImageConnection, ImagePlatform};
use tavo_llm::media::{KeyChange, MediaPatch, Platform as _};
use tavo_model::ChatId;
use tavo_tools::ops::image::{ImageOptions, Storage};
use tavo_tools::{ErrorCode, ToolError};

use crate::error::{ApiError, ApiResult, ErrorBody, PROVIDER_FAILED};
use crate::state::AppState;

/// A tool error as the API answers it; provider failures (`internal_error` with
/// `details.reason`) are 502.
pub fn image_error(e: ToolError) -> ApiError {
    let provider = e.code == ErrorCode::InternalError
        && e.details
            .as_ref()
            .is_some_and(|d| d.get("reason").is_some());
    let mut err = ApiError::from(e);
    if provider {
        err.status = PROVIDER_FAILED;
    }
    err
}

/// What to draw.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GenerateBody {
    /// The prompt (non-empty).
    pub prompt: String,
    /// The chat whose image connection (and file storage, for `saveAs`) is used.
    #[serde(default)]
    pub chat_id: Option<i64>,
    /// `tavo_image_generate`'s options: size, aspectRatio, negativePrompt, referenceImages,
    /// extraBody, saveAs, scope.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub options: Option<Value>,
    /// An image connection by name instead of the chat's / the default.
    #[serde(default)]
    pub connection: Option<String>,
}

fn options_of(v: Option<Value>) -> ApiResult<Option<ImageOptions>> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(v) => serde_json::from_value(v)
            .map(Some)
            .map_err(|e| ApiError::bad_request(format!("options: {e}"))),
    }
}

/// Generates one image.
#[utoipa::path(post, path = "/api/images/generate", tag = "images",
    request_body = GenerateBody,
    responses((status = 200, description = "`{dataUrl, mimeType}`, or `{path, mimeType, size}` with `options.saveAs`", body = Object),
              (status = 400, description = "Bad arguments (the message names the field)", body = ErrorBody),
              (status = 403, description = "The provider refused (key, model or prompt)", body = ErrorBody),
              (status = 404, description = "No image connection, or no such chat", body = ErrorBody),
              (status = 502, description = "The provider failed (rate limit, server error, no image)", body = ErrorBody)))]
pub async fn generate(
    State(state): State<AppState>,
    Json(body): Json<GenerateBody>,
) -> ApiResult<Json<Value>> {
    let options = options_of(body.options)?;
    let image = state
        .replies
        .engine()
        .generate_image(
            body.chat_id.map(ChatId),
            body.prompt,
            options,
            body.connection,
            Storage::WhenSaveAs,
        )
        .await
        .map_err(image_error)?;
    if image.path.is_some() {
        state.hub.library("file", "created", body.chat_id);
    }
    Ok(Json(image.to_json()))
}

/// `/imagine` in a chat.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ImagineBody {
    /// The prompt (or the whole composer text `/imagine …`).
    pub prompt: String,
    /// An image connection by name instead of the chat's / the default.
    #[serde(default)]
    pub connection: Option<String>,
}

/// Generates an image into a chat: stored as a chat file, written as a message with the
/// injection template.
#[utoipa::path(post, path = "/api/chats/{id}/imagine", tag = "images",
    params(("id" = i64, Path)),
    request_body = ImagineBody,
    responses((status = 201, description = "`{messageId, path, mimeType, size, content, prompt}`", body = Object),
              (status = 400, description = "Empty prompt", body = ErrorBody),
              (status = 403, description = "The provider refused", body = ErrorBody),
              (status = 404, description = "No such chat, or no image connection", body = ErrorBody),
              (status = 502, description = "The provider failed", body = ErrorBody)))]
pub async fn imagine(
    State(state): State<AppState>,
    Path(chat): Path<ChatId>,
    Json(body): Json<ImagineBody>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let prompt = imagine_prompt(&body.prompt)
        .unwrap_or(&body.prompt)
        .to_owned();
    let done = imagine_in(&state, chat, &prompt, body.connection).await?;
    Ok((StatusCode::CREATED, Json(done)))
}

/// Runs `/imagine` and announces the new message (the composer's send route has the engine's
/// send run it: `tavo_engine::send`).
pub async fn imagine_in(
    state: &AppState,
    chat: ChatId,
    prompt: &str,
    connection: Option<String>,
) -> ApiResult<Value> {
    let done = state
        .replies
        .engine()
        .imagine(chat, prompt, connection)
        .await
        .map_err(image_error)?;
    state
        .hub
        .library("message", "created", Some(done.message_id.get()));
    serde_json::to_value(&done).map_err(|e| ApiError::internal("answering /imagine", e))
}

/// The image connections, keys masked, with the injection template and the platforms.
#[utoipa::path(get, path = "/api/images/connections", tag = "images",
    responses((status = 200, description = "`{connections, default, injectionTemplate, defaultInjectionTemplate, platforms}`", body = Object)))]
pub async fn list(State(state): State<AppState>) -> ApiResult<Json<Value>> {
    Ok(Json(
        state
            .replies
            .engine()
            .image_connections()
            .await
            .map_err(ApiError::from)?,
    ))
}

/// A new image connection.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NewImageConnection {
    pub name: String,
    /// openai, gemini, openrouter or novelai.
    pub platform: String,
    /// Default: the platform's (`https://api.openai.com/v1`, …).
    #[serde(default)]
    pub base_url: Option<String>,
    pub model: String,
    /// Stored, never shown again.
    #[serde(default)]
    pub api_key: Option<String>,
    /// Or an environment variable holding the key.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Platform options (size, quality, …), merged into every request.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub options: Map<String, Value>,
    /// Make it the default.
    #[serde(default)]
    pub default: bool,
}

fn book_invalid(field: &str, e: impl std::fmt::Display) -> tavo_llm::media::MediaBookError {
    tavo_llm::media::MediaBookError::invalid(field, e.to_string())
}

/// Adds an image connection (the first one becomes the default).
#[utoipa::path(post, path = "/api/images/connections", tag = "images",
    request_body = NewImageConnection,
    responses((status = 200, description = "The book, keys masked", body = Object),
              (status = 400, description = "Invalid connection (`details.path` names the field)", body = ErrorBody),
              (status = 409, description = "The name is taken", body = ErrorBody)))]
pub async fn add(
    State(state): State<AppState>,
    Json(new): Json<NewImageConnection>,
) -> ApiResult<Json<Value>> {
    let view = state
        .replies
        .engine()
        .change_image_connections(move |book| {
            let platform = ImagePlatform::parse(&new.platform)?;
            let mut c = ImageConnection::new(new.name, platform, new.model);
            if let Some(base) = new.base_url.filter(|b| !b.trim().is_empty()) {
                c.base_url = base;
            }
            c.api_key = new.api_key.filter(|k| !k.is_empty());
            c.api_key_env = new.api_key_env.filter(|k| !k.is_empty());
            if c.api_key.is_some() && c.api_key_env.is_some() {
                return Err(book_invalid(
                    "apiKeyEnv",
                    "give apiKey or apiKeyEnv, not both",
                ));
            }
            c.options = new.options;
            book.add(c, new.default)
        })
        .await
        .map_err(ApiError::from)?;
    state.hub.library("imageConnection", "updated", None);
    Ok(Json(view))
}

/// The fields of an image connection to change; absent fields are kept.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct ImageConnectionPatch {
    /// A new name.
    pub name: Option<String>,
    pub platform: Option<String>,
    pub base_url: Option<String>,
    pub model: Option<String>,
    /// A new key; `""` removes the stored key.
    pub api_key: Option<String>,
    /// Read the key from this environment variable instead.
    pub api_key_env: Option<String>,
    /// Options to set; a `null` value removes one.
    #[schema(value_type = Object)]
    pub options: Map<String, Value>,
    /// Make it the default.
    pub default: bool,
}

/// Changes an image connection in place.
#[utoipa::path(put, path = "/api/images/connections/{name}", tag = "images",
    params(("name" = String, Path)),
    request_body = ImageConnectionPatch,
    responses((status = 200, description = "The book, keys masked", body = Object),
              (status = 400, description = "Invalid value (`details.path` names the field)", body = ErrorBody),
              (status = 404, description = "No such connection", body = ErrorBody),
              (status = 409, description = "The new name is taken", body = ErrorBody)))]
pub async fn update(
    State(state): State<AppState>,
    Path(name): Path<String>,
    Json(p): Json<ImageConnectionPatch>,
) -> ApiResult<Json<Value>> {
    let view = state
        .replies
        .engine()
        .change_image_connections(move |book| {
            let key = match (p.api_key, p.api_key_env) {
                (Some(_), Some(_)) => {
                    return Err(book_invalid(
                        "apiKeyEnv",
                        "give apiKey or apiKeyEnv, not both",
                    ));
                }
                (Some(k), None) if k.is_empty() => Some(KeyChange::None),
                (Some(k), None) => Some(KeyChange::Key(k)),
                (None, Some(v)) => Some(KeyChange::Env(v)),
                (None, None) => None,
            };
            let patch = MediaPatch {
                name: p.name,
                platform: p
                    .platform
                    .as_deref()
                    .map(ImagePlatform::parse)
                    .transpose()?,
                base_url: p.base_url,
                model: p.model,
                key,
                options: p.options,
                unset: Vec::new(),
                make_default: p.default,
            };
            book.update(&name, patch).map(|_| ())
        })
        .await
        .map_err(ApiError::from)?;
    state.hub.library("imageConnection", "updated", None);
    Ok(Json(view))
}

/// Removes an image connection.
#[utoipa::path(delete, path = "/api/images/connections/{name}", tag = "images",
    params(("name" = String, Path)),
    responses((status = 200, description = "The book, keys masked", body = Object),
              (status = 404, description = "No such connection", body = ErrorBody)))]
pub async fn remove(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> ApiResult<Json<Value>> {
    let view = state
        .replies
        .engine()
        .change_image_connections(move |book| book.remove(&name).map(|_| ()))
        .await
        .map_err(ApiError::from)?;
    state.hub.library("imageConnection", "updated", None);
    Ok(Json(view))
}

/// Makes an image connection the default.
#[utoipa::path(post, path = "/api/images/connections/{name}/default", tag = "images",
    params(("name" = String, Path)),
    responses((status = 200, description = "The book, keys masked", body = Object),
              (status = 404, description = "No such connection", body = ErrorBody)))]
pub async fn make_default(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> ApiResult<Json<Value>> {
    let view = state
        .replies
        .engine()
        .change_image_connections(move |book| book.set_default(&name))
        .await
        .map_err(ApiError::from)?;
    state.hub.library("imageConnection", "updated", None);
    Ok(Json(view))
}
