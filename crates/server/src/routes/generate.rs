//! `POST /api/chats/{id}/generate`: `tavo.generate(prompt, options)` of seed 002 — one text
//! generation on the chat's connection that writes nothing (no message, no variable), answered
//! whole (the seed's generate does not stream). The work is `Engine::generate`; this door only
//! reads the seed's option names.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tavo_engine::generate::{GenerateError, GenerateRequest, Generated};
use tavo_llm::Parameters;
use tavo_model::{ChatId, PresetId};

use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::state::AppState;

/// `tavo.generate`'s arguments.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GenerateBody {
    /// The user input of this generation (non-empty).
    pub prompt: String,
    /// The seed's options object.
    #[serde(default)]
    pub options: GenerateOptions,
}

/// The seed's `options`: `context` (default false), `preset` (an id or `{id}`), `settings`.
#[derive(Debug, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct GenerateOptions {
    /// With the chat's conversation as context.
    pub context: bool,
    /// A preset id, or an object whose `id` is read.
    #[schema(value_type = Object)]
    pub preset: Option<Value>,
    /// Model parameters for this request only.
    pub settings: GenerateSettings,
}

/// Per-call model parameters (the seed's names).
#[derive(Debug, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct GenerateSettings {
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    pub top_p: Option<f64>,
    /// Top-k sampling.
    pub top_k: Option<u32>,
    /// The longest answer, in tokens.
    #[serde(alias = "maxTokens")]
    pub max_completion_tokens: Option<u32>,
}

fn preset_id(v: &Option<Value>) -> Result<Option<PresetId>, ApiError> {
    let id = match v {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(o)) => o.get("id").and_then(Value::as_i64),
        Some(other) => other.as_i64(),
    };
    match id {
        Some(id) if id > 0 => Ok(Some(PresetId(id))),
        _ => Err(ApiError::bad_request(
            "options.preset must be a preset id (a positive integer) or an object with id",
        )),
    }
}

fn generate_error(e: GenerateError) -> ApiError {
    let status = match e.code() {
        "resource_not_found" => StatusCode::NOT_FOUND,
        "invalid_arguments" | "no_connection" => StatusCode::BAD_REQUEST,
        "unavailable" => StatusCode::BAD_GATEWAY,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    ApiError::new(status, e.code(), e.to_string())
}

/// Generates text for a chat's bubble script without storing anything.
#[utoipa::path(post, path = "/api/chats/{id}/generate", tag = "chats",
    params(("id" = i64, Path)),
    request_body = GenerateBody,
    responses((status = 200, description = "`{text, connection, model}`", body = Object),
              (status = 400, description = "An empty prompt, a bad option, no connection (`no_connection`)", body = ErrorBody),
              (status = 404, description = "No such chat or preset", body = ErrorBody),
              (status = 502, description = "The provider failed", body = ErrorBody)))]
pub async fn generate(
    State(state): State<AppState>,
    Path(id): Path<ChatId>,
    Json(body): Json<GenerateBody>,
) -> ApiResult<Json<Generated>> {
    let o = body.options;
    let req = GenerateRequest {
        chat: id,
        prompt: body.prompt,
        context: o.context,
        preset: preset_id(&o.preset)?,
        overrides: Parameters {
            temperature: o.settings.temperature,
            top_p: o.settings.top_p,
            top_k: o.settings.top_k,
            max_output_tokens: o.settings.max_completion_tokens,
            ..Parameters::default()
        },
    };
    let done = state
        .replies
        .engine()
        .generate(req)
        .await
        .map_err(generate_error)?;
    Ok(Json(done))
}
