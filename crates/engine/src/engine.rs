//! The engine: starts replies, owns them while they live, finds them again by id or chat.
//!
//! A reply is owned here, not by whoever started it: dropping every handle does not stop it,
//! switching the "current chat" elsewhere never redirects it (its chat is fixed at start), and
//! at most one reply lives per chat — across engines and processes, through the claim kept in
//! the chat's reply record (see [`crate::status`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tavo_llm::connection::SETTINGS_KEY;
use tavo_llm::{Client, ConnectionBook};
use tavo_model::{ChatId, MessageId, Role};
use tavo_prompt::PromptEngine;
use tavo_store::Store;
use tavo_tools::web::{WebAdapter, load_fetch_policy, load_search_settings};
use tavo_tools::{Registry, Services, ToolSettings};
use tavo_web::WebFetcher;
use tavo_web::search::TavilyClient;

use crate::control::Control;
use crate::error::EngineError;
use crate::event::ReplyEvent;
use crate::hub::{EventHub, Subscription};
use crate::interaction::{Interaction, RespondError, Response};
use crate::limits::Limits;
use crate::persist::Persister;
use crate::request::{ReplyKind, ReplyRequest};
use crate::status::{
    ReplyRecord, ReplyStatus, claim, now, recover_interrupted, release, this_process,
};
use crate::task::{ReplyTask, Target};
use crate::toolcall::ExtensionRunner;

/// Library tasks of replies (prompt builds, new messages, audits) that run at once. The library
/// is one SQLite connection: more would each hold an OS thread of the blocking pool just to
/// wait for its lock (hundreds of replies starting together grew it to 512 threads).
pub const BLOCKING_CONCURRENCY: usize = 4;

/// Replies that go through their start (prompt, message, request to the provider) at a time.
///
/// A start is about a millisecond of CPU, most of it on the executor that also relays every
/// live reply's events. Hundreds of replies starting at once would put hundreds of start tasks
/// in the executor's queues, and every relayed event would wait behind them: with 500 replies
/// starting together on 2 cores, the events of the replies already streaming waited 10–20 ms.
/// Admitted two at a time, the starts take a little longer in all and the relay stays quick.
/// A reply holds its place at most [`START_HOLD`] while it waits on the network, so a slow
/// provider never holds up the replies of other chats.
pub const STARTING_CONCURRENCY: usize = 2;

/// The longest a starting reply keeps its place while its provider has not answered.
pub const START_HOLD: std::time::Duration = std::time::Duration::from_millis(20);

pub(crate) struct Inner {
    pub(crate) store: Store,
    pub(crate) registry: Arc<Registry>,
    pub(crate) services: Arc<Services>,
    pub(crate) client: Client,
    pub(crate) prompt: Arc<PromptEngine>,
    pub(crate) extensions: Option<Arc<dyn ExtensionRunner>>,
    /// Plugin generation hooks (the page that has the chat open), when a door attaches pages.
    pub(crate) hooks: Option<Arc<dyn crate::hooks::GenerationHooks>>,
    /// Checkpoints and status records of every live reply, written in batches.
    pub(crate) persister: Arc<Persister>,
    /// Admits [`BLOCKING_CONCURRENCY`] of the replies' library tasks at a time.
    pub(crate) gate: tavo_tools::Gate,
    /// Admits [`STARTING_CONCURRENCY`] replies at a time into their start.
    pub(crate) starting: Arc<tokio::sync::Semaphore>,
    /// The web fetcher and search client; each reply gets its own adapter (fetch cursors live
    /// only as long as their reply).
    web: Option<(Arc<WebFetcher>, Option<TavilyClient>)>,
    live: Mutex<HashMap<ChatId, ReplyHandle>>,
    /// Chats with a memory extraction running in this process.
    pub(crate) memory_in_flight: crate::memory::InFlight,
    /// Automatic memory extractions started after replies.
    pub(crate) background: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// Text-to-speech (`tts.play` for every door).
    pub(crate) speech: crate::speech::Speech,
}

impl Inner {
    fn live(&self) -> std::sync::MutexGuard<'_, HashMap<ChatId, ReplyHandle>> {
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The reply with this id, if it is in this process.
    pub(crate) fn live_reply(&self, id: &str) -> Option<ReplyHandle> {
        self.live().values().find(|h| &*h.id == id).cloned()
    }

    /// The services of one reply: the engine's, plus a fresh web adapter when the caller did
    /// not bring its own web tools.
    pub(crate) fn reply_services(&self) -> Arc<Services> {
        match (&self.web, &self.services.web) {
            (Some((fetcher, tavily)), None) => {
                let settings = load_search_settings(&self.store);
                let mut services = (*self.services).clone();
                services.web = Some(Arc::new(WebAdapter::new(
                    fetcher.clone(),
                    tavily.clone(),
                    &settings,
                )));
                Arc::new(services)
            }
            _ => self.services.clone(),
        }
    }

    pub(crate) fn forget(&self, chat: ChatId, id: &str) {
        let mut live = self.live();
        if live.get(&chat).is_some_and(|h| &*h.id == id) {
            live.remove(&chat);
        }
    }
}

/// The reply engine. Cheap to clone.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("live", &self.inner.live().len())
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// Lets replies run plugin generation hooks through `hooks` (`generation:prepare`,
    /// `generation:success`, and the terminal notices).
    pub fn with_hooks(mut self, hooks: Arc<dyn crate::hooks::GenerationHooks>) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.hooks = Some(hooks);
        }
        self
    }

    /// Gives replies `tavo_web_fetch` (and `tavo_web_search` when a complete default search
    /// API is saved). Without it, the web tools answer `resource_not_found`.
    pub fn with_web(mut self) -> Self {
        let fetcher = match WebFetcher::new(load_fetch_policy(&self.inner.store)) {
            Ok(f) => Arc::new(f),
            Err(e) => {
                tracing::warn!(error = %e, "web fetch is unavailable");
                return self;
            }
        };
        let tavily = TavilyClient::new()
            .map_err(|e| tracing::warn!(error = %e, "web search is unavailable"))
            .ok();
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.web = Some((fetcher, tavily));
        }
        self
    }

    /// An engine put together by hand from its parts: an explicit registry, services, HTTP
    /// client (retries, time-outs) and extension runner, without web tools or hooks unless
    /// added. Tests and benchmarks use it to swap one part; a door never does — it builds with
    /// [`Engine::builder`], so every door's engine can do the same things (the architecture
    /// test `doors_build_the_engine_with_the_builder` checks it).
    pub fn with_client(
        store: Store,
        registry: Arc<Registry>,
        services: Arc<Services>,
        client: Client,
        extensions: Option<Arc<dyn ExtensionRunner>>,
    ) -> Self {
        let persister = Persister::new(store.clone());
        let memory_in_flight = crate::memory::InFlight::default();
        let gate = tavo_tools::Gate::new(BLOCKING_CONCURRENCY);
        // `memory.extract` needs a model request: the engine brings it to every door.
        let services = if services.memory.is_none() {
            let mut s = (*services).clone();
            s.memory = Some(Arc::new(crate::memory::Extractor {
                store: store.clone(),
                client: client.clone(),
                gate: gate.clone(),
                in_flight: memory_in_flight.clone(),
            }));
            Arc::new(s)
        } else {
            services
        };
        // `image.generate` likewise: over the image connection book (`crate::image`).
        let services = if services.image.is_none() {
            let mut s = (*services).clone();
            s.image = Some(Arc::new(crate::image::ImageService {
                store: store.clone(),
                client: client.clone(),
                gate: gate.clone(),
            }));
            Arc::new(s)
        } else {
            services
        };
        // `tts.play` needs a provider request and the TTS cache: the engine brings it too.
        let speech = crate::speech::Speech::new(store.clone(), client.clone(), gate.clone());
        let services = if services.tts.is_none() {
            let mut s = (*services).clone();
            s.tts = Some(Arc::new(speech.clone()));
            Arc::new(s)
        } else {
            services
        };
        Self {
            inner: Arc::new(Inner {
                store,
                registry,
                services,
                client,
                prompt: Arc::new(PromptEngine::new()),
                extensions,
                hooks: None,
                persister,
                gate,
                starting: Arc::new(tokio::sync::Semaphore::new(STARTING_CONCURRENCY)),
                web: None,
                live: Mutex::new(HashMap::new()),
                memory_in_flight,
                background: Mutex::new(Vec::new()),
                speech,
            }),
        }
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    /// The operation registry (the built-in operations every door and every reply share).
    pub fn registry(&self) -> Arc<Registry> {
        self.inner.registry.clone()
    }

    /// The services of a direct call (a fresh web adapter).
    pub(crate) fn services(&self) -> Arc<Services> {
        self.inner.reply_services()
    }

    /// The library gate.
    pub(crate) fn gate(&self) -> tavo_tools::Gate {
        self.inner.gate.clone()
    }

    /// Text-to-speech: voice connections, bindings, settings, synthesis, playback events and
    /// the TTS cache (see [`crate::speech`]).
    pub fn speech(&self) -> &crate::speech::Speech {
        &self.inner.speech
    }

    /// The call path for a user's direct call (`tavo tool call`, `POST /api/ops/{name}`, MCP):
    /// the same registry, services (a fresh web adapter per call, so fetch cursors live only
    /// as long as it), extension runner and library gate that replies use.
    pub fn dispatcher(&self) -> tavo_tools::Dispatcher {
        tavo_tools::Dispatcher::new(
            self.inner.store.clone(),
            self.inner.registry.clone(),
            self.inner.reply_services(),
            self.inner.gate.clone(),
        )
        .with_extensions(self.inner.extensions.clone())
    }

    /// Starts making ready, on a background thread, the tokenizer of the default connection's
    /// model and o200k (which estimated models count with), so that a later exact count
    /// does not wait (`tavo serve` calls it at start). Returns at once; replies never wait
    /// for it either way (see [`tavo_prompt::PromptOptions::wait_for_tokenizer`]).
    pub fn warm_tokenizers(&self) {
        let model = crate::prompt::default_model(&self.inner.store);
        self.inner
            .prompt
            .warm_tokenizers(&[model.as_deref().unwrap_or("gpt-4o")]);
    }

    /// The request the chat's next reply would send first, built by the reply's own code
    /// (`tavo prompt`). Blocking: reads the library. Records the generation only when asked.
    pub fn preview(
        &self,
        req: &crate::prompt::PreviewRequest,
    ) -> Result<crate::prompt::Preview, EngineError> {
        let inner = &self.inner;
        crate::prompt::preview(
            &inner.store,
            &inner.prompt,
            &inner.registry,
            &inner.reply_services(),
            req,
        )
    }

    /// Long-term memory "extract now" in `chat`: one request on the `memory.connection`
    /// connection (else the default one; `connection` overrides both, `model` the model),
    /// de-duplicated against the chat's memories and saved without overwriting an edit made
    /// meanwhile (see [`crate::memory`]). One extraction per chat runs at a time.
    pub async fn extract_memory(
        &self,
        chat: ChatId,
        connection: Option<String>,
        model: Option<String>,
    ) -> Result<crate::memory::Extraction, crate::memory::MemoryError> {
        crate::memory::extract_now(&self.inner, chat, connection, model).await
    }

    /// Translates a message and stores the translation on it (`tavo translate`, `POST
    /// /api/messages/{id}/translate`); see [`crate::translate`].
    pub async fn translate_message(
        &self,
        message: MessageId,
        language: Option<String>,
        connection: Option<String>,
    ) -> Result<crate::translate::Translation, crate::translate::TranslateError> {
        crate::translate::translate(
            &self.inner.store,
            &self.inner.client,
            &self.inner.gate,
            message,
            language,
            connection,
        )
        .await
    }

    /// Describes the image a message carries and stores the description on it (`tavo image
    /// describe`, `POST /api/messages/{id}/describe-image`); see [`crate::describe`].
    pub async fn describe_image(
        &self,
        message: MessageId,
        connection: Option<String>,
    ) -> Result<crate::describe::ImageDescription, crate::describe::DescribeError> {
        crate::describe::describe(
            &self.inner.store,
            &self.inner.client,
            &self.inner.gate,
            message,
            connection,
        )
        .await
    }

    /// One generation on the chat's connection that writes nothing (`tavo.generate`, `POST
    /// /api/chats/{id}/generate`); see [`crate::generate`].
    pub async fn generate(
        &self,
        req: crate::generate::GenerateRequest,
    ) -> Result<crate::generate::Generated, crate::generate::GenerateError> {
        crate::generate::generate(&self.inner, req).await
    }

    /// Waits until the automatic memory extractions started after replies have ended (a CLI
    /// process waits for them before it exits; a server never needs to).
    pub async fn wait_background(&self) {
        crate::memory::wait_background(&self.inner).await;
    }

    /// Marks replies a dead process left `running` or `waiting` as `cancelled` (seed: never
    /// replayed). Call once at start-up.
    pub fn recover(&self) -> Result<Vec<ReplyRecord>, EngineError> {
        Ok(recover_interrupted(&self.inner.store)?)
    }

    /// A handle that does not keep the engine alive (background watchers).
    pub(crate) fn downgrade(&self) -> std::sync::Weak<Inner> {
        Arc::downgrade(&self.inner)
    }

    /// The live reply with this id.
    pub fn reply(&self, id: &str) -> Option<ReplyHandle> {
        self.inner.live_reply(id)
    }

    /// Asks the replica that runs reply `id` to cancel it (PostgreSQL; see [`crate::cluster`]).
    pub async fn cancel_elsewhere(&self, id: &str) -> Result<(), EngineError> {
        let id = id.to_owned();
        crate::offload::on_blocking_pool(&self.inner.store, move |s| {
            crate::cluster::send(s, crate::cluster::CANCEL_NOTICE, &id).map_err(EngineError::from)
        })
        .await
    }

    /// Sends an answer to the replica that runs its reply (PostgreSQL).
    pub async fn respond_elsewhere(
        &self,
        answer: crate::cluster::Answer,
    ) -> Result<(), EngineError> {
        let body =
            serde_json::to_string(&answer).map_err(|e| EngineError::Internal(e.to_string()))?;
        crate::offload::on_blocking_pool(&self.inner.store, move |s| {
            crate::cluster::send(s, crate::cluster::RESPOND_NOTICE, &body)
                .map_err(EngineError::from)
        })
        .await
    }

    /// Sends a notice of the door's own kind to this library's listeners on the other replicas
    /// (nothing on SQLite). Blocking work runs on the blocking pool.
    pub async fn announce(&self, kind: &'static str, body: String) -> Result<(), EngineError> {
        crate::offload::on_blocking_pool(&self.inner.store, move |s| {
            crate::cluster::send(s, kind, &body).map_err(EngineError::from)
        })
        .await
    }

    /// The notices of this library from every replica (`None` on SQLite), for a door's own kinds.
    pub fn notices(
        &self,
    ) -> Option<tokio::sync::broadcast::Receiver<Arc<tavo_store::cluster::Notice>>> {
        self.inner.store.subscribe_notices()
    }

    /// This process's replica id on PostgreSQL.
    pub fn replica_id(&self) -> Option<String> {
        self.inner.store.replica().map(str::to_owned)
    }

    /// The live reply of a chat.
    pub fn reply_for_chat(&self, chat: ChatId) -> Option<ReplyHandle> {
        self.inner.live().get(&chat).cloned()
    }

    /// Every live reply.
    pub fn live(&self) -> Vec<ReplyHandle> {
        self.inner.live().values().cloned().collect()
    }

    /// Whether any reply is still running or waiting, without copying the list: each reply
    /// asks this as it ends, so it must not cost the number of replies in allocations.
    pub fn any_live(&self) -> bool {
        self.inner.live().values().any(|h| h.status().is_live())
    }

    /// Starts a reply and returns its handle at once; the reply runs on the tokio runtime.
    /// Errors here mean nothing was started and nothing was written. In a group chat the
    /// chat's reply mode decides who answers (see [`crate::group`]), unless the request's kind
    /// names a speaker (Tavo's quick group speech), muted or not, who must be a member.
    pub fn start(&self, req: ReplyRequest) -> Result<ReplyHandle, EngineError> {
        let inner = &self.inner;
        let store = &inner.store;
        let chat = store
            .chat_get(req.chat)?
            .ok_or(EngineError::ChatNotFound(req.chat))?;
        if let Some(h) = self.reply_for_chat(req.chat)
            && h.status().is_live()
        {
            return Err(EngineError::Busy(req.chat, h.id.to_string()));
        }
        let chosen = match req.kind.speaker() {
            None => None,
            Some(id) => {
                if !chat.characters.iter().any(|m| m.id == id) {
                    return Err(tavo_tools::group::not_a_member(&chat, id).into());
                }
                Some(id)
            }
        };
        let book = ConnectionBook::from_setting(store.setting_get(SETTINGS_KEY)?)?;
        let connection = book.pick(req.connection.as_deref())?.clone();
        let parameters = book.effective_parameters(&connection);
        let endpoint = connection.endpoint()?;
        let settings = ToolSettings::load(store)?;
        let limits = req
            .limits
            .unwrap_or_else(|| Limits::from_settings(&settings));
        let id = format!("rpl_{}", uuid::Uuid::new_v4().simple());
        let started = now();
        let (pid, process_start, boot_id) = this_process();
        let record = ReplyRecord {
            id: id.clone(),
            chat_id: req.chat,
            message_id: None,
            status: ReplyStatus::Running,
            pid,
            process_start,
            boot_id,
            replica: store.replica().map(str::to_owned),
            started_at: started.clone(),
            updated_at: started,
        };
        // The chat is claimed in the library before anything is written, so a reply of another
        // process (or engine) in this chat refuses this one instead of interleaving with it.
        let claimed = claim(store, &record)?.map_err(|live| EngineError::BusyElsewhere {
            chat: req.chat,
            reply: live.id,
            pid: live.pid,
        })?;
        let (target, user_message, kept) = match self.prepare_target(&req, &chat) {
            Ok(prepared) => prepared,
            Err(e) => {
                if let Err(release) = release(store, &claimed) {
                    tracing::warn!(error = %release, "cannot give back the chat's reply claim");
                }
                return Err(e);
            }
        };
        let control = Control::new(EventHub::new(&id), Some((inner.persister.clone(), record)));
        let handle = ReplyHandle {
            id: Arc::from(id.as_str()),
            chat: req.chat,
            user_message,
            control: control.clone(),
        };
        inner.live().insert(req.chat, handle.clone());
        if store.replica().is_some() {
            tokio::spawn(crate::cluster::ship_events(
                inner.persister.clone(),
                handle.subscribe(0),
                handle.id.clone(),
            ));
        }
        let task = ReplyTask::new(
            self.inner.clone(),
            control,
            id,
            req.chat,
            req.kind.generation(),
            target,
            endpoint,
            connection.model.clone(),
            parameters,
            settings,
            limits,
            crate::group::Speakers { chosen, kept },
        );
        tokio::spawn(task.run());
        Ok(handle)
    }

    /// Writes what must exist before the prompt is built (the user's message; a regenerate
    /// removes the answer it replaces) and decides which message the reply writes. Returns the
    /// id of the user's message when it stored one, and the speaker of the answer a
    /// regeneration replaced.
    #[allow(clippy::type_complexity)]
    fn prepare_target(
        &self,
        req: &ReplyRequest,
        _chat: &tavo_model::Chat,
    ) -> Result<(Target, Option<MessageId>, Option<tavo_model::CharacterId>), EngineError> {
        let store = &self.inner.store;
        let chat = req.chat;
        let last = store.messages_last(chat, 1)?.pop();
        let has_history = last.is_some();
        let last_assistant = last.filter(|m| m.role == Role::Assistant && m.id.is_some());
        match &req.kind {
            ReplyKind::Normal { message: None, .. } if !has_history => Err(EngineError::NoMessage),
            ReplyKind::Normal { message: None, .. } => Ok((Target::New, None, None)),
            ReplyKind::Normal {
                message: Some(message),
                ..
            } => {
                if let Some(image) = message.image() {
                    crate::describe::check_attachment(store, chat, image)?;
                }
                // The one message write: the chat's receive regex rules apply.
                let mut draft = tavo_tools::messages::MessageDraft::new(Role::User, message.text());
                if let Some(image) = message.image() {
                    draft
                        .extra
                        .insert("extra".into(), serde_json::json!({ "image": image }));
                }
                let written = tavo_tools::messages::append_message(store, chat, draft)?;
                for w in written.warnings() {
                    tracing::warn!(chat = %req.chat, "{w}");
                }
                Ok((Target::New, written.message.id, None))
            }
            ReplyKind::Regenerate { .. } => {
                let kept = last_assistant.as_ref().and_then(|m| m.character_id);
                if let Some(m) = last_assistant.and_then(|m| m.id) {
                    store.message_delete(m)?;
                }
                Ok((Target::New, None, kept))
            }
            ReplyKind::Swipe => last_assistant
                .map(|m| (Target::Swipe(m), None, None))
                .ok_or(EngineError::NothingToContinue("swipe")),
            ReplyKind::Continue => last_assistant
                .map(|m| (Target::Continue(m), None, None))
                .ok_or(EngineError::NothingToContinue("continue")),
            ReplyKind::Impersonate => Ok((Target::Draft, None, None)),
            ReplyKind::Quiet => Ok((Target::Nothing, None, None)),
        }
    }
}

/// A handle on one reply. Dropping it does not stop the reply.
#[derive(Clone)]
pub struct ReplyHandle {
    id: Arc<str>,
    chat: ChatId,
    /// The user's message the reply answers, when starting it stored one.
    user_message: Option<MessageId>,
    control: Arc<Control>,
}

impl std::fmt::Debug for ReplyHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplyHandle")
            .field("id", &self.id)
            .field("chat", &self.chat)
            .finish()
    }
}

impl ReplyHandle {
    /// The reply id (`rpl_…`).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The chat the reply belongs to.
    pub fn chat(&self) -> ChatId {
        self.chat
    }

    /// The id of the user's message that starting the reply stored (a normal reply given a
    /// message), so a caller learns it without a second trip to the library.
    pub fn user_message_id(&self) -> Option<MessageId> {
        self.user_message
    }

    /// Where it stands.
    pub fn status(&self) -> ReplyStatus {
        self.control.status()
    }

    /// Events after sequence number `after` (0 = all still in the log), then live ones.
    pub fn subscribe(&self, after: u64) -> Subscription {
        self.control.hub.subscribe(after)
    }

    /// Like [`ReplyHandle::subscribe`], without text and reasoning deltas (status watchers).
    pub fn subscribe_milestones(&self, after: u64) -> Subscription {
        self.control.hub.subscribe_milestones(after)
    }

    /// Events after `after` still in the log (SSE `Last-Event-ID` replay).
    pub fn events_since(&self, after: u64) -> Vec<ReplyEvent> {
        self.control.hub.since(after)
    }

    /// What the reply waits for, with the id to answer it.
    pub fn pending(&self) -> Option<(u64, Interaction)> {
        self.control.pending()
    }

    /// Answers the pending interaction `pending_id`.
    pub fn respond(&self, pending_id: u64, response: Response) -> Result<(), RespondError> {
        self.control.respond(pending_id, response)
    }

    /// Cancels the reply (also while it waits).
    pub fn cancel(&self) {
        self.control.cancel();
    }

    /// Waits until the reply ends; returns its final status.
    pub async fn wait(&self) -> ReplyStatus {
        self.control.ended().await
    }
}
