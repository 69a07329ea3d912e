//! `POST /api/messages/{id}/translate`: a message translated and the translation stored on it
//! (`translation: {language, text, at}`), the same `Engine::translate_message` `tavo translate`
//! runs. `POST /api/messages/{id}/describe-image`: the image a message carries described and the
//! description stored on it (image sending), the same `Engine::describe_image` `tavo image
//! describe` runs. Both are one request about one message's content.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Deserialize;
use tavo_engine::describe::{DescribeError, ImageDescription};
use tavo_engine::translate::{TranslateError, Translation};
use tavo_model::MessageId;

use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::state::AppState;

/// What to translate into, on which connection.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct TranslateBody {
    /// Target language (default: the chat's, else `translation.language`, else English).
    pub language: Option<String>,
    /// Connection name (default: the chat's, else `translation.connection`, else the default).
    pub connection: Option<String>,
}

fn translate_error(e: TranslateError) -> ApiError {
    message_error(e.code(), e.to_string())
}

fn message_error(code: &'static str, message: String) -> ApiError {
    let status = match code {
        "resource_not_found" => StatusCode::NOT_FOUND,
        "invalid_arguments" => StatusCode::BAD_REQUEST,
        "unavailable" => StatusCode::BAD_GATEWAY,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    ApiError::new(status, code, message)
}

/// Translates one message.
#[utoipa::path(post, path = "/api/messages/{id}/translate", tag = "chats",
    params(("id" = i64, Path)),
    request_body = TranslateBody,
    responses((status = 200, description = "`{messageId, language, text, connection}`", body = Object),
              (status = 400, description = "Nothing to translate, a template without its placeholders, no connection", body = ErrorBody),
              (status = 404, description = "No such message", body = ErrorBody),
              (status = 502, description = "The provider failed", body = ErrorBody)))]
pub async fn translate(
    State(state): State<AppState>,
    Path(id): Path<MessageId>,
    body: Option<Json<TranslateBody>>,
) -> ApiResult<Json<Translation>> {
    let b = body.map(|Json(b)| b).unwrap_or_default();
    let done = state
        .replies
        .engine()
        .translate_message(id, b.language, b.connection)
        .await
        .map_err(translate_error)?;
    state.hub.library("message", "updated", Some(id.get()));
    Ok(Json(done))
}

/// Which connection describes the image.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct DescribeBody {
    /// A chat connection whose model takes images (default: `imageSending.connection`, else
    /// the default connection).
    pub connection: Option<String>,
}

/// Describes the image one message carries and stores the description on it.
#[utoipa::path(post, path = "/api/messages/{id}/describe-image", tag = "chats",
    params(("id" = i64, Path)),
    request_body = DescribeBody,
    responses((status = 200, description = "`{messageId, text, injected, connection}`", body = Object),
              (status = 400, description = "No readable image, an injection prompt without {{description}}, no connection", body = ErrorBody),
              (status = 404, description = "No such message", body = ErrorBody),
              (status = 502, description = "The provider failed", body = ErrorBody)))]
pub async fn describe_image(
    State(state): State<AppState>,
    Path(id): Path<MessageId>,
    body: Option<Json<DescribeBody>>,
) -> ApiResult<Json<ImageDescription>> {
    let b = body.map(|Json(b)| b).unwrap_or_default();
    let done = state
        .replies
        .engine()
        .describe_image(id, b.connection)
        .await
        .map_err(|e: DescribeError| message_error(e.code(), e.to_string()))?;
    state.hub.library("message", "updated", Some(id.get()));
    Ok(Json(done))
}
