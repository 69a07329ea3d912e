//! Prompt assembly: macros, variables, lorebook activation, regex rules, presets, token
//! budget. Pure: no network, and no database access in the core — [`build`] takes loaded
//! model values; [`loader`] is the thin adapter that reads them from the store.

pub mod assemble;
pub mod ejs;
pub mod engine;
pub mod js;
pub mod loader;
pub mod lorebook;
pub mod macros;
pub mod regex;
pub mod speech;
pub mod stored;
mod tokenizer;

pub use assemble::{
    Diagnostic, Explain, GenerationType, PartTokens, PromptConverter, PromptInput, PromptMessage,
    PromptOptions, PromptOutput, TokenReport,
};
pub use engine::PromptEngine;
pub use stored::{StoredRewrite, WriteTiming, rewrite_stored};

/// Builds the prompt for one generation with a fresh engine (no caches kept). Long-lived
/// callers (the reply engine, the server) keep a [`PromptEngine`] instead.
pub fn build(input: &PromptInput<'_>, options: &PromptOptions) -> PromptOutput {
    PromptEngine::new().build(input, options)
}

/// The greeting a new chat starts with: the first character's `first_mes` (in a group chat,
/// its first group-only greeting when it has one), EJS-rendered and macro-expanded as Tavo's
/// greeting picker shows it. `None` when the card has no greeting.
pub fn render_greeting(
    characters: &[tavo_model::Character],
    persona: Option<&tavo_model::Persona>,
    now: chrono::DateTime<chrono::FixedOffset>,
) -> Option<String> {
    render_greeting_with(characters, persona, now, true)
}

/// [`render_greeting`] with the EJS switch ([`ejs::SETTING`]): off, `<% %>` tags stay as
/// written.
pub fn render_greeting_with(
    characters: &[tavo_model::Character],
    persona: Option<&tavo_model::Persona>,
    now: chrono::DateTime<chrono::FixedOffset>,
    ejs: bool,
) -> Option<String> {
    let first = characters.first()?;
    let group = characters.len() > 1;
    let text = if group {
        first
            .group_only_greetings
            .iter()
            .find(|g| !g.trim().is_empty())
            .unwrap_or(&first.first_mes)
    } else {
        &first.first_mes
    };
    if text.trim().is_empty() {
        return None;
    }
    let user = persona.map(|p| p.name.as_str()).unwrap_or("User");
    let name = if group {
        first.display_name()
    } else {
        &first.name
    };
    let mut ctx = macros::MacroContext::new(user, name, now);
    ctx.description = first.description.clone();
    ctx.personality = first.personality.clone();
    ctx.char_scenario = first.scenario.clone();
    ctx.persona = persona.map(|p| p.description.clone()).unwrap_or_default();
    if group {
        ctx.group_members = characters
            .iter()
            .map(|c| c.display_name().to_owned())
            .collect();
        ctx.group_not_muted = ctx.group_members.clone();
    }
    ctx.character_id = first.id.map(|id| id.0);
    let mut state = macros::MacroState::new(macros::Variables::default(), 0);
    if !ejs {
        state.set_templates(ejs::Templates::off());
    }
    Some(state.render(text, &ctx).text)
}

/// The current time in the machine's local offset (what `{{time}}` shows).
pub fn local_now() -> chrono::DateTime<chrono::FixedOffset> {
    chrono::Local::now().fixed_offset()
}

/// Applies a chat's `receive` / `editAndReceive` regex rules (Tavo: persisted rewrites) to a
/// message that is about to be stored: `edit` selects the edit stage. `{{user}}` is `User` and
/// `{{char}}` empty, and variable writes are dropped: callers that store messages use
/// [`rewrite_stored`] (through `tavo_tools::messages`), which knows the chat.
pub fn rewrite_for_storage(
    message: &tavo_model::Message,
    groups: &[tavo_model::RegexGroup],
    edit: bool,
) -> (tavo_model::Message, Vec<regex::RegexIssue>) {
    let ctx = macros::MacroContext::new("User", "", local_now());
    let timing = if edit {
        WriteTiming::Edit
    } else {
        WriteTiming::Receive
    };
    let out = rewrite_stored(message, groups, timing, &ctx, &macros::Variables::default());
    (out.message, out.issues)
}
