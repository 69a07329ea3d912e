//! The explain report: the stable `--explain` contract.

use serde::Serialize;

use crate::lorebook::{ActivatedEntry, SkippedEntry};
use crate::regex::RegexApplied;

/// Why the prompt looks the way it does.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Explain {
    /// Lorebook entries injected, in output order.
    pub activated_entries: Vec<ActivatedEntry>,
    /// Lorebook entries stopped by a gate.
    pub skipped_entries: Vec<SkippedEntry>,
    /// Regex rules that changed text.
    pub regex_applied: Vec<RegexApplied>,
    /// Token accounting.
    pub tokens: TokenReport,
    /// Macros left as written, regex rules skipped, invalid keys, budget overruns.
    pub diagnostics: Vec<Diagnostic>,
    /// Where each message of the prompt came from, one list per message in order: the parts
    /// merged into it by the token parts' names (a preset entry's identifier such as `main`,
    /// `charDescription` or `worldInfoBefore`, `chatHistory`, `dialogueExamples`, `chatStart`,
    /// `memory`, …), and `lorebook:<id>/<entry>` for a lorebook entry injected at a depth.
    pub message_sources: Vec<Vec<String>>,
}

/// Token counts.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenReport {
    /// Tokens of the whole prompt (framing and reply priming included).
    pub total: usize,
    /// Tokens available to the prompt (context minus reply).
    pub budget: usize,
    /// Tokenizer used (`o200k_base`, `cl100k_base`, or the estimate `o200k_base×1.1`).
    pub encoding: String,
    /// Whether counts are estimates.
    pub estimated: bool,
    /// Per part, in prompt order.
    pub parts: Vec<PartTokens>,
    /// History messages included out of those available.
    pub history_included: usize,
    /// Visible history messages available.
    pub history_available: usize,
}

/// Tokens of one part (a preset entry identifier, `chatHistory`, `memory`, …).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PartTokens {
    /// Part name.
    pub part: String,
    /// Tokens, framing included.
    pub tokens: usize,
}

/// A problem that did not stop the build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Diagnostic {
    /// Field path (`preset.entries[main].content`, `character.description`, …).
    pub location: String,
    /// What is wrong and what to do.
    pub message: String,
    /// The offending text (a macro as written), when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Byte offset inside the field, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<usize>,
}
