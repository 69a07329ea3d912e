//! The reply's request, built once for the reply and for `tavo prompt`: the chat assembled by
//! `tavo-prompt` as canonical LLM messages, the tool-use hint, the tool declarations, the
//! model, the context budget and the sampling parameters. [`build`] and [`round_request`] are
//! what the reply task calls; [`preview`] calls the same two and stops before the request
//! leaves, so `tavo prompt` shows exactly what the next reply sends.
//!
//! Earlier replies' tool calls are visible to later generations (also continue, impersonate
//! and quiet, which cannot call tools themselves): each message that carries compact tool
//! cards gets one line naming them in front of its text. Messages never kept arguments or
//! results (privacy), so this line is all there is to show.
//!
//! **Parameters**: a chat's preset may carry SillyTavern's sampler and context
//! settings (`temperature`, `top_p`, `top_k`, `openai_max_context`, `openai_max_tokens`, …).
//! Each value present in the preset wins over the connection's model settings (its own over
//! the global ones); the setting `prompt.presetSamplers` (default true) turns the preset's
//! values off. [`ResolvedParameters::sources`] says where each value came from.

use serde::Serialize;
use serde_json::Value;
use tavo_llm::{ChatRequest, Message, Parameters, Role, ToolChoice, ToolDecl};
use tavo_model::{CharacterId, ChatId, Preset};
use tavo_prompt::loader::{self, LoadedChat};
use tavo_prompt::{
    Explain, GenerationType, PromptConverter, PromptEngine, PromptMessage, PromptOptions,
};
use tavo_store::Store;
use tavo_tools::exposure::{Availability, ReasoningMode, hint_for_round};
use tavo_tools::{ExposedSet, ExtensionRegistry, GenerationKind, Registry, Services, ToolSettings};

use crate::error::EngineError;
use crate::limits::interleaved;
use crate::summary::{cards_of, history_line};
use crate::tool_history::{CarriedRounds, StoredRounds, ToolHistoryReport};
use std::collections::HashMap;

/// Setting: the provider prompt converter applied last (`none`, `mergeConsecutive`,
/// `singleSystem`, `systemThenUser`; default `none`).
pub const CONVERTER_SETTING: &str = "prompt.converter";
/// Setting: whether a preset's sampler and context values apply (default true).
pub const PRESET_SAMPLERS_SETTING: &str = "prompt.presetSamplers";
/// Setting: EJS templates in prompt fields (Tavo: Settings → Chat settings → Compatibility →
/// "启用 EJS 模板"; default true).
pub const EJS_SETTING: &str = tavo_prompt::ejs::SETTING;

/// Setting: whether lorebook entries may activate other entries (SillyTavern's "Recursive
/// scan", default true). A book's own `recursive_scanning: false` turns it off for that book.
pub const RECURSIVE_SCAN_SETTING: &str = "lorebook.recursiveScan";

/// Context window used when neither the preset nor the connection gives one.
pub const DEFAULT_CONTEXT_TOKENS: u32 = 16_384;
/// Reply tokens reserved when neither the preset nor the connection gives a number.
pub const DEFAULT_RESPONSE_TOKENS: u32 = 1_024;

/// Whether EJS templates are rendered ([`EJS_SETTING`], default on): part of
/// [`PromptSettings`], and read alone for the prompt fields a chat has outside its preset
/// (translation, group speaker selection).
pub(crate) fn ejs_enabled(store: &Store) -> Result<bool, tavo_store::StoreError> {
    Ok(store
        .setting_get(EJS_SETTING)?
        .and_then(|v| v.as_bool())
        .unwrap_or(true))
}

/// The `prompt.*` settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptSettings {
    /// Converter applied to the assembled list.
    pub converter: PromptConverter,
    /// Preset sampler and context values apply.
    pub preset_samplers: bool,
    /// EJS templates are rendered ([`EJS_SETTING`]).
    pub ejs: bool,
    /// Lorebook entries may activate other entries ([`RECURSIVE_SCAN_SETTING`]).
    pub recursive_lorebooks: bool,
}

impl Default for PromptSettings {
    fn default() -> Self {
        Self {
            converter: PromptConverter::None,
            preset_samplers: true,
            ejs: true,
            recursive_lorebooks: true,
        }
    }
}

impl PromptSettings {
    /// The stored settings; a value of the wrong shape (only possible when written around
    /// `tavo settings`) falls back to the default with a warning.
    pub fn load(store: &Store) -> Result<Self, EngineError> {
        let mut s = Self::default();
        if let Some(v) = store.setting_get(CONVERTER_SETTING)? {
            match serde_json::from_value::<PromptConverter>(v) {
                Ok(c) => s.converter = c,
                Err(e) => {
                    tracing::warn!(error = %e, "{CONVERTER_SETTING} is not a converter; none is used")
                }
            }
        }
        if let Some(v) = store.setting_get(PRESET_SAMPLERS_SETTING)? {
            s.preset_samplers = v.as_bool().unwrap_or(true);
        }
        s.ejs = ejs_enabled(store)?;
        if let Some(v) = store.setting_get(RECURSIVE_SCAN_SETTING)? {
            s.recursive_lorebooks = v.as_bool().unwrap_or(true);
        }
        Ok(s)
    }
}

/// Where an effective parameter came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ParameterSource {
    /// The chat's preset (SillyTavern's sampler fields).
    Preset,
    /// The connection's model settings (its own over the global ones).
    Connection,
    /// Tavo's built-in default (context and reply budget only).
    Default,
    /// Given for this preview only (`tavo prompt --context …`).
    Override,
}

/// One effective parameter and its source.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ParameterValue {
    /// Tavo's name (`temperature`, `topP`, `contextLength`, `maxOutputTokens`, …).
    pub name: &'static str,
    /// The value.
    pub value: Value,
    /// Where it came from.
    pub source: ParameterSource,
    /// The preset's key it was read from, for preset values (`openai_max_context`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preset_key: Option<&'static str>,
}

/// The parameters a reply uses, with their sources.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ResolvedParameters {
    /// What the request carries (`context_length` is the prompt budget, never sent).
    pub parameters: Parameters,
    /// The preset's `frequency_penalty`, when not 0 (connections have no penalties).
    pub frequency_penalty: Option<f64>,
    /// The preset's `presence_penalty`, when not 0.
    pub presence_penalty: Option<f64>,
    /// Each value that is set, with its source, in a fixed order.
    pub sources: Vec<ParameterValue>,
}

/// Reads a number under `key` of a preset's kept SillyTavern fields.
fn preset_number(preset: &Preset, key: &str) -> Option<f64> {
    preset.extra.get(key).and_then(Value::as_f64)
}

/// The effective parameters: `overrides`, else the preset's values (when `preset_samplers`),
/// else the connection's, else the defaults for the context and the reply budget.
pub fn resolve_parameters(
    connection: &Parameters,
    preset: Option<&Preset>,
    preset_samplers: bool,
    overrides: &Parameters,
) -> ResolvedParameters {
    let preset = preset.filter(|_| preset_samplers);
    let mut out = ResolvedParameters {
        parameters: Parameters {
            stream: connection.stream,
            ..Parameters::default()
        },
        ..ResolvedParameters::default()
    };
    // (tavo name, preset key, override, connection) per float parameter.
    let floats: [(&'static str, &'static str, Option<f64>, Option<f64>); 2] = [
        (
            "temperature",
            "temperature",
            overrides.temperature,
            connection.temperature,
        ),
        ("topP", "top_p", overrides.top_p, connection.top_p),
    ];
    for (i, (name, key, over, conn)) in floats.into_iter().enumerate() {
        let from_preset = preset.and_then(|p| preset_number(p, key));
        let picked = pick(over, from_preset, conn, None);
        if let Some((v, source)) = picked {
            match i {
                0 => out.parameters.temperature = Some(v),
                _ => out.parameters.top_p = Some(v),
            }
            out.push(name, Value::from(v), source, key);
        }
    }
    // Integer parameters. SillyTavern's `top_k` 0 means "off": it is not sent.
    let to_u32 = |v: f64| (v.is_finite() && v >= 0.0).then(|| v.min(u32::MAX as f64) as u32);
    let preset_u32 = |key: &str| preset.and_then(|p| preset_number(p, key)).and_then(to_u32);
    let top_k = pick(
        overrides.top_k,
        preset_u32("top_k").filter(|k| *k > 0),
        connection.top_k,
        None,
    );
    if let Some((v, source)) = top_k {
        out.parameters.top_k = Some(v);
        out.push("topK", Value::from(v), source, "top_k");
    }
    let context = pick(
        overrides.context_length,
        preset_u32("openai_max_context").filter(|c| *c > 0),
        connection.context_length,
        Some(DEFAULT_CONTEXT_TOKENS),
    );
    if let Some((v, source)) = context {
        out.parameters.context_length = Some(v);
        out.push(
            "contextLength",
            Value::from(v),
            source,
            "openai_max_context",
        );
    }
    let response = pick(
        overrides.max_output_tokens,
        preset_u32("openai_max_tokens").filter(|c| *c > 0),
        connection.max_output_tokens,
        None,
    );
    if let Some((v, source)) = response {
        out.parameters.max_output_tokens = Some(v);
        out.push(
            "maxOutputTokens",
            Value::from(v),
            source,
            "openai_max_tokens",
        );
    }
    // Penalties come only from a preset (a connection has none). 0 is every provider's
    // default and some models refuse the field outright, so 0 is not sent.
    for (name, key) in [
        ("frequencyPenalty", "frequency_penalty"),
        ("presencePenalty", "presence_penalty"),
    ] {
        let Some(v) = preset
            .and_then(|p| preset_number(p, key))
            .filter(|v| *v != 0.0 && v.is_finite())
        else {
            continue;
        };
        if key == "frequency_penalty" {
            out.frequency_penalty = Some(v);
        } else {
            out.presence_penalty = Some(v);
        }
        out.push(name, Value::from(v), ParameterSource::Preset, key);
    }
    out
}

impl ResolvedParameters {
    /// Writes the parameters into a request.
    pub fn apply(&self, req: &mut ChatRequest) {
        self.parameters.apply(req);
        req.sampling.frequency_penalty = self.frequency_penalty.or(req.sampling.frequency_penalty);
        req.sampling.presence_penalty = self.presence_penalty.or(req.sampling.presence_penalty);
    }

    fn push(
        &mut self,
        name: &'static str,
        value: Value,
        source: ParameterSource,
        key: &'static str,
    ) {
        self.sources.push(ParameterValue {
            name,
            value,
            source,
            preset_key: (source == ParameterSource::Preset).then_some(key),
        });
    }

    /// The context window the prompt is built for.
    pub fn context_tokens(&self) -> u32 {
        self.parameters
            .context_length
            .unwrap_or(DEFAULT_CONTEXT_TOKENS)
    }

    /// The reply tokens the prompt budget leaves room for.
    pub fn response_tokens(&self) -> u32 {
        self.parameters
            .max_output_tokens
            .unwrap_or(DEFAULT_RESPONSE_TOKENS)
    }
}

fn pick<T>(
    over: Option<T>,
    preset: Option<T>,
    connection: Option<T>,
    default: Option<T>,
) -> Option<(T, ParameterSource)> {
    over.map(|v| (v, ParameterSource::Override))
        .or_else(|| preset.map(|v| (v, ParameterSource::Preset)))
        .or_else(|| connection.map(|v| (v, ParameterSource::Connection)))
        .or_else(|| default.map(|v| (v, ParameterSource::Default)))
}

/// What the reply needs from the assembled prompt.
#[derive(Debug, Clone)]
pub struct BasePrompt {
    /// The assembled messages, converter applied, without the tool hint.
    pub messages: Vec<Message>,
    /// The character who speaks this reply.
    pub speaker_id: Option<CharacterId>,
    /// That character's name: stored as the new message's `name`, so the message keeps
    /// saying who spoke when the character is renamed or leaves, and shown in group `speaker`
    /// events.
    pub speaker_name: Option<String>,
    /// Whether the chat has regex groups bound (its replies' text then passes the `receive`
    /// rules when stored).
    pub has_regex: bool,
    /// The parameters the reply uses (preset over connection).
    pub parameters: ResolvedParameters,
    /// The converter that was applied.
    pub converter: PromptConverter,
    /// Lorebook activations, regex rules applied, tokens, diagnostics.
    pub explain: Explain,
    /// Bindings to assets that no longer exist (`preset 4`).
    pub missing: Vec<String>,
    /// Which earlier tool rounds went back in the protocol's shape and which were folded.
    pub tool_history: ToolHistoryReport,
}

impl BasePrompt {
    /// A warning when history was left out to fit the budget: `(included, available)` and
    /// the text a reply shows.
    pub fn history_cut(&self) -> Option<String> {
        let t = &self.explain.tokens;
        (t.history_included < t.history_available).then(|| {
            format!(
                "the chat history was cut to fit the context: {} of {} messages are sent (prompt budget {} tokens of a {}-token context, {} reserved for the reply); raise the context size (connection --context-length, or the preset's openai_max_context) to send more",
                t.history_included,
                t.history_available,
                t.budget,
                self.parameters.context_tokens(),
                self.parameters.response_tokens(),
            )
        })
    }
}

/// What a build is for besides the chat: the model and the connection's parameters, plus
/// what only a preview changes.
#[derive(Debug, Clone)]
pub struct PromptKnobs {
    /// The model (chooses the tokenizer; `{{model}}`).
    pub model: String,
    /// The connection's effective parameters.
    pub connection: Parameters,
    /// Values that win over everything (previews only; a reply passes none).
    pub overrides: Parameters,
    /// Seed instead of the one derived from the chat (previews only).
    pub seed: Option<u64>,
    /// Speaker instead of the next member in turn (previews only).
    pub speaker: Option<CharacterId>,
    /// Record the generation (lorebook timed effects, variables). A reply records every
    /// generation but a quiet one.
    pub record: bool,
    /// The latest user message's text for this request only (a plugin's `generation:prepare`
    /// rewrite); the stored message is untouched.
    pub user_text: Option<String>,
    /// Count with the model's tokenizer even when it is still loading (a preview shows exact
    /// counts). A reply does not wait: see [`tavo_prompt::PromptOptions::wait_for_tokenizer`].
    pub exact_tokens: bool,
}

impl PromptKnobs {
    /// The knobs of a reply over a connection's model and parameters.
    pub fn reply(model: String, connection: Parameters) -> Self {
        Self {
            model,
            connection,
            overrides: Parameters::default(),
            seed: None,
            speaker: None,
            record: true,
            user_text: None,
            exact_tokens: false,
        }
    }
}

/// The default connection's model, when there is one (the tokenizer a start warms).
pub(crate) fn default_model(store: &Store) -> Option<String> {
    let setting = store.setting_get(tavo_llm::connection::SETTINGS_KEY).ok()?;
    let book = tavo_llm::ConnectionBook::from_setting(setting).ok()?;
    book.pick(None).ok().map(|c| c.model.clone())
}

/// Every message of the chat with tool cards: its stored rounds (if the log still has them),
/// its swipe and its summary line.
fn carried_rounds(
    store: &Store,
    chat: ChatId,
    loaded: &LoadedChat,
) -> Result<HashMap<i64, CarriedRounds>, EngineError> {
    let with_cards: Vec<(i64, Option<u64>, String)> = loaded
        .messages
        .iter()
        .filter_map(|m| {
            let line = history_line(&cards_of(&m.extra))?;
            Some((m.id?.get(), m.swipe_id, line))
        })
        .collect();
    if with_cards.is_empty() {
        return Ok(HashMap::new());
    }
    let mut stored: HashMap<i64, StoredRounds> = store
        .tool_rounds_of_chat(chat)?
        .into_iter()
        .filter_map(|(id, v)| Some((id.get(), serde_json::from_value(v).ok()?)))
        .collect();
    Ok(with_cards
        .into_iter()
        .map(|(id, swipe, line)| {
            let rounds = stored.remove(&id);
            (
                id,
                CarriedRounds {
                    rounds,
                    swipe,
                    line,
                },
            )
        })
        .collect())
}

/// Puts each message's tool-call line in front of its text.
pub fn annotate_tool_history(loaded: &mut LoadedChat) {
    for m in &mut loaded.messages {
        if let Some(line) = history_line(&cards_of(&m.extra)) {
            m.content = if m.content.is_empty() {
                line
            } else {
                format!("{line}\n{}", m.content)
            };
        }
    }
}

/// Converts prompt messages to canonical messages.
pub fn to_llm(messages: &[PromptMessage]) -> Vec<Message> {
    messages
        .iter()
        .map(|m| {
            let role = match m.role {
                tavo_model::Role::System => Role::System,
                tavo_model::Role::User => Role::User,
                tavo_model::Role::Assistant => Role::Assistant,
            };
            Message::text(role, m.content.clone())
        })
        .collect()
}

/// The seed a reply's build uses: stable until the chat changes.
pub fn reply_seed(chat: ChatId, message_count: usize) -> u64 {
    (chat.get() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ message_count as u64
}

/// Loads and assembles the chat's prompt; records the generation (lorebook timed effects,
/// variable macros) unless it is a quiet one or `knobs.record` is off. Blocking: call from
/// the blocking pool.
pub fn build(
    store: &Store,
    engine: &PromptEngine,
    chat: ChatId,
    kind: GenerationKind,
    knobs: &PromptKnobs,
) -> Result<BasePrompt, EngineError> {
    let mut loaded = loader::load(store, chat)?;
    for missing in &loaded.missing {
        tracing::warn!(%chat, %missing, "the chat is bound to an asset that no longer exists; skipped");
    }
    let settings = PromptSettings::load(store)?;
    let carried = carried_rounds(store, chat, &loaded)?;
    annotate_tool_history(&mut loaded);
    if let Some(text) = &knobs.user_text
        && let Some(m) = loaded
            .messages
            .iter_mut()
            .rev()
            .find(|m| m.role == tavo_model::Role::User)
    {
        m.content.clone_from(text);
    }
    let speaker = match knobs.speaker {
        Some(id) => loaded
            .characters
            .iter()
            .position(|c| c.id == Some(id))
            .ok_or_else(|| {
                EngineError::Internal(format!("character {id} is not a member of chat {chat}"))
            })?,
        None => loaded.next_speaker(),
    };
    let parameters = resolve_parameters(
        &knobs.connection,
        loaded.preset.as_ref(),
        settings.preset_samplers,
        &knobs.overrides,
    );
    let mut options = PromptOptions::new(tavo_prompt::local_now());
    options.seed = knobs
        .seed
        .unwrap_or_else(|| reply_seed(chat, loaded.messages.len()));
    options.model = knobs.model.clone();
    options.max_context_tokens = parameters.context_tokens() as usize;
    options.max_response_tokens = parameters.response_tokens() as usize;
    options.converter = settings.converter;
    options.ejs = settings.ejs;
    options.recursive_lorebooks = settings.recursive_lorebooks;
    options.wait_for_tokenizer = knobs.exact_tokens;
    options.generation = match kind {
        GenerationKind::Continue => GenerationType::Continue,
        GenerationKind::Impersonate => GenerationType::Impersonate,
        _ => GenerationType::Normal,
    };
    let output = engine.build(&loaded.input(speaker), &options);
    if knobs.record && kind != GenerationKind::Quiet {
        loader::record(store, chat, &output)?;
    }
    let character = loaded.characters.get(speaker);
    let origins: Vec<Option<i64>> = output.messages.iter().map(|m| m.origin).collect();
    let tokens = &output.explain.tokens;
    let (messages, tool_history) = crate::tool_history::replay(
        to_llm(&output.messages),
        &origins,
        &carried,
        tokens.budget.saturating_sub(tokens.total),
    );
    let mut explain = output.explain;
    if !tool_history.replayed.is_empty() {
        explain.message_sources = tool_history
            .from
            .iter()
            .map(|from| match from {
                Some(i) => explain.message_sources.get(*i).cloned().unwrap_or_default(),
                None => vec!["toolRounds".to_owned()],
            })
            .collect();
    }
    Ok(BasePrompt {
        messages,
        tool_history,
        speaker_id: character.and_then(|c| c.id),
        speaker_name: character.map(|c| c.name.clone()),
        has_regex: !loaded.regex_groups.is_empty(),
        parameters,
        converter: settings.converter,
        explain,
        missing: loaded.missing,
    })
}

/// Inserts the generic tool-use hint after the leading system messages. Under a converter
/// that merges system messages the hint joins the first one instead, so the list keeps the
/// converter's shape.
pub fn with_hint(
    messages: &[Message],
    hint: Option<&str>,
    converter: PromptConverter,
) -> Vec<Message> {
    let mut out = Vec::with_capacity(messages.len() + 1);
    let lead = messages
        .iter()
        .take_while(|m| m.role == Role::System)
        .count();
    let Some(h) = hint else {
        out.extend_from_slice(messages);
        return out;
    };
    if converter != PromptConverter::None && lead > 0 {
        out.push(Message::text(
            Role::System,
            format!("{}\n\n{h}", messages[0].joined_text()),
        ));
        out.extend_from_slice(&messages[1..]);
        return out;
    }
    out.extend_from_slice(&messages[..lead]);
    out.push(Message::text(Role::System, h));
    out.extend_from_slice(&messages[lead..]);
    out
}

/// The tools a reply starts with: the initial set for its settings and kind, plus every
/// extension tool when dynamic loading is off.
pub fn initial_exposure(
    registry: &Registry,
    settings: &ToolSettings,
    kind: GenerationKind,
    avail: Availability,
    extensions: &ExtensionRegistry,
    chat: ChatId,
) -> ExposedSet {
    let mut exposed = ExposedSet::initial(registry, settings, kind, avail);
    if may_call(settings, kind) {
        // Seed 001: a page's registered tool (registerFunctionTool, its shouldRegister already
        // asked by the page) is offered on every prompt. Dynamic loading (seed 000) governs the
        // built-ins and the MCP servers' tools, which the model finds with extension_tool_search.
        exposed.expose(
            extensions
                .usable_in(Some(chat))
                .into_iter()
                .filter(|t| {
                    !settings.dynamic_loading
                        || matches!(t.source, tavo_tools::ExtensionSource::Page { .. })
                })
                .map(|t| t.name),
        );
    }
    exposed
}

/// Which optional tools the reply's services can back (web search with a complete search
/// API, extension tools).
pub fn availability(services: &Services, chat: ChatId) -> Availability {
    Availability {
        web_search: services.web.as_ref().is_some_and(|w| w.search_available()),
        extensions: !services.extensions.usable_in(Some(chat)).is_empty(),
    }
}

/// Whether a reply of `kind` may call tools at all.
pub fn may_call(settings: &ToolSettings, kind: GenerationKind) -> bool {
    settings.enabled && kind.can_perform_tool_calls()
}

/// Declarations of every tool the model may see now: built-ins, then extension tools.
pub fn declarations(
    registry: &Registry,
    extensions: &ExtensionRegistry,
    exposed: &ExposedSet,
    chat: ChatId,
) -> Vec<ToolDecl> {
    exposed
        .names()
        .iter()
        .filter_map(|name| match registry.declaration(name) {
            Some(d) => Some(ToolDecl {
                name: d.name,
                description: d.description,
                parameters: d.parameters,
                strict: false,
            }),
            // A page tool leaves the declarations when its page stops showing the chat.
            None => extensions.get_in(name, Some(chat)).map(|t| ToolDecl {
                name: t.name,
                description: t.description,
                parameters: t.parameters,
                strict: false,
            }),
        })
        .collect()
}

/// One round's request: the base prompt with the hint when the round offers tools, the
/// earlier rounds, the declarations (with `tool_choice: none` once calls are no longer
/// allowed), the parameters and the reasoning mode.
pub fn round_request(
    model: &str,
    base: &BasePrompt,
    rounds: &[Message],
    tools: Vec<ToolDecl>,
    can_call_now: bool,
    reasoning_mode: ReasoningMode,
) -> ChatRequest {
    // Seed 000: every request that carries tools gets the generic hint — also the round after
    // the tool-round limit, which still declares them (with tool_choice none).
    let hint = hint_for_round(tools.len());
    let mut req = ChatRequest::new(
        model.to_owned(),
        with_hint(&base.messages, hint, base.converter),
    );
    req.messages.extend(rounds.iter().cloned());
    if !tools.is_empty() && !can_call_now {
        req.tool_choice = ToolChoice::None;
    }
    req.tools = tools;
    base.parameters.apply(&mut req);
    req.reasoning.interleaved = interleaved(reasoning_mode);
    req
}

/// What `tavo prompt` asks for.
#[derive(Debug, Clone)]
pub struct PreviewRequest {
    /// The chat.
    pub chat: ChatId,
    /// What the next reply generates.
    pub kind: GenerationKind,
    /// Connection name; the default connection when `None`.
    pub connection: Option<String>,
    /// Model instead of the connection's (what-if; the reply uses the connection's).
    pub model: Option<String>,
    /// Values over the preset's and the connection's (what-if).
    pub overrides: Parameters,
    /// Seed instead of the reply's.
    pub seed: Option<u64>,
    /// Speaker instead of the one the chat's reply mode picks first.
    pub speaker: Option<CharacterId>,
    /// Record the generation as a reply would.
    pub record: bool,
}

/// The request the chat's next reply sends first, and why it looks that way.
#[derive(Debug, Clone)]
pub struct Preview {
    /// The first request, exactly as the reply builds it.
    pub request: ChatRequest,
    /// The assembled prompt (explain, parameters and their sources, speaker).
    pub base: BasePrompt,
    /// The connection the reply would use; `None` when none is configured (built-in
    /// defaults then apply).
    pub connection: Option<String>,
    /// The chat's long-term memory and where it went: `{enabled, stored, injected, tokens,
    /// position}` (see [`MEMORY_POSITION`]).
    pub memory: Value,
}

/// Where long-term memory goes in a prompt (Tavo's docs leave it open): one system message,
/// `[Long-term memory]` and a `- ` line per memory, right before the chat history — after
/// the preset's entries and the lorebook's `worldInfoAfter` text, before `chatStart`, so
/// it stays in the prompt however long the chat grows and is not mistaken for a message.
pub const MEMORY_POSITION: &str = "one system message just before the chat history (after the preset's entries, before chatStart)";

impl Preview {
    /// The messages as `[{role, content}]`, what `tavo prompt --json` prints; earlier tool
    /// rounds sent back add `toolCalls: [{id, name, arguments}]` to an assistant message and
    /// `toolResults: [{callId, name, content, isError}]` to a tool message.
    pub fn messages_json(&self) -> Value {
        Value::Array(self.request.messages.iter().map(message_json).collect())
    }

    /// Where each message of `messages_json` came from: the assembly's sources
    /// (`Explain::message_sources`) with the tool-use hint placed as [`with_hint`] placed it —
    /// its own message after the leading system ones (`toolHint`), or joined to the first.
    pub fn message_sources(&self) -> Vec<Vec<String>> {
        let mut sources = self.base.explain.message_sources.clone();
        let sent = &self.request.messages;
        let built = &self.base.messages;
        if sent.len() > built.len() {
            let lead = built.iter().take_while(|m| m.role == Role::System).count();
            sources.insert(lead.min(sources.len()), vec!["toolHint".into()]);
        } else if let (Some(first), Some(was)) = (sent.first(), built.first())
            && first.joined_text() != was.joined_text()
            && let Some(s) = sources.first_mut()
        {
            s.push("toolHint".into());
        }
        sources.resize(sent.len(), Vec::new());
        sources
    }

    /// The explain record as one JSON object: what `tavo prompt --explain --json` prints and
    /// `GET /api/chats/{id}/prompt` answers, from this one function so the two never differ.
    /// `historyCut` is the warning a reply shows when history was left out (or null).
    pub fn explain_json(&self) -> Value {
        let e = &self.base.explain;
        let r = &self.request;
        let tool_choice = match &r.tool_choice {
            ToolChoice::Auto => serde_json::json!("auto"),
            ToolChoice::None => serde_json::json!("none"),
            ToolChoice::Required => serde_json::json!("required"),
            ToolChoice::Tool(name) => serde_json::json!({"tool": name}),
        };
        serde_json::json!({
            "messages": self.messages_json(),
            "tools": r.tools,
            "toolChoice": tool_choice,
            "model": r.model,
            "connection": self.connection,
            "parameters": self.base.parameters.sources,
            "converter": self.base.converter,
            "activatedEntries": e.activated_entries,
            "skippedEntries": e.skipped_entries,
            "regexApplied": e.regex_applied,
            "tokens": e.tokens,
            "diagnostics": e.diagnostics,
            "messageSources": self.message_sources(),
            "historyCut": self.base.history_cut(),
            "toolHistory": self.base.tool_history.to_json(),
            "memory": self.memory,
        })
    }
}

/// One message of [`Preview::messages_json`].
fn message_json(m: &Message) -> Value {
    let mut out = serde_json::json!({"role": role_name(m.role), "content": m.joined_text()});
    let calls: Vec<Value> = m
        .parts
        .iter()
        .filter_map(|p| match p {
            tavo_llm::Part::ToolCall {
                id,
                name,
                arguments,
                ..
            } => Some(serde_json::json!({"id": id, "name": name, "arguments": arguments})),
            _ => None,
        })
        .collect();
    let results: Vec<Value> = m
        .parts
        .iter()
        .filter_map(|p| match p {
            tavo_llm::Part::ToolResult {
                call_id,
                name,
                content,
                is_error,
            } => Some(serde_json::json!({"callId": call_id, "name": name, "content": content, "isError": is_error})),
            _ => None,
        })
        .collect();
    if !calls.is_empty() {
        out["toolCalls"] = Value::Array(calls);
    }
    if !results.is_empty() {
        // A tool message's content is its results' text, as the OpenAI shapes send it.
        out["content"] = Value::String(
            results
                .iter()
                .filter_map(|r| r["content"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        );
        out["toolResults"] = Value::Array(results);
    }
    out
}

/// A role's wire name.
fn role_name(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

/// Builds the next reply's first request without sending it. `registry` and `services` are
/// the engine's (a reply's services), so the declarations are the reply's.
pub(crate) fn preview(
    store: &Store,
    engine: &PromptEngine,
    registry: &Registry,
    services: &Services,
    req: &PreviewRequest,
) -> Result<Preview, EngineError> {
    let extensions = &services.extensions;
    let book = tavo_llm::ConnectionBook::from_setting(
        store.setting_get(tavo_llm::connection::SETTINGS_KEY)?,
    )?;
    let (connection, model, parameters, protocol) = match book.pick(req.connection.as_deref()) {
        Ok(c) => (
            Some(c.name.clone()),
            c.model.clone(),
            book.effective_parameters(c),
            Some(c.protocol),
        ),
        // Named but missing is an error; no connection at all still previews, with defaults.
        Err(tavo_llm::connection::ConnectionError::NoDefault) if req.connection.is_none() => {
            (None, "gpt-4o".to_owned(), book.global.clone(), None)
        }
        Err(e) => return Err(e.into()),
    };
    let model = req.model.clone().unwrap_or(model);
    // A group chat previews the member its reply mode would have speak first.
    let speaker = match (req.speaker, req.kind) {
        (None, GenerationKind::Normal) => crate::group::preview_speaker(store, req.chat)?,
        (chosen, _) => chosen,
    };
    let knobs = PromptKnobs {
        model: model.clone(),
        connection: parameters,
        overrides: req.overrides.clone(),
        seed: req.seed,
        speaker,
        record: req.record,
        user_text: None,
        exact_tokens: true,
    };
    let mut base = build(store, engine, req.chat, req.kind, &knobs)?;
    if let Some(protocol) = protocol {
        base.tool_history.note_protocol(&base.messages, protocol);
    }
    let settings = ToolSettings::load(store)?;
    let exposed = initial_exposure(
        registry,
        &settings,
        req.kind,
        availability(services, req.chat),
        extensions,
        req.chat,
    );
    let calls = may_call(&settings, req.kind);
    let tools = if calls {
        declarations(registry, extensions, &exposed, req.chat)
    } else {
        Vec::new()
    };
    let request = round_request(
        &model,
        &base,
        &[],
        tools,
        calls && settings.recursion_limit > 0,
        settings.reasoning_mode,
    );
    let memory = store.memory_peek(req.chat)?;
    let stored = memory
        .memories
        .iter()
        .filter(|m| !m.trim().is_empty())
        .count();
    let tokens = base
        .explain
        .tokens
        .parts
        .iter()
        .find(|p| p.part == "memory")
        .map(|p| p.tokens);
    let memory = serde_json::json!({
        "enabled": memory.enabled,
        "stored": stored,
        "injected": memory.enabled && stored > 0,
        "tokens": tokens,
        "position": MEMORY_POSITION,
    });
    Ok(Preview {
        request,
        base,
        connection,
        memory,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seed 001: a page's registered tool is on every prompt, dynamic loading (the default) or
    /// not; an MCP server's tool waits for extension_tool_search while dynamic loading is on.
    #[test]
    fn page_tools_are_offered_with_dynamic_loading_and_mcp_tools_are_found() {
        let registry = tavo_tools::builtin_registry().expect("registry");
        let extensions = ExtensionRegistry::default();
        let schema = serde_json::json!({"type": "object", "properties": {}});
        let page = tavo_tools::ExtensionSource::Page { id: "p1".into() };
        let mcp = tavo_tools::ExtensionSource::Mcp {
            server: "weather".into(),
        };
        extensions
            .register(
                "roll_dice",
                None,
                "Roll a die.",
                schema.clone(),
                false,
                page,
            )
            .expect("page tool");
        extensions
            .register("mcp_weather_now", None, "Weather.", schema, false, mcp)
            .expect("mcp tool");
        let mut settings = ToolSettings {
            enabled: true,
            ..ToolSettings::default()
        };
        assert!(settings.dynamic_loading, "the default");
        let avail = Availability {
            web_search: false,
            extensions: true,
        };
        extensions.set_page_chat("p1", Some(ChatId(1)));
        let exposed_in = |s: &ToolSettings, kind, chat| {
            initial_exposure(&registry, s, kind, avail, &extensions, chat)
                .names()
                .to_vec()
        };
        let exposed = |s: &ToolSettings, kind| exposed_in(s, kind, ChatId(1));
        let first = exposed(&settings, GenerationKind::Normal);
        assert!(first.contains(&"roll_dice".to_owned()), "{first:?}");
        assert!(!first.contains(&"mcp_weather_now".to_owned()), "{first:?}");
        assert!(
            first.contains(&"extension_tool_search".to_owned()),
            "{first:?}"
        );
        settings.dynamic_loading = false;
        let all = exposed(&settings, GenerationKind::Normal);
        assert!(
            all.contains(&"roll_dice".to_owned()) && all.contains(&"mcp_weather_now".to_owned())
        );
        assert!(
            exposed(&settings, GenerationKind::Quiet).is_empty(),
            "quiet never calls tools"
        );
        // Issue 30 item 6: the page shows chat 1, so a reply in chat 2 never sees its tool;
        // once the page switches to chat 2 the tool follows it, and chat 1 loses it.
        let other = exposed_in(&settings, GenerationKind::Normal, ChatId(2));
        assert!(
            !other.contains(&"roll_dice".to_owned())
                && other.contains(&"mcp_weather_now".to_owned()),
            "{other:?}"
        );
        extensions.set_page_chat("p1", Some(ChatId(2)));
        let moved = exposed_in(&settings, GenerationKind::Normal, ChatId(2));
        assert!(moved.contains(&"roll_dice".to_owned()), "{moved:?}");
        assert!(!exposed(&settings, GenerationKind::Normal).contains(&"roll_dice".to_owned()));
        extensions.set_page_chat("p1", None);
        assert!(
            !exposed_in(&settings, GenerationKind::Normal, ChatId(2))
                .contains(&"roll_dice".to_owned()),
            "a page on a screen without a chat offers its tools to no reply"
        );
    }

    #[test]
    fn the_hint_goes_after_the_system_block_and_only_when_given() {
        let base = vec![
            Message::text(Role::System, "sys"),
            Message::text(Role::User, "hi"),
        ];
        let none = PromptConverter::None;
        let with = with_hint(&base, Some("HINT"), none);
        assert_eq!(
            with.iter().map(Message::joined_text).collect::<Vec<_>>(),
            ["sys", "HINT", "hi"]
        );
        assert_eq!(with_hint(&base, None, none), base);
        let no_system = vec![Message::text(Role::User, "hi")];
        assert_eq!(with_hint(&no_system, Some("H"), none)[0].joined_text(), "H");
        // A converter keeps one system message: the hint joins it.
        let merged = with_hint(&base, Some("HINT"), PromptConverter::SingleSystem);
        assert_eq!(
            merged.iter().map(Message::joined_text).collect::<Vec<_>>(),
            ["sys\n\nHINT", "hi"]
        );
    }

    #[test]
    fn earlier_tool_cards_become_a_visible_line() {
        let mut loaded = LoadedChat::default();
        let mut m = tavo_model::Message::new(tavo_model::Role::Assistant, "Saved.");
        m.extra.insert(
            crate::summary::MESSAGE_CALLS_KEY.into(),
            serde_json::json!([{"callId": "c1", "tool": "tavo_file_save", "status": "ok", "label": "a.txt"}]),
        );
        loaded.messages.push(m);
        loaded
            .messages
            .push(tavo_model::Message::new(tavo_model::Role::User, "thanks"));
        annotate_tool_history(&mut loaded);
        assert_eq!(
            loaded.messages[0].content,
            "[tool calls: tavo_file_save (a.txt) → ok]\nSaved."
        );
        assert_eq!(loaded.messages[1].content, "thanks");
    }

    fn st_preset() -> Preset {
        let mut p = Preset::default();
        for (k, v) in [
            ("temperature", serde_json::json!(0.8)),
            ("top_p", serde_json::json!(0.95)),
            ("top_k", serde_json::json!(0)),
            ("openai_max_context", serde_json::json!(150_000)),
            ("openai_max_tokens", serde_json::json!(2_000)),
            ("frequency_penalty", serde_json::json!(0.5)),
            ("presence_penalty", serde_json::json!(0)),
        ] {
            p.extra.insert(k.into(), v);
        }
        p
    }

    #[test]
    fn preset_values_win_over_the_connection_unless_switched_off() {
        let connection = Parameters {
            temperature: Some(0.3),
            top_k: Some(40),
            context_length: Some(8_000),
            ..Parameters::default()
        };
        let preset = st_preset();
        let r = resolve_parameters(&connection, Some(&preset), true, &Parameters::default());
        assert_eq!(r.parameters.temperature, Some(0.8));
        assert_eq!(r.parameters.top_p, Some(0.95));
        // ST's top_k 0 is "off": the connection's value stays.
        assert_eq!(r.parameters.top_k, Some(40));
        assert_eq!(r.context_tokens(), 150_000);
        assert_eq!(r.response_tokens(), 2_000);
        let source = |name: &str| {
            r.sources
                .iter()
                .find(|s| s.name == name)
                .map(|s| (s.source, s.preset_key))
        };
        assert_eq!(
            source("contextLength"),
            Some((ParameterSource::Preset, Some("openai_max_context")))
        );
        assert_eq!(source("topK"), Some((ParameterSource::Connection, None)));
        assert_eq!(r.frequency_penalty, Some(0.5));
        assert_eq!(r.presence_penalty, None, "0 is not sent");
        let mut req = ChatRequest::new("m", Vec::new());
        r.apply(&mut req);
        assert_eq!(req.sampling.frequency_penalty, Some(0.5));
        assert_eq!(req.sampling.temperature, Some(0.8));

        let off = resolve_parameters(&connection, Some(&preset), false, &Parameters::default());
        assert_eq!(off.parameters.temperature, Some(0.3));
        assert_eq!(off.parameters.top_p, None);
        assert_eq!(off.context_tokens(), 8_000);
        assert_eq!(off.response_tokens(), DEFAULT_RESPONSE_TOKENS);
        assert_eq!(off.frequency_penalty, None);

        let bare = resolve_parameters(&Parameters::default(), None, true, &Parameters::default());
        assert_eq!(bare.context_tokens(), DEFAULT_CONTEXT_TOKENS);
        assert_eq!(
            bare.sources
                .iter()
                .map(|s| (s.name, s.source))
                .collect::<Vec<_>>(),
            [("contextLength", ParameterSource::Default)]
        );

        let over = Parameters {
            context_length: Some(4_096),
            ..Parameters::default()
        };
        let o = resolve_parameters(&connection, Some(&preset), true, &over);
        assert_eq!(o.context_tokens(), 4_096);
    }
}

/// Token counts of texts as the next reply's prompt counts them (the editors' live counts).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenCounts {
    /// The model the counts are for: the connection's, else `gpt-4o` as `tavo prompt` uses.
    pub model: String,
    /// The encoding (`o200k_base`, `cl100k_base`, …).
    pub encoding: &'static str,
    /// Whether the counts are the documented estimate (a model without a public tokenizer).
    pub estimated: bool,
    /// One count per text, in order (the text alone, without message framing).
    pub counts: Vec<usize>,
}

/// Counts `texts` with the tokenizer of `connection`'s model (the default connection when
/// `None`; with none configured, `gpt-4o`, as [`preview`] builds). Blocking: reads the
/// connection settings, and a process's first count makes the tokenizer ready (compiles its
/// pattern).
pub fn count_tokens(
    store: &Store,
    texts: &[String],
    connection: Option<&str>,
) -> Result<TokenCounts, EngineError> {
    let book = tavo_llm::ConnectionBook::from_setting(
        store.setting_get(tavo_llm::connection::SETTINGS_KEY)?,
    )?;
    let model = match book.pick(connection) {
        Ok(c) => c.model.clone(),
        Err(tavo_llm::connection::ConnectionError::NoDefault) if connection.is_none() => {
            "gpt-4o".to_owned()
        }
        Err(e) => return Err(e.into()),
    };
    let counter = tavo_prompt::assemble::TokenCounter::for_model(&model);
    Ok(TokenCounts {
        encoding: counter.encoding(),
        estimated: counter.is_estimate(),
        counts: texts.iter().map(|t| counter.count(t)).collect(),
        model,
    })
}
