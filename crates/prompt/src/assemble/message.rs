//! The provider-neutral prompt message and Tavo's three prompt converters.

use serde::{Deserialize, Serialize};
use tavo_model::Role;

/// One message of the assembled prompt. The LLM crate converts it to a provider's wire
/// format; `name` carries SillyTavern's `example_user` / `example_assistant` for dialogue
/// examples.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PromptMessage {
    /// `system`, `user` or `assistant`.
    pub role: Role,
    /// The text.
    pub content: String,
    /// Optional speaker name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Where the text came from, for the explain record (`Explain::message_sources`): the
    /// parts merged into it, by the names the token parts use. Never sent, never compared.
    #[serde(skip)]
    pub sources: Vec<String>,
    /// The chat message this one is (a history message or the continued one), so the engine
    /// can put that message's tool rounds back in front of it. `None` for everything else and
    /// for a merge of several messages. Never sent, never compared.
    #[serde(skip)]
    pub origin: Option<i64>,
}

/// Two messages are equal when they would be sent the same: their sources are bookkeeping.
impl PartialEq for PromptMessage {
    fn eq(&self, other: &Self) -> bool {
        self.role == other.role && self.content == other.content && self.name == other.name
    }
}

impl Eq for PromptMessage {}

impl PromptMessage {
    /// A message without a name.
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            name: None,
            sources: Vec::new(),
            origin: None,
        }
    }

    /// This message as chat message `id`'s copy.
    pub(crate) fn copying(mut self, id: Option<i64>) -> Self {
        self.origin = id;
        self
    }

    /// This message with `source` as its origin, unless it already names one.
    pub(crate) fn with_source(mut self, source: &str) -> Self {
        if self.sources.is_empty() {
            self.sources.push(source.to_owned());
        }
        self
    }

    /// Adds `other`'s sources to this message's (a merge), each once.
    fn take_sources(&mut self, other: Vec<String>) {
        for source in other {
            if !self.sources.contains(&source) {
                self.sources.push(source);
            }
        }
    }
}

/// Tavo's built-in prompt converters for providers with stricter message rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PromptConverter {
    /// Send the list as assembled.
    #[default]
    None,
    /// Merge consecutive messages of the same role (and name), joined by a blank line.
    MergeConsecutive,
    /// One system message: the leading system messages merged; later system messages
    /// become user messages; then consecutive same-role messages merged.
    SingleSystem,
    /// As `SingleSystem`, and the first message after the optional system message must be
    /// a user message (a user placeholder is inserted when it is not).
    SystemThenUser,
}

/// Applies `converter`. `placeholder` is the user text inserted by `SystemThenUser` (the
/// preset's `chatStart`).
pub fn convert(
    messages: Vec<PromptMessage>,
    converter: PromptConverter,
    placeholder: &str,
) -> Vec<PromptMessage> {
    match converter {
        PromptConverter::None => messages,
        PromptConverter::MergeConsecutive => merge(messages),
        PromptConverter::SingleSystem => merge(single_system(messages)),
        PromptConverter::SystemThenUser => {
            let mut out = merge(single_system(messages));
            let first_turn = usize::from(out.first().is_some_and(|m| m.role == Role::System));
            if out.get(first_turn).is_none_or(|m| m.role != Role::User) {
                let text = if placeholder.trim().is_empty() {
                    "[Start a new Chat]"
                } else {
                    placeholder
                };
                out.insert(
                    first_turn,
                    PromptMessage::new(Role::User, text).with_source("chatStart"),
                );
            }
            merge(out)
        }
    }
}

fn merge(messages: Vec<PromptMessage>) -> Vec<PromptMessage> {
    let mut out: Vec<PromptMessage> = Vec::with_capacity(messages.len());
    for message in messages {
        match out.last_mut() {
            Some(last) if last.role == message.role && last.name == message.name => {
                last.content.push_str("\n\n");
                last.content.push_str(&message.content);
                last.take_sources(message.sources);
                // A merge of two chat messages is no longer either of them.
                last.origin = None;
            }
            _ => out.push(message),
        }
    }
    out
}

fn single_system(messages: Vec<PromptMessage>) -> Vec<PromptMessage> {
    let mut out = Vec::with_capacity(messages.len());
    let mut system: Option<PromptMessage> = None;
    let mut leading = true;
    for mut message in messages {
        if leading && message.role == Role::System {
            let text = match &message.name {
                Some(name) => format!("{name}: {}", message.content),
                None => message.content,
            };
            match &mut system {
                Some(s) => {
                    s.content.push_str("\n\n");
                    s.content.push_str(&text);
                    s.take_sources(message.sources);
                }
                None => {
                    let mut first = PromptMessage::new(Role::System, text);
                    first.sources = message.sources;
                    system = Some(first);
                }
            }
            continue;
        }
        leading = false;
        if message.role == Role::System {
            message.role = Role::User;
        }
        out.push(message);
    }
    if let Some(system) = system {
        out.insert(0, system);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(role: Role, text: &str) -> PromptMessage {
        PromptMessage::new(role, text)
    }

    fn sample() -> Vec<PromptMessage> {
        vec![
            m(Role::System, "main"),
            m(Role::System, "lore"),
            m(Role::Assistant, "hello"),
            m(Role::Assistant, "again"),
            m(Role::System, "note"),
            m(Role::User, "hi"),
            m(Role::System, "phi"),
        ]
    }

    #[test]
    fn none_keeps_everything() {
        assert_eq!(convert(sample(), PromptConverter::None, ""), sample());
    }

    #[test]
    fn merge_consecutive() {
        let out = convert(sample(), PromptConverter::MergeConsecutive, "");
        let roles: Vec<Role> = out.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [
                Role::System,
                Role::Assistant,
                Role::System,
                Role::User,
                Role::System
            ]
        );
        assert_eq!(out[0].content, "main\n\nlore");
        assert_eq!(out[1].content, "hello\n\nagain");
    }

    #[test]
    fn single_system() {
        let out = convert(sample(), PromptConverter::SingleSystem, "");
        assert_eq!(out.iter().filter(|m| m.role == Role::System).count(), 1);
        assert_eq!(out[0].content, "main\n\nlore");
        assert_eq!(out[2], m(Role::User, "note\n\nhi\n\nphi"));
    }

    #[test]
    fn system_then_user() {
        let out = convert(
            sample(),
            PromptConverter::SystemThenUser,
            "[Start a new Chat]",
        );
        assert_eq!(out[0].role, Role::System);
        assert_eq!(out[1], m(Role::User, "[Start a new Chat]"));
        assert_eq!(out[2].role, Role::Assistant);
        let only_user = convert(
            vec![m(Role::User, "x")],
            PromptConverter::SystemThenUser,
            "start",
        );
        assert_eq!(only_user, vec![m(Role::User, "x")]);
        let empty = convert(Vec::new(), PromptConverter::SystemThenUser, "start");
        assert_eq!(empty, vec![m(Role::User, "start")]);
    }
}
