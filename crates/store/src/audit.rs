//! A bounded audit log: what was written, by which door, when. The oldest entries fall off
//! once the log holds [`AUDIT_CAPACITY`] entries, so it can never fill the disk.

use crate::sql::{Dialect, params};
use serde::Serialize;
use serde_json::Value;

use crate::error::{Result, StoreError};
use crate::store::{Tx, now};

/// How many entries the log keeps.
pub const AUDIT_CAPACITY: i64 = 10_000;

/// One audit entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    /// Grows with every entry, so a newer entry has a larger id; pass it as `before` to page on.
    pub id: i64,
    /// RFC 3339 UTC.
    pub at: String,
    /// What happened (`character.create`, `tool.tavo_file_save`, …).
    pub action: String,
    /// What it happened to (`character:12`), when there is one object.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Free-form details; never API keys.
    pub details: Value,
}

/// Which entries a listing keeps; every field that is set must match.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditFilter {
    /// The action (`tool.tavo_file_save`).
    pub action: Option<String>,
    /// The target (`chat:12`).
    pub target: Option<String>,
    /// The call's id (`details.callId`), to open one tool card's call.
    pub call_id: Option<String>,
}

impl Tx<'_> {
    /// Records an entry and drops the oldest beyond the capacity; returns the entry's id.
    pub fn audit_append(&self, action: &str, target: Option<&str>, details: &Value) -> Result<i64> {
        let id = self.insert_id(
            "INSERT INTO audit_log (at, action, target, details) VALUES (?1, ?2, ?3, ?4)",
            params![now(), action, target, details.to_string()],
        )?;
        // Ids only grow and entries are only removed oldest-first, so the live ids are
        // contiguous and this keeps exactly the newest AUDIT_CAPACITY.
        self.execute(
            "DELETE FROM audit_log WHERE id <= ?1",
            params![id - AUDIT_CAPACITY],
        )?;
        Ok(id)
    }

    /// Up to `limit` entries older than `before` (all when `None`), newest first.
    pub fn audit_list(&self, limit: u32, before: Option<i64>) -> Result<Vec<AuditEntry>> {
        self.audit_find(limit, before, &AuditFilter::default())
    }

    /// Up to `limit` entries older than `before` that match `filter`, newest first.
    pub fn audit_find(
        &self,
        limit: u32,
        before: Option<i64>,
        filter: &AuditFilter,
    ) -> Result<Vec<AuditEntry>> {
        let sql = match self.dialect() {
            Dialect::Sqlite => {
                "SELECT id, at, action, target, details FROM audit_log WHERE id < ?1 \
                 AND (?3 IS NULL OR action = ?3) AND (?4 IS NULL OR target = ?4) \
                 AND (?5 IS NULL OR json_extract(details, '$.callId') = ?5) \
                 ORDER BY id DESC LIMIT ?2"
            }
            Dialect::Postgres => {
                "SELECT id, at, action, target, details FROM audit_log WHERE id < ?1 \
                 AND (?3::text IS NULL OR action = ?3) AND (?4::text IS NULL OR target = ?4) \
                 AND (?5::text IS NULL OR details::jsonb ->> 'callId' = ?5) \
                 ORDER BY id DESC LIMIT ?2"
            }
        };
        let rows = self.query_map(
            sql,
            params![
                before.unwrap_or(i64::MAX),
                limit,
                filter.action,
                filter.target,
                filter.call_id
            ],
            |r| {
                Ok((
                    r.get::<i64>(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get::<String>(4)?,
                ))
            },
        )?;
        let mut out = Vec::new();
        for (id, at, action, target, details) in rows {
            let details = serde_json::from_str(&details)
                .map_err(|e| StoreError::json(format!("audit entry {id}"), e))?;
            out.push(AuditEntry {
                id,
                at,
                action,
                target,
                details,
            });
        }
        Ok(out)
    }

    /// Removes every entry; returns how many there were.
    pub fn audit_clear(&self) -> Result<usize> {
        // The tool rounds kept for later prompts hold the same arguments and results.
        self.execute("DELETE FROM tool_rounds", params![])?;
        self.execute("DELETE FROM audit_log", params![])
    }
}
