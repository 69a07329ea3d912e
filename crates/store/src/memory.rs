//! The memory row's revision, for writers that read, think for a while (a model request), and
//! write back: long-term memory extraction must never overwrite a user's edit made meanwhile.

use crate::sql::params;
use tavo_model::{ChatId, Memory};

use crate::error::{Result, StoreError};
use crate::store::{Tx, now};

/// A chat's memory with the revision of its row (0 when the chat never had one).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MemoryRow {
    /// The memory object (`{id, enabled, memories}`).
    pub memory: Memory,
    /// The row's revision: every write adds one.
    pub revision: i64,
}

impl Tx<'_> {
    /// The chat's memory and its row revision, creating nothing (see [`Tx::memory_peek`]).
    pub fn memory_row(&self, chat: ChatId) -> Result<MemoryRow> {
        let memory = self.memory_peek(chat)?;
        let revision: Option<i64> = self.query_opt(
            "SELECT revision FROM memories WHERE chat_id = ?1",
            params![chat.0],
            |r| r.get(0),
        )?;
        Ok(MemoryRow {
            memory,
            revision: revision.unwrap_or(0),
        })
    }

    /// Replaces the memory texts only if the row is still at `expected` (0: the chat had no
    /// row when it was read). Returns the new row, or [`StoreError::Conflict`] naming the
    /// revision it has now, so the caller can re-read and merge instead of losing a write.
    pub fn memory_replace_if(
        &self,
        chat: ChatId,
        expected: i64,
        memories: &[String],
    ) -> Result<MemoryRow> {
        // Creates the row (disabled, empty, revision 1) when there is none yet.
        let current = self.memory_get(chat)?;
        let actual = self.memory_row(chat)?.revision;
        // A row created just now by `memory_get` stands for "no row" (revision 0).
        let fresh = expected == 0 && actual == 1 && current.memories.is_empty();
        if actual != expected && !fresh {
            return Err(StoreError::Conflict {
                kind: "memory",
                id: chat.0,
                expected,
                actual,
            });
        }
        let text = serde_json::to_string(memories).map_err(|e| StoreError::json("memories", e))?;
        self.execute(
            "UPDATE memories SET memories = ?1, revision = revision + 1, updated_at = ?2
             WHERE chat_id = ?3",
            params![text, now(), chat.0],
        )?;
        self.memory_row(chat)
    }
}
