//! Messages: one row each, ordered by a dense 0-based `position` (the seed's floor).
//!
//! A chat is never rewritten whole: appending is one insert, editing one update. `position`
//! stays dense (`0..count`) so that "the last 50" and "floors 3 to 100" are range scans of the
//! `(chat_id, position)` index. Deleting or inserting in the middle renumbers the later rows of
//! that chat only, in two passes through negative numbers so the unique index never sees a
//! duplicate mid-statement.

use crate::sql::{Param, Row, params};
use serde_json::{Map, Value};

use tavo_model::{CharacterId, ChatId, Message, MessageId, Role};

use crate::error::{Result, StoreError};
use crate::store::{Tx, now};

const SELECT: &str = "SELECT id, position, data FROM messages";

/// Which messages [`Tx::messages_filtered`] returns (seed `tavo.message.find`'s `filter`);
/// `None` fields do not filter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MessageFilter {
    /// Only messages of this role.
    pub role: Option<Role>,
    /// `Some(true)`: only hidden messages; `Some(false)`: only visible ones.
    pub hidden: Option<bool>,
    /// Only messages spoken by one of these characters.
    pub characters: Option<Vec<CharacterId>>,
}

/// The stored JSON of a message: everything but `id` and `floor`, which the row owns.
fn message_data(message: &Message) -> Result<String> {
    // The common case (a new message) has neither, so it is written straight to text; this is
    // the hot path of a 100,000-message import.
    let text = if message.id.is_none() && message.floor.is_none() {
        serde_json::to_string(message)
    } else {
        serde_json::to_string(&Message {
            id: None,
            floor: None,
            ..message.clone()
        })
    };
    let text = text.map_err(|e| StoreError::json("message", e))?;
    if !text.starts_with('{') {
        return Err(StoreError::InvalidArgument(
            "a message must serialise to a JSON object".into(),
        ));
    }
    Ok(text)
}

/// Messages one INSERT of [`Tx::messages_append`] writes (5 parameters each, well under
/// SQLite's 32,766 and PostgreSQL's 65,535).
const APPEND_ROWS: usize = 500;

fn read_row(row: &Row<'_>) -> Result<(i64, i64, String)> {
    Ok((row.get(0)?, row.get(1)?, row.get(2)?))
}

fn to_message((id, position, text): (i64, i64, String)) -> Result<Message> {
    let data: Map<String, Value> =
        serde_json::from_str(&text).map_err(|e| StoreError::json(format!("message {id}"), e))?;
    let mut full = Map::with_capacity(data.len() + 2);
    full.insert("id".into(), Value::from(id));
    full.insert("floor".into(), Value::from(position));
    full.extend(data);
    serde_json::from_value(Value::Object(full))
        .map_err(|e| StoreError::json(format!("message {id}"), e))
}

impl Tx<'_> {
    fn chat_exists(&self, chat: ChatId) -> Result<()> {
        let found: Option<i64> =
            self.query_opt("SELECT 1 FROM chats WHERE id = ?1", params![chat.0], |r| {
                r.get(0)
            })?;
        found
            .map(|_| ())
            .ok_or_else(|| StoreError::not_found("chat", chat))
    }

    /// `NotFound` when the message names a character that does not exist.
    fn speaker_exists(&self, message: &Message) -> Result<()> {
        let Some(id) = message.character_id else {
            return Ok(());
        };
        let found: Option<i64> = self.query_opt(
            "SELECT 1 FROM characters WHERE id = ?1",
            params![id.0],
            |r| r.get(0),
        )?;
        found
            .map(|_| ())
            .ok_or_else(|| StoreError::not_found("character", id))
    }

    /// Number of messages in the chat, hidden ones included (seed `tavo.message.count`).
    pub fn message_count(&self, chat: ChatId) -> Result<u64> {
        // MAX(position)+1 is answered from the index; COUNT(*) would walk the chat's rows.
        let last: Option<i64> = self
            .query_opt(
                "SELECT MAX(position) FROM messages WHERE chat_id = ?1",
                params![chat.0],
                |r| r.get(0),
            )?
            .flatten();
        Ok(last.map_or(0, |p| (p + 1) as u64))
    }

    /// Appends a message at the end of the chat; returns its id. The message's own `id` and
    /// `floor` are ignored.
    ///
    /// A message naming a `characterId` that does not exist (a deleted character) is refused
    /// with [`StoreError::NotFound`]; bulk appends (imports) are not checked, since an imported
    /// file's speakers are matched by the importer.
    pub fn message_append(&self, chat: ChatId, message: &Message) -> Result<MessageId> {
        self.speaker_exists(message)?;
        Ok(self
            .messages_append(chat, std::slice::from_ref(message))?
            .remove(0))
    }

    /// Appends many messages in order with one prepared statement (imports); returns their ids.
    pub fn messages_append(&self, chat: ChatId, messages: &[Message]) -> Result<Vec<MessageId>> {
        self.chat_exists(chat)?;
        let first = self.message_count(chat)? as i64;
        let at = now();
        let mut ids = Vec::with_capacity(messages.len());
        // Many rows per INSERT: on PostgreSQL each statement is a round trip to the server, so
        // an import of 100,000 messages would otherwise be 100,000 of them.
        for (chunk_index, chunk) in (0i64..).zip(messages.chunks(APPEND_ROWS)) {
            let base = first + chunk_index * APPEND_ROWS as i64;
            let rows: Vec<(i64, &str, Option<i64>, bool, String)> = (0i64..)
                .zip(chunk)
                .map(|(offset, m)| {
                    Ok((
                        base + offset,
                        m.role.as_str(),
                        m.character_id.map(|c| c.0),
                        m.hidden,
                        message_data(m)?,
                    ))
                })
                .collect::<Result<_>>()?;
            let mut params: Vec<&dyn Param> = vec![&chat.0, &at];
            let mut values = Vec::with_capacity(rows.len());
            for (position, role, character, hidden, data) in &rows {
                let n = params.len();
                values.push(format!(
                    "(?1, ?{}, ?{}, ?{}, ?{}, ?2, ?2, ?{})",
                    n + 1,
                    n + 2,
                    n + 3,
                    n + 4,
                    n + 5
                ));
                params.extend([
                    position as &dyn Param,
                    role as &dyn Param,
                    character as &dyn Param,
                    hidden as &dyn Param,
                    data as &dyn Param,
                ]);
            }
            let sql = format!(
                "INSERT INTO messages (chat_id, position, role, character_id, hidden, created_at, updated_at, data) VALUES {} RETURNING id, position",
                values.join(", ")
            );
            // Neither database promises the order of RETURNING rows: sort them by floor.
            let mut created =
                self.query_map(&sql, &params, |r| Ok((r.get::<i64>(1)?, r.get::<i64>(0)?)))?;
            created.sort_unstable();
            ids.extend(created.into_iter().map(|(_, id)| MessageId(id)));
        }
        Ok(ids)
    }

    /// Inserts a message at `floor` (clamped to the end), moving later messages down one floor.
    pub fn message_insert(&self, chat: ChatId, floor: u64, message: &Message) -> Result<MessageId> {
        self.chat_exists(chat)?;
        self.speaker_exists(message)?;
        let count = self.message_count(chat)?;
        if floor >= count {
            return self.message_append(chat, message);
        }
        let floor = floor as i64;
        self.execute(
            "UPDATE messages SET position = -position - 1 WHERE chat_id = ?1 AND position >= ?2",
            params![chat.0, floor],
        )?;
        self.execute(
            "UPDATE messages SET position = -position WHERE chat_id = ?1 AND position < 0",
            params![chat.0],
        )?;
        let at = now();
        let id = self.insert_id(
            "INSERT INTO messages (chat_id, position, role, character_id, hidden, created_at, updated_at, data)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7)",
            params![
                chat.0,
                floor,
                message.role.as_str(),
                message.character_id.map(|c| c.0),
                message.hidden,
                at,
                message_data(message)?
            ],
        )?;
        Ok(MessageId(id))
    }

    /// The message with its `id` and `floor`, or `None`.
    pub fn message_get(&self, id: MessageId) -> Result<Option<Message>> {
        let row = self.query_opt(&format!("{SELECT} WHERE id = ?1"), params![id.0], read_row)?;
        row.map(to_message).transpose()
    }

    /// The chat a message belongs to, or `None` when the message does not exist.
    pub fn message_chat(&self, id: MessageId) -> Result<Option<ChatId>> {
        Ok(self
            .query_opt(
                "SELECT chat_id FROM messages WHERE id = ?1",
                params![id.0],
                |r| r.get(0),
            )?
            .map(ChatId))
    }

    /// The message's revision (bumped by each edit), or `None`.
    pub fn message_revision(&self, id: MessageId) -> Result<Option<u64>> {
        let revision: Option<i64> = self.query_opt(
            "SELECT revision FROM messages WHERE id = ?1",
            params![id.0],
            |r| r.get(0),
        )?;
        Ok(revision.map(|r| r.max(0) as u64))
    }

    /// Messages with `start <= floor <= end` (inclusive; `end = None` means to the last), in
    /// floor order. Out-of-range bounds are clipped, as `tavo.message.find([3, 100])` is.
    pub fn messages_range(
        &self,
        chat: ChatId,
        start: u64,
        end: Option<u64>,
    ) -> Result<Vec<Message>> {
        let end = end.map_or(i64::MAX, |e| i64::try_from(e).unwrap_or(i64::MAX));
        let start = i64::try_from(start).unwrap_or(i64::MAX);
        self.query_map(
            &format!(
                "{SELECT} WHERE chat_id = ?1 AND position BETWEEN ?2 AND ?3 ORDER BY position"
            ),
            params![chat.0, start, end],
            |r| to_message(read_row(r)?),
        )
    }

    /// The last `n` messages of the chat, oldest first.
    pub fn messages_last(&self, chat: ChatId, n: u64) -> Result<Vec<Message>> {
        let count = self.message_count(chat)?;
        if n == 0 || count == 0 {
            return Ok(Vec::new());
        }
        self.messages_range(chat, count.saturating_sub(n), None)
    }

    /// The chat's messages that pass `filter`, in floor order. `role` and `hidden` are indexed
    /// columns of the row, so no message JSON is parsed for rows that do not match.
    pub fn messages_filtered(&self, chat: ChatId, filter: &MessageFilter) -> Result<Vec<Message>> {
        let mut sql = format!("{SELECT} WHERE chat_id = ?1");
        let role = filter.role.map(|r| r.as_str());
        let hidden = filter.hidden.map(i64::from);
        let mut args: Vec<&dyn Param> = vec![&chat.0];
        if let Some(role) = &role {
            args.push(role);
            sql.push_str(&format!(" AND role = ?{}", args.len()));
        }
        if let Some(hidden) = &hidden {
            args.push(hidden);
            sql.push_str(&format!(" AND hidden = ?{}", args.len()));
        }
        if let Some(characters) = &filter.characters {
            let mut slots = Vec::with_capacity(characters.len());
            for c in characters {
                args.push(&c.0);
                slots.push(format!("?{}", args.len()));
            }
            if slots.is_empty() {
                // No speaker passes an empty list (PostgreSQL has no `IN ()`).
                sql.push_str(" AND 1 = 0");
            } else {
                sql.push_str(&format!(" AND character_id IN ({})", slots.join(", ")));
            }
        }
        sql.push_str(" ORDER BY position");
        self.query_map(&sql, &args, |r| to_message(read_row(r)?))
    }

    /// Every message of the chat, in floor order (exports; prefer ranges elsewhere).
    pub fn messages_all(&self, chat: ChatId) -> Result<Vec<Message>> {
        self.messages_range(chat, 0, None)
    }

    /// Replaces a stored message's fields (role, speaker, content, reasoning, hidden, swipes, …)
    /// keeping its chat and floor; `message.id` is required. Returns the new revision. With
    /// `expected`, a message edited by someone else since is a [`StoreError::Conflict`].
    pub fn message_update(&self, message: &Message, expected: Option<u64>) -> Result<u64> {
        let id = message.id.ok_or_else(|| {
            StoreError::InvalidArgument("message.id is required to update a message".into())
        })?;
        let current = self
            .message_revision(id)?
            .ok_or_else(|| StoreError::not_found("message", id))?;
        if let Some(expected) = expected
            && expected != current
        {
            return Err(StoreError::Conflict {
                kind: "message",
                id: id.0,
                expected: i64::try_from(expected).unwrap_or(i64::MAX),
                actual: current as i64,
            });
        }
        self.execute(
            "UPDATE messages SET role = ?1, character_id = ?2, hidden = ?3, data = ?4,
                 revision = revision + 1, updated_at = ?5 WHERE id = ?6",
            params![
                message.role.as_str(),
                message.character_id.map(|c| c.0),
                message.hidden,
                message_data(message)?,
                now(),
                id.0
            ],
        )?;
        Ok(current + 1)
    }

    /// Hides or shows a message (hidden messages stay in the chat but leave the prompt).
    pub fn message_set_hidden(&self, id: MessageId, hidden: bool) -> Result<()> {
        let mut message = self
            .message_get(id)?
            .ok_or_else(|| StoreError::not_found("message", id))?;
        message.hidden = hidden;
        self.message_update(&message, None).map(|_| ())
    }

    /// Deletes a message (and its message-scope variables); later messages move up one floor.
    /// Returns whether it existed.
    pub fn message_delete(&self, id: MessageId) -> Result<bool> {
        let row: Option<(i64, i64)> = self.query_opt(
            "SELECT chat_id, position FROM messages WHERE id = ?1",
            params![id.0],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        let Some((chat, position)) = row else {
            return Ok(false);
        };
        self.execute("DELETE FROM messages WHERE id = ?1", params![id.0])?;
        self.execute(
            "UPDATE messages SET position = -position - 1 WHERE chat_id = ?1 AND position > ?2",
            params![chat, position],
        )?;
        self.execute(
            "UPDATE messages SET position = -position - 2 WHERE chat_id = ?1 AND position < 0",
            params![chat],
        )?;
        Ok(true)
    }
}
