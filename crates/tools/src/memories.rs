//! A chat's long-term memory, written the same way by every door: `tavo memory set|append`,
//! `PUT /api/chats/{id}/memory` and the `tavo_memory_update|append` tools. The chat must exist
//! and every memory text must have words (a blank one is refused at `memories[i]`, and nothing
//! is written); `enabled` only decides whether memories are injected into prompts.

use tavo_model::{ChatId, Memory};
use tavo_store::Store;

use crate::context::store_error;
use crate::error::ToolError;
use crate::ops::require_chat;

/// The chat's memory (created disabled and empty on first read).
pub fn memory(store: &Store, chat: ChatId) -> Result<Memory, ToolError> {
    require_chat(store, Some(chat))?;
    store
        .memory_get(chat)
        .map_err(|e| store_error("reading memory", e))
}

/// Sets `enabled` and/or replaces the whole list of texts; answers the memory.
pub fn update_memory(
    store: &Store,
    chat: ChatId,
    enabled: Option<bool>,
    memories: Option<&[String]>,
) -> Result<Memory, ToolError> {
    if let Some(list) = memories {
        check_texts(list)?;
    }
    require_chat(store, Some(chat))?;
    store
        .memory_update(chat, enabled, memories)
        .map_err(|e| store_error("updating memory", e))
}

/// Adds texts at the end (never switches injection on); answers the memory.
pub fn append_memory(store: &Store, chat: ChatId, texts: &[String]) -> Result<Memory, ToolError> {
    if texts.is_empty() {
        return Err(ToolError::invalid_at(
            "memories",
            "at least one memory text",
            "empty array",
        ));
    }
    check_texts(texts)?;
    require_chat(store, Some(chat))?;
    store
        .memory_append(chat, texts)
        .map_err(|e| store_error("appending to memory", e))
}

/// Every text has words; the first blank one is named by its index.
fn check_texts(texts: &[String]) -> Result<(), ToolError> {
    match texts.iter().position(|t| t.trim().is_empty()) {
        Some(i) => Err(ToolError::invalid_at(
            &format!("memories[{i}]"),
            "a non-empty string",
            "empty string",
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tavo_model::Chat;

    #[test]
    fn a_blank_text_or_a_missing_chat_is_refused_and_nothing_is_written() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path()).expect("open");
        let chat = store.chat_create(&Chat::default()).expect("chat");
        let texts = |t: &[&str]| t.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        append_memory(&store, chat, &texts(&["Likes tea."])).expect("append");
        let blank = append_memory(&store, chat, &texts(&["ok", " "])).expect_err("blank");
        assert_eq!(
            blank.details.as_ref().and_then(|d| d["path"].as_str()),
            Some("memories[1]")
        );
        let blank =
            update_memory(&store, chat, Some(true), Some(&texts(&[""]))).expect_err("blank");
        assert_eq!(blank.code, crate::error::ErrorCode::InvalidArguments);
        assert!(append_memory(&store, chat, &[]).is_err());
        let gone =
            update_memory(&store, ChatId(chat.get() + 1), Some(true), None).expect_err("no chat");
        assert_eq!(gone.code, crate::error::ErrorCode::ResourceNotFound);
        let kept = memory(&store, chat).expect("read");
        assert_eq!(kept.memories, ["Likes tea."]);
        assert!(!kept.enabled, "the refused update switched nothing on");
    }
}
