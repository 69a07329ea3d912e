//! Long-term memory extraction (Tavo §15): a request on the chat's connection that reads the
//! recent conversation and answers short memories, which are added to the chat's memory
//! without repeating the ones it has.
//!
//! - Manual ("extract now"): [`crate::Engine::extract_memory`] — `tavo memory extract`,
//!   `POST /api/chats/{id}/memory/extract`, the `memory.extract` operation (TavoJS
//!   `tavo.memory.extract()`).
//! - Automatic: after a reply is saved, when the chat's memory is enabled and at least
//!   `memory.autoExtractEvery` (10) messages arrived since the last extraction, the engine
//!   starts one in the background ([`crate::Engine::maybe_extract_after_reply`]); the reply's
//!   `finished` event has already gone out and nothing waits for it.
//!
//! The request never holds the library: the memory row is read with its revision before the
//! request and written after it only if that revision is unchanged. When the user edited the
//! memory meanwhile, the extraction re-reads it, drops what the edit already says, and appends
//! the rest to the user's version — it never writes over an edit.
//!
//! The extraction prompt is the setting `memory.extractionPrompt` ([`DEFAULT_PROMPT`] when
//! unset); its placeholders are `{{char}}`, `{{user}}`, `{{memories}}` (the current memories,
//! one `- ` line each, or `(none)`) and `{{messages}}` (the transcript, `Name: text` lines).

pub mod parse;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::{Value, json};
use tavo_llm::connection::SETTINGS_KEY;
use tavo_llm::{ChatRequest, ConnectionBook, Endpoint, Message as LlmMessage, Role as LlmRole};
use tavo_model::{ChatId, Memory, Role};
use tavo_store::{Store, StoreError};

/// The setting holding the extraction prompt (a string; unset = [`DEFAULT_PROMPT`]).
pub const PROMPT_SETTING: &str = "memory.extractionPrompt";
/// The setting with the automatic cadence in messages (0 = automatic extraction off).
pub const EVERY_SETTING: &str = "memory.autoExtractEvery";
/// The setting naming the connection extraction uses (unset = the default connection).
pub const CONNECTION_SETTING: &str = "memory.connection";
/// The chat state slot where the last extraction is recorded (`{count, at}`).
pub const CURSOR_KEY: &str = "memory.extraction";

/// New messages between automatic extractions (Tavo: "after 10 messages").
pub const DEFAULT_EVERY: u64 = 10;
/// Fewest recent messages a manual extraction reads, even when fewer are new.
pub const MIN_WINDOW: u64 = 20;
/// Most messages one extraction reads (the newest ones).
pub const MAX_WINDOW: u64 = 100;
/// Most characters of transcript one extraction sends (the newest lines are kept).
pub const MAX_TRANSCRIPT_CHARS: usize = 24_000;
/// Times a write is retried after the user changed the memory meanwhile.
const WRITE_ATTEMPTS: usize = 5;

/// The extraction prompt used when `memory.extractionPrompt` is not set.
pub const DEFAULT_PROMPT: &str = "You keep the long-term memory of a conversation between {{user}} and {{char}}.\n\
Read the conversation below and write down what is worth remembering for the rest of it: {{user}}'s \
preferences, habits and personal details, names, relationships, promises, decisions and important events.\n\
Rules: each memory is one short, self-contained sentence in the conversation's language; \
do not repeat anything already remembered; at most 10 memories; if nothing new is worth keeping, answer NONE.\n\n\
Already remembered:\n{{memories}}\n\n\
Conversation:\n{{messages}}\n\n\
Answer with a JSON array of strings only, for example [\"{{user}} is allergic to cats.\"].";

/// Why an extraction did not run or did not finish.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// The chat does not exist (deleted, or a wrong id).
    #[error("chat {0} not found (see `tavo list chats`)")]
    ChatNotFound(ChatId),
    /// An extraction of this chat is already running in this engine (manual or automatic).
    /// One at a time per chat, so two answers never race to write the same memory; the user
    /// waits for it to finish.
    #[error("chat {0} already has a memory extraction running; wait for it")]
    Busy(ChatId),
    /// The chat has no visible message with text in the window read, so there is nothing to
    /// remember. Hidden and empty messages do not count.
    #[error("chat {0} has no messages to extract memories from")]
    NoMessages(ChatId),
    /// The extraction's connection (the one asked for, `memory.connection`, or the default)
    /// does not exist, there is no default, or its key is missing. Fix it with
    /// `tavo connection`, or set `memory.connection`.
    #[error(transparent)]
    Connection(#[from] tavo_llm::connection::ConnectionError),
    /// The library failed reading the chat or writing the memory.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The provider failed the request or answered with an error (its message). Nothing was
    /// written; the user may try again.
    #[error("the extraction request failed: {0}")]
    Provider(String),
    /// The memory kept changing under the write (it gave up after several merges), or store
    /// work off the executor failed. Its text says which; trying again usually works.
    #[error("{0}")]
    Internal(String),
}

impl MemoryError {
    /// The error envelope's code for this error.
    pub fn code(&self) -> &'static str {
        match self {
            MemoryError::ChatNotFound(_) => "resource_not_found",
            MemoryError::Busy(_) => "busy",
            MemoryError::NoMessages(_) | MemoryError::Connection(_) => "invalid_arguments",
            MemoryError::Store(e) => e.code(),
            MemoryError::Provider(_) | MemoryError::Internal(_) => "internal_error",
        }
    }
}

/// What one extraction did.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Extraction {
    /// The chat's memory after the extraction (`{id, enabled, memories}`).
    pub memory: Memory,
    /// The memories this extraction added, in order.
    pub added: Vec<String>,
    /// Memories the answer named that the chat already had.
    pub duplicates: usize,
    /// Messages the request read.
    pub messages: usize,
    /// The user changed the memory while the request ran; the additions went onto their version.
    pub merged_with_edit: bool,
}

/// Replaces the extraction prompt (`memory.extractionPrompt`), or with `None` goes back to
/// [`DEFAULT_PROMPT`]; answers the prompt in force afterwards. A blank prompt is refused and
/// nothing is written: an empty template would extract nothing.
pub fn set_prompt(store: &Store, prompt: Option<&str>) -> Result<String, StoreError> {
    match prompt {
        None => {
            store.setting_delete(PROMPT_SETTING)?;
        }
        Some(text) if text.trim().is_empty() => {
            return Err(StoreError::InvalidArgument(
                "the extraction prompt is empty; reset it to use the built-in one".into(),
            ));
        }
        Some(text) => {
            store.setting_set(PROMPT_SETTING, &serde_json::Value::String(text.into()))?;
        }
    }
    Ok(MemorySettings::load(store)?.prompt)
}

/// The memory-related settings, read once per extraction.
#[derive(Debug, Clone, PartialEq)]
pub struct MemorySettings {
    /// The extraction prompt template (`memory.extractionPrompt`; [`DEFAULT_PROMPT`] when unset
    /// or blank).
    pub prompt: String,
    /// New messages between automatic extractions (`memory.autoExtractEvery`; default
    /// [`DEFAULT_EVERY`], 0 turns automatic extraction off).
    pub every: u64,
    /// The connection extractions use (`memory.connection`); `None` means the default
    /// connection.
    pub connection: Option<String>,
}

impl MemorySettings {
    /// The stored values, defaults for the missing ones.
    pub fn load(store: &Store) -> Result<Self, StoreError> {
        let prompt = store
            .setting_get(PROMPT_SETTING)?
            .and_then(|v| v.as_str().map(str::to_owned))
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_PROMPT.to_owned());
        let every = store
            .setting_get(EVERY_SETTING)?
            .and_then(|v| v.as_u64())
            .unwrap_or(DEFAULT_EVERY);
        let connection = store
            .setting_get(CONNECTION_SETTING)?
            .and_then(|v| v.as_str().map(str::to_owned))
            .filter(|s| !s.trim().is_empty());
        Ok(Self {
            prompt,
            every,
            connection,
        })
    }
}

/// Chats with an extraction in flight in this process (one at a time per chat).
#[derive(Debug, Default, Clone)]
pub(crate) struct InFlight(Arc<Mutex<HashSet<ChatId>>>);

/// Removes its chat from [`InFlight`] when dropped.
pub(crate) struct Claim(InFlight, ChatId);

impl InFlight {
    pub(crate) fn claim(&self, chat: ChatId) -> Option<Claim> {
        let mut set = self.0.lock().unwrap_or_else(|p| p.into_inner());
        set.insert(chat).then(|| Claim(self.clone(), chat))
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        let mut set = (self.0).0.lock().unwrap_or_else(|p| p.into_inner());
        set.remove(&self.1);
    }
}

/// Everything read before the request.
struct Prepared {
    request: ChatRequest,
    endpoint: Endpoint,
    revision: i64,
    count: u64,
    messages: usize,
}

/// Messages that arrived since the last extraction of `chat` (all of them when it never had one).
pub fn new_since_last(store: &Store, chat: ChatId) -> Result<u64, StoreError> {
    let count = store.message_count(chat)?;
    let done = store
        .chat_state_get(chat, CURSOR_KEY)?
        .and_then(|v| v.get("count").and_then(Value::as_u64))
        .unwrap_or(0);
    // Deleted messages make the count shrink: count from where the chat is now.
    Ok(count.saturating_sub(done.min(count)))
}

/// Whether an automatic extraction is due in `chat` now.
pub fn auto_due(store: &Store, chat: ChatId) -> Result<bool, StoreError> {
    let settings = MemorySettings::load(store)?;
    if settings.every == 0 || !store.memory_peek(chat)?.enabled {
        return Ok(false);
    }
    Ok(new_since_last(store, chat)? >= settings.every)
}

fn prepare(
    store: &Store,
    chat_id: ChatId,
    connection: Option<&str>,
    model_override: Option<&str>,
) -> Result<Prepared, MemoryError> {
    let chat = chat_id;
    let Some(record) = store.chat_get(chat)? else {
        return Err(MemoryError::ChatNotFound(chat_id));
    };
    let settings = MemorySettings::load(store)?;
    let book = ConnectionBook::from_setting(store.setting_get(SETTINGS_KEY)?)?;
    let conn = book
        .pick(connection.or(settings.connection.as_deref()))?
        .clone();
    let parameters = book.effective_parameters(&conn);
    let endpoint = Endpoint {
        protocol: conn.protocol,
        base_url: conn.base_url.clone(),
        api_key: conn.resolve_key()?,
    };
    let row = store.memory_row(chat)?;
    let count = store.message_count(chat)?;
    let window = new_since_last(store, chat)?.clamp(MIN_WINDOW, MAX_WINDOW);
    let history = store.messages_last(chat, window)?;
    let char_name = record
        .characters
        .first()
        .map(|c| c.name.clone())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "Character".to_owned());
    let user_name = record
        .persona
        .as_ref()
        .map(|p| p.name.clone())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "User".to_owned());
    let mut lines: Vec<String> = history
        .iter()
        .filter(|m| !m.hidden && !m.content.trim().is_empty())
        .map(|m| {
            let name = match m.role {
                Role::User => user_name.clone(),
                Role::Assistant => m.name.clone().unwrap_or_else(|| char_name.clone()),
                Role::System => "System".to_owned(),
            };
            format!("{name}: {}", m.content.trim())
        })
        .collect();
    if lines.is_empty() {
        return Err(MemoryError::NoMessages(chat_id));
    }
    // Keep the newest lines within the character budget.
    let mut total = 0;
    let mut keep = lines.len();
    for (i, l) in lines.iter().enumerate().rev() {
        total += l.chars().count() + 1;
        if total > MAX_TRANSCRIPT_CHARS && i + 1 < lines.len() {
            break;
        }
        keep = i;
    }
    let messages = lines.len() - keep;
    lines.drain(..keep);
    let memories = if row.memory.memories.is_empty() {
        "(none)".to_owned()
    } else {
        row.memory
            .memories
            .iter()
            .map(|m| format!("- {}", m.trim()))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let text = render(
        &settings.prompt,
        &char_name,
        &user_name,
        &memories,
        &lines.join("\n"),
    );
    let model = model_override.unwrap_or(&conn.model).to_owned();
    let mut request = ChatRequest::new(model, vec![LlmMessage::text(LlmRole::User, text)]);
    parameters.apply(&mut request);
    Ok(Prepared {
        request,
        endpoint,
        revision: row.revision,
        count,
        messages,
    })
}

/// The prompt template with its placeholders filled.
pub fn render(template: &str, char: &str, user: &str, memories: &str, messages: &str) -> String {
    // Transcript and memories last: their text may itself contain `{{…}}`.
    template
        .replace("{{char}}", char)
        .replace("{{user}}", user)
        .replace("{{memories}}", memories)
        .replace("{{messages}}", messages)
}

/// Stores the answer's new memories, re-reading and merging when the row moved on.
fn store_answer(
    store: &Store,
    chat: ChatId,
    mut expected: i64,
    count: u64,
    candidates: &[String],
) -> Result<(Memory, Vec<String>, usize, bool), MemoryError> {
    let mut merged = false;
    for _ in 0..WRITE_ATTEMPTS {
        let outcome = store.write(|tx| {
            let row = tx.memory_row(chat)?;
            if row.revision != expected {
                return Ok(Err(row.revision));
            }
            let added = parse::new_memories(&row.memory.memories, candidates);
            let cursor = json!({ "count": count, "at": chrono::Utc::now().to_rfc3339() });
            tx.chat_state_set(chat, CURSOR_KEY, &cursor)?;
            if added.is_empty() {
                return Ok(Ok((row.memory, added)));
            }
            let mut all = row.memory.memories.clone();
            all.extend(added.iter().cloned());
            let written = tx.memory_replace_if(chat, expected, &all)?;
            Ok(Ok((written.memory, added)))
        })?;
        match outcome {
            Ok((memory, added)) => {
                let duplicates = candidates.len() - added.len();
                return Ok((memory, added, duplicates, merged));
            }
            Err(now) => {
                // The user (or another door) changed the memory during the request: merge
                // onto their version rather than over it.
                expected = now;
                merged = true;
            }
        }
    }
    Err(MemoryError::Internal(
        "the memory kept changing while the extraction tried to save; try again".into(),
    ))
}

/// Runs one extraction of `chat` with `client` (the engine's). `connection` overrides the
/// `memory.connection` setting; `model` the connection's model.
pub(crate) async fn run(
    store: &Store,
    client: &tavo_llm::Client,
    gate: &tavo_tools::Gate,
    chat: ChatId,
    connection: Option<String>,
    model: Option<String>,
) -> Result<Extraction, MemoryError> {
    let prepared = blocking(store, gate, move |s| {
        prepare(s, chat, connection.as_deref(), model.as_deref())
    })
    .await?;
    let response = client
        .complete(&prepared.endpoint, &prepared.request)
        .await
        .map_err(|e| MemoryError::Provider(e.message))?;
    if let Some((_, message)) = &response.error {
        return Err(MemoryError::Provider(message.clone()));
    }
    let answer = response.text();
    let candidates = parse::parse_answer(&answer);
    let (revision, count, messages) = (prepared.revision, prepared.count, prepared.messages);
    let stored = blocking(store, gate, move |s| {
        store_answer(s, chat, revision, count, &candidates)
    })
    .await?;
    let (memory, added, duplicates, merged_with_edit) = stored;
    Ok(Extraction {
        memory,
        added,
        duplicates,
        messages,
        merged_with_edit,
    })
}

/// Runs store work on the blocking pool behind the engine's library gate (see
/// `crate::offload`), keeping the typed error.
async fn blocking<T: Send + 'static>(
    store: &Store,
    gate: &tavo_tools::Gate,
    f: impl FnOnce(&Store) -> Result<T, MemoryError> + Send + 'static,
) -> Result<T, MemoryError> {
    crate::offload::gated(store, gate, MemoryError::Internal, f).await
}

/// "Extract now" in `chat` (see [`crate::Engine::extract_memory`]).
pub(crate) async fn extract_now(
    inner: &crate::engine::Inner,
    chat: ChatId,
    connection: Option<String>,
    model: Option<String>,
) -> Result<Extraction, MemoryError> {
    let _claim = inner
        .memory_in_flight
        .claim(chat)
        .ok_or(MemoryError::Busy(chat))?;
    run(
        &inner.store,
        &inner.client,
        &inner.gate,
        chat,
        connection,
        model,
    )
    .await
}

/// After a reply in `chat` was saved: starts an automatic extraction in the background when
/// one is due. Returns at once; the extraction's outcome only goes to the log.
pub(crate) fn after_reply(inner: &Arc<crate::engine::Inner>, chat: ChatId) {
    let Some(claim) = inner.memory_in_flight.claim(chat) else {
        return;
    };
    let task_inner = inner.clone();
    let task = tokio::spawn(async move {
        let _claim = claim;
        let due = blocking(&task_inner.store, &task_inner.gate, move |s| {
            Ok(auto_due(s, chat)?)
        })
        .await;
        match due {
            Ok(true) => {}
            Ok(false) => return,
            Err(e) => {
                tracing::warn!(%chat, error = %e, "cannot check whether memory extraction is due");
                return;
            }
        }
        let (store, client, gate) = (&task_inner.store, &task_inner.client, &task_inner.gate);
        match run(store, client, gate, chat, None, None).await {
            Ok(x) => tracing::info!(
                %chat,
                added = x.added.len(),
                duplicates = x.duplicates,
                "automatic memory extraction"
            ),
            Err(e) => tracing::warn!(%chat, error = %e, "automatic memory extraction failed"),
        }
    });
    let mut background = inner.background.lock().unwrap_or_else(|p| p.into_inner());
    background.retain(|t| !t.is_finished());
    background.push(task);
}

/// Waits for the background extractions started so far (a CLI process about to exit).
pub(crate) async fn wait_background(inner: &crate::engine::Inner) {
    loop {
        let tasks: Vec<_> = {
            let mut background = inner.background.lock().unwrap_or_else(|p| p.into_inner());
            std::mem::take(&mut *background)
        };
        if tasks.is_empty() {
            return;
        }
        for t in tasks {
            let _ = t.await;
        }
    }
}

/// The engine's extraction behind the `memory.extract` operation (TavoJS, `POST /api/ops`,
/// the model's `tavo_memory_extract`).
pub(crate) struct Extractor {
    pub(crate) store: Store,
    pub(crate) client: tavo_llm::Client,
    pub(crate) gate: tavo_tools::Gate,
    pub(crate) in_flight: InFlight,
}

impl tavo_tools::MemoryExtractor for Extractor {
    fn extract(
        &self,
        chat: ChatId,
    ) -> tavo_tools::operation::BoxFuture<Result<Value, tavo_tools::ToolError>> {
        let (store, client, gate, in_flight) = (
            self.store.clone(),
            self.client.clone(),
            self.gate.clone(),
            self.in_flight.clone(),
        );
        Box::pin(async move {
            let result = match in_flight.claim(chat) {
                Some(_claim) => run(&store, &client, &gate, chat, None, None).await,
                None => Err(MemoryError::Busy(chat)),
            };
            let extraction = result.map_err(tool_error)?;
            serde_json::to_value(extraction)
                .map_err(|_| tavo_tools::ToolError::internal("serialising the extraction"))
        })
    }
}

fn tool_error(e: MemoryError) -> tavo_tools::ToolError {
    use tavo_tools::ErrorCode;
    let code = match &e {
        MemoryError::ChatNotFound(_) | MemoryError::Connection(_) => ErrorCode::ResourceNotFound,
        MemoryError::Busy(_) => ErrorCode::Conflict,
        MemoryError::NoMessages(_) => ErrorCode::InvalidArguments,
        MemoryError::Store(_) | MemoryError::Provider(_) | MemoryError::Internal(_) => {
            ErrorCode::InternalError
        }
    };
    tavo_tools::ToolError::new(code, e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extraction_prompt_is_set_reset_and_never_blank() {
        let dir = tempfile::tempdir().expect("dir");
        let store = Store::open(dir.path()).expect("store");
        assert_eq!(
            set_prompt(&store, Some("Keep {{messages}}")).expect("set"),
            "Keep {{messages}}"
        );
        let e = set_prompt(&store, Some("  \n")).unwrap_err();
        assert!(matches!(e, StoreError::InvalidArgument(_)), "{e}");
        assert_eq!(
            MemorySettings::load(&store).expect("load").prompt,
            "Keep {{messages}}"
        );
        assert_eq!(set_prompt(&store, None).expect("reset"), DEFAULT_PROMPT);
    }
}
