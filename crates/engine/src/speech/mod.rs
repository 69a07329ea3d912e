//! Text-to-speech for every door (Tavo §14.1–14.2; seed 002 `tavo.tts.*`, seed 000
//! `tavo_tts_play` / `tavo_tts_stop`).
//!
//! [`Speech`] resolves a voice (a character's or persona's binding in `tts.bindings`, on a
//! `tts.connections` connection), applies the playback rules when asked
//! ([`tavo_prompt::speech`]), synthesizes through [`tavo_llm::media::speech`] — once per
//! text and voice, kept in the TTS cache ([`cache`]) — and hands the open app a `tts` event
//! `{chatId, action: "play", url, queue}` through its [`SpeechSink`]. Playback itself happens
//! in the app's player, which holds the chat's one shared queue: `queue: false` interrupts
//! what is playing and clears the queue, `queue: true` appends; `stop` stops and clears.
//!
//! Without a sink (the CLI) or with no page listening, a play still synthesizes and keeps the
//! audio, and answers `playing: false` with the reason and the audio's URL — it never claims
//! a playback nobody hears. The model's `tavo_tts_play` gets the same answer (not an error:
//! nothing went wrong, and retrying would not help); a missing target or binding is
//! `resource_not_found` for the model, `playing: false` for the app and TavoJS.

pub mod cache;
pub mod config;
mod say;

use std::sync::{Arc, RwLock};

use serde::Serialize;
use serde_json::{Value, json};
use tavo_llm::media::MediaFailure;
use tavo_llm::media::speech::{self as codec, Audio, SpeechRequest, VoiceConnection};
use tavo_llm::{Client, LlmError};
use tavo_model::{ChatId, MessageId, Role};
use tavo_store::{Store, StoreError};
use tavo_tools::context::SpeechPlayer;
use tavo_tools::operation::BoxFuture;
use tavo_tools::{ErrorCode, ToolError};

pub use config::{VoiceBinding, VoiceBindings, VoiceSettings, VoiceTarget};
pub use say::{SayRequest, SayVoice};

/// Why speech did not happen.
#[derive(Debug, thiserror::Error)]
pub enum SpeechError {
    /// The chat to play or stop in does not exist.
    #[error("chat {0} not found (see `tavo list chats`)")]
    ChatNotFound(ChatId),
    /// The message to speak does not exist, or belongs to another chat.
    #[error("message {0} not found in this chat")]
    MessageNotFound(MessageId),
    /// The character or persona whose voice was asked for does not exist (`character 12`).
    #[error("{0} not found")]
    TargetNotFound(String),
    /// The character or persona (named) has no voice bound, so tavo does not know how it
    /// sounds. The user binds one with `tavo tts bind` or in Settings → Voice.
    #[error("{0} has no voice binding; bind one with `tavo tts bind` or in Settings → Voice")]
    NoBinding(String),
    /// The voice connection a binding names is not in `tts.connections`, or none was named
    /// and there is no default one (the book's message says which).
    #[error("{0}")]
    NoConnection(String),
    /// A value was refused: a setting that does not parse, a bad rule or voice, an empty
    /// text. `path` lets a form mark the field.
    #[error("{path}: {problem}")]
    Invalid {
        /// The field at fault (`voice`, `text`, `rules[1].regex`, `tts.bindings`).
        path: String,
        /// What is wrong with it, for the user.
        problem: String,
    },
    /// The TTS provider failed or refused the synthesis (a bad key, a filtered text, a network
    /// failure); its message is shown as it is.
    #[error("{}", .0.message)]
    Provider(LlmError),
    /// The library failed reading the chat, the message or the voice settings.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The TTS cache could not be read, written or cleared, or store work off the executor
    /// failed. Not the user's doing; the log has the cause.
    #[error("{0}")]
    Internal(String),
}

impl SpeechError {
    /// The error envelope's code.
    pub fn code(&self) -> &'static str {
        match self {
            SpeechError::ChatNotFound(_)
            | SpeechError::MessageNotFound(_)
            | SpeechError::TargetNotFound(_)
            | SpeechError::NoBinding(_)
            | SpeechError::NoConnection(_) => "resource_not_found",
            SpeechError::Invalid { .. } => "invalid_arguments",
            SpeechError::Provider(e) if is_refusal(e) => "permission_denied",
            SpeechError::Provider(_) => "provider_error",
            SpeechError::Store(e) => e.code(),
            SpeechError::Internal(_) => "internal_error",
        }
    }

    /// The field path of an invalid value.
    pub fn path(&self) -> Option<&str> {
        match self {
            SpeechError::Invalid { path, .. } => Some(path),
            _ => None,
        }
    }
}

/// A refusal by the provider: the key, its permissions or a safety system (the same reading
/// as an image provider's, [`MediaFailure`]).
fn is_refusal(e: &LlmError) -> bool {
    MediaFailure::of(e) == MediaFailure::Refused
}

/// Where `tts` events go: the server's event stream. Answers how many open pages got it.
pub trait SpeechSink: Send + Sync {
    /// Publishes `{chatId, action, url?, queue?, messageId?}`.
    fn publish(&self, chat: ChatId, event: Value) -> usize;
}

/// One synthesized, cached audio file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Spoken {
    /// The cache file name (`<sha256>.mp3`).
    pub name: String,
    /// `/api/tts/audio/<name>`.
    pub url: String,
    /// The audio's MIME type, from the cached file's extension (`audio/mpeg` for `.mp3`).
    pub mime: String,
    /// The audio file's size in bytes.
    pub size: u64,
    /// Served from the cache (no provider request).
    pub cached: bool,
    /// The connection that spoke it.
    pub connection: String,
    /// The voice id that spoke it (the binding's, else the connection's `voice` option).
    pub voice: String,
    /// The text sent to the provider (after the playback rules).
    pub text: String,
}

/// What a play did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlayOutcome {
    /// Synthesized and handed to at least one open page.
    pub playing: bool,
    /// Why not, when not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The audio, when it was synthesized.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audio: Option<Spoken>,
    /// Open pages that received the event.
    pub delivered: usize,
}

impl PlayOutcome {
    fn not(reason: impl Into<String>) -> Self {
        Self {
            playing: false,
            reason: Some(reason.into()),
            audio: None,
            delivered: 0,
        }
    }
}

/// One play request (every door's shape).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayRequest {
    /// The chat whose open app plays the audio; its player holds the chat's queue.
    pub chat: ChatId,
    /// The text; `None`: the message's text (`message` must be given).
    pub text: Option<String>,
    /// Whose voice; `None`: the speaker of `message` (a bubble script's host message).
    pub voice: Option<VoiceTarget>,
    /// The message to speak, in `chat`: its text when `text` is `None`, its speaker when
    /// `voice` is `None`. The `play` event carries its id too.
    pub message: Option<MessageId>,
    /// `true` appends to the chat's playback queue; `false` interrupts what is playing and
    /// clears the queue first.
    pub queue: bool,
    /// Whether the saved playback rules (narration, quotes only, code blocks, tags, regex
    /// rules) cut the text before it is spoken; off, the text is spoken as given.
    pub apply_playback_rules: bool,
}

/// The speech service of an engine. Cheap to clone.
#[derive(Clone)]
pub struct Speech {
    store: Store,
    client: Client,
    gate: tavo_tools::Gate,
    sink: Arc<RwLock<Option<Arc<dyn SpeechSink>>>>,
}

impl std::fmt::Debug for Speech {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Speech").finish_non_exhaustive()
    }
}

impl Speech {
    pub(crate) fn new(store: Store, client: Client, gate: tavo_tools::Gate) -> Self {
        Self {
            store,
            client,
            gate,
            sink: Arc::default(),
        }
    }

    /// Sends `tts` events to `sink` from now on (the server's event stream).
    pub fn set_sink(&self, sink: Arc<dyn SpeechSink>) {
        *self.sink.write().unwrap_or_else(|p| p.into_inner()) = Some(sink);
    }

    fn publish(&self, chat: ChatId, event: Value) -> usize {
        let sink = self.sink.read().unwrap_or_else(|p| p.into_inner()).clone();
        sink.map_or(0, |s| s.publish(chat, event))
    }

    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Store) -> Result<T, SpeechError> + Send + 'static,
    ) -> Result<T, SpeechError> {
        crate::offload::gated(&self.store, &self.gate, SpeechError::Internal, f).await
    }

    /// Synthesizes `text` with `conn` and `voice` (the connection's `voice` option when
    /// `None`), through the cache.
    pub async fn synthesize(
        &self,
        conn: VoiceConnection,
        voice: Option<String>,
        text: String,
    ) -> Result<Spoken, SpeechError> {
        let req = SpeechRequest {
            text: text.trim().to_owned(),
            voice,
        };
        let voice = codec::voice_of(&conn, &req).map_err(|e| SpeechError::Invalid {
            path: "voice".into(),
            problem: e.message.trim_start_matches("voice: ").to_owned(),
        })?;
        let key = cache::key(&conn, &voice, &req.text);
        let spoken = |name: String, size: u64, cached: bool| Spoken {
            url: format!("/api/tts/audio/{name}"),
            mime: codec::mime_for(name.rsplit('.').next().unwrap_or("mp3")).to_owned(),
            name,
            size,
            cached,
            connection: conn.name.clone(),
            voice: voice.clone(),
            text: req.text.clone(),
        };
        let k = key.clone();
        let found = self
            .cache_task("reading the TTS cache", move |store| {
                cache::find(store.files(), &k)
            })
            .await?;
        if let Some((name, size)) = found {
            return Ok(spoken(name, size, true));
        }
        let audio: Audio = codec::synthesize(&self.client, &conn, &req)
            .await
            .map_err(SpeechError::Provider)?;
        let size = audio.bytes.len() as u64;
        let name = self
            .cache_task("storing the audio in the TTS cache", move |store| {
                cache::store(store.files(), &key, &audio)
            })
            .await?;
        Ok(spoken(name, size, false))
    }

    /// The connection and voice of `target`'s binding.
    pub async fn resolve(
        &self,
        target: VoiceTarget,
    ) -> Result<(VoiceConnection, String), SpeechError> {
        self.blocking(move |store| {
            config::require_target(store, target)?;
            let bindings = config::load_bindings(store)?;
            let b = bindings
                .get(target)
                .ok_or_else(|| SpeechError::NoBinding(target.describe()))?;
            let conn = config::pick_connection(store, b.connection.as_deref())?;
            Ok((conn, b.voice.clone()))
        })
        .await
    }

    /// `text` through the saved playback rules.
    pub async fn spoken_text(&self, text: String) -> Result<String, SpeechError> {
        let settings = self.blocking(config::load_settings).await?;
        Ok(tavo_prompt::speech::spoken_text(&text, &settings.playback))
    }

    /// Plays in `chat`'s open app (see the module documentation).
    pub async fn play(&self, req: PlayRequest) -> Result<PlayOutcome, SpeechError> {
        let PlayRequest {
            chat,
            text,
            voice,
            message,
            queue,
            apply_playback_rules,
        } = req;
        // The chat, the message's text and speaker, the voice settings: one trip.
        let (text, target, settings) = self
            .blocking(move |store| {
                let found = store.get::<tavo_model::Chat>(chat)?;
                let chat_row = found.ok_or(SpeechError::ChatNotFound(chat))?;
                let msg = match message {
                    Some(id) => {
                        let m = store
                            .message_get(id)?
                            .filter(|_| {
                                store
                                    .message_chat(id)
                                    .ok()
                                    .flatten()
                                    .is_some_and(|c| c == chat)
                            })
                            .ok_or(SpeechError::MessageNotFound(id))?;
                        Some(m)
                    }
                    None => None,
                };
                // A user message is the chat's persona speaking: its own, else the default.
                let user_persona = match &msg {
                    Some(m) if voice.is_none() && m.role == Role::User => {
                        store.chat_persona(&chat_row)?.and_then(|p| p.id)
                    }
                    _ => None,
                };
                let target = voice.or_else(|| {
                    let m = msg.as_ref()?;
                    match m.role {
                        Role::User => user_persona.map(|p| VoiceTarget::Persona(p.0)),
                        _ => m
                            .character_id
                            .map(|c| VoiceTarget::Character(c.0))
                            .or_else(|| {
                                (chat_row.characters.len() == 1)
                                    .then(|| VoiceTarget::Character(chat_row.characters[0].id.0))
                            }),
                    }
                });
                let text = text.or_else(|| msg.map(|m| m.content)).unwrap_or_default();
                Ok((text, target, config::load_settings(store)?))
            })
            .await?;
        let Some(target) = target else {
            return Ok(PlayOutcome::not(
                "no voice target: pass voice {character} or {persona}, or a message",
            ));
        };
        let text = if apply_playback_rules {
            tavo_prompt::speech::spoken_text(&text, &settings.playback)
        } else {
            text.trim().to_owned()
        };
        if text.is_empty() {
            return Ok(PlayOutcome::not("nothing to speak"));
        }
        let (conn, voice) = match self.resolve(target).await {
            Ok(found) => found,
            Err(
                e @ (SpeechError::TargetNotFound(_)
                | SpeechError::NoBinding(_)
                | SpeechError::NoConnection(_)),
            ) => return Ok(PlayOutcome::not(e.to_string())),
            Err(e) => return Err(e),
        };
        let spoken = self.synthesize(conn, Some(voice), text).await?;
        let delivered = self.publish(
            chat,
            json!({"chatId": chat, "action": "play", "url": spoken.url, "queue": queue,
                   "messageId": message, "mimeType": spoken.mime}),
        );
        Ok(PlayOutcome {
            playing: delivered > 0,
            reason: (delivered == 0).then(|| {
                "no app page is open to play it; the audio was synthesized and kept at its url"
                    .to_owned()
            }),
            audio: Some(spoken),
            delivered,
        })
    }

    /// Stops `chat`'s playback and clears its queue in every open page. Answers whether a
    /// page got the event.
    pub async fn stop(&self, chat: ChatId) -> Result<bool, SpeechError> {
        let exists = self
            .blocking(move |store| Ok(store.get::<tavo_model::Chat>(chat)?.is_some()))
            .await?;
        if !exists {
            return Err(SpeechError::ChatNotFound(chat));
        }
        Ok(self.publish(chat, json!({"chatId": chat, "action": "stop"})) > 0)
    }

    /// The voice connection book, keys masked.
    pub async fn connections(&self) -> Result<Value, SpeechError> {
        self.blocking(|store| Ok(config::load_book(store)?.masked()))
            .await
    }

    /// Changes the voice connection book in one transaction; answers it masked.
    pub async fn change_connections(
        &self,
        f: impl FnOnce(
            &mut tavo_llm::media::speech::VoiceBook,
        ) -> Result<(), tavo_llm::media::MediaBookError>
        + Send
        + 'static,
    ) -> Result<Value, SpeechError> {
        self.blocking(move |store| Ok(config::change_book(store, f)?.masked()))
            .await
    }

    /// The connection named `name`, else the default one (key included: never print it).
    pub async fn connection(&self, name: Option<String>) -> Result<VoiceConnection, SpeechError> {
        self.blocking(move |store| config::pick_connection(store, name.as_deref()))
            .await
    }

    /// Every voice binding.
    pub async fn bindings(&self) -> Result<VoiceBindings, SpeechError> {
        self.blocking(config::load_bindings).await
    }

    /// Binds (`Some`) or unbinds (`None`) `target`'s voice; answers every binding.
    pub async fn bind(
        &self,
        target: VoiceTarget,
        binding: Option<VoiceBinding>,
    ) -> Result<VoiceBindings, SpeechError> {
        self.blocking(move |store| config::set_binding(store, target, binding))
            .await
    }

    /// The voice settings.
    pub async fn settings(&self) -> Result<VoiceSettings, SpeechError> {
        self.blocking(config::load_settings).await
    }

    /// Changes some voice settings (see [`config::update_settings`]).
    pub async fn update_settings(&self, patch: Value) -> Result<VoiceSettings, SpeechError> {
        self.blocking(move |store| config::update_settings(store, &patch))
            .await
    }

    /// A cached audio file's bytes and MIME type.
    pub async fn audio(
        &self,
        name: String,
    ) -> Result<Option<(Vec<u8>, &'static str)>, SpeechError> {
        self.cache_task("reading the TTS cache", move |store| {
            cache::read(store.files(), &name)
        })
        .await
    }

    /// `{files, bytes}` of the cache.
    pub fn cache_usage(&self) -> Result<Value, SpeechError> {
        let (files, bytes) = cache::usage(self.store.files())
            .map_err(|e| cache_failed("reading the TTS cache", &e))?;
        Ok(json!({"files": files, "bytes": bytes}))
    }

    /// Empties the cache; `{removed, bytes}`.
    pub fn clear_cache(&self) -> Result<Value, SpeechError> {
        let (files, bytes) = cache::clear(self.store.files())
            .map_err(|e| cache_failed("clearing the TTS cache", &e))?;
        Ok(json!({"removed": files, "bytes": bytes}))
    }

    /// Runs cache work (disk or database) on a blocking thread; a failure is logged with its
    /// detail and answered as `what` failed.
    async fn cache_task<T: Send + 'static>(
        &self,
        what: &'static str,
        f: impl FnOnce(&Store) -> Result<T, tavo_store::StoreError> + Send + 'static,
    ) -> Result<T, SpeechError> {
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || f(&store))
            .await
            .map_err(|e| SpeechError::Internal(format!("internal task failed: {e}")))?
            .map_err(|e| cache_failed(what, &e))
    }
}

/// A cache failure as the caller sees it: what failed, the detail in the log only (it may
/// name a path or a statement).
fn cache_failed(what: &'static str, e: &tavo_store::StoreError) -> SpeechError {
    tracing::warn!(error = %e, "{what} failed");
    SpeechError::Internal(format!("{what} failed"))
}

/// The envelope error: the same code where the envelope has it; a provider failure
/// (`provider_error`, a door's word) is the envelope's `internal_error`.
fn tool_error(e: SpeechError) -> ToolError {
    let code = ErrorCode::parse(e.code()).unwrap_or(ErrorCode::InternalError);
    ToolError::new(code, e.to_string())
}

/// The model's and TavoJS's door (`Services.tts`).
impl SpeechPlayer for Speech {
    fn play(
        &self,
        chat: ChatId,
        text: String,
        voice: Value,
        queue: bool,
        apply_playback_rules: bool,
    ) -> BoxFuture<Result<Value, ToolError>> {
        let this = self.clone();
        Box::pin(async move {
            let target = VoiceTarget::from_json(&voice).ok_or_else(|| {
                ToolError::invalid_at(
                    "options.voice",
                    "{character: id} or {persona: id}",
                    "object",
                )
            })?;
            // The model must get resource_not_found for a missing target or binding (seed 000).
            this.resolve(target).await.map_err(tool_error)?;
            let out = this
                .play(PlayRequest {
                    chat,
                    text: Some(text),
                    voice: Some(target),
                    message: None,
                    queue,
                    apply_playback_rules,
                })
                .await
                .map_err(tool_error)?;
            Ok(json!({
                "playing": out.playing,
                "reason": out.reason,
                "audio": out.audio.as_ref().map(|a| json!({"url": a.url, "mimeType": a.mime, "cached": a.cached})),
            }))
        })
    }

    fn stop(&self, chat: ChatId) -> BoxFuture<Result<bool, ToolError>> {
        let this = self.clone();
        Box::pin(async move { Speech::stop(&this, chat).await.map_err(tool_error) })
    }
}
