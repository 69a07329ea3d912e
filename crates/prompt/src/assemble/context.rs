//! The macro context of one build: names, card fields, message facts and the clock, read
//! from the chat's loaded values.

use tavo_model::{Character, Message, Role};

use super::input::{PromptInput, PromptOptions};
use crate::macros::MacroContext;

fn muted_ids(input: &PromptInput<'_>) -> Vec<i64> {
    input
        .chat
        .and_then(|c| c.extra.get("mutedCharacterIds"))
        .and_then(|v| v.as_array())
        .map(|a| a.iter().filter_map(|v| v.as_i64()).collect())
        .unwrap_or_default()
}

pub(super) fn macro_context(
    input: &PromptInput<'_>,
    options: &PromptOptions,
    speaker: Option<&Character>,
    group: bool,
) -> MacroContext {
    let user = input.persona.map(|p| p.name.as_str()).unwrap_or("User");
    let char_name = match speaker {
        Some(c) if group => c.display_name().to_owned(),
        Some(c) => c.name.clone(),
        None => String::new(),
    };
    let mut ctx = MacroContext::new(user, &char_name, options.now);
    if group {
        let muted = muted_ids(input);
        ctx.group_members = input
            .characters
            .iter()
            .map(|c| c.display_name().to_owned())
            .collect();
        ctx.group_not_muted = input
            .characters
            .iter()
            .filter(|c| !c.id.is_some_and(|id| muted.contains(&id.0)))
            .map(|c| c.display_name().to_owned())
            .collect();
    }
    if let Some(c) = speaker {
        ctx.character_id = c.id.map(|id| id.0);
        ctx.description = c.description.clone();
        ctx.personality = c.personality.clone();
        ctx.char_scenario = c.scenario.clone();
        ctx.char_prompt = c.system_prompt.clone();
        ctx.char_instruction = c.post_history_instructions.clone();
        ctx.mes_examples_raw = c.mes_example.clone();
        ctx.char_version = c.character_version.clone();
        ctx.creator_notes = c.creator_notes.clone();
        ctx.depth_prompt = c
            .extensions
            .get("depth_prompt")
            .and_then(|d| d.get("prompt"))
            .and_then(|p| p.as_str())
            .unwrap_or_default()
            .to_owned();
        ctx.greetings = std::iter::once(c.first_mes.clone())
            .chain(c.alternate_greetings.iter().cloned())
            .collect();
    }
    ctx.scenario_override = input
        .chat
        .and_then(|c| c.extra.get("scenario"))
        .and_then(|v| v.as_str())
        .map(str::to_owned);
    ctx.persona = input
        .persona
        .map(|p| p.description.clone())
        .unwrap_or_default();
    ctx.model = options.model.clone();
    let visible: Vec<&Message> = input.messages.iter().filter(|m| !m.hidden).collect();
    ctx.last_message = visible
        .last()
        .map(|m| m.content.clone())
        .unwrap_or_default();
    ctx.last_message_index = input.messages.len().checked_sub(1);
    ctx.last_user_message = visible
        .iter()
        .rev()
        .find(|m| m.role == Role::User)
        .map(|m| m.content.clone())
        .unwrap_or_default();
    ctx.last_char_message = visible
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant)
        .map(|m| m.content.clone())
        .unwrap_or_default();
    // idleDuration: time since the user message before the newest message.
    ctx.idle_since = visible
        .iter()
        .rev()
        .skip(1)
        .find(|m| m.role == Role::User)
        .and_then(|m| m.send_date.as_deref())
        .and_then(|d| chrono::DateTime::parse_from_rfc3339(d).ok());
    ctx
}
