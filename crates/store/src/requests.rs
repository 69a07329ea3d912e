//! The log of idempotent writes: what a write sent with a `clientRequestId` answered, so that a
//! retry of it (after a timeout, a dropped connection, a restart of either side) gets the same
//! answer instead of writing twice. Kept for [`REQUEST_RETENTION_HOURS`] and at most
//! [`REQUEST_CAPACITY`] entries, so it cannot fill the disk.

use crate::sql::params;
use serde_json::Value;

use crate::error::Result;
use crate::store::{Tx, now};

/// How many answered requests the log keeps.
pub const REQUEST_CAPACITY: i64 = 10_000;
/// How long an answered request is remembered: a day covers any client's retry schedule.
pub const REQUEST_RETENTION_HOURS: i64 = 24;

/// A write that was already answered.
#[derive(Debug, Clone, PartialEq)]
pub struct AnsweredRequest {
    /// The tool or operation that ran (`tavo_character_create`).
    pub operation: String,
    /// A digest of the arguments it ran with (without `clientRequestId`).
    pub arguments_digest: String,
    /// The result it answered.
    pub result: Value,
}

impl Tx<'_> {
    /// The answer recorded for `id`, if it is still remembered.
    pub fn request_get(&self, id: &str) -> Result<Option<AnsweredRequest>> {
        let cutoff = cutoff();
        let row = self.query_opt(
            "SELECT operation, digest, result FROM client_requests WHERE id = ?1 AND at >= ?2",
            params![id, cutoff],
            |r| {
                Ok((
                    r.get::<String>(0)?,
                    r.get::<String>(1)?,
                    r.get::<String>(2)?,
                ))
            },
        )?;
        Ok(
            row.map(|(operation, arguments_digest, result)| AnsweredRequest {
                operation,
                arguments_digest,
                result: serde_json::from_str(&result).unwrap_or(Value::Null),
            }),
        )
    }

    /// Records the answer to `id` and forgets requests past their retention or capacity.
    pub fn request_record(&self, id: &str, answered: &AnsweredRequest) -> Result<()> {
        self.execute(
            "INSERT INTO client_requests (id, operation, digest, result, at) \
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (id) DO UPDATE SET \
             operation = excluded.operation, digest = excluded.digest, \
             result = excluded.result, at = excluded.at",
            params![
                id,
                answered.operation,
                answered.arguments_digest,
                answered.result.to_string(),
                now()
            ],
        )?;
        self.execute(
            "DELETE FROM client_requests WHERE at < ?1",
            params![cutoff()],
        )?;
        self.execute(
            "DELETE FROM client_requests WHERE id NOT IN \
             (SELECT id FROM client_requests ORDER BY at DESC LIMIT ?1)",
            params![REQUEST_CAPACITY],
        )?;
        Ok(())
    }
}

fn cutoff() -> String {
    (chrono::Utc::now() - chrono::Duration::hours(REQUEST_RETENTION_HOURS))
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use crate::Store;

    use super::*;

    #[test]
    fn an_answer_survives_reopening_the_library() {
        let dir = tempfile::tempdir().expect("tempdir");
        let answered = AnsweredRequest {
            operation: "tavo_character_create".into(),
            arguments_digest: "d1".into(),
            result: serde_json::json!({"id": 3}),
        };
        {
            let store = Store::open(dir.path()).expect("open");
            store
                .write(|tx| tx.request_record("req-1", &answered))
                .expect("record");
        }
        let store = Store::open(dir.path()).expect("reopen");
        let got = store.read(|tx| tx.request_get("req-1")).expect("get");
        assert_eq!(got, Some(answered));
        assert_eq!(store.read(|tx| tx.request_get("req-2")).expect("get"), None);
    }
}
