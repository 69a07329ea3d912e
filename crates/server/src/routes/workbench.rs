//! Routes of the creator's workbench (the browser app's editors) that the library routes do
//! not give: the prompt inspector's explain record and the regex editor's live tester. Both
//! are thin doors over the engine — `Engine::preview` (what `tavo prompt --explain --json`
//! prints, from the same `Preview::explain_json`) and `tavo_engine::regex_test::test_rule` (the
//! prompt crate's own pipeline on the JavaScript worker) — so the page computes neither.

use axum::Json;
use axum::extract::{Path, Query, State};
use serde::Deserialize;
use serde_json::Value;
use tavo_engine::GenerationKind;
use tavo_engine::prompt::PreviewRequest;
use tavo_engine::regex_test::{RuleSample, RuleTest};
use tavo_llm::Parameters;
use tavo_model::{CharacterId, ChatId, RegexEntry, RegexPlacement};

use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::routes::replies::engine_error;
use crate::state::AppState;

/// What to build the prompt for.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct PromptQuery {
    /// `normal` (default), `continue` or `impersonate`.
    pub kind: Option<String>,
    /// Seed of random macros and lorebook probability (default: the reply's).
    pub seed: Option<u64>,
    /// The character who replies in a group chat.
    pub speaker: Option<i64>,
    /// Connection name (default: the default connection).
    pub connection: Option<String>,
}

/// The explain record of the chat's next reply, as `tavo prompt --explain --json` prints it
/// (`messages`, `tools`, `toolChoice`, `model`, `connection`, `parameters`, `converter`,
/// `activatedEntries`, `skippedEntries`, `regexApplied`, `tokens`, `diagnostics`,
/// `historyCut`). Changes nothing: timed effects do not advance and macro writes are dropped.
#[utoipa::path(get, path = "/api/chats/{id}/prompt", tag = "chats",
    params(("id" = i64, Path), PromptQuery),
    responses((status = 200, description = "The explain record", body = Object),
              (status = 400, description = "Unknown kind or connection", body = ErrorBody),
              (status = 404, description = "No such chat", body = ErrorBody)))]
pub async fn prompt(
    State(state): State<AppState>,
    Path(id): Path<ChatId>,
    Query(q): Query<PromptQuery>,
) -> ApiResult<Json<Value>> {
    let kind = match q.kind.as_deref() {
        None | Some("normal") => GenerationKind::Normal,
        Some("continue") => GenerationKind::Continue,
        Some("impersonate") => GenerationKind::Impersonate,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "kind {other:?} is not one of normal, continue, impersonate"
            ))
            .with_details(serde_json::json!({"path": "kind"})));
        }
    };
    let request = PreviewRequest {
        chat: id,
        kind,
        connection: q.connection,
        model: None,
        overrides: Parameters::default(),
        seed: q.seed,
        speaker: q.speaker.map(CharacterId),
        record: false,
    };
    let exists = state
        .blocking_api(move |s| Ok(tavo_tools::reads::chat(s, id)?))
        .await?
        .is_some();
    if !exists {
        return Err(ApiError::not_found(format!("chat {id} not found")));
    }
    let engine = state.replies.engine().clone();
    let preview = state
        .off_executor(move || engine.preview(&request))
        .await?
        .map_err(engine_error)?;
    Ok(Json(preview.explain_json()))
}

/// A rule and the sample to run it on.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RegexTestBody {
    /// The rule, as a regex group's entry (`findRegex`, `replaceString`, `trimStrings`,
    /// `placements`, `timing`, `substitution`, `minDepth`, `maxDepth`; the rest is ignored).
    #[schema(value_type = Object)]
    pub rule: RegexEntry,
    /// The sample text.
    pub text: String,
    /// Which placement the text stands for (`user`, `char`, `reasoning`, `lorebook`; default
    /// the rule's first).
    #[schema(value_type = Option<String>)]
    pub placement: Option<RegexPlacement>,
    /// The message depth (0 = newest); none for text without a depth.
    pub depth: Option<i64>,
    /// `{{user}}` (default `User`).
    pub user: Option<String>,
    /// `{{char}}` (default `Character`).
    pub char: Option<String>,
}

/// Longest sample accepted (the editor's sample box, not a chat export).
const MAX_SAMPLE: usize = 256 * 1024;

/// Runs one regex rule on a sample exactly as a generation would (JavaScript `RegExp`
/// semantics, trims, `{{match}}`, substitution modes, depth and placement bounds) →
/// `{output, replacements, matches: [{index, text, replacement}], stage, skipped?, error?}`;
/// `index` is a UTF-16 offset into the sample. Writes nothing.
#[utoipa::path(post, path = "/api/regex/test", tag = "library",
    request_body = RegexTestBody,
    responses((status = 200, description = "What the rule does to the sample", body = Object),
              (status = 400, description = "Not a rule, or a sample over 256 KiB", body = ErrorBody)))]
pub async fn regex_test(
    State(state): State<AppState>,
    Json(body): Json<RegexTestBody>,
) -> ApiResult<Json<RuleTest>> {
    if body.text.len() > MAX_SAMPLE {
        return Err(ApiError::bad_request(format!(
            "the sample is {} bytes; at most {MAX_SAMPLE} are tested",
            body.text.len()
        ))
        .with_details(serde_json::json!({"path": "text"})));
    }
    let answer = state
        .off_executor(move || {
            let sample = RuleSample {
                text: &body.text,
                placement: body.placement,
                depth: body.depth,
            };
            tavo_engine::regex_test::test_rule(
                &body.rule,
                &sample,
                body.user.as_deref().unwrap_or("User"),
                body.char.as_deref().unwrap_or("Character"),
            )
        })
        .await?
        .map_err(|e| ApiError::internal("the regex worker", e))?;
    Ok(Json(answer))
}

/// The lorebook and regex group a character's card owns (its `character_book` and
/// `extensions.regex_scripts`, stored as assets of their own and written back on export) →
/// `{lorebooks: [{id, name}], regexes: [{id, name}]}` (at most one each); the character editor
/// links to their editors.
#[utoipa::path(get, path = "/api/characters/{id}/owned", tag = "library",
    params(("id" = i64, Path)),
    responses((status = 200, description = "The card's own lorebook and regex group", body = Object),
              (status = 404, description = "No such character", body = ErrorBody)))]
pub async fn character_owned(
    State(state): State<AppState>,
    Path(id): Path<i64>,
) -> ApiResult<Json<Value>> {
    let bindings = state
        .blocking_api(move |s| Ok(tavo_tools::reads::card_bindings(s, CharacterId(id))?))
        .await?
        .ok_or_else(|| ApiError::not_found(format!("character {id} not found")))?;
    Ok(Json(serde_json::to_value(bindings).map_err(|e| {
        ApiError::internal("the card's bindings", e)
    })?))
}

/// Texts to count.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TokensBody {
    /// The texts (a card's fields, an entry's content).
    pub texts: Vec<String>,
    /// Whose model's tokenizer (default: the default connection's).
    pub connection: Option<String>,
}

/// Token counts of texts as the next reply's prompt counts them →
/// `{model, encoding, estimated, counts}` (one count per text, without message framing).
#[utoipa::path(post, path = "/api/tokens", tag = "library",
    request_body = TokensBody,
    responses((status = 200, description = "The counts", body = Object),
              (status = 400, description = "Unknown connection", body = ErrorBody)))]
pub async fn tokens(
    State(state): State<AppState>,
    Json(body): Json<TokensBody>,
) -> ApiResult<Json<tavo_engine::prompt::TokenCounts>> {
    let counts = state
        .blocking_api(move |s| {
            tavo_engine::prompt::count_tokens(s, &body.texts, body.connection.as_deref())
                .map_err(engine_error)
        })
        .await?;
    Ok(Json(counts))
}

/// Replaces a persona's avatar with the image in the body (PNG, JPEG, WebP or GIF, by its
/// signature; at most 8 MiB; `tools::avatars`). → `204`.
#[utoipa::path(put, path = "/api/personas/{id}/avatar", tag = "media",
    params(("id" = i64, Path)),
    request_body(content = Vec<u8>, description = "The image bytes", content_type = "image/png"),
    responses((status = 204, description = "Stored"),
              (status = 400, description = "Not an image, or over 8 MiB", body = ErrorBody),
              (status = 404, description = "No such persona", body = ErrorBody)))]
pub async fn set_persona_avatar(
    State(state): State<AppState>,
    Path(id): Path<i64>,
    body: axum::body::Bytes,
) -> ApiResult<axum::http::StatusCode> {
    state
        .blocking_api(move |s| {
            Ok(tavo_tools::avatars::set_persona_avatar(
                s,
                tavo_model::PersonaId(id),
                &body,
            )?)
        })
        .await?;
    state.hub.library("persona", "updated", Some(id));
    Ok(axum::http::StatusCode::NO_CONTENT)
}

/// Largest avatar accepted (a card's PNG; the editor uploads its crop): refused here as
/// `413` before the library is asked.
const MAX_AVATAR: usize = tavo_tools::avatars::MAX_AVATAR;

/// Replaces a character's avatar with the image in the body (PNG, JPEG, WebP or GIF, by its
/// signature; at most 8 MiB). A PNG export splices the card into this image. → `204`.
#[utoipa::path(put, path = "/api/characters/{id}/avatar", tag = "media",
    params(("id" = i64, Path)),
    request_body(content = Vec<u8>, description = "The image bytes", content_type = "image/png"),
    responses((status = 204, description = "Stored"),
              (status = 400, description = "Not an image", body = ErrorBody),
              (status = 404, description = "No such character", body = ErrorBody),
              (status = 413, description = "Over 8 MiB", body = ErrorBody)))]
pub async fn set_character_avatar(
    State(state): State<AppState>,
    Path(id): Path<i64>,
    body: axum::body::Bytes,
) -> ApiResult<axum::http::StatusCode> {
    if body.len() > MAX_AVATAR {
        return Err(ApiError::too_large(format!(
            "the avatar is {} bytes; at most {MAX_AVATAR} are accepted",
            body.len()
        )));
    }
    state
        .blocking_api(move |s| {
            Ok(tavo_tools::avatars::set_character_avatar(
                s,
                CharacterId(id),
                &body,
            )?)
        })
        .await?;
    state.hub.library("character", "updated", Some(id));
    Ok(axum::http::StatusCode::NO_CONTENT)
}
