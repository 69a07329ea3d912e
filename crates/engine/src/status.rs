//! Reply status, persisted so that a restart can tell which replies were cut off.
//!
//! Each chat has at most one live reply (a reply owns its chat), so the record lives in the
//! settings store under `engine.reply.<chatId>`: the latest reply of that chat with its status.
//! The seed's rule for a process that died mid-reply: at the next start, a reply found
//! `running` or `waiting` is marked `cancelled` and never replayed (no model round is re-sent,
//! no side effect repeated). [`recover_interrupted`] does exactly that.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tavo_model::MessageId;
use tavo_store::{Store, StoreError};

/// Settings-key prefix of the reply records.
pub const RECORD_PREFIX: &str = "engine.reply.";

/// Message `extra` key holding `{id, status}` of the reply that wrote the message.
pub const MESSAGE_REPLY_KEY: &str = "tavoReply";

/// Where a reply stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ReplyStatus {
    /// Building the prompt, streaming, or running a tool.
    Running,
    /// Paused for the user (a confirmation or `tavo_ask_user`).
    Waiting,
    /// Ended normally.
    Finished,
    /// Cancelled by the user, or found interrupted at start-up.
    Cancelled,
    /// Ended by an error (the provider refused, the connection broke).
    Failed,
}

impl ReplyStatus {
    /// Whether the reply is still alive.
    pub fn is_live(self) -> bool {
        matches!(self, ReplyStatus::Running | ReplyStatus::Waiting)
    }

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ReplyStatus::Running => "running",
            ReplyStatus::Waiting => "waiting",
            ReplyStatus::Finished => "finished",
            ReplyStatus::Cancelled => "cancelled",
            ReplyStatus::Failed => "failed",
        }
    }
}

/// The persisted record of a chat's latest reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplyRecord {
    pub id: String,
    pub chat_id: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<i64>,
    pub status: ReplyStatus,
    /// Process that runs the reply; a record of a live other process is left alone at start-up.
    #[serde(default)]
    pub pid: u32,
    pub started_at: String,
    pub updated_at: String,
}

impl ReplyRecord {
    /// The settings key of this record.
    pub fn key(chat_id: i64) -> String {
        format!("{RECORD_PREFIX}{chat_id}")
    }

    /// Writes the record.
    pub fn save(&self, store: &Store) -> Result<(), StoreError> {
        let value = serde_json::to_value(self).map_err(|source| StoreError::Json {
            what: "reply record".into(),
            source,
        })?;
        store.setting_set(&Self::key(self.chat_id), &value)
    }

    /// The latest reply record of a chat.
    pub fn load(store: &Store, chat_id: i64) -> Result<Option<Self>, StoreError> {
        Ok(store
            .setting_get(&Self::key(chat_id))?
            .and_then(|v| serde_json::from_value(v).ok()))
    }
}

/// Whether process `pid` is alive (Linux: `/proc/<pid>` exists). Elsewhere only our own
/// process counts as alive, which errs on the side of the seed's rule (cancel, never replay).
fn process_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    cfg!(target_os = "linux") && std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// Marks every reply left `running` or `waiting` by a process that no longer exists as
/// `cancelled`, in its record and on the message it was writing. Returns the cancelled records.
/// Call once at start-up, before starting replies.
pub fn recover_interrupted(store: &Store) -> Result<Vec<ReplyRecord>, StoreError> {
    let mut cancelled = Vec::new();
    for (key, value) in store.setting_list(RECORD_PREFIX)? {
        let Ok(mut record) = serde_json::from_value::<ReplyRecord>(value) else {
            tracing::warn!(%key, "ignoring a malformed reply record");
            continue;
        };
        if !record.status.is_live()
            || (record.pid != std::process::id() && process_alive(record.pid))
        {
            continue;
        }
        record.status = ReplyStatus::Cancelled;
        record.updated_at = now();
        let message_id = record.message_id;
        store.write(|tx| {
            if let Some(id) = message_id
                && let Some(mut message) = tx.message_get(MessageId(id))?
            {
                set_message_status(&mut message.extra, &record.id, ReplyStatus::Cancelled);
                tx.message_update(&message, None)?;
            }
            let value = serde_json::to_value(&record).map_err(|source| StoreError::Json {
                what: "reply record".into(),
                source,
            })?;
            tx.setting_set(&ReplyRecord::key(record.chat_id), &value)
        })?;
        cancelled.push(record);
    }
    Ok(cancelled)
}

/// Writes `{id, status}` of the reply into a message's `extra`.
pub fn set_message_status(
    extra: &mut serde_json::Map<String, Value>,
    reply_id: &str,
    status: ReplyStatus,
) {
    extra.insert(
        MESSAGE_REPLY_KEY.to_owned(),
        serde_json::json!({"id": reply_id, "status": status.as_str()}),
    );
}

/// The current time, RFC 3339 UTC.
pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
