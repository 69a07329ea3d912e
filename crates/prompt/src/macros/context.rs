//! What the macros read: names, card fields, message facts and the clock.
//!
//! The context is plain data assembled by the caller (the prompt builder fills it from the
//! chat's character, persona and messages), so the macro engine stays pure and testable.

use chrono::{DateTime, FixedOffset};

/// Everything a macro can read except variables (which live in [`super::Variables`]).
#[derive(Debug, Clone)]
pub struct MacroContext {
    /// `{{user}}`: the persona's name.
    pub user: String,
    /// `{{char}}`: the speaking character's name (nickname in group chats when set).
    pub char: String,
    /// The speaking character's id (EJS `characterId`).
    pub character_id: Option<i64>,
    /// Every group member's name, muted included; empty in a 1:1 chat.
    pub group_members: Vec<String>,
    /// Group members that are not muted.
    pub group_not_muted: Vec<String>,
    /// `{{charDescription}}` / `{{description}}`.
    pub description: String,
    /// `{{charPersonality}}` / `{{personality}}`.
    pub personality: String,
    /// The card's own scenario (`{{charScenario}}`).
    pub char_scenario: String,
    /// The chat-level scenario override; `{{scenario}}` prefers it over the card's.
    pub scenario_override: Option<String>,
    /// `{{persona}}`: the persona description.
    pub persona: String,
    /// `{{charPrompt}}`: the card's main-prompt override.
    pub char_prompt: String,
    /// `{{charInstruction}}` / `{{charJailbreak}}`: the card's post-history instructions.
    pub char_instruction: String,
    /// `{{mesExamplesRaw}}`: dialogue examples as written on the card.
    pub mes_examples_raw: String,
    /// `{{charVersion}}`.
    pub char_version: String,
    /// `{{charCreatorNotes}}` / `{{creatorNotes}}`.
    pub creator_notes: String,
    /// `{{charDepthPrompt}}`.
    pub depth_prompt: String,
    /// `{{charFirstMessage}}` (index 0) and alternate greetings (1…).
    pub greetings: Vec<String>,
    /// `{{lastMessage}}`: the newest visible message.
    pub last_message: String,
    /// `{{lastUserMessage}}` and `{{input}}`: the newest visible user message.
    pub last_user_message: String,
    /// `{{lastCharMessage}}`: the newest visible non-user message.
    pub last_char_message: String,
    /// `{{lastMessageId}}`: 0-based index of the newest message, if any.
    pub last_message_index: Option<usize>,
    /// `{{model}}`: the model the prompt is built for.
    pub model: String,
    /// The clock, in the user's local offset (`{{time}}`, `{{date}}`, …).
    pub now: DateTime<FixedOffset>,
    /// When the relevant previous user message was sent (`{{idleDuration}}`).
    pub idle_since: Option<DateTime<FixedOffset>>,
    /// `{{original}}`: the preset text a card override replaces (only while rendering an
    /// override).
    pub original: Option<String>,
    /// Text of extra dynamic macros for one rendering (`{0}` is handled by the caller).
    pub last_chat_message: Option<String>,
    /// `{{outlet::name}}`: activated outlet entries' text by outlet name.
    pub outlets: std::collections::BTreeMap<String, String>,
}

impl MacroContext {
    /// A context with the given names and clock and every other field empty.
    pub fn new(user: &str, char: &str, now: DateTime<FixedOffset>) -> Self {
        Self {
            user: user.to_owned(),
            char: char.to_owned(),
            character_id: None,
            group_members: Vec::new(),
            group_not_muted: Vec::new(),
            description: String::new(),
            personality: String::new(),
            char_scenario: String::new(),
            scenario_override: None,
            persona: String::new(),
            char_prompt: String::new(),
            char_instruction: String::new(),
            mes_examples_raw: String::new(),
            char_version: String::new(),
            creator_notes: String::new(),
            depth_prompt: String::new(),
            greetings: Vec::new(),
            last_message: String::new(),
            last_user_message: String::new(),
            last_char_message: String::new(),
            last_message_index: None,
            model: String::new(),
            now,
            idle_since: None,
            original: None,
            last_chat_message: None,
            outlets: std::collections::BTreeMap::new(),
        }
    }

    /// Whether this is a group chat (more than one member listed).
    pub fn is_group(&self) -> bool {
        !self.group_members.is_empty()
    }

    /// `{{scenario}}`: the chat override if set, else the card's scenario.
    pub fn scenario(&self) -> &str {
        self.scenario_override
            .as_deref()
            .filter(|s| !s.is_empty())
            .unwrap_or(&self.char_scenario)
    }

    /// `{{group}}`: member names comma-separated in a group, the character in a 1:1 chat.
    pub fn group(&self) -> String {
        if self.is_group() {
            self.group_members.join(", ")
        } else {
            self.char.clone()
        }
    }

    /// `{{groupNotMuted}}`: unmuted member names, or the character in a 1:1 chat.
    pub fn group_not_muted_names(&self) -> String {
        if self.is_group() {
            self.group_not_muted.join(", ")
        } else {
            self.char.clone()
        }
    }
}
