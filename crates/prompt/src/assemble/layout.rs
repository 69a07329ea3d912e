//! Step 3 of the assembly: the preset's entries walked in order into parts (built-ins and
//! custom entries rendered, markers filled, `absolute` entries as in-chat injections), the
//! long-term memory before the history, and the pinned pieces around the history (chat
//! start, group nudge, the continued message and its nudge, the impersonation prompt).

use tavo_model::{
    BasicPrompts, Character, Memory, Message, Preset, PresetEntry, PresetInjectionPosition, Role,
};

use super::build::{Builder, Copies, chat_role, history_text};
use super::injections::Injection;
use super::input::GenerationType;
use super::message::PromptMessage;

/// One piece of the prompt in preset order.
pub(super) enum Part {
    /// Text that is always sent (pinned).
    Fixed {
        label: String,
        messages: Vec<PromptMessage>,
    },
    /// The `chatHistory` marker.
    History,
    /// The `dialogueExamples` marker.
    Examples,
}

/// The preset walked into parts.
pub(super) struct Layout {
    pub(super) parts: Vec<Part>,
    pub(super) injections: Vec<Injection>,
    /// Whether the preset has an active `chatHistory` marker.
    pub(super) has_history: bool,
}

/// The pinned pieces around the history.
pub(super) struct AroundHistory {
    pub(super) chat_start: Option<PromptMessage>,
    pub(super) group_nudge: Option<PromptMessage>,
    /// After everything: the continued message and its nudge, or the impersonation prompt.
    pub(super) tail: Vec<(String, PromptMessage)>,
}

/// Walks the active, enabled preset entries in array order.
pub(super) fn preset_parts(
    b: &mut Builder<'_>,
    preset: &Preset,
    speaker: &Character,
    before: &[String],
    after: &[String],
) -> Layout {
    let bp = &preset.basic_prompts;
    let mut layout = Layout {
        parts: Vec::new(),
        injections: Vec::new(),
        has_history: false,
    };
    for entry in preset.entries.iter().filter(|e| e.active && e.enabled) {
        let location = format!("preset.entries[{}].content", entry.identifier);
        let role = entry.effective_role();
        let text: Option<String> = match entry.identifier.as_str() {
            "chatHistory" => {
                layout.parts.push(Part::History);
                layout.has_history = true;
                None
            }
            "dialogueExamples" => {
                layout.parts.push(Part::Examples);
                None
            }
            "main" => Some(overridable(
                b,
                entry,
                &speaker.system_prompt,
                "character.systemPrompt",
                &location,
            )),
            "jailbreak" => Some(overridable(
                b,
                entry,
                &speaker.post_history_instructions,
                "character.postHistoryInstructions",
                &location,
            )),
            "worldInfoBefore" => Some(before.join("\n")),
            "worldInfoAfter" => Some(after.join("\n")),
            "personaDescription" => {
                let shown = !b.ctx.persona.trim().is_empty();
                shown.then(|| b.render("preset.basicPrompts.persona", &bp.persona))
            }
            "charDescription" => {
                let shown = !b.ctx.description.trim().is_empty();
                shown.then(|| b.render("preset.basicPrompts.description", &bp.description))
            }
            "charPersonality" => {
                let shown = !b.ctx.personality.trim().is_empty();
                shown.then(|| b.render("preset.basicPrompts.personality", &bp.personality))
            }
            "scenario" => {
                let shown = !b.ctx.scenario().trim().is_empty();
                shown.then(|| b.render("preset.basicPrompts.scenario", &bp.scenario))
            }
            _ => Some(b.render(&location, entry.content.as_deref().unwrap_or_default())),
        };
        let Some(text) = text else { continue };
        if text.trim().is_empty() {
            continue;
        }
        if entry.injection_position == PresetInjectionPosition::Absolute {
            layout.injections.push(Injection {
                depth: entry.injection_depth as usize,
                role,
                text,
                source: entry.identifier.clone(),
            });
        } else {
            layout.parts.push(Part::Fixed {
                label: entry.identifier.clone(),
                messages: vec![PromptMessage::new(role, text)],
            });
        }
    }
    layout
}

/// Card overrides of `main` / `jailbreak`: the card text replaces the preset text, with
/// `{{original}}` standing for it, unless the entry forbids overrides.
fn overridable(
    b: &mut Builder<'_>,
    entry: &PresetEntry,
    card_text: &str,
    card_location: &str,
    location: &str,
) -> String {
    let original = entry.content.as_deref().unwrap_or_default();
    if !entry.forbid_overrides && !card_text.trim().is_empty() {
        let rendered_original = b.render(location, original);
        b.render_override(card_location, card_text, &rendered_original)
    } else {
        b.render(location, original)
    }
}

/// The chat's long-term memory, when enabled and not empty, as a system part right before
/// the history (at the end without a `chatHistory` marker).
pub(super) fn add_memory(memory: Option<&Memory>, parts: &mut Vec<Part>) {
    let Some(memory) = memory.filter(|m| m.enabled) else {
        return;
    };
    let items: Vec<&str> = memory
        .memories
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect();
    if items.is_empty() {
        return;
    }
    let text = format!(
        "[Long-term memory]\n{}",
        items
            .iter()
            .map(|s| format!("- {s}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let at = parts
        .iter()
        .position(|p| matches!(p, Part::History))
        .unwrap_or(parts.len());
    parts.insert(
        at,
        Part::Fixed {
            label: "memory".into(),
            messages: vec![PromptMessage::new(Role::System, text)],
        },
    );
}

/// Renders the pinned pieces around the history, in this order: chat start, group nudge,
/// the continued message with the continue nudge, the impersonation prompt.
pub(super) fn around_history(
    b: &mut Builder<'_>,
    copies: &mut Copies<'_>,
    bp: &BasicPrompts,
    has_history: bool,
    generation: GenerationType,
    continued: Option<&Message>,
) -> AroundHistory {
    let chat_start = if has_history {
        let template = if b.group {
            &bp.group_chat_start
        } else {
            &bp.chat_start
        };
        let text = b.render("preset.basicPrompts.chatStart", template);
        (!text.trim().is_empty()).then(|| PromptMessage::new(Role::System, text))
    } else {
        None
    };
    let group_nudge = if has_history && b.group && generation != GenerationType::Impersonate {
        let text = b.render("preset.basicPrompts.groupNudge", &bp.group_nudge);
        (!text.trim().is_empty()).then(|| PromptMessage::new(Role::System, text))
    } else {
        None
    };
    let mut tail: Vec<(String, PromptMessage)> = Vec::new();
    if let Some(last) = continued {
        b.ensure_copies(copies, 1);
        let i = copies.visible.len() - 1;
        let text = history_text(b, copies, i);
        tail.push((
            "continuedMessage".into(),
            PromptMessage::new(chat_role(last.role), text).copying(last.id.map(|id| id.get())),
        ));
        let mut ctx = b.ctx.clone();
        ctx.last_chat_message = Some(last.content.clone());
        let rendered = b.macros.render_used(&bp.continue_nudge, &ctx);
        b.note("preset.basicPrompts.continueNudge", &rendered);
        if !rendered.text.trim().is_empty() {
            tail.push((
                "continueNudge".into(),
                PromptMessage::new(Role::System, rendered.text),
            ));
        }
    }
    if generation == GenerationType::Impersonate {
        let text = b.render("preset.basicPrompts.impersonation", &bp.impersonation);
        if !text.trim().is_empty() {
            tail.push((
                "impersonation".into(),
                PromptMessage::new(Role::System, text),
            ));
        }
    }
    AroundHistory {
        chat_start,
        group_nudge,
        tail,
    }
}
