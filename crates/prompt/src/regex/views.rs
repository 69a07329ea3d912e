//! The three outputs of one message: what the user sees, what the model receives and what
//! is stored. `content` and `reasoning` are separate texts (`char` placement never touches
//! reasoning; `reasoning` placement never touches content).

use tavo_model::{Message, RegexPlacement, Role};

use super::pipeline::{RegexReport, RegexRun, RegexTarget, Stage};
use crate::macros::MacroState;

/// The placement a message's content belongs to; `None` for system messages (no rule
/// targets them).
pub fn content_placement(role: Role) -> Option<RegexPlacement> {
    match role {
        Role::User => Some(RegexPlacement::User),
        Role::Assistant => Some(RegexPlacement::Char),
        Role::System => None,
    }
}

/// Display and model copies of a message (storage is untouched by these stages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageViews {
    /// Content as shown (`display` and `sendAndDisplay` rules).
    pub display_content: String,
    /// Reasoning as shown.
    pub display_reasoning: Option<String>,
    /// Content as sent to the model (`send` and `sendAndDisplay` rules).
    pub model_content: String,
}

fn run_stage(
    run: &RegexRun<'_>,
    stage: Stage,
    message: &Message,
    depth: Option<i64>,
    macros: &mut MacroState,
    report: &mut RegexReport,
) -> (String, Option<String>) {
    let label = message
        .id
        .map(|id| format!("message:{id}"))
        .unwrap_or_else(|| "message".to_owned());
    let mut targets = Vec::new();
    if let Some(placement) = content_placement(message.role) {
        targets.push(RegexTarget {
            text: message.content.clone(),
            placement,
            depth,
            label: label.clone(),
        });
    }
    let has_reasoning = message.reasoning.is_some();
    if let Some(reasoning) = &message.reasoning {
        targets.push(RegexTarget {
            text: reasoning.clone(),
            placement: RegexPlacement::Reasoning,
            depth,
            label: format!("{label}.reasoning"),
        });
    }
    run.apply(stage, &mut targets, macros, None, report);
    let mut iter = targets.into_iter();
    let content = if content_placement(message.role).is_some() {
        iter.next().map(|t| t.text).unwrap_or_default()
    } else {
        message.content.clone()
    };
    let reasoning = if has_reasoning {
        iter.next().map(|t| t.text)
    } else {
        None
    };
    (content, reasoning)
}

/// The display and model copies of `message` at `depth` (0 = newest).
pub fn message_views(
    run: &RegexRun<'_>,
    message: &Message,
    depth: i64,
    macros: &mut MacroState,
    report: &mut RegexReport,
) -> MessageViews {
    let (display_content, display_reasoning) =
        run_stage(run, Stage::Display, message, Some(depth), macros, report);
    let (model_content, _) = run_stage(run, Stage::Send, message, Some(depth), macros, report);
    MessageViews {
        display_content,
        display_reasoning,
        model_content,
    }
}

/// The stored rewrite of a message on receive (`Stage::Receive`) or edit (`Stage::Edit`):
/// returns the new `(content, reasoning)`. Depth is not applied (the message is the newest
/// when received; an edit rewrites it wherever it is).
pub fn persist_rewrite(
    run: &RegexRun<'_>,
    stage: Stage,
    message: &Message,
    macros: &mut MacroState,
    report: &mut RegexReport,
) -> (String, Option<String>) {
    run_stage(run, stage, message, None, macros, report)
}
