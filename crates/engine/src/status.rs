//! Reply status, persisted so that a restart can tell which replies were cut off.
//!
//! Each chat has at most one live reply (a reply owns its chat), so the record lives in the
//! settings store under `engine.reply.<chatId>`: the latest reply of that chat with its status.
//! The seed's rule for a process that died mid-reply: at the next start, a reply found
//! `running` or `waiting` is marked `cancelled` and never replayed (no model round is re-sent,
//! no side effect repeated). [`recover_interrupted`] does exactly that.
//!
//! The record is also the chat's *claim*: [`claim`] reads it and writes the new reply's record
//! in one `BEGIN IMMEDIATE` transaction, so two engines — two `tavo` processes, or the CLI and
//! `tavo serve` — never run replies in the same chat at once, and a crash leaves nothing to
//! clean up by hand. A live record belongs to a process that is still there only if the pid
//! exists, is not a zombie, and started at the recorded time on the recorded boot (field 22 of
//! `/proc/<pid>/stat` and `/proc/sys/kernel/random/boot_id`): a pid reused by an unrelated
//! process after a crash, or a process that died unreaped, does not hold the chat. A record of
//! this very process holds it only while the reply is live here ([`LIVE_HERE`]), so two engines
//! in one process also exclude each other, and a reply whose runtime was dropped frees it.

use std::collections::BTreeSet;
use std::sync::{Mutex, OnceLock};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tavo_model::{ChatId, MessageId};
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
    /// The reply's id (`rpl_` and 32 hex digits), as its events and doors name it.
    pub id: String,
    /// The chat the reply answers in; the record is kept under this chat's key.
    pub chat_id: ChatId,
    /// The message the reply writes, once it has one (absent before the prompt is built, and
    /// for replies that store no message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<MessageId>,
    /// Where the reply stands; `running` or `waiting` means it holds the chat.
    pub status: ReplyStatus,
    /// Process that runs the reply; a record of a live other process is left alone at start-up.
    #[serde(default)]
    pub pid: u32,
    /// When that process started, in clock ticks after boot (`/proc/<pid>/stat` field 22), so
    /// that a later process given the same pid is not taken for the owner. Absent off Linux
    /// and in records written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_start: Option<u64>,
    /// The boot the process ran in (`/proc/sys/kernel/random/boot_id`): start times restart
    /// at every boot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_id: Option<String>,
    /// On PostgreSQL, the replica that runs the reply ([`tavo_store::cluster`]): then it, not
    /// the pid, says whether the owner is alive, since replicas run on other machines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica: Option<String>,
    /// When the reply started (RFC 3339, UTC, milliseconds).
    pub started_at: String,
    /// When the record last changed (its status or message), in the same form.
    pub updated_at: String,
}

impl ReplyRecord {
    /// The settings key of this record.
    pub fn key(chat_id: ChatId) -> String {
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
    pub fn load(store: &Store, chat_id: ChatId) -> Result<Option<Self>, StoreError> {
        Ok(store
            .setting_get(&Self::key(chat_id))?
            .and_then(|v| serde_json::from_value(v).ok()))
    }
}

/// Ids of the replies live in this process, whichever engine runs them: a record naming this
/// process holds its chat only while its reply is in here. Entered before the claim commits
/// (so no other engine of this process ever sees the claim without it) and left when the reply
/// ends, when its control block is dropped (its runtime went away), or when its start fails.
static LIVE_HERE: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

fn live_here() -> std::sync::MutexGuard<'static, BTreeSet<String>> {
    // Inserts and removes cannot stop half-way.
    LIVE_HERE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Marks reply `id` as live in this process.
pub(crate) fn enter_live(id: &str) {
    live_here().insert(id.to_owned());
}

/// Marks reply `id` as no longer live in this process.
pub(crate) fn leave_live(id: &str) {
    live_here().remove(id);
}

/// What `/proc/<pid>/stat` says about a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProcStat {
    /// Field 3: `R`, `S`, `D`, `Z` (zombie), `X` (dead), …
    pub(crate) state: char,
    /// Field 22: start time in clock ticks after boot.
    pub(crate) start: u64,
}

/// Parses `/proc/<pid>/stat`. The command name (field 2) is in parentheses and may itself hold
/// spaces and parentheses, so the fields are counted after the *last* `)`.
pub(crate) fn parse_stat(text: &str) -> Option<ProcStat> {
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    // Fields 4..=21 lie between the state and the start time.
    let start = fields.nth(18)?.parse().ok()?;
    Some(ProcStat { state, start })
}

fn proc_stat(pid: u32) -> Option<ProcStat> {
    if !cfg!(target_os = "linux") || pid == 0 {
        return None;
    }
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

fn boot_id() -> Option<&'static str> {
    static BOOT: OnceLock<Option<String>> = OnceLock::new();
    BOOT.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
            .ok()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
    })
    .as_deref()
}

/// This process: its pid, start time and boot, as a record keeps them.
pub(crate) fn this_process() -> (u32, Option<u64>, Option<String>) {
    static START: OnceLock<Option<u64>> = OnceLock::new();
    let pid = std::process::id();
    let start = *START.get_or_init(|| proc_stat(pid).map(|s| s.start));
    (pid, start, boot_id().map(str::to_owned))
}

/// Whether the process that wrote `record` still runs it. Off Linux only this process can be
/// told alive, which errs on the side of the seed's rule (cancel, never replay). A record of a
/// replica (PostgreSQL) is alive while its replica beats, and — when it is this one — while the
/// reply is live here. `tx`, when given, is the transaction to ask the database in (a claim's);
/// otherwise a read of its own.
pub(crate) fn owner_alive(
    store: &Store,
    tx: Option<&tavo_store::Tx<'_>>,
    record: &ReplyRecord,
) -> Result<bool, StoreError> {
    if let Some(replica) = &record.replica {
        return match store.replica() {
            // A replica's record in a library that is not on the cluster (copied to SQLite):
            // nobody here can run it.
            None => Ok(false),
            Some(me) if me == replica => Ok(live_here().contains(&record.id)),
            Some(_) => match tx {
                Some(tx) => tx.replica_alive(replica),
                None => store.read(|tx| tx.replica_alive(replica)),
            },
        };
    }
    Ok(process_alive(record))
}

/// [`owner_alive`] for a record of a process (no replica): its pid, start time and boot.
fn process_alive(record: &ReplyRecord) -> bool {
    let (pid, start, boot) = this_process();
    let same_boot = match (&record.boot_id, &boot) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    };
    if !same_boot {
        return false;
    }
    let same_start = |actual: Option<u64>| match (record.process_start, actual) {
        (Some(recorded), Some(actual)) => recorded == actual,
        // A record written before start times were kept: the pid is all there is.
        (None, _) => true,
        (Some(_), None) => false,
    };
    if record.pid == pid && same_start(start) {
        return live_here().contains(&record.id);
    }
    match proc_stat(record.pid) {
        Some(stat) => !matches!(stat.state, 'Z' | 'X' | 'x') && same_start(Some(stat.start)),
        None => false,
    }
}

/// Writes a chat's reply record, and on PostgreSQL its lease: held while the reply is live,
/// dropped when it ends — in the same transaction, so the two never disagree.
///
/// A live record of a replica is refused once the chat's stored record says the same reply
/// ended: another replica took this one for dead (it lost the database for longer than the
/// timeout) and marked it interrupted, which must not be undone by its late writes.
pub(crate) fn put_record(tx: &tavo_store::Tx<'_>, record: &ReplyRecord) -> Result<(), StoreError> {
    if record.replica.is_some() && record.status.is_live() {
        let stored = tx
            .setting_get(&ReplyRecord::key(record.chat_id))?
            .and_then(|v| serde_json::from_value::<ReplyRecord>(v).ok());
        if let Some(stored) = stored
            && stored.id == record.id
            && !stored.status.is_live()
        {
            return Err(StoreError::InvalidArgument(format!(
                "reply {} was marked {} by another replica",
                record.id,
                stored.status.as_str()
            )));
        }
    }
    tx.setting_set(&ReplyRecord::key(record.chat_id), &record_value(record)?)?;
    if record.replica.is_some() {
        if record.status.is_live() {
            tx.lease_set(&record.id, record.chat_id.0)?;
        } else {
            tx.lease_clear(&record.id)?;
        }
    }
    Ok(())
}

/// The saved record of reply `id`, whatever its status (a reply no longer in memory: after a
/// restart, or evicted); `None` when no record has that id.
pub fn stored_record(store: &Store, id: &str) -> Result<Option<ReplyRecord>, StoreError> {
    Ok(store
        .setting_list(RECORD_PREFIX)?
        .into_iter()
        .filter_map(|(_, v)| serde_json::from_value::<ReplyRecord>(v).ok())
        .find(|r| r.id == id))
}

/// The replies of this library that are running or waiting right now, in any process (this
/// one, another `tavo`, `tavo serve`): what a restore must not pull the rows from under.
pub fn live_replies(store: &Store) -> Result<Vec<ReplyRecord>, StoreError> {
    let mut live = Vec::new();
    for (_, v) in store.setting_list(RECORD_PREFIX)? {
        let Ok(record) = serde_json::from_value::<ReplyRecord>(v) else {
            continue;
        };
        if record.status.is_live() && owner_alive(store, None, &record)? {
            live.push(record);
        }
    }
    Ok(live)
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
        if !record.status.is_live() || owner_alive(store, None, &record)? {
            continue;
        }
        // Read again inside the transaction: another process may have taken the chat over
        // since the list was read.
        let done = store.write(|tx| {
            let current = tx
                .setting_get(&key)?
                .and_then(|v| serde_json::from_value::<ReplyRecord>(v).ok());
            match current {
                Some(current) if current.id == record.id && current.status.is_live() => {
                    cancel_in(tx, &mut record)?;
                    Ok(true)
                }
                _ => Ok(false),
            }
        })?;
        if done {
            cancelled.push(record);
        }
    }
    Ok(cancelled)
}

/// Marks `record` cancelled, in the record and on the message it was writing.
fn cancel_in(tx: &tavo_store::Tx<'_>, record: &mut ReplyRecord) -> Result<(), StoreError> {
    record.status = ReplyStatus::Cancelled;
    record.updated_at = now();
    if let Some(id) = record.message_id
        && let Some(mut message) = tx.message_get(id)?
    {
        set_message_status(&mut message.extra, &record.id, ReplyStatus::Cancelled);
        tx.message_update(&message, None)?;
    }
    put_record(tx, record)
}

fn record_value(record: &ReplyRecord) -> Result<Value, StoreError> {
    serde_json::to_value(record).map_err(|source| StoreError::Json {
        what: "reply record".into(),
        source,
    })
}

/// A chat claimed for a new reply: what to put back should the reply not start after all.
#[derive(Debug)]
pub(crate) struct Claimed {
    chat_id: ChatId,
    id: String,
    /// The chat's record before the claim (`None`: there was none).
    previous: Option<Value>,
    /// A reply of a dead process that the claim found live and cancelled.
    pub(crate) taken_over: Option<ReplyRecord>,
}

/// Claims `record`'s chat for its reply in one transaction: fails with the chat's live record
/// when its owner still runs it (see [`owner_alive`]); a live record of a dead owner is
/// cancelled (as [`recover_interrupted`] would) and replaced.
pub(crate) fn claim(
    store: &Store,
    record: &ReplyRecord,
) -> Result<Result<Claimed, ReplyRecord>, StoreError> {
    let key = ReplyRecord::key(record.chat_id);
    // Before the commit, so that no engine of this process sees the claim as a dead one.
    enter_live(&record.id);
    let outcome = store.write(|tx| {
        let previous = tx.setting_get(&key)?;
        let current = previous
            .clone()
            .and_then(|v| serde_json::from_value::<ReplyRecord>(v).ok());
        let mut taken_over = None;
        if let Some(mut current) = current.filter(|c| c.status.is_live()) {
            if owner_alive(store, Some(tx), &current)? {
                return Ok(Err(current));
            }
            tracing::info!(reply = %current.id, pid = current.pid,
                "taking over a chat whose reply's process is gone");
            cancel_in(tx, &mut current)?;
            taken_over = Some(current);
        }
        put_record(tx, record)?;
        Ok(Ok(Claimed {
            chat_id: record.chat_id,
            id: record.id.clone(),
            previous,
            taken_over,
        }))
    });
    if !matches!(outcome, Ok(Ok(_))) {
        leave_live(&record.id);
    }
    outcome
}

/// Gives a claim back when its reply did not start: the chat's record is what it was before
/// (a reply of a dead owner stays cancelled), unless someone else has claimed it since.
pub(crate) fn release(store: &Store, claimed: &Claimed) -> Result<(), StoreError> {
    leave_live(&claimed.id);
    let key = ReplyRecord::key(claimed.chat_id);
    store.write(|tx| {
        let ours = tx
            .setting_get(&key)?
            .and_then(|v| serde_json::from_value::<ReplyRecord>(v).ok())
            .is_some_and(|r| r.id == claimed.id);
        if !ours {
            return Ok(());
        }
        tx.lease_clear(&claimed.id)?;
        let previous = match (&claimed.taken_over, &claimed.previous) {
            (Some(cancelled), _) => Some(record_value(cancelled)?),
            (None, previous) => previous.clone(),
        };
        match previous {
            Some(v) => tx.setting_set(&key, &v),
            None => tx.setting_delete(&key).map(drop),
        }
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_after_the_last_parenthesis() {
        let cases = [
            (
                "1234 (tavo) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 987654 19",
                Some(('S', 987_654)),
            ),
            // A command name with spaces and parentheses.
            (
                "77 (a) (b c) Z 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 42 19",
                Some(('Z', 42)),
            ),
            ("77 (cut) R 1 2 3", None),
            ("no parenthesis", None),
            (
                "9 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 notanumber",
                None,
            ),
        ];
        for (text, want) in cases {
            let got = parse_stat(text).map(|s| (s.state, s.start));
            assert_eq!(got, want, "{text}");
        }
    }

    #[test]
    fn this_process_reads_its_own_start_time() {
        let (pid, start, _) = this_process();
        assert_eq!(pid, std::process::id());
        if cfg!(target_os = "linux") {
            assert_eq!(start, proc_stat(pid).map(|s| s.start));
            assert!(start.is_some());
        }
    }

    #[test]
    fn a_record_of_this_process_is_alive_only_while_its_reply_is() {
        let (pid, process_start, boot_id) = this_process();
        let record = ReplyRecord {
            id: "rpl_status_unit".into(),
            chat_id: ChatId(1),
            message_id: None,
            status: ReplyStatus::Running,
            pid,
            process_start,
            boot_id,
            replica: None,
            started_at: now(),
            updated_at: now(),
        };
        assert!(!process_alive(&record));
        enter_live(&record.id);
        assert!(process_alive(&record));
        leave_live(&record.id);
        assert!(!process_alive(&record));
    }
}
