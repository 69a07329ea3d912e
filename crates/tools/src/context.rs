//! What a handler is given: the store, the reply's own chat, and call-scoped services.

use std::collections::BTreeSet;
use std::sync::Arc;
use tavo_model::ChatId;

use serde_json::Value;
use tavo_store::Store;

use crate::error::{ErrorCode, ToolError};
use crate::extension::ExtensionRegistry;
use crate::gate::Gate;
use crate::operation::BoxFuture;
use crate::registry::Registry;

/// One image to generate (`tavo_image_generate`'s arguments with the reference images read).
#[derive(Clone, Default, PartialEq)]
pub struct ImageJob {
    /// The chat the image is for: its image connection binding is used.
    pub chat: Option<ChatId>,
    /// A connection name chosen by the caller (the CLI's `--connection`), over the chat's.
    pub connection: Option<String>,
    /// What to draw (non-empty).
    pub prompt: String,
    /// `"1024x1024"`.
    pub size: Option<String>,
    /// `"16:9"`.
    pub aspect_ratio: Option<String>,
    /// NovelAI / SD only.
    pub negative_prompt: Option<String>,
    /// Reference images as (bytes, MIME type).
    pub reference_images: Vec<(Vec<u8>, String)>,
    /// Provider fields passed through.
    pub extra_body: serde_json::Map<String, Value>,
}

impl std::fmt::Debug for ImageJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImageJob")
            .field("chat", &self.chat)
            .field("connection", &self.connection)
            .field("prompt", &self.prompt)
            .field("reference_images", &self.reference_images.len())
            .finish_non_exhaustive()
    }
}

/// An image-generation backend: the engine's, over the image connection book
/// (`image.connections`).
pub trait ImageGenerator: Send + Sync {
    /// Generates one image and returns its bytes and MIME type. Errors are already envelope
    /// errors: `resource_not_found` without a connection (or for an unknown model),
    /// `permission_denied` for a provider refusal, `internal_error` otherwise (with
    /// `details.reason` naming the provider failure), never with the provider's body.
    fn generate(&self, job: ImageJob) -> BoxFuture<Result<(Vec<u8>, String), ToolError>>;
}

/// A TTS playback backend (the engine's speech service; see `tts.play`).
pub trait SpeechPlayer: Send + Sync {
    /// Synthesizes `text` with the voice bound to `voice` (`{character: id}` or `{persona:
    /// id}`), after the playback rules when `apply_playback_rules`, and starts (or with
    /// `queue` queues) it in `chat`'s open app. Answers `{playing, reason?, audio?}`;
    /// `playing` is false, with the reason, when no open page will play it. A missing target
    /// or binding is `resource_not_found`.
    fn play(
        &self,
        chat: ChatId,
        text: String,
        voice: Value,
        queue: bool,
        apply_playback_rules: bool,
    ) -> BoxFuture<Result<Value, ToolError>>;
    /// Stops playback in `chat` and clears its queue; answers whether an open page heard it.
    fn stop(&self, chat: ChatId) -> BoxFuture<Result<bool, ToolError>>;
}

/// Long-term memory extraction: a model request, so the engine provides it (see
/// `memory.extract`).
pub trait MemoryExtractor: Send + Sync {
    /// "Extract now" in `chat`; answers `{memory, added, duplicates, messages, mergedWithEdit}`.
    /// Errors are envelope errors (`resource_not_found` for a missing chat or connection).
    fn extract(&self, chat: ChatId) -> BoxFuture<Result<Value, ToolError>>;
}

/// The web tools of `crates/web`, seen through the model door. Arguments arrive validated
/// against the seed's schemas; results are the JSON the model receives.
pub trait WebTools: Send + Sync {
    /// `tavo_web_fetch`.
    fn fetch(&self, args: Value) -> BoxFuture<Result<Value, ToolError>>;
    /// `tavo_web_search`; `None` when no complete default search API is configured.
    fn search(&self, args: Value) -> Option<BoxFuture<Result<Value, ToolError>>>;
    /// Whether a complete default search API exists (decides whether the tool is offered).
    fn search_available(&self) -> bool;
}

/// Services that live longer than a call but are not in the store.
#[derive(Clone, Default)]
pub struct Services {
    /// Image generation, when a provider is configured.
    pub image: Option<Arc<dyn ImageGenerator>>,
    /// TTS playback (the engine's speech service).
    pub tts: Option<Arc<dyn SpeechPlayer>>,
    /// Web fetch / search, when wired.
    pub web: Option<Arc<dyn WebTools>>,
    /// Tools registered by pages and MCP servers.
    pub extensions: ExtensionRegistry,
    /// Long-term memory extraction, when an engine runs.
    pub memory: Option<Arc<dyn MemoryExtractor>>,
}

impl std::fmt::Debug for Services {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Services")
            .field("image", &self.image.is_some())
            .field("tts", &self.tts.is_some())
            .field("web", &self.web.is_some())
            .field("memory", &self.memory.is_some())
            .finish_non_exhaustive()
    }
}

/// Everything one call runs with. Cheap to clone.
#[derive(Clone)]
pub struct OpContext {
    /// The library.
    pub store: Store,
    /// The chat that started the reply (or the CLI's `--chat`). Chat-scoped operations are bound
    /// to it for the whole reply; switching the current chat never redirects them.
    pub chat: Option<ChatId>,
    /// Call-scoped services.
    pub services: Arc<Services>,
    /// The registry, so discovery can search it.
    pub registry: Arc<Registry>,
    /// Tool names the model can already see this round (discovery skips them).
    pub shown: Arc<BTreeSet<String>>,
    /// The gate every store call of a handler passes ([`OpContext::blocking`]).
    pub gate: Gate,
}

impl std::fmt::Debug for OpContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpContext")
            .field("chat", &self.chat)
            .finish_non_exhaustive()
    }
}

impl OpContext {
    /// A context with no services and nothing shown.
    pub fn new(store: Store, registry: Arc<Registry>, chat: Option<ChatId>) -> Self {
        Self {
            store,
            chat,
            services: Arc::new(Services::default()),
            registry,
            shown: Arc::new(BTreeSet::new()),
            gate: Gate::default(),
        }
    }

    /// The reply's chat, or `resource_not_found` when the call has none.
    pub fn chat_id(&self) -> Result<ChatId, ToolError> {
        self.chat.ok_or_else(|| {
            ToolError::new(
                ErrorCode::ResourceNotFound,
                "there is no chat for this call; this tool works on the chat the call is made in \
                 (the chat of the reply, or the chat the caller names)",
            )
        })
    }

    /// Runs blocking store work off the async executor, behind the caller's [`Gate`].
    pub async fn blocking<T, F>(&self, what: &'static str, f: F) -> Result<T, ToolError>
    where
        T: Send + 'static,
        F: FnOnce(&Store) -> Result<T, ToolError> + Send + 'static,
    {
        self.gate.run(&self.store, what, f).await
    }
}

/// Maps a store error onto the envelope without leaking physical paths or SQL.
pub fn store_error(what: &str, err: tavo_store::StoreError) -> ToolError {
    use tavo_store::StoreError as E;
    match err {
        E::NotFound { kind, id } => ToolError::not_found(kind, id),
        E::Conflict { .. } => ToolError::new(ErrorCode::Conflict, err.to_string()),
        E::InvalidFileName { .. } | E::InvalidPath { .. } | E::InvalidArgument(_) => {
            ToolError::new(ErrorCode::InvalidArguments, err.to_string())
        }
        E::FileTooLarge { .. } => ToolError::new(ErrorCode::LimitExceeded, err.to_string()),
        other => {
            tracing::warn!(error = %other, "{what} failed in the store");
            ToolError::internal(what)
        }
    }
}
