//! The audit log as every door reads and clears it: `tavo audit list|clear`,
//! `GET`/`DELETE /api/audit`.
//!
//! The log holds what a tool call did (arguments, result envelope, timing — a web fetch only
//! as metadata); chat messages keep only their compact cards. Seed 000 (privacy): the log can
//! be cleared, and clearing it leaves those cards in the messages untouched — only the log's
//! rows go.

use serde::Serialize;
use serde_json::{Value, json};
use tavo_model::ChatId;
use tavo_store::{AUDIT_CAPACITY, AuditEntry, AuditFilter, Store};

use crate::context::store_error;
use crate::error::{ErrorCode, ToolError};

/// The most entries one page returns.
pub const MAX_PAGE: u32 = 500;

/// One page of the log, newest first.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditPage {
    /// The entries.
    pub entries: Vec<AuditEntry>,
    /// Pass as `before` for the next (older) page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_before: Option<i64>,
    /// How many entries the log keeps at most (the oldest fall off).
    pub capacity: i64,
}

/// What clearing removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditCleared {
    /// Entries removed.
    pub removed: usize,
}

/// The largest arguments object an entry keeps whole (an import's base64 file would otherwise
/// fill the log); a larger one is kept as a preview.
pub const ARGUMENTS_LIMIT: usize = 16 * 1024;

/// What the log keeps of one call's result: the envelope, except that a web fetch keeps only
/// its metadata (final URL, status, type, sizes, warnings), never the page text or the
/// continuation cursor — the log is not a copy of the pages a user read.
pub fn audited_result(tool: &str, envelope: &Value) -> Value {
    if tool != "tavo_web_fetch" {
        return envelope.clone();
    }
    let Some(result) = envelope.get("result").and_then(Value::as_object) else {
        return envelope.clone();
    };
    let keep = [
        "finalUrl",
        "url",
        "status",
        "mimeType",
        "contentType",
        "bytes",
        "contentBytes",
        "elapsedMs",
        "warnings",
    ];
    let projected: serde_json::Map<String, Value> = result
        .iter()
        .filter(|(k, _)| keep.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    json!({"ok": envelope.get("ok").cloned().unwrap_or(Value::Bool(true)), "result": projected})
}

/// One direct call (no reply around it) as the log keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct DirectCallRecord {
    /// The door it came through: `cli`, `http`, `mcp`.
    pub door: &'static str,
    /// The caller's id for the call.
    pub call_id: String,
    /// The tool's name.
    pub tool: String,
    /// The chat it worked on, if any.
    pub chat: Option<ChatId>,
    /// The arguments as validated.
    pub arguments: Value,
    /// The envelope answered.
    pub envelope: Value,
    /// Time spent running it (waiting for the user excluded).
    pub run_ms: u64,
    /// Time spent waiting for the user.
    pub waited_ms: u64,
}

impl DirectCallRecord {
    /// Appends the record to the log (one small transaction).
    pub fn append(&self, store: &Store) -> Result<(), ToolError> {
        let arguments = crate::budget::shape(
            crate::budget::ToolResult::Value(self.arguments.clone()),
            ARGUMENTS_LIMIT,
        );
        let ok = self.envelope.get("ok") == Some(&Value::Bool(true));
        let details = json!({
            "door": self.door,
            "callId": self.call_id,
            "arguments": arguments.result,
            "result": audited_result(&self.tool, &self.envelope),
            "status": if ok { "ok" } else { "error" },
            "runMs": self.run_ms,
            "waitedMs": self.waited_ms,
        });
        let target = match self.chat {
            Some(chat) => format!("chat:{chat}"),
            None => "library".to_owned(),
        };
        store
            .audit_append(&format!("tool.{}", self.tool), Some(&target), &details)
            .map(|_| ())
            .map_err(|e| store_error("writing the audit log", e))
    }
}

/// Up to `limit` (1..=[`MAX_PAGE`]) entries older than the entry `before`, newest first.
pub fn list_audit(store: &Store, limit: u32, before: Option<i64>) -> Result<AuditPage, ToolError> {
    find_audit(store, limit, before, &AuditFilter::default())
}

/// [`list_audit`] of the entries `filter` keeps (one chat, one tool, one call).
pub fn find_audit(
    store: &Store,
    limit: u32,
    before: Option<i64>,
    filter: &AuditFilter,
) -> Result<AuditPage, ToolError> {
    if !(1..=MAX_PAGE).contains(&limit) {
        return Err(ToolError::new(
            ErrorCode::InvalidArguments,
            format!("limit: must be between 1 and {MAX_PAGE}, got {limit}"),
        ));
    }
    // One more than asked tells whether an older page exists.
    let mut entries = store
        .audit_find(limit + 1, before, filter)
        .map_err(|e| store_error("reading the audit log", e))?;
    let more = entries.len() > limit as usize;
    entries.truncate(limit as usize);
    let next_before = more.then(|| entries.last().map(|e| e.id)).flatten();
    Ok(AuditPage {
        entries,
        next_before,
        capacity: AUDIT_CAPACITY,
    })
}

/// Removes every entry of the log (messages keep their compact tool-call cards).
pub fn clear_audit(store: &Store) -> Result<AuditCleared, ToolError> {
    let removed = store
        .audit_clear()
        .map_err(|e| store_error("clearing the audit log", e))?;
    Ok(AuditCleared { removed })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path()).expect("open");
        (dir, store)
    }

    #[test]
    fn pages_run_newest_first_and_end() {
        let (_dir, store) = store();
        for i in 0..5 {
            store
                .audit_append("tool.x", Some("chat:1"), &json!({ "n": i }))
                .expect("append");
        }
        let first = list_audit(&store, 2, None).expect("page");
        let ns: Vec<_> = first
            .entries
            .iter()
            .map(|e| e.details["n"].clone())
            .collect();
        assert_eq!(ns, [json!(4), json!(3)]);
        let second = list_audit(&store, 2, first.next_before).expect("page");
        let third = list_audit(&store, 2, second.next_before).expect("page");
        assert_eq!(third.entries.len(), 1);
        assert_eq!(third.next_before, None);
        assert_eq!(first.capacity, AUDIT_CAPACITY);
    }

    #[test]
    fn a_limit_out_of_range_is_refused_with_its_name() {
        let (_dir, store) = store();
        for limit in [0, MAX_PAGE + 1] {
            let e = list_audit(&store, limit, None).expect_err("refused");
            assert_eq!(e.code, ErrorCode::InvalidArguments);
            assert!(e.message.starts_with("limit:"), "{}", e.message);
        }
    }

    #[test]
    fn clearing_removes_every_entry_and_says_how_many() {
        let (_dir, store) = store();
        for _ in 0..3 {
            store
                .audit_append("tool.x", None, &json!({}))
                .expect("append");
        }
        assert_eq!(clear_audit(&store).expect("clear").removed, 3);
        assert!(
            list_audit(&store, 10, None)
                .expect("page")
                .entries
                .is_empty()
        );
        assert_eq!(clear_audit(&store).expect("clear").removed, 0);
    }
}
