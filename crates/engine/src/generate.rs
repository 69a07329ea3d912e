//! `tavo.generate(prompt, options)` (seed 002 "生成请求", `tavo-docs.md` §5.10): one text
//! generation on the chat's connection that writes nothing — no message, no variable, no
//! lorebook timer — and answers the whole text (the seed: "一次性请求，返回完整文本，不返回流式
//! 分片").
//!
//! - `context: false` (the seed's default): a request of its own, the prompt as the one user
//!   message.
//! - `context: true`: the chat's prompt as its next reply would build it (preset, card,
//!   lorebooks, memory, history; a quiet generation, so nothing is recorded), with the prompt
//!   as the last user message.
//! - `preset`: a preset by id instead of the chat's (its samplers, and with `context` its
//!   prompts); `overrides`: per-call sampling values that win over the preset's and the
//!   connection's.
//!
//! No connection is an error (the seed: "若当前聊天无可用 API，会抛出异常").

use tavo_llm::connection::SETTINGS_KEY;
use tavo_llm::{ChatRequest, ConnectionBook, Endpoint, Message as LlmMessage, Parameters, Role};
use tavo_model::{ChatId, Preset, PresetId};
use tavo_prompt::PromptOptions;
use tavo_prompt::loader;
use tavo_store::{Store, StoreError};

use crate::prompt::{PromptSettings, annotate_tool_history, resolve_parameters, to_llm};

/// The longest prompt one call takes, in characters.
pub const MAX_PROMPT_CHARS: usize = 200_000;

/// One `tavo.generate` call.
#[derive(Debug, Clone)]
pub struct GenerateRequest {
    /// The chat whose connection (and, with `context`, whose conversation) is used.
    pub chat: ChatId,
    /// The user input of this generation.
    pub prompt: String,
    /// Generate with the chat's conversation as context.
    pub context: bool,
    /// A preset instead of the chat's.
    pub preset: Option<PresetId>,
    /// Sampling values over the preset's and the connection's.
    pub overrides: Parameters,
}

/// What a generation answered.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Generated {
    /// The model's whole text.
    pub text: String,
    /// The connection used.
    pub connection: String,
    /// The model asked.
    pub model: String,
}

/// Why nothing was generated.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// No such chat or preset.
    #[error("{0}")]
    NotFound(String),
    /// An empty or oversized prompt.
    #[error("{0}")]
    Invalid(String),
    /// No usable connection.
    #[error(transparent)]
    Connection(#[from] tavo_llm::connection::ConnectionError),
    /// The provider refused or failed.
    #[error("the generation request failed: {0}")]
    Provider(String),
    /// The library.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A task of the engine failed.
    #[error("{0}")]
    Internal(String),
}

impl From<crate::EngineError> for GenerateError {
    fn from(e: crate::EngineError) -> Self {
        GenerateError::Internal(e.to_string())
    }
}

impl GenerateError {
    /// A stable code for every door.
    pub fn code(&self) -> &'static str {
        match self {
            GenerateError::NotFound(_) => "resource_not_found",
            GenerateError::Invalid(_) => "invalid_arguments",
            // The seed: a chat without a usable API makes the call throw.
            GenerateError::Connection(_) => "no_connection",
            GenerateError::Provider(_) => "unavailable",
            GenerateError::Store(_) | GenerateError::Internal(_) => "internal_error",
        }
    }
}

struct Prepared {
    request: ChatRequest,
    endpoint: Endpoint,
    connection: String,
}

fn prepare(
    store: &Store,
    prompts: &tavo_prompt::PromptEngine,
    req: GenerateRequest,
) -> Result<Prepared, GenerateError> {
    if req.prompt.trim().is_empty() {
        return Err(GenerateError::Invalid(
            "tavo.generate needs a prompt (a non-empty string)".into(),
        ));
    }
    let chars = req.prompt.chars().count();
    if chars > MAX_PROMPT_CHARS {
        return Err(GenerateError::Invalid(format!(
            "the prompt is {chars} characters long; tavo.generate takes at most {MAX_PROMPT_CHARS}"
        )));
    }
    let chat_id = req.chat;
    if store.chat_get(chat_id)?.is_none() {
        return Err(GenerateError::NotFound(format!(
            "chat {} does not exist",
            req.chat
        )));
    }
    let preset: Option<Preset> = match req.preset {
        None => None,
        Some(id) => Some(
            store
                .read(|tx| tx.get::<Preset>(id))?
                .ok_or_else(|| GenerateError::NotFound(format!("preset {id} does not exist")))?,
        ),
    };
    let book = ConnectionBook::from_setting(store.setting_get(SETTINGS_KEY)?)?;
    let conn = book.pick(None)?.clone();
    let connection_parameters = book.effective_parameters(&conn);
    let settings = PromptSettings::load(store)?;
    let user = LlmMessage::text(Role::User, req.prompt.clone());
    let (messages, parameters) = if req.context {
        let mut loaded =
            loader::load(store, chat_id).map_err(|e| GenerateError::Internal(e.to_string()))?;
        if preset.is_some() {
            loaded.preset = preset;
        }
        annotate_tool_history(&mut loaded);
        let parameters = resolve_parameters(
            &connection_parameters,
            loaded.preset.as_ref(),
            settings.preset_samplers,
            &req.overrides,
        );
        let mut options = PromptOptions::new(tavo_prompt::local_now());
        options.seed = crate::prompt::reply_seed(req.chat, loaded.messages.len());
        options.model = conn.model.clone();
        options.max_context_tokens = parameters.context_tokens() as usize;
        options.max_response_tokens = parameters.response_tokens() as usize;
        options.converter = settings.converter;
        options.ejs = settings.ejs;
        options.recursive_lorebooks = settings.recursive_lorebooks;
        let speaker = loaded.next_speaker();
        // Built and never recorded: a quiet generation changes no timer and no variable.
        let output = prompts.build(&loaded.input(speaker), &options);
        let mut messages = to_llm(&output.messages);
        messages.push(user);
        (messages, parameters)
    } else {
        let parameters = resolve_parameters(
            &connection_parameters,
            preset.as_ref(),
            settings.preset_samplers,
            &req.overrides,
        );
        (vec![user], parameters)
    };
    let mut request = ChatRequest::new(conn.model.clone(), messages);
    parameters.apply(&mut request);
    // One answer, whole: the seed's generate never streams to the script.
    request.stream = false;
    Ok(Prepared {
        request,
        endpoint: conn.endpoint()?,
        connection: conn.name.clone(),
    })
}

/// Runs one generation; see the module's notes.
pub(crate) async fn generate(
    inner: &crate::engine::Inner,
    req: GenerateRequest,
) -> Result<Generated, GenerateError> {
    let prompts = inner.prompt.clone();
    let prepared = crate::offload::gated(&inner.store, &inner.gate, GenerateError::Internal, {
        move |s| prepare(s, &prompts, req)
    })
    .await?;
    let response = inner
        .client
        .complete(&prepared.endpoint, &prepared.request)
        .await
        .map_err(|e| GenerateError::Provider(e.message))?;
    if let Some((_, why)) = &response.error {
        return Err(GenerateError::Provider(why.clone()));
    }
    Ok(Generated {
        text: response.text(),
        connection: prepared.connection,
        model: prepared.request.model.clone(),
    })
}
