//! Text-to-speech over HTTP (Tavo §14.1–14.2): playback in a chat, the voice connections,
//! the voice bindings, the voice settings, the TTS cache and its audio — thin doors over
//! [`tavo_engine::speech`] (the same code `tavo tts` and `tavo_tts_play` run).
//!
//! Playback reaches the open app as a `tts` event on `GET /api/events`
//! (`{chatId, action: "play", url, queue, messageId?, mimeType}` or `{chatId, action:
//! "stop"}`); the app's player plays `url`, served by `GET /api/tts/audio/{name}`.
//! Connection keys are write-only: every answer masks them.

use std::sync::Arc;
use tavo_model::{ChatId, MessageId};

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tavo_engine::speech::config::{self, VoiceBinding, VoiceTarget};
use tavo_engine::speech::{PlayRequest, SayRequest, SayVoice, SpeechError, SpeechSink};
use tavo_llm::media::speech::{VoiceConnection, VoicePlatform};
use tavo_llm::media::{KeyChange, MediaPatch, Platform};
use tavo_tools::ErrorCode;

use crate::error::{ApiError, ApiResult, ErrorBody, PROVIDER_FAILED, status_of_tool_code};
use crate::hub::Hub;
use crate::routes::bytes_response;
use crate::state::AppState;

/// `tts` events go out on the global event stream; the count is its open subscribers.
pub struct HubSink(pub Hub);

impl SpeechSink for HubSink {
    fn publish(&self, _chat: ChatId, event: Value) -> usize {
        let listeners = self.0.subscribers();
        self.0.publish("tts", event);
        listeners
    }
}

/// Installs the hub as the engine's speech sink.
pub fn attach(state: &AppState) {
    state
        .replies
        .engine()
        .speech()
        .set_sink(Arc::new(HubSink(state.hub.clone())));
}

/// A speech error as the API answers it: an envelope code gets that code's status (as an
/// image error does), a provider failure [`PROVIDER_FAILED`].
fn speech_error(e: SpeechError) -> ApiError {
    let status = match ErrorCode::parse(e.code()) {
        Some(code) => status_of_tool_code(code),
        None if e.code() == "provider_error" => PROVIDER_FAILED,
        None => StatusCode::INTERNAL_SERVER_ERROR,
    };
    let path = e.path().map(str::to_owned);
    let err = ApiError::new(status, e.code(), e.to_string());
    match path {
        Some(p) => err.with_details(json!({"path": p})),
        None => err,
    }
}

fn target_of(v: &Value) -> ApiResult<VoiceTarget> {
    VoiceTarget::from_json(v).ok_or_else(|| {
        ApiError::bad_request("voice: {character: id} or {persona: id} (exactly one)")
            .with_details(json!({"path": "voice"}))
    })
}

/// A play request (the seed's `tavo.tts.play` options, plus the text's message).
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct PlayBody {
    /// The text; without it, the message's text (`messageId` then required).
    pub text: Option<String>,
    /// `{character: id}` or `{persona: id}` (also `{…: {id}}`); without it, the message's speaker.
    #[schema(value_type = Object)]
    pub voice: Option<Value>,
    /// The message spoken, or whose speaker's voice is used.
    pub message_id: Option<i64>,
    /// Queue after what is playing (default: interrupt and clear the queue).
    pub queue: bool,
    /// Speak only what the voice settings' playback rules allow (default false).
    pub apply_playback_rules: bool,
}

/// Speaks text in a chat: synthesized (or taken from the TTS cache) and played by the open app.
#[utoipa::path(post, path = "/api/chats/{id}/tts/play", tag = "tts",
    params(("id" = i64, Path)),
    request_body = PlayBody,
    responses((status = 200, description = "`{playing, reason?, audio?: {url, mime, size, cached, connection, voice, text}, delivered}`; \
        `playing: false` with the reason for empty text, a missing target or binding, or no open app", body = Object),
              (status = 400, description = "A bad voice or option", body = ErrorBody),
              (status = 403, description = "The provider refused the key or the text", body = ErrorBody),
              (status = 404, description = "No such chat or message", body = ErrorBody),
              (status = 502, description = "The provider failed", body = ErrorBody)))]
pub async fn play(
    State(state): State<AppState>,
    Path(id): Path<ChatId>,
    body: Option<Json<PlayBody>>,
) -> ApiResult<Json<Value>> {
    let b = body.map(|Json(b)| b).unwrap_or_default();
    let voice = b.voice.as_ref().map(target_of).transpose()?;
    if b.text.is_none() && b.message_id.is_none() {
        return Err(ApiError::bad_request("text: give the text or a messageId")
            .with_details(json!({"path": "text"})));
    }
    let out = state
        .replies
        .engine()
        .speech()
        .play(PlayRequest {
            chat: id,
            text: b.text,
            voice,
            message: b.message_id.map(MessageId),
            queue: b.queue,
            apply_playback_rules: b.apply_playback_rules,
        })
        .await
        .map_err(speech_error)?;
    Ok(Json(serde_json::to_value(out).unwrap_or(Value::Null)))
}

/// Stops the chat's playback and clears its queue in every open page.
#[utoipa::path(post, path = "/api/chats/{id}/tts/stop", tag = "tts",
    params(("id" = i64, Path)),
    responses((status = 200, description = "`{stopped}`: whether an open page got the stop", body = Object),
              (status = 404, description = "No such chat", body = ErrorBody)))]
pub async fn stop(State(state): State<AppState>, Path(id): Path<ChatId>) -> ApiResult<Json<Value>> {
    let stopped = state
        .replies
        .engine()
        .speech()
        .stop(id)
        .await
        .map_err(speech_error)?;
    Ok(Json(json!({"stopped": stopped})))
}

/// A text to synthesize without playing it.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct SayBody {
    pub text: String,
    /// `{character: id}` or `{persona: id}`: that binding's connection and voice.
    #[schema(value_type = Object)]
    pub voice: Option<Value>,
    /// Else this connection (default: the default connection)…
    pub connection: Option<String>,
    /// …with this voice id (default: the connection's `voice` option).
    pub voice_id: Option<String>,
    pub apply_playback_rules: bool,
}

/// Synthesizes text (a connection test, a preview) into the TTS cache; answers where it is.
#[utoipa::path(post, path = "/api/tts/say", tag = "tts",
    request_body = SayBody,
    responses((status = 200, description = "`{url, mime, size, cached, connection, voice, text}`", body = Object),
              (status = 400, description = "Empty text, no voice", body = ErrorBody),
              (status = 403, description = "The provider refused the key or the text", body = ErrorBody),
              (status = 404, description = "No such connection, target or binding", body = ErrorBody),
              (status = 502, description = "The provider failed", body = ErrorBody)))]
pub async fn say(State(state): State<AppState>, Json(b): Json<SayBody>) -> ApiResult<Json<Value>> {
    let voice = match &b.voice {
        Some(v) => SayVoice::Bound(target_of(v)?),
        None => SayVoice::Connection {
            name: b.connection,
            voice: b.voice_id,
        },
    };
    let request = SayRequest {
        text: b.text,
        voice,
        apply_playback_rules: b.apply_playback_rules,
    };
    let spoken = state
        .replies
        .engine()
        .speech()
        .say(request)
        .await
        .map_err(speech_error)?;
    Ok(Json(serde_json::to_value(spoken).unwrap_or(Value::Null)))
}

/// One cached audio file (what a `tts` event's `url` names).
#[utoipa::path(get, path = "/api/tts/audio/{name}", tag = "tts",
    params(("name" = String, Path, description = "`<sha256>.<ext>`")),
    responses((status = 200, description = "The audio with its MIME type"),
              (status = 404, description = "Not in the cache (cleared, or never made)", body = ErrorBody)))]
pub async fn audio(State(state): State<AppState>, Path(name): Path<String>) -> ApiResult<Response> {
    let (bytes, mime) = state
        .replies
        .engine()
        .speech()
        .audio(name)
        .await
        .map_err(speech_error)?
        .ok_or_else(|| ApiError::not_found("no such audio in the TTS cache"))?;
    let mut response = bytes_response(mime, bytes);
    // Named by the hash of what decides the sound: the same name is always the same audio.
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, max-age=86400, immutable"),
    );
    Ok(response)
}

/// `{files, bytes}` of the TTS cache.
#[utoipa::path(get, path = "/api/tts/cache", tag = "tts",
    responses((status = 200, description = "`{files, bytes}`", body = Object)))]
pub async fn cache_usage(State(state): State<AppState>) -> ApiResult<Json<Value>> {
    let speech = state.replies.engine().speech().clone();
    let v = state
        .off_executor(move || speech.cache_usage())
        .await?
        .map_err(speech_error)?;
    Ok(Json(v))
}

/// Clears the TTS cache (replaying a message then calls the provider again).
#[utoipa::path(delete, path = "/api/tts/cache", tag = "tts",
    responses((status = 200, description = "`{removed, bytes}`", body = Object)))]
pub async fn cache_clear(State(state): State<AppState>) -> ApiResult<Json<Value>> {
    let speech = state.replies.engine().speech().clone();
    let v = state
        .off_executor(move || speech.clear_cache())
        .await?
        .map_err(speech_error)?;
    Ok(Json(v))
}

/// A voice connection as a client sends it.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ConnectionBody {
    pub name: String,
    /// `openai`, `gemini` or `elevenlabs`.
    pub platform: String,
    /// Default: the platform's public endpoint.
    #[serde(default)]
    pub base_url: Option<String>,
    pub model: String,
    /// Write-only. On replace: absent keeps the stored key, `""` removes it.
    #[serde(default)]
    pub api_key: Option<String>,
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// `voice`, `responseFormat`, `speed`, `instructions`, `languageCode`, `outputFormat`,
    /// `voiceSettings`.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub options: Map<String, Value>,
    /// Make it the default.
    #[serde(default)]
    pub default: bool,
}

fn invalid(field: &str, e: impl std::fmt::Display) -> ApiError {
    ApiError::bad_request(e.to_string()).with_details(json!({"path": field}))
}

impl ConnectionBody {
    fn into_connection(self) -> ApiResult<(VoiceConnection, bool)> {
        let platform = VoicePlatform::parse(&self.platform).map_err(|e| invalid("platform", e))?;
        let mut c = VoiceConnection::new(self.name, platform, self.model);
        if let Some(base) = self.base_url.filter(|b| !b.trim().is_empty()) {
            c.base_url = base;
        }
        c.api_key = self.api_key.filter(|k| !k.is_empty());
        c.api_key_env = self.api_key_env.filter(|k| !k.is_empty());
        c.options = self.options;
        Ok((c, self.default))
    }
}

async fn change_book(
    state: &AppState,
    f: impl FnOnce(
        &mut tavo_llm::media::speech::VoiceBook,
    ) -> Result<(), tavo_llm::media::MediaBookError>
    + Send
    + 'static,
) -> ApiResult<Json<Value>> {
    let book = state
        .blocking_api(move |s| config::change_book(s, f).map_err(speech_error))
        .await?;
    state.hub.library("tts", "connections", None);
    Ok(Json(book.masked()))
}

/// The voice connections, keys masked, and the default's name.
#[utoipa::path(get, path = "/api/tts/connections", tag = "tts",
    responses((status = 200, description = "`{connections: [{name, platform, baseUrl, model, apiKey (masked), hasKey, options}], default}`", body = Object)))]
pub async fn list_connections(State(state): State<AppState>) -> ApiResult<Json<Value>> {
    let book = state
        .blocking_api(|s| config::load_book(s).map_err(speech_error))
        .await?;
    Ok(Json(book.masked()))
}

/// Adds a voice connection (the first one becomes the default).
#[utoipa::path(post, path = "/api/tts/connections", tag = "tts",
    request_body = ConnectionBody,
    responses((status = 200, description = "The book, keys masked", body = Object),
              (status = 400, description = "Invalid connection (`details.path` names the field)", body = ErrorBody)))]
pub async fn add_connection(
    State(state): State<AppState>,
    Json(body): Json<ConnectionBody>,
) -> ApiResult<Json<Value>> {
    let (c, make_default) = body.into_connection()?;
    change_book(&state, move |book| book.add(c, make_default)).await
}

/// Replaces a voice connection (`name` in the body may rename it). Without `apiKey` the stored
/// key is kept; `"apiKey": ""` removes it.
#[utoipa::path(put, path = "/api/tts/connections/{name}", tag = "tts",
    params(("name" = String, Path)),
    request_body = ConnectionBody,
    responses((status = 200, description = "The book, keys masked", body = Object),
              (status = 400, description = "Invalid connection", body = ErrorBody),
              (status = 404, description = "No such connection", body = ErrorBody)))]
pub async fn replace_connection(
    State(state): State<AppState>,
    Path(name): Path<String>,
    Json(body): Json<ConnectionBody>,
) -> ApiResult<Json<Value>> {
    let key = match body.api_key.as_deref() {
        None => None,
        Some("") => Some(KeyChange::None),
        Some(k) => Some(KeyChange::Key(k.to_owned())),
    };
    let env = body.api_key_env.clone().filter(|e| !e.is_empty());
    let (c, make_default) = body.into_connection()?;
    change_book(&state, move |book| {
        let old = book.get(&name)?.clone();
        let mut unset: Vec<String> = old
            .options
            .keys()
            .filter(|k| !c.options.contains_key(*k))
            .cloned()
            .collect();
        unset.sort();
        let patch = MediaPatch {
            name: Some(c.name),
            platform: Some(c.platform),
            base_url: Some(c.base_url),
            model: Some(c.model),
            key: match (key, env) {
                (_, Some(var)) => Some(KeyChange::Env(var)),
                (k, None) => k,
            },
            options: c.options,
            unset,
            make_default,
        };
        book.update(&name, patch).map(|_| ())
    })
    .await
}

/// Removes a voice connection.
#[utoipa::path(delete, path = "/api/tts/connections/{name}", tag = "tts",
    params(("name" = String, Path)),
    responses((status = 200, description = "The book, keys masked", body = Object),
              (status = 404, description = "No such connection", body = ErrorBody)))]
pub async fn remove_connection(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> ApiResult<Json<Value>> {
    change_book(&state, move |book| book.remove(&name).map(|_| ())).await
}

/// Makes a voice connection the default.
#[utoipa::path(post, path = "/api/tts/connections/{name}/default", tag = "tts",
    params(("name" = String, Path)),
    responses((status = 200, description = "The book, keys masked", body = Object),
              (status = 404, description = "No such connection", body = ErrorBody)))]
pub async fn default_connection(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> ApiResult<Json<Value>> {
    change_book(&state, move |book| book.set_default(&name)).await
}

/// Every voice binding.
#[utoipa::path(get, path = "/api/tts/bindings", tag = "tts",
    responses((status = 200, description = "`{characters: {id: {connection?, voice}}, personas: {…}}`", body = Object)))]
pub async fn list_bindings(State(state): State<AppState>) -> ApiResult<Json<Value>> {
    let b = state
        .blocking_api(|s| config::load_bindings(s).map_err(speech_error))
        .await?;
    Ok(Json(serde_json::to_value(b).unwrap_or(Value::Null)))
}

fn binding_target(kind: &str, id: i64) -> ApiResult<VoiceTarget> {
    match kind {
        "characters" | "character" => Ok(VoiceTarget::Character(id)),
        "personas" | "persona" => Ok(VoiceTarget::Persona(id)),
        other => Err(ApiError::not_found(format!(
            "no binding kind {other:?} (characters or personas)"
        ))),
    }
}

/// Binds a character's or persona's voice.
#[utoipa::path(put, path = "/api/tts/bindings/{kind}/{id}", tag = "tts",
    params(("kind" = String, Path, description = "`characters` or `personas`"), ("id" = i64, Path)),
    request_body(content = Object, description = "`{connection?, voice}` (connection: a voice connection name; default: the default one)"),
    responses((status = 200, description = "Every binding", body = Object),
              (status = 400, description = "An empty voice", body = ErrorBody),
              (status = 404, description = "No such character, persona or connection", body = ErrorBody)))]
pub async fn set_binding(
    State(state): State<AppState>,
    Path((kind, id)): Path<(String, i64)>,
    Json(binding): Json<VoiceBinding>,
) -> ApiResult<Json<Value>> {
    let target = binding_target(&kind, id)?;
    let b = state
        .blocking_api(move |s| config::set_binding(s, target, Some(binding)).map_err(speech_error))
        .await?;
    state.hub.library("tts", "bindings", Some(id));
    Ok(Json(serde_json::to_value(b).unwrap_or(Value::Null)))
}

/// Removes a character's or persona's voice binding.
#[utoipa::path(delete, path = "/api/tts/bindings/{kind}/{id}", tag = "tts",
    params(("kind" = String, Path), ("id" = i64, Path)),
    responses((status = 200, description = "Every binding", body = Object),
              (status = 404, description = "No such character or persona", body = ErrorBody)))]
pub async fn remove_binding(
    State(state): State<AppState>,
    Path((kind, id)): Path<(String, i64)>,
) -> ApiResult<Json<Value>> {
    let target = binding_target(&kind, id)?;
    let b = state
        .blocking_api(move |s| config::set_binding(s, target, None).map_err(speech_error))
        .await?;
    state.hub.library("tts", "bindings", Some(id));
    Ok(Json(serde_json::to_value(b).unwrap_or(Value::Null)))
}

/// The voice settings: `{autoPlay, backgroundPlayback, playNarration, onlyQuotes, playCodeBlocks, playTagContent, rules}`.
#[utoipa::path(get, path = "/api/tts/settings", tag = "tts",
    responses((status = 200, description = "The voice settings, defaults filled in", body = Object)))]
pub async fn get_settings(State(state): State<AppState>) -> ApiResult<Json<Value>> {
    let v = state
        .blocking_api(|s| config::load_settings(s).map_err(speech_error))
        .await?;
    Ok(Json(serde_json::to_value(v).unwrap_or(Value::Null)))
}

/// Changes some voice settings; checked whole (nothing is written on an error, whose
/// `details.path` names the field, such as `rules[1].regex`).
#[utoipa::path(put, path = "/api/tts/settings", tag = "tts",
    request_body(content = Object, description = "Any of `autoPlay`, `backgroundPlayback`, `playNarration`, `onlyQuotes`, `playCodeBlocks`, `playTagContent` (booleans) and `rules` ([{name, regex, mode: include|exclude, enabled?}])"),
    responses((status = 200, description = "The voice settings after the change", body = Object),
              (status = 400, description = "A bad field", body = ErrorBody)))]
pub async fn put_settings(
    State(state): State<AppState>,
    Json(patch): Json<Value>,
) -> ApiResult<Json<Value>> {
    let v = state
        .blocking_api(move |s| config::update_settings(s, &patch).map_err(speech_error))
        .await?;
    state.hub.library("setting", "updated", None);
    Ok(Json(serde_json::to_value(v).unwrap_or(Value::Null)))
}
