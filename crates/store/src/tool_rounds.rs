//! The tool rounds of a reply, kept beside its message so later prompts can send the calls and
//! their results back in each protocol's own shape (seed 001: "continue, impersonate and quiet
//! cannot call tools but can still use earlier successful calls").
//!
//! They are not part of the message: seed 000 keeps only compact cards in messages, with
//! arguments and results in the auxiliary log that Settings › Storage › Logs clears. Rounds are
//! cleared with that log ([`Tx::audit_clear`]); a message then goes back to its one-line card
//! summary in prompts. Deleting the message deletes its rounds.

use crate::sql::params;
use serde_json::Value;
use tavo_model::{ChatId, MessageId};

use crate::error::{Result, StoreError};
use crate::store::{Tx, now};

impl Tx<'_> {
    /// Stores (replaces) the tool rounds of `message`, a JSON document the engine defines.
    pub fn tool_rounds_set(&self, message: MessageId, rounds: &Value) -> Result<()> {
        let chat: Option<i64> = self.query_opt(
            "SELECT chat_id FROM messages WHERE id = ?1",
            params![message.get()],
            |r| r.get(0),
        )?;
        let chat = chat.ok_or_else(|| StoreError::NotFound {
            kind: "message",
            id: message.to_string(),
        })?;
        self.execute(
            "INSERT INTO tool_rounds (message_id, chat_id, at, rounds) VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT (message_id) DO UPDATE SET at = excluded.at, rounds = excluded.rounds",
            params![message.get(), chat, now(), rounds.to_string()],
        )?;
        Ok(())
    }

    /// The tool rounds stored for messages of `chat`, by message.
    pub fn tool_rounds_of_chat(&self, chat: ChatId) -> Result<Vec<(MessageId, Value)>> {
        let rows = self.query_map(
            "SELECT message_id, rounds FROM tool_rounds WHERE chat_id = ?1 ORDER BY message_id",
            params![chat.get()],
            |r| Ok((r.get::<i64>(0)?, r.get::<String>(1)?)),
        )?;
        let mut out = Vec::new();
        for (id, text) in rows {
            let value = serde_json::from_str(&text)
                .map_err(|e| StoreError::json(format!("tool rounds of message {id}"), e))?;
            out.push((MessageId(id), value));
        }
        Ok(out)
    }
}
