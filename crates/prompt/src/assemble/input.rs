//! What a prompt is built from, the knobs, and what comes out.

use chrono::{DateTime, FixedOffset};
use serde::{Deserialize, Serialize};
use tavo_model::{Character, Chat, Lorebook, Memory, Message, Persona, Preset, RegexGroup};

use super::explain::Explain;
use super::message::{PromptConverter, PromptMessage};
use crate::lorebook::TimedEffects;
use crate::macros::Variables;

/// Loaded model values of one chat. No database access happens while building.
#[derive(Debug, Clone, Copy)]
pub struct PromptInput<'a> {
    /// The chat (scenario override in `extra.scenario`, muted members in
    /// `extra.mutedCharacterIds`).
    pub chat: Option<&'a Chat>,
    /// The chat's characters in membership order (more than one = group chat).
    pub characters: &'a [Character],
    /// Index into `characters` of the character who replies.
    pub speaker: usize,
    /// The chat's persona.
    pub persona: Option<&'a Persona>,
    /// The chat's preset; `None` uses the default preset (the twelve built-in entries).
    pub preset: Option<&'a Preset>,
    /// Bound lorebooks in binding order.
    pub lorebooks: &'a [Lorebook],
    /// Bound regex groups in binding order.
    pub regex_groups: &'a [RegexGroup],
    /// All messages of the chat, oldest first (hidden ones included; they are skipped).
    pub messages: &'a [Message],
    /// Long-term memory (injected when enabled and non-empty).
    pub memory: Option<&'a Memory>,
    /// Chat and global variables before this generation.
    pub variables: &'a Variables,
    /// Lorebook timed-effect state before this generation.
    pub timed: &'a TimedEffects,
}

/// What kind of generation the prompt is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum GenerationType {
    /// A normal reply.
    #[default]
    Normal,
    /// Continue the last message (`continueNudge`).
    Continue,
    /// Write the user's next message (`impersonation`).
    Impersonate,
}

/// Knobs of one build.
#[derive(Debug, Clone)]
pub struct PromptOptions {
    /// Seed of every random decision (macros, lorebook probability).
    pub seed: u64,
    /// The clock, in the user's local offset.
    pub now: DateTime<FixedOffset>,
    /// Normal, continue or impersonate.
    pub generation: GenerationType,
    /// The model (chooses the tokenizer; `{{model}}`).
    pub model: String,
    /// Context window in tokens.
    pub max_context_tokens: usize,
    /// Tokens reserved for the reply.
    pub max_response_tokens: usize,
    /// Provider converter applied last.
    pub converter: PromptConverter,
    /// Lorebook budget as a percentage of the prompt budget (SillyTavern default 25).
    pub lorebook_budget_percent: u32,
    /// Whether lorebook entries may activate other entries.
    pub recursive_lorebooks: bool,
    /// EJS templates on (Tavo's "启用 EJS 模板", setting `ejs.enabled`; default true). Off,
    /// `<% %>` tags reach the prompt as written.
    pub ejs: bool,
    /// Whether the build waits for the model's tokenizer to load (the first build of a
    /// process, ≈ 0.3–0.5 s). Off (a reply), a build before it is in memory counts with the
    /// byte upper bound and is kept when nothing was left out — the same messages an exact
    /// count gives —, else it is built again with the exact count.
    pub wait_for_tokenizer: bool,
}

impl PromptOptions {
    /// Defaults: seed 0, `gpt-4o`, 16,384-token context with 1,024 reserved for the reply,
    /// lorebook budget 25 %, recursion on, no converter, EJS on, exact token counts.
    pub fn new(now: DateTime<FixedOffset>) -> Self {
        Self {
            seed: 0,
            now,
            generation: GenerationType::Normal,
            model: "gpt-4o".to_owned(),
            max_context_tokens: 16_384,
            max_response_tokens: 1_024,
            converter: PromptConverter::None,
            lorebook_budget_percent: 25,
            recursive_lorebooks: true,
            ejs: true,
            wait_for_tokenizer: true,
        }
    }

    /// Tokens available to the prompt.
    pub fn max_prompt_tokens(&self) -> usize {
        self.max_context_tokens
            .saturating_sub(self.max_response_tokens)
    }
}

/// The assembled prompt and everything a recorded generation must persist.
#[derive(Debug, Clone)]
pub struct PromptOutput {
    /// The messages to send.
    pub messages: Vec<PromptMessage>,
    /// Why the prompt looks the way it does.
    pub explain: Explain,
    /// Variables after the side-effect macros of the text that was used.
    pub variables: Variables,
    /// Whether any variable changed.
    pub variables_changed: bool,
    /// Timed-effect state after this generation (persist it only for a recorded
    /// generation).
    pub timed: TimedEffects,
}
