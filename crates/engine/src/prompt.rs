//! The reply's base prompt: the chat assembled by `tavo-prompt`, as canonical LLM messages.
//!
//! Earlier replies' tool calls are visible to later generations (also continue, impersonate
//! and quiet, which cannot call tools themselves): each message that carries compact tool
//! cards gets one line naming them in front of its text. Messages never kept arguments or
//! results (privacy), so this line is all there is to show.

use tavo_llm::{Message, Role};
use tavo_model::{CharacterId, ChatId};
use tavo_prompt::loader::{self, LoadedChat};
use tavo_prompt::{GenerationType, PromptEngine, PromptMessage, PromptOptions};
use tavo_store::Store;
use tavo_tools::GenerationKind;

use crate::error::EngineError;
use crate::summary::{cards_of, history_line};

/// What the reply needs from the assembled prompt.
#[derive(Debug, Clone)]
pub struct BasePrompt {
    pub messages: Vec<Message>,
    /// The character who speaks this reply.
    pub speaker_id: Option<CharacterId>,
    pub speaker_name: Option<String>,
}

/// Prompt knobs taken from the connection.
#[derive(Debug, Clone)]
pub struct PromptKnobs {
    pub model: String,
    pub context_tokens: Option<u32>,
    pub response_tokens: Option<u32>,
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

/// Loads and assembles the chat's prompt; records the generation (lorebook timed effects,
/// variable macros) unless it is a quiet one. Blocking: call from `spawn_blocking`.
pub fn build(
    store: &Store,
    engine: &PromptEngine,
    chat: i64,
    kind: GenerationKind,
    knobs: &PromptKnobs,
) -> Result<BasePrompt, EngineError> {
    let chat_id = ChatId(chat);
    let mut loaded = loader::load(store, chat_id)?;
    for missing in &loaded.missing {
        tracing::warn!(chat, %missing, "the chat is bound to an asset that no longer exists; skipped");
    }
    annotate_tool_history(&mut loaded);
    let speaker = loaded.next_speaker();
    let mut options = PromptOptions::new(tavo_prompt::local_now());
    options.seed = (chat as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ loaded.messages.len() as u64;
    options.model = knobs.model.clone();
    if let Some(c) = knobs.context_tokens {
        options.max_context_tokens = c as usize;
    }
    if let Some(r) = knobs.response_tokens {
        options.max_response_tokens = r as usize;
    }
    options.generation = match kind {
        GenerationKind::Continue => GenerationType::Continue,
        GenerationKind::Impersonate => GenerationType::Impersonate,
        _ => GenerationType::Normal,
    };
    let output = engine.build(&loaded.input(speaker), &options);
    if kind != GenerationKind::Quiet {
        loader::record(store, chat_id, &output)?;
    }
    let character = loaded.characters.get(speaker);
    Ok(BasePrompt {
        messages: to_llm(&output.messages),
        speaker_id: character.and_then(|c| c.id),
        speaker_name: character.map(|c| c.name.clone()),
    })
}

/// Inserts the generic tool-use hint after the leading system messages.
pub fn with_hint(messages: &[Message], hint: Option<&str>) -> Vec<Message> {
    let mut out = Vec::with_capacity(messages.len() + 1);
    let lead = messages
        .iter()
        .take_while(|m| m.role == Role::System)
        .count();
    out.extend_from_slice(&messages[..lead]);
    if let Some(h) = hint {
        out.push(Message::text(Role::System, h));
    }
    out.extend_from_slice(&messages[lead..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hint_goes_after_the_system_block_and_only_when_given() {
        let base = vec![
            Message::text(Role::System, "sys"),
            Message::text(Role::User, "hi"),
        ];
        let with = with_hint(&base, Some("HINT"));
        assert_eq!(
            with.iter().map(Message::joined_text).collect::<Vec<_>>(),
            ["sys", "HINT", "hi"]
        );
        assert_eq!(with_hint(&base, None), base);
        let no_system = vec![Message::text(Role::User, "hi")];
        assert_eq!(with_hint(&no_system, Some("H"))[0].joined_text(), "H");
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
}
