//! What the replicas on one PostgreSQL database share besides the libraries: who is alive, which
//! replica runs which reply, the live replies' events, and a channel of notices between them.
//!
//! Several `tavo serve` processes on one database behave as one server only if each can tell
//! whether another still runs a reply, can follow that reply's events, and hears of changes made
//! elsewhere. All of it lives in the database, in a schema of its own (`tavo_cluster`), so a
//! replica needs nothing but the database address:
//!
//! - **Replicas** (`replicas`): each pool registers itself under a random id and beats every
//!   [`HEARTBEAT`] from its own runtime, using the database's clock (`clock_timestamp()`), so
//!   replicas on machines whose clocks disagree still agree on who is late. A replica is alive
//!   while its last beat is younger than [`REPLICA_TIMEOUT`]; a replica killed with `kill -9`
//!   stops beating, which is all the others need to notice.
//! - **Leases** (`leases`): one row per live reply (library, chat, reply, replica), written in
//!   the same transaction as the chat's reply record, so the one-live-reply-per-chat rule and
//!   the lease commit together. The sweep (every [`HEARTBEAT`], one query per process) finds
//!   leases whose replica is no longer alive and tells that library's listeners (notice kind
//!   [`ORPHANED`]); whoever has the library open marks the replies interrupted.
//! - **Events** (`reply_events`): a live reply's events, appended in the batches its engine
//!   writes anyway, then announced with `NOTIFY`; another replica replays them after a client's
//!   `Last-Event-ID`. Kept for [`EVENT_RETENTION_HOURS`].
//! - **Notices**: one `LISTEN` connection per process receives every `NOTIFY tavo` and hands each
//!   notice to the subscribers of its library only ([`PgPool::subscribe`]), so a busy library
//!   does not wake every other one.
//!
//! The store knows nothing of what the notice kinds mean beyond [`ORPHANED`]: the engine and the
//! server name their own (`events`, `cancel`, `changed`, …).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::broadcast;

use crate::error::{Result, StoreError};
use crate::postgres::PgPool;
use crate::store::Conn;

/// How often a replica beats and sweeps.
pub const HEARTBEAT: Duration = Duration::from_secs(1);

/// How long a replica may go without a beat before the others take it for dead: long enough
/// for a busy process or a slow database to miss a few beats, short enough that a killed
/// replica's chats are free again within seconds.
pub const REPLICA_TIMEOUT: Duration = Duration::from_secs(4);

/// How long a reply's stored events are kept (a client reconnecting the next morning gets the
/// stored message instead).
pub const EVENT_RETENTION_HOURS: i64 = 24;

/// The notice kind the sweep sends a library when one of its replies' replica is dead.
pub const ORPHANED: &str = "orphaned";

/// The `NOTIFY` channel every replica listens on.
const CHANNEL: &str = "tavo";

/// The largest notice body sent (PostgreSQL refuses payloads of 8,000 bytes and more).
pub const MAX_NOTICE_BYTES: usize = 7_000;

/// Lock key serialising the creation of the cluster schema by replicas starting together.
const SETUP_LOCK: i64 = 0x7461_766f_636c_7573; // "tavoclus"

const SETUP: &str = "
    CREATE SCHEMA IF NOT EXISTS tavo_cluster;
    CREATE TABLE IF NOT EXISTS tavo_cluster.replicas (
        id TEXT PRIMARY KEY,
        host TEXT NOT NULL,
        pid BIGINT NOT NULL,
        started_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
        heartbeat_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
    );
    CREATE TABLE IF NOT EXISTS tavo_cluster.leases (
        reply_id TEXT PRIMARY KEY,
        library TEXT NOT NULL,
        chat_id BIGINT NOT NULL,
        replica TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS leases_by_replica ON tavo_cluster.leases (replica);
    CREATE TABLE IF NOT EXISTS tavo_cluster.reply_events (
        reply_id TEXT NOT NULL,
        seq BIGINT NOT NULL,
        name TEXT NOT NULL,
        data TEXT NOT NULL,
        at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
        PRIMARY KEY (reply_id, seq)
    );
    CREATE INDEX IF NOT EXISTS reply_events_by_time ON tavo_cluster.reply_events (at);
";

/// One notice from a replica (this one included) to a library's listeners.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// The replica that sent it; the sweep's notices name the dead replica.
    pub from: String,
    /// What it is about (`events`, `cancel`, [`ORPHANED`], …).
    pub kind: String,
    /// The rest, as the kind defines it.
    pub body: String,
}

impl Notice {
    fn encode(library: &str, from: &str, kind: &str, body: &str) -> Result<String> {
        if kind.contains('\t') || from.contains('\t') {
            return Err(StoreError::InvalidArgument(format!(
                "a notice kind may not hold a tab: {kind:?}"
            )));
        }
        let payload = format!("{library}\t{from}\t{kind}\t{body}");
        if payload.len() > MAX_NOTICE_BYTES {
            return Err(StoreError::InvalidArgument(format!(
                "a {kind} notice of {} bytes is over the {MAX_NOTICE_BYTES}-byte limit",
                payload.len()
            )));
        }
        Ok(payload)
    }

    /// The library and the notice of a payload; `None` for one this version does not read.
    fn decode(payload: &str) -> Option<(&str, Notice)> {
        let mut parts = payload.splitn(4, '\t');
        let library = parts.next()?;
        let from = parts.next()?;
        let kind = parts.next()?;
        let body = parts.next()?;
        Some((
            library,
            Notice {
                from: from.to_owned(),
                kind: kind.to_owned(),
                body: body.to_owned(),
            },
        ))
    }
}

/// A stored event of a live reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    /// Its number in the reply's stream.
    pub seq: u64,
    /// The SSE event name (`text_delta`, `finished`, …).
    pub name: String,
    /// The event as JSON, exactly as the replica running the reply serialised it.
    pub data: String,
}

/// This process's place in the cluster: its replica id and the routes of notices to libraries.
pub(crate) struct Membership {
    pub(crate) replica_id: String,
    routes: Mutex<HashMap<String, broadcast::Sender<Arc<Notice>>>>,
}

/// Notices queued per library subscriber before it is told it lagged.
const ROUTE_CAPACITY: usize = 1024;

impl Membership {
    pub(crate) fn new() -> Self {
        Self {
            replica_id: replica_id(),
            routes: Mutex::new(HashMap::new()),
        }
    }

    fn routes(&self) -> std::sync::MutexGuard<'_, HashMap<String, broadcast::Sender<Arc<Notice>>>> {
        self.routes.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn route(&self, library: &str) -> broadcast::Receiver<Arc<Notice>> {
        self.routes()
            .entry(library.to_owned())
            .or_insert_with(|| broadcast::channel(ROUTE_CAPACITY).0)
            .subscribe()
    }

    fn deliver(&self, library: &str, notice: Notice) {
        let mut routes = self.routes();
        if let Some(tx) = routes.get(library)
            && tx.send(Arc::new(notice)).is_err()
        {
            // Nobody listens to this library any more.
            routes.remove(library);
        }
    }
}

/// A fresh replica id: 16 random hex digits from the OS's randomness (through the hasher's
/// random keys, so no extra dependency), the host and pid beside it in the row for people.
fn replica_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut out = String::with_capacity(16);
    for salt in 0..2u64 {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(salt);
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        out.push_str(&format!("{:08x}", h.finish() as u32));
    }
    format!("r{out}")
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

/// Creates the cluster schema if needed and registers this replica (run once by
/// [`PgPool::connect`] on its first connection).
pub(crate) async fn setup(client: &tokio_postgres::Client, replica: &str) -> Result<()> {
    client
        .batch_execute(&format!(
            "BEGIN; SELECT pg_advisory_xact_lock({SETUP_LOCK}); {SETUP} COMMIT;"
        ))
        .await?;
    client
        .execute(
            "INSERT INTO tavo_cluster.replicas (id, host, pid) VALUES ($1, $2, $3)
             ON CONFLICT (id) DO UPDATE SET heartbeat_at = clock_timestamp()",
            &[&replica, &host_name(), &i64::from(std::process::id())],
        )
        .await?;
    Ok(())
}

/// The process's one listening connection: beats, sweeps, and hands notices out. Reconnects
/// (after [`HEARTBEAT`]) whenever the connection breaks; runs until the pool's runtime stops.
pub(crate) async fn listen(config: tokio_postgres::Config, membership: Arc<Membership>) {
    loop {
        if let Err(e) = listen_once(&config, &membership).await {
            tracing::warn!(error = %e, "the cluster listener lost its connection; reconnecting");
        }
        tokio::time::sleep(HEARTBEAT).await;
    }
}

async fn listen_once(
    config: &tokio_postgres::Config,
    membership: &Membership,
) -> std::result::Result<(), tokio_postgres::Error> {
    let (client, mut connection) = config.connect(tokio_postgres::NoTls).await?;
    let (tx, mut notices) = tokio::sync::mpsc::unbounded_channel();
    let driver = tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(tokio_postgres::AsyncMessage::Notification(n))) => {
                    if tx.send(n.payload().to_owned()).is_err() {
                        return;
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    tracing::warn!(error = %e, "the cluster listener's connection failed");
                    return;
                }
                None => return,
            }
        }
    });
    let outcome = async {
        client.batch_execute(&format!("LISTEN {CHANNEL}")).await?;
        let replica = membership.replica_id.as_str();
        let timeout = format!("{} milliseconds", REPLICA_TIMEOUT.as_millis());
        let beat = client
            .prepare(
                "INSERT INTO tavo_cluster.replicas (id, host, pid) VALUES ($1, $2, $3)
                 ON CONFLICT (id) DO UPDATE SET heartbeat_at = clock_timestamp()",
            )
            .await?;
        let sweep = client
            .prepare(
                "SELECT l.library, l.replica FROM tavo_cluster.leases l
                 WHERE NOT EXISTS (SELECT 1 FROM tavo_cluster.replicas r WHERE r.id = l.replica
                   AND r.heartbeat_at > clock_timestamp() - $1::text::interval)
                 GROUP BY l.library, l.replica",
            )
            .await?;
        let host = host_name();
        let pid = i64::from(std::process::id());
        let mut ticks = tokio::time::interval(HEARTBEAT);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut beats: u64 = 0;
        loop {
            tokio::select! {
                payload = notices.recv() => {
                    let Some(payload) = payload else { return Ok(()) };
                    if let Some((library, notice)) = Notice::decode(&payload) {
                        membership.deliver(library, notice);
                    }
                }
                _ = ticks.tick() => {
                    client.execute(&beat, &[&replica, &host, &pid]).await?;
                    for row in client.query(&sweep, &[&timeout]).await? {
                        let library: String = row.get(0);
                        let dead: String = row.get(1);
                        membership.deliver(&library, Notice {
                            from: dead,
                            kind: ORPHANED.into(),
                            body: String::new(),
                        });
                    }
                    beats += 1;
                    if beats % 60 == 1 {
                        client.execute(
                            &format!("DELETE FROM tavo_cluster.reply_events \
                                      WHERE at < clock_timestamp() - interval '{EVENT_RETENTION_HOURS} hours'"),
                            &[],
                        ).await?;
                        // Replicas gone for a day, and holding no lease, are forgotten.
                        client.execute(
                            "DELETE FROM tavo_cluster.replicas r
                             WHERE r.heartbeat_at < clock_timestamp() - interval '1 day'
                               AND NOT EXISTS (SELECT 1 FROM tavo_cluster.leases l WHERE l.replica = r.id)",
                            &[],
                        ).await?;
                    }
                }
            }
        }
    }
    .await;
    driver.abort();
    outcome
}

impl PgPool {
    /// This process's replica id (the same for every library on this pool).
    pub fn replica(&self) -> &str {
        &self.membership.replica_id
    }

    /// The notices sent to `library` by any replica, this one included.
    pub fn notices_for(&self, library: &str) -> broadcast::Receiver<Arc<Notice>> {
        self.membership.route(library)
    }
}

/// The cluster's operations inside a library's transaction (PostgreSQL only).
impl crate::postgres::PgSession {
    /// Whether replica `id` has beaten within [`REPLICA_TIMEOUT`].
    pub(crate) fn replica_alive(&self, id: &str) -> Result<bool> {
        let timeout = format!("{} milliseconds", REPLICA_TIMEOUT.as_millis());
        let rows = self.query(
            "SELECT 1 FROM tavo_cluster.replicas WHERE id = ?1 \
             AND heartbeat_at > clock_timestamp() - ?2::text::interval",
            crate::sql::params![id, timeout],
        )?;
        Ok(!rows.is_empty())
    }

    /// Records that this replica runs reply `reply_id` in `chat_id`.
    pub(crate) fn lease_set(&self, reply_id: &str, chat_id: i64) -> Result<()> {
        let replica = self.pool().replica().to_owned();
        let library = self.schema_name().to_owned();
        self.execute(
            "INSERT INTO tavo_cluster.leases (reply_id, library, chat_id, replica) \
             VALUES (?1, ?2, ?3, ?4) ON CONFLICT (reply_id) DO UPDATE SET replica = excluded.replica",
            crate::sql::params![reply_id, library, chat_id, replica],
        )?;
        Ok(())
    }

    /// Forgets reply `reply_id`'s lease (it ended, or was found interrupted).
    pub(crate) fn lease_clear(&self, reply_id: &str) -> Result<()> {
        self.execute(
            "DELETE FROM tavo_cluster.leases WHERE reply_id = ?1",
            crate::sql::params![reply_id],
        )?;
        Ok(())
    }

    /// Sends `kind`/`body` to this library's listeners on every replica, at commit.
    pub(crate) fn notify(&self, kind: &str, body: &str) -> Result<()> {
        let payload = Notice::encode(self.schema_name(), self.pool().replica(), kind, body)?;
        self.query(
            "SELECT pg_notify(?1, ?2)",
            crate::sql::params![CHANNEL, payload],
        )?;
        Ok(())
    }

    /// Appends events of reply `reply_id` (an event already stored is left as it is). One
    /// statement whatever the count: the events travel as one JSON array.
    pub(crate) fn reply_events_append(&self, reply_id: &str, events: &[StoredEvent]) -> Result<()> {
        if events.is_empty() {
            return Ok(());
        }
        let rows: Vec<(u64, &str, &str)> = events
            .iter()
            .map(|e| (e.seq, e.name.as_str(), e.data.as_str()))
            .collect();
        let rows = serde_json::to_string(&rows).map_err(|source| StoreError::Json {
            what: "reply events".into(),
            source,
        })?;
        self.execute(
            "INSERT INTO tavo_cluster.reply_events (reply_id, seq, name, data) \
             SELECT ?1, (e->>0)::bigint, e->>1, e->>2 FROM jsonb_array_elements(?2::text::jsonb) e \
             ON CONFLICT (reply_id, seq) DO NOTHING",
            crate::sql::params![reply_id, rows],
        )?;
        Ok(())
    }

    /// Up to `limit` stored events of reply `reply_id` after `after`, oldest first.
    pub(crate) fn reply_events_after(
        &self,
        reply_id: &str,
        after: u64,
        limit: u32,
    ) -> Result<Vec<StoredEvent>> {
        let after = i64::try_from(after).unwrap_or(i64::MAX);
        let rows = self.query(
            "SELECT seq, name, data FROM tavo_cluster.reply_events \
             WHERE reply_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
            crate::sql::params![reply_id, after, i64::from(limit)],
        )?;
        rows.iter()
            .map(|r| {
                let row = crate::sql::Row::Postgres(r);
                Ok(StoredEvent {
                    seq: u64::try_from(row.get::<i64>(0)?).unwrap_or(0),
                    name: row.get(1)?,
                    data: row.get(2)?,
                })
            })
            .collect()
    }
}

/// The cluster as a library sees it. On SQLite there is no cluster: one process (and the
/// CLI beside it, told apart by pid) owns the library, so these answer "nothing to share".
impl crate::Store {
    /// This process's replica id, on PostgreSQL.
    pub fn replica(&self) -> Option<&str> {
        self.pg_pool().map(|p| p.replica())
    }

    /// The notices sent to this library by any replica (this one included); `None` on SQLite.
    pub fn subscribe_notices(&self) -> Option<broadcast::Receiver<Arc<Notice>>> {
        let schema = self.postgres_schema()?;
        Some(self.pg_pool()?.notices_for(schema))
    }

    /// Sends a notice to this library's listeners on every replica (nothing on SQLite).
    pub fn notify(&self, kind: &str, body: &str) -> Result<()> {
        if self.pg_pool().is_none() {
            return Ok(());
        }
        self.write(|tx| tx.notify(kind, body))
    }
}

impl crate::Tx<'_> {
    /// Whether replica `id` is alive (beat within [`REPLICA_TIMEOUT`]); always `false` on
    /// SQLite, which has no replicas.
    pub fn replica_alive(&self, id: &str) -> Result<bool> {
        match self.conn {
            Conn::Postgres(pg) => pg.replica_alive(id),
            Conn::Sqlite(_) => Ok(false),
        }
    }

    /// Records that this replica runs reply `reply_id` in `chat_id` (PostgreSQL; nothing on
    /// SQLite, where the reply record's pid says the same).
    pub fn lease_set(&self, reply_id: &str, chat_id: i64) -> Result<()> {
        match self.conn {
            Conn::Postgres(pg) => pg.lease_set(reply_id, chat_id),
            Conn::Sqlite(_) => Ok(()),
        }
    }

    /// Forgets reply `reply_id`'s lease.
    pub fn lease_clear(&self, reply_id: &str) -> Result<()> {
        match self.conn {
            Conn::Postgres(pg) => pg.lease_clear(reply_id),
            Conn::Sqlite(_) => Ok(()),
        }
    }

    /// Sends a notice to this library's listeners on every replica when the transaction
    /// commits (nothing on SQLite, and nothing if it rolls back).
    pub fn notify(&self, kind: &str, body: &str) -> Result<()> {
        match self.conn {
            Conn::Postgres(pg) => pg.notify(kind, body),
            Conn::Sqlite(_) => Ok(()),
        }
    }

    /// Stores events of a live reply for replicas that follow it (nothing on SQLite).
    pub fn reply_events_append(&self, reply_id: &str, events: &[StoredEvent]) -> Result<()> {
        match self.conn {
            Conn::Postgres(pg) => pg.reply_events_append(reply_id, events),
            Conn::Sqlite(_) => Ok(()),
        }
    }

    /// Up to `limit` stored events of reply `reply_id` after `after` (none on SQLite).
    pub fn reply_events_after(
        &self,
        reply_id: &str,
        after: u64,
        limit: u32,
    ) -> Result<Vec<StoredEvent>> {
        match self.conn {
            Conn::Postgres(pg) => pg.reply_events_after(reply_id, after, limit),
            Conn::Sqlite(_) => Ok(Vec::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_round_trip_and_keep_tabs_in_their_body() {
        let payload = Notice::encode("user_3", "rabc", "events", "rpl_1\t42").expect("encode");
        let (library, notice) = Notice::decode(&payload).expect("decode");
        assert_eq!(library, "user_3");
        assert_eq!(notice.from, "rabc");
        assert_eq!(notice.kind, "events");
        assert_eq!(notice.body, "rpl_1\t42");
        assert!(Notice::decode("no tabs").is_none());
        assert!(Notice::encode("tavo", "r", "bad\tkind", "").is_err());
        assert!(Notice::encode("tavo", "r", "big", &"x".repeat(MAX_NOTICE_BYTES)).is_err());
    }

    #[test]
    fn replica_ids_differ() {
        let a = replica_id();
        let b = replica_id();
        assert_eq!(a.len(), 17);
        assert_ne!(a, b);
    }

    #[test]
    fn a_route_without_listeners_is_dropped() {
        let m = Membership::new();
        let mut rx = m.route("tavo");
        m.deliver(
            "tavo",
            Notice {
                from: "r".into(),
                kind: "k".into(),
                body: String::new(),
            },
        );
        assert_eq!(rx.try_recv().expect("delivered").kind, "k");
        drop(rx);
        m.deliver(
            "tavo",
            Notice {
                from: "r".into(),
                kind: "k".into(),
                body: String::new(),
            },
        );
        assert!(m.routes().is_empty());
        // Another library's notice reaches nobody.
        m.deliver(
            "user_1",
            Notice {
                from: "r".into(),
                kind: "k".into(),
                body: String::new(),
            },
        );
    }
}
