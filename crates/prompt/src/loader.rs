//! The thin adapter between the store and the pure build: reads everything one chat's
//! prompt needs, and writes back what a recorded generation changes (lorebook timed
//! effects and variables) in one transaction.

use serde_json::Value;
use tavo_model::{
    Character, Chat, ChatId, Lorebook, Memory, Message, Persona, Preset, RegexGroup, Role,
};
use tavo_store::{Store, StoreError, Tx, VarScope};

use crate::assemble::{PromptInput, PromptOutput};
use crate::lorebook::TimedEffects;
use crate::macros::Variables;

/// The chat-state slot holding lorebook timed effects.
pub const TIMED_STATE_KEY: &str = "lorebook.timedEffects";

/// Why a chat could not be loaded or recorded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// No such chat.
    #[error("chat {0} not found (see `tavo list chats`)")]
    ChatNotFound(ChatId),
}

/// Everything one chat's prompt is built from.
#[derive(Debug, Clone, Default)]
pub struct LoadedChat {
    /// The chat.
    pub chat: Chat,
    /// Its characters in membership order.
    pub characters: Vec<Character>,
    /// Its persona (the chat's, else the library's active persona).
    pub persona: Option<Persona>,
    /// Its preset.
    pub preset: Option<Preset>,
    /// Its lorebooks in binding order.
    pub lorebooks: Vec<Lorebook>,
    /// Its regex groups in binding order.
    pub regex_groups: Vec<RegexGroup>,
    /// All messages, oldest first.
    pub messages: Vec<Message>,
    /// Long-term memory.
    pub memory: Option<Memory>,
    /// Chat and global variables.
    pub variables: Variables,
    /// Lorebook timed effects.
    pub timed: TimedEffects,
    /// Bindings that point at assets that no longer exist (`preset 4`, `lorebook 9`).
    pub missing: Vec<String>,
}

impl LoadedChat {
    /// The prompt input for a reply by `characters[speaker]`.
    pub fn input(&self, speaker: usize) -> PromptInput<'_> {
        PromptInput {
            chat: Some(&self.chat),
            characters: &self.characters,
            speaker,
            persona: self.persona.as_ref(),
            preset: self.preset.as_ref(),
            lorebooks: &self.lorebooks,
            regex_groups: &self.regex_groups,
            messages: &self.messages,
            memory: self.memory.as_ref(),
            variables: &self.variables,
            timed: &self.timed,
        }
    }

    /// Who replies next in a group chat: the member after the last one who spoke, skipping
    /// muted members (round robin); in a 1:1 chat, the character.
    pub fn next_speaker(&self) -> usize {
        let muted: Vec<i64> = self
            .chat
            .extra
            .get("mutedCharacterIds")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_i64).collect())
            .unwrap_or_default();
        let count = self.characters.len();
        if count <= 1 {
            return 0;
        }
        let last = self
            .messages
            .iter()
            .rev()
            .filter(|m| m.role == Role::Assistant && !m.hidden)
            .find_map(|m| m.character_id)
            .and_then(|id| self.characters.iter().position(|c| c.id == Some(id)));
        let start = last.map(|i| i + 1).unwrap_or(0);
        (0..count)
            .map(|k| (start + k) % count)
            .find(|i| {
                !self.characters[*i]
                    .id
                    .is_some_and(|id| muted.contains(&id.0))
            })
            .unwrap_or(0)
    }
}

/// Reads a chat's prompt inputs in one read transaction.
pub fn load(store: &Store, chat_id: ChatId) -> Result<LoadedChat, LoadError> {
    store.read(|tx| load_in(tx, chat_id)).map_err(|e| match e {
        StoreError::NotFound { kind: "chat", .. } => LoadError::ChatNotFound(chat_id),
        other => LoadError::Store(other),
    })
}

fn load_in(tx: &Tx<'_>, chat_id: ChatId) -> Result<LoadedChat, StoreError> {
    let chat = tx.chat_get(chat_id)?.ok_or_else(|| StoreError::NotFound {
        kind: "chat",
        id: chat_id.to_string(),
    })?;
    let mut loaded = LoadedChat::default();
    for member in &chat.characters {
        match tx.get::<Character>(member.id)? {
            Some(c) => loaded.characters.push(c),
            None => loaded.missing.push(format!("character {}", member.id)),
        }
    }
    loaded.persona = tx.chat_persona(&chat)?;
    if let (Some(p), None) = (&chat.persona, &loaded.persona) {
        loaded.missing.push(format!("persona {}", p.id));
    }
    if let Some(p) = &chat.preset {
        loaded.preset = tx.get::<Preset>(p.id)?;
        if loaded.preset.is_none() {
            loaded.missing.push(format!("preset {}", p.id));
        }
    }
    for l in &chat.lorebooks {
        match tx.get::<Lorebook>(l.id)? {
            Some(book) => loaded.lorebooks.push(book),
            None => loaded.missing.push(format!("lorebook {}", l.id)),
        }
    }
    for r in &chat.regexes {
        match tx.get::<RegexGroup>(r.id)? {
            Some(group) => loaded.regex_groups.push(group),
            None => loaded.missing.push(format!("regex {}", r.id)),
        }
    }
    loaded.messages = tx.messages_all(chat_id)?;
    loaded.memory = Some(tx.memory_peek(chat_id)?);
    loaded.variables = Variables {
        chat: tx.var_all(VarScope::Chat(chat_id.0))?,
        global: tx.var_all(VarScope::Global)?,
    };
    loaded.timed = match tx.chat_state_get(chat_id, TIMED_STATE_KEY)? {
        Some(value) => serde_json::from_value(value).map_err(|source| StoreError::Json {
            what: format!(
                "chat {chat_id} state {TIMED_STATE_KEY:?} (delete the slot to start over)"
            ),
            source,
        })?,
        None => TimedEffects::default(),
    };
    loaded.chat = chat;
    Ok(loaded)
}

/// Records a generation: persists the timed-effect state and, when macros changed them, the
/// chat and global variables — in one transaction.
pub fn record(store: &Store, chat_id: ChatId, output: &PromptOutput) -> Result<(), LoadError> {
    store.write(|tx| {
        let state = serde_json::to_value(&output.timed).map_err(|source| StoreError::Json {
            what: "timed-effect state".into(),
            source,
        })?;
        tx.chat_state_set(chat_id, TIMED_STATE_KEY, &state)?;
        if output.variables_changed {
            tx.var_replace_all(VarScope::Chat(chat_id.0), &output.variables.chat)?;
            tx.var_replace_all(VarScope::Global, &output.variables.global)?;
        }
        Ok(())
    })?;
    Ok(())
}
