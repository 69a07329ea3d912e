//! Messages (seed 002 §💬 消息: the message format) and long-term memory (§🧠 长记忆).

use crate::common::{Extra, Role};
use crate::ids::{CharacterId, MemoryId, MessageId};
use serde::{Deserialize, Serialize};

/// One chat message (seed: 消息格式 `{ id, characterId, content, hidden, role }` plus
/// `reasoning` from `update`).
///
/// `floor` is the 0-based position in the chat (the seed's 楼层); it is derived from storage order
/// and not part of an imported file. Swipes (alternative replies) are kept because SillyTavern
/// chats carry them; `content` is always the selected swipe.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct Message {
    /// Stable message id; `None` until stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<MessageId>,
    /// 0-based floor; `None` when not yet placed in a chat.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub floor: Option<u64>,
    /// system / user / assistant.
    pub role: Role,
    /// Speaking character (assistant messages only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub character_id: Option<CharacterId>,
    /// Speaker display name as the source file recorded it (SillyTavern `name`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Text.
    pub content: String,
    /// Reasoning (chain of thought), separate from `content`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// Hidden from the prompt (SillyTavern `is_system: true`).
    pub hidden: bool,
    /// Send time as the source wrote it (SillyTavern writes humanized dates such as
    /// `June 14, 2024 8:43am`; kept verbatim because it is not reliably parseable).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub send_date: Option<String>,
    /// Alternative replies; empty when the message has none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub swipes: Vec<String>,
    /// Index of the selected swipe.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swipe_id: Option<u64>,
    /// Unknown fields, kept (SillyTavern's `extra`, `swipe_info`, `gen_started`, tool keys …).
    #[serde(flatten)]
    pub extra: Extra,
}

impl Message {
    /// A plain message with the given role and text.
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            ..Default::default()
        }
    }
}

/// A chat's long-term memory (seed: 记忆对象字段 `{ id, enabled, memories }`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct Memory {
    /// Memory record id; `None` until stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<MemoryId>,
    /// Whether long-term memory is on.
    pub enabled: bool,
    /// Memory texts.
    pub memories: Vec<String>,
    /// Unknown fields, kept while the object is passed along. The store keeps only the
    /// fields above: no door writes a whole memory object (they change `enabled` and
    /// `memories`), so nothing from outside reaches it with more.
    #[serde(flatten)]
    pub extra: Extra,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_seed_shape() {
        let m: Message = serde_json::from_str(
            r#"{"id":2338,"characterId":34,"content":"Hello!","hidden":false,"role":"assistant"}"#,
        )
        .unwrap();
        assert_eq!(m.id, Some(MessageId(2338)));
        assert_eq!(m.character_id, Some(CharacterId(34)));
        assert_eq!(m.role, Role::Assistant);
        let v = serde_json::to_value(&m).unwrap();
        assert_eq!(v["hidden"], false);
        assert!(v.get("swipes").is_none());
    }

    #[test]
    fn memory_shape() {
        let m: Memory =
            serde_json::from_str(r#"{"id":12,"enabled":true,"memories":["a","b"]}"#).unwrap();
        assert!(m.enabled);
        assert_eq!(m.memories.len(), 2);
    }

    #[test]
    fn a_memory_keeps_fields_it_does_not_know() {
        let text = r#"{"id":12,"enabled":true,"memories":["a"],"summaryModel":{"name":"x"}}"#;
        let m: Memory = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(m.extra["summaryModel"]["name"], "x");
        let back = serde_json::to_value(&m).unwrap_or_else(|e| panic!("{e}"));
        let original: serde_json::Value =
            serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, original, "read → write loses nothing");
    }
}
