//! Chat-specific operations: creation and deletion (with the chat's files), the persona a
//! chat speaks as, the opaque per-chat state slots, and the chat's long-term memory.

use crate::sql::params;
use serde_json::Value;

use tavo_model::{Chat, ChatId, Memory, MemoryId, Persona};

use crate::error::{Result, StoreError};
use crate::store::{Store, Tx, now};

impl Tx<'_> {
    /// Stores a new chat; returns its id.
    pub fn chat_create(&self, chat: &Chat) -> Result<ChatId> {
        self.create(chat)
    }

    /// The chat, or `None`.
    pub fn chat_get(&self, id: ChatId) -> Result<Option<Chat>> {
        self.get::<Chat>(id)
    }

    /// The library's default persona (`active: true`; the first by id should an older library
    /// have several), or `None` when no persona is the default.
    pub fn default_persona(&self) -> Result<Option<Persona>> {
        Ok(self.list::<Persona>()?.into_iter().find(|p| p.active))
    }

    /// The persona `chat` speaks as: its own when it names one, else the library's default
    /// ([`Self::default_persona`]). A chat whose persona was deleted gets `None`, not the
    /// default: it was bound to someone else, and the prompt loader reports the missing persona
    /// instead of silently speaking as another. Every reader of "who is `{{user}}` in this
    /// chat" (prompt, display, greetings, group turns, regex macros) asks this one function.
    pub fn chat_persona(&self, chat: &Chat) -> Result<Option<Persona>> {
        match &chat.persona {
            Some(p) => self.get::<Persona>(p.id),
            None => self.default_persona(),
        }
    }

    /// The value of one state slot of a chat, or `None`. The prompt engine keeps lorebook
    /// sticky/cooldown/delay state here; the store does not interpret it.
    pub fn chat_state_get(&self, chat: ChatId, key: &str) -> Result<Option<Value>> {
        let text: Option<String> = self.query_opt(
            "SELECT value FROM chat_state WHERE chat_id = ?1 AND key = ?2",
            params![chat.0, key],
            |r| r.get(0),
        )?;
        text.map(|t| {
            serde_json::from_str(&t)
                .map_err(|e| StoreError::json(format!("chat {chat} state {key:?}"), e))
        })
        .transpose()
    }

    /// Writes one state slot of a chat (deleted with the chat).
    pub fn chat_state_set(&self, chat: ChatId, key: &str, value: &Value) -> Result<()> {
        let updated = self.execute(
            "INSERT INTO chat_state (chat_id, key, value) SELECT id, ?2, ?3 FROM chats WHERE id = ?1
             ON CONFLICT(chat_id, key) DO UPDATE SET value = excluded.value",
            params![chat.0, key, value.to_string()])?;
        if updated == 0 {
            return Err(StoreError::not_found("chat", chat));
        }
        Ok(())
    }

    /// Removes one state slot; returns whether it existed.
    pub fn chat_state_delete(&self, chat: ChatId, key: &str) -> Result<bool> {
        Ok(self.execute(
            "DELETE FROM chat_state WHERE chat_id = ?1 AND key = ?2",
            params![chat.0, key],
        )? > 0)
    }

    /// The chat's long-term memory; a chat that never had one gets a disabled, empty record.
    pub fn memory_get(&self, chat: ChatId) -> Result<Memory> {
        self.execute(
            "INSERT INTO memories (chat_id, updated_at) SELECT id, ?2 FROM chats WHERE id = ?1
             ON CONFLICT(chat_id) DO NOTHING",
            params![chat.0, now()],
        )?;
        let memory = self.memory_peek(chat)?;
        // No row after the insert means the chat itself does not exist.
        if memory.id.is_none() {
            return Err(StoreError::not_found("chat", chat));
        }
        Ok(memory)
    }

    /// The chat's long-term memory as stored, without creating a record: a chat that never
    /// had one reads as disabled and empty (`id` is `None`). Readers that must change nothing,
    /// such as a dry-run prompt, use this instead of [`Self::memory_get`].
    pub fn memory_peek(&self, chat: ChatId) -> Result<Memory> {
        let row: Option<(i64, bool, String)> = self.query_opt(
            "SELECT id, enabled, memories FROM memories WHERE chat_id = ?1",
            params![chat.0],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?;
        let Some((id, enabled, text)) = row else {
            return Ok(Memory::default());
        };
        let memories = serde_json::from_str(&text)
            .map_err(|e| StoreError::json(format!("memory of chat {chat}"), e))?;
        Ok(Memory {
            id: Some(MemoryId(id)),
            enabled,
            memories,
            extra: Default::default(),
        })
    }

    /// Updates the fields given (`enabled`, `memories`), keeps the others; returns the result.
    pub fn memory_update(
        &self,
        chat: ChatId,
        enabled: Option<bool>,
        memories: Option<&[String]>,
    ) -> Result<Memory> {
        let mut memory = self.memory_get(chat)?;
        if let Some(enabled) = enabled {
            memory.enabled = enabled;
        }
        if let Some(memories) = memories {
            memory.memories = memories.to_vec();
        }
        self.memory_write(chat, &memory)?;
        Ok(memory)
    }

    /// Appends memory texts without touching `enabled` (1.0 `memory.append`).
    pub fn memory_append(&self, chat: ChatId, texts: &[String]) -> Result<Memory> {
        let mut memory = self.memory_get(chat)?;
        memory.memories.extend(texts.iter().cloned());
        self.memory_write(chat, &memory)?;
        Ok(memory)
    }

    fn memory_write(&self, chat: ChatId, memory: &Memory) -> Result<()> {
        let memories =
            serde_json::to_string(&memory.memories).map_err(|e| StoreError::json("memories", e))?;
        self.execute(
            "UPDATE memories SET enabled = ?1, memories = ?2, revision = revision + 1, updated_at = ?3
             WHERE chat_id = ?4",
            params![memory.enabled, memories, now(), chat.0])?;
        Ok(())
    }
}

impl Store {
    /// Deletes a chat with its messages, variables, state and memory, then its chat-scope
    /// files. Returns whether it existed.
    pub fn chat_delete(&self, id: ChatId) -> Result<bool> {
        let existed = self.write(|tx| tx.delete::<Chat>(id))?;
        // Files are not transactional; removing them after the commit means a failed delete
        // never leaves a chat without its files.
        self.files().delete_chat_files(id.0)?;
        Ok(existed)
    }

    /// Copies a chat — its messages, chat and message variables, state, memory and chat-scope
    /// files — into a new chat named `name`; returns the new id.
    pub fn chat_clone(&self, id: ChatId, name: &str) -> Result<ChatId> {
        let new_id = self.write(|tx| {
            let mut chat = tx.require::<Chat>(id)?;
            chat.name = name.to_owned();
            let new_id = tx.create(&chat)?;
            let at = now();
            tx.execute(
                "INSERT INTO messages (chat_id, position, role, character_id, hidden, revision, created_at, updated_at, data)
                 SELECT ?2, position, role, character_id, hidden, 1, ?3, ?3, data FROM messages WHERE chat_id = ?1
                 ORDER BY position",
                params![id.0, new_id.0, at])?;
            tx.execute(
                "INSERT INTO message_variables (message_id, name, value)
                 SELECT n.id, v.name, v.value FROM message_variables v
                 JOIN messages o ON o.id = v.message_id AND o.chat_id = ?1
                 JOIN messages n ON n.chat_id = ?2 AND n.position = o.position",
                params![id.0, new_id.0])?;
            tx.execute(
                "INSERT INTO chat_variables (chat_id, name, value)
                 SELECT ?2, name, value FROM chat_variables WHERE chat_id = ?1",
                params![id.0, new_id.0])?;
            tx.execute(
                "INSERT INTO chat_state (chat_id, key, value)
                 SELECT ?2, key, value FROM chat_state WHERE chat_id = ?1",
                params![id.0, new_id.0])?;
            tx.execute(
                "INSERT INTO memories (chat_id, enabled, memories, updated_at)
                 SELECT ?2, enabled, memories, ?3 FROM memories WHERE chat_id = ?1",
                params![id.0, new_id.0, at])?;
            Ok(new_id)
        })?;
        self.files().copy_chat_files(id.0, new_id.0)?;
        Ok(new_id)
    }
}

#[cfg(test)]
mod tests {
    use tavo_model::{PersonaId, Summary};

    use super::*;

    fn persona(name: &str, active: bool) -> Persona {
        Persona {
            name: name.into(),
            active,
            ..Persona::default()
        }
    }

    fn bound_to(id: PersonaId) -> Chat {
        Chat {
            persona: Some(Summary {
                id,
                name: String::new(),
            }),
            ..Chat::default()
        }
    }

    #[test]
    fn a_chat_speaks_as_its_own_persona_else_the_default_and_never_a_stand_in() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let store = Store::open(dir.path()).unwrap_or_else(|e| panic!("open: {e}"));
        let name = |p: Option<Persona>| p.map(|p| p.name);
        let unbound = Chat::default();
        assert_eq!(
            name(store.chat_persona(&unbound).unwrap()),
            None,
            "no default yet"
        );

        let own = store.create(&persona("Own", false)).unwrap();
        store.create(&persona("Default", true)).unwrap();
        assert_eq!(
            name(store.chat_persona(&unbound).unwrap()).as_deref(),
            Some("Default")
        );
        assert_eq!(
            name(store.chat_persona(&bound_to(own)).unwrap()).as_deref(),
            Some("Own"),
            "a bound persona wins over the default"
        );
        assert!(store.delete::<Persona>(own).unwrap());
        assert_eq!(
            name(store.chat_persona(&bound_to(own)).unwrap()),
            None,
            "a deleted persona is missing, not replaced by the default"
        );
        assert_eq!(
            name(store.default_persona().unwrap()).as_deref(),
            Some("Default")
        );
    }

    #[test]
    fn a_chat_background_keeps_unknown_fields_through_the_store() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let store = Store::open(dir.path()).unwrap_or_else(|e| panic!("open: {e}"));
        let chat: Chat = serde_json::from_value(serde_json::json!({
            "name": "c",
            "background": {"color": "#222222", "blur": 4},
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        let id = store.chat_create(&chat).unwrap();
        let mut stored = store
            .chat_get(id)
            .unwrap()
            .unwrap_or_else(|| panic!("no chat"));
        stored.name = "renamed".into();
        store.update(&stored, None).unwrap();
        let again = store
            .chat_get(id)
            .unwrap()
            .unwrap_or_else(|| panic!("no chat"));
        let bg = serde_json::to_value(&again.background).unwrap();
        assert_eq!(bg, serde_json::json!({"color": "#222222", "blur": 4}));
    }
}
