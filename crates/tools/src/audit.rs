//! The audit log as every door reads and clears it: `tavo audit list|clear`,
//! `GET`/`DELETE /api/audit`.
//!
//! The log holds what a tool call did (arguments, result envelope, timing — a web fetch only
//! as metadata); chat messages keep only their compact cards. Seed 000 (privacy): the log can
//! be cleared, and clearing it leaves those cards in the messages untouched — only the log's
//! rows go.

use serde::Serialize;
use tavo_store::{AUDIT_CAPACITY, AuditEntry, Store};

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

/// Up to `limit` (1..=[`MAX_PAGE`]) entries older than the entry `before`, newest first.
pub fn list_audit(store: &Store, limit: u32, before: Option<i64>) -> Result<AuditPage, ToolError> {
    if !(1..=MAX_PAGE).contains(&limit) {
        return Err(ToolError::new(
            ErrorCode::InvalidArguments,
            format!("limit: must be between 1 and {MAX_PAGE}, got {limit}"),
        ));
    }
    // One more than asked tells whether an older page exists.
    let mut entries = store
        .audit_list(limit + 1, before)
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
