//! The library on PostgreSQL (`tavo serve --database postgres://…`): the same tables as on
//! SQLite, one PostgreSQL schema per library, reached through a small pool of connections.
//!
//! - **One schema per library.** A library is a schema (`tavo` for the data folder's own,
//!   `user_<id>` for an account's, `shared`), so a user's statements name only their own tables
//!   — isolation by construction, as one folder per library is on SQLite.
//! - **Transactions as on SQLite.** A write takes the library's advisory lock for the length of
//!   its transaction (`pg_advisory_xact_lock`): writes to one library run one at a time, as
//!   SQLite's `BEGIN IMMEDIATE` makes them, on every replica at once; the lock goes with the
//!   transaction when its holder commits, rolls back or dies. A read is one `REPEATABLE READ`
//!   snapshot, as a SQLite read transaction is.
//! - **Statements prepared once per connection** and kept by (schema, text): a prepared
//!   statement is bound to the tables its schema had when it was prepared.
//! - **The client** is `tokio-postgres`. Its connections run on a small runtime of the pool's
//!   own, and the synchronous store waits for each answer with `futures_executor::block_on`, which,
//!   unlike a runtime's `block_on`, may be called from any thread — a blocking-pool thread, or a
//!   runtime's worker that reads a setting inline, as it may on SQLite.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::error::{Result, StoreError};
use crate::sql::{Param, PgParam, numbered_for_postgres};

/// Connections a pool opens at most (the server's default `max_connections` is 100, shared by
/// every replica).
pub const POOL_SIZE: usize = 16;

/// How long a statement may wait for a lock or run before PostgreSQL cancels it.
const STATEMENT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a request waits for a free connection before it fails.
const CHECKOUT_TIMEOUT: Duration = Duration::from_secs(30);

/// One connection and the statements prepared on it.
struct PgConn {
    client: tokio_postgres::Client,
    statements: HashMap<String, tokio_postgres::Statement>,
}

/// Waits for a database future on the calling thread (see the module's note on the client).
fn wait<F: std::future::Future>(f: F) -> F::Output {
    futures_executor::block_on(f)
}

/// Connections to one database, shared by every library on it.
pub struct PgPool {
    config: tokio_postgres::Config,
    idle: Mutex<(Vec<PgConn>, usize)>,
    freed: Condvar,
    /// Drives the connections (their sockets); `None` only while dropping.
    runtime: Option<tokio::runtime::Runtime>,
    /// This process as a replica: its id and where notices go ([`crate::cluster`]).
    pub(crate) membership: Arc<crate::cluster::Membership>,
}

impl Drop for PgPool {
    fn drop(&mut self) {
        // A replica that stops cleanly leaves the cluster at once, rather than being taken for
        // dead a few seconds later (its replies were cancelled before; a lease left behind means
        // one was not, and then the row stays for the sweep to find).
        let idle = self.idle.get_mut().unwrap_or_else(|p| p.into_inner());
        if let Some(conn) = idle.0.iter().find(|c| !c.client.is_closed()) {
            let _ = wait(conn.client.execute(
                "DELETE FROM tavo_cluster.replicas r WHERE r.id = $1 \
                 AND NOT EXISTS (SELECT 1 FROM tavo_cluster.leases l WHERE l.replica = r.id)",
                &[&self.membership.replica_id],
            ));
        }
        // A runtime may not be dropped from async code; shutting it down in the background may.
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

impl std::fmt::Debug for PgPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgPool").finish_non_exhaustive()
    }
}

impl PgPool {
    /// A pool for `url` (`postgres://user:password@host:port/database`); connects once to
    /// check the address and the credentials.
    pub fn connect(url: &str) -> Result<Arc<Self>> {
        let mut config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| StoreError::InvalidArgument(format!("the database URL: {e}")))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(10));
        }
        config.application_name("tavo");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("tavo-postgres")
            .enable_all()
            .build()
            .map_err(|e| StoreError::Database(format!("starting the database runtime: {e}")))?;
        let pool = Arc::new(PgPool {
            config,
            idle: Mutex::new((Vec::new(), 0)),
            freed: Condvar::new(),
            runtime: Some(runtime),
            membership: Arc::new(crate::cluster::Membership::new()),
        });
        let first = pool.open()?;
        wait(crate::cluster::setup(
            &first.client,
            &pool.membership.replica_id,
        ))?;
        pool.lock().0.push(first);
        pool.lock().1 = 1;
        if let Some(runtime) = &pool.runtime {
            runtime.spawn(crate::cluster::listen(
                pool.config.clone(),
                pool.membership.clone(),
            ));
        }
        Ok(pool)
    }

    /// Creates database `name` on this pool's server (setting up a deployment, a test's own
    /// database). The pool's role must be allowed to.
    pub fn create_database(self: &Arc<Self>, name: &str) -> Result<()> {
        check_schema(name)?;
        let mut pooled = self.checkout()?;
        wait(
            pooled
                .get()
                .client
                .batch_execute(&format!("CREATE DATABASE {name}")),
        )?;
        Ok(())
    }

    /// Bytes the tables of schema `schema` take, with their indexes and TOAST: a library's size
    /// on PostgreSQL (what a user's quota counts there; its files are rows too).
    pub fn schema_bytes(self: &Arc<Self>, schema: &str) -> Result<u64> {
        check_schema(schema)?;
        let mut pooled = self.checkout()?;
        let row = wait(pooled.get().client.query_one(
            "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c \
             JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'",
            &[&schema],
        ))?;
        Ok(u64::try_from(row.get::<_, i64>(0)).unwrap_or(0))
    }

    /// Deletes a library's schema and everything in it (a removed user's library, a test's).
    pub fn drop_library(self: &Arc<Self>, schema: &str) -> Result<()> {
        check_schema(schema)?;
        let mut pooled = self.checkout()?;
        wait(
            pooled
                .get()
                .client
                .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE")),
        )?;
        // Statements prepared for it name tables that are gone.
        pooled
            .get()
            .statements
            .retain(|k, _| !k.starts_with(&format!("{schema}\u{0}")));
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (Vec<PgConn>, usize)> {
        self.idle.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn open(&self) -> Result<PgConn> {
        let runtime = self
            .runtime
            .as_ref()
            .ok_or_else(|| StoreError::Database("the database pool is closing".into()))?;
        let config = self.config.clone();
        // Connected on the pool's runtime, which then drives the connection until it closes.
        let connecting = runtime.spawn(async move {
            let (client, connection) = config.connect(tokio_postgres::NoTls).await?;
            tokio::spawn(async move {
                if let Err(e) = connection.await {
                    tracing::warn!("a database connection ended: {e}");
                }
            });
            Ok::<_, tokio_postgres::Error>(client)
        });
        let client =
            wait(connecting).map_err(|e| StoreError::Database(format!("connecting: {e}")))??;
        wait(client.batch_execute(&format!(
            "SET statement_timeout = {}; SET lock_timeout = {}",
            STATEMENT_TIMEOUT.as_millis(),
            STATEMENT_TIMEOUT.as_millis()
        )))?;
        Ok(PgConn {
            client,
            statements: HashMap::new(),
        })
    }

    /// A connection: an idle one, a new one while fewer than [`POOL_SIZE`] are open, else the
    /// first one given back.
    fn checkout(self: &Arc<Self>) -> Result<Pooled> {
        let mut guard = self.lock();
        loop {
            if let Some(conn) = guard.0.pop() {
                if conn.client.is_closed() {
                    guard.1 -= 1;
                    continue;
                }
                return Ok(Pooled {
                    conn: Some(conn),
                    pool: self.clone(),
                });
            }
            if guard.1 < POOL_SIZE {
                guard.1 += 1;
                drop(guard);
                return match self.open() {
                    Ok(conn) => Ok(Pooled {
                        conn: Some(conn),
                        pool: self.clone(),
                    }),
                    Err(e) => {
                        self.lock().1 -= 1;
                        Err(e)
                    }
                };
            }
            let (g, timeout) = self
                .freed
                .wait_timeout(guard, CHECKOUT_TIMEOUT)
                .unwrap_or_else(|p| p.into_inner());
            guard = g;
            if timeout.timed_out() && guard.0.is_empty() {
                return Err(StoreError::Database(format!(
                    "no database connection was free within {} s ({POOL_SIZE} in use)",
                    CHECKOUT_TIMEOUT.as_secs()
                )));
            }
        }
    }
}

/// A checked-out connection; back to the pool when dropped (closed ones are forgotten).
struct Pooled {
    conn: Option<PgConn>,
    pool: Arc<PgPool>,
}

impl Drop for Pooled {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            let mut guard = self.pool.lock();
            if conn.client.is_closed() {
                guard.1 -= 1;
            } else {
                guard.0.push(conn);
            }
            drop(guard);
            self.pool.freed.notify_one();
        }
    }
}

impl Pooled {
    fn get(&mut self) -> &mut PgConn {
        // Only `drop` takes the connection out.
        self.conn.as_mut().unwrap_or_else(|| unreachable!())
    }
}

/// One library's schema on a pool.
#[derive(Clone)]
pub(crate) struct PgLibrary {
    pool: Arc<PgPool>,
    schema: Arc<str>,
    lock_key: i64,
}

/// A schema name a library may have: lower-case ASCII letters, digits and `_`, starting with a
/// letter, at most 63 bytes (PostgreSQL's identifier limit).
pub fn check_schema(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(StoreError::InvalidArgument(format!(
            "library schema {name:?}: use a-z, 0-9 and _, starting with a letter, at most 63 characters"
        )))
    }
}

/// FNV-1a of the schema name: the library's advisory lock key, the same on every replica.
fn lock_key(schema: &str) -> i64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in schema.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h as i64
}

impl PgLibrary {
    /// The library in `schema`, created and migrated if needed.
    pub(crate) fn open(pool: Arc<PgPool>, schema: &str) -> Result<Self> {
        Self::open_with(pool, schema, &crate::migrations::postgres_migrations())
    }

    /// The database in `schema`, created and migrated with `migrations` (a registry's own).
    pub(crate) fn open_with(
        pool: Arc<PgPool>,
        schema: &str,
        migrations: &[String],
    ) -> Result<Self> {
        check_schema(schema)?;
        let library = PgLibrary {
            pool,
            schema: schema.into(),
            lock_key: lock_key(schema),
        };
        library.migrate(migrations)?;
        Ok(library)
    }

    /// The pool the library's connections come from.
    pub(crate) fn pool(&self) -> &Arc<PgPool> {
        &self.pool
    }

    /// The schema's name.
    pub(crate) fn schema(&self) -> &str {
        &self.schema
    }

    /// Runs `f` in a transaction: a write holds the library's lock, a read sees one snapshot.
    /// Commits when `f` answers `Ok`, rolls back otherwise (and when `f` panics: a connection
    /// in a failed or open transaction is closed, not reused).
    pub(crate) fn transaction<T, E: From<StoreError>>(
        &self,
        write: bool,
        f: impl FnOnce(&PgSession) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        let mut pooled = self.pool.checkout()?;
        let begin = if write {
            format!(
                "BEGIN; SET LOCAL search_path TO {}; SELECT pg_advisory_xact_lock({})",
                self.schema, self.lock_key
            )
        } else {
            format!(
                "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL search_path TO {}",
                self.schema
            )
        };
        wait(pooled.get().client.batch_execute(&begin)).map_err(StoreError::from)?;
        let session = PgSession {
            conn: RefCell::new(Some(pooled)),
            schema: self.schema.clone(),
            pool: self.pool.clone(),
        };
        let value = f(&session);
        let mut pooled = session.take()?;
        match value {
            Ok(v) => {
                wait(pooled.get().client.batch_execute("COMMIT")).map_err(StoreError::from)?;
                Ok(v)
            }
            Err(e) => {
                let _ = wait(pooled.get().client.batch_execute("ROLLBACK"));
                Err(e)
            }
        }
    }

    fn migrate(&self, all: &[String]) -> Result<()> {
        let mut pooled = self.pool.checkout()?;
        let client = &mut pooled.get().client;
        let schema = &self.schema;
        // Two replicas opening the same new library must not both create it: the library's
        // lock, held to the end of this transaction.
        wait(client.batch_execute(&format!(
            "BEGIN; SELECT pg_advisory_xact_lock({});
             CREATE SCHEMA IF NOT EXISTS {schema};
             CREATE TABLE IF NOT EXISTS {schema}.schema_version (version BIGINT NOT NULL);",
            self.lock_key
        )))?;
        let migrated = (|| {
            let current: Option<i64> = wait(
                client.query_opt(&format!("SELECT version FROM {schema}.schema_version"), &[]),
            )?
            .map(|r| r.get(0));
            let from = usize::try_from(current.unwrap_or(0)).unwrap_or(0);
            if from > all.len() {
                return Err(StoreError::InvalidArgument(format!(
                    "the library {schema} has schema version {from}, newer than this tavo knows ({}); use a newer tavo",
                    all.len()
                )));
            }
            for sql in &all[from..] {
                wait(client.batch_execute(&format!("SET LOCAL search_path TO {schema};\n{sql}")))?;
            }
            let version = all.len() as i64;
            let write = match current {
                None => format!("INSERT INTO {schema}.schema_version VALUES ($1)"),
                Some(_) => format!("UPDATE {schema}.schema_version SET version = $1"),
            };
            wait(client.execute(&write, &[&version]))?;
            Ok(())
        })();
        match migrated {
            Ok(()) => Ok(wait(client.batch_execute("COMMIT"))?),
            Err(e) => {
                let _ = wait(client.batch_execute("ROLLBACK"));
                Err(e)
            }
        }
    }
}

/// A transaction in progress on PostgreSQL (what `Tx` holds there).
pub(crate) struct PgSession {
    /// `None` once the transaction has ended.
    conn: RefCell<Option<Pooled>>,
    schema: Arc<str>,
    pool: Arc<PgPool>,
}

impl PgSession {
    /// The pool the transaction's connection came from.
    pub(crate) fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// The library's schema.
    pub(crate) fn schema_name(&self) -> &str {
        &self.schema
    }

    fn take(&self) -> Result<Pooled> {
        self.conn
            .borrow_mut()
            .take()
            .ok_or_else(|| StoreError::Database("the transaction has ended".into()))
    }

    /// The connection of the open transaction.
    fn with<T>(&self, f: impl FnOnce(&Self, &mut PgConn) -> Result<T>) -> Result<T> {
        let mut guard = self.conn.borrow_mut();
        let pooled = guard
            .as_mut()
            .ok_or_else(|| StoreError::Database("the transaction has ended".into()))?;
        f(self, pooled.get())
    }

    /// The statement for `sql` on this connection, prepared on first use.
    fn statement(&self, conn: &mut PgConn, sql: &str) -> Result<tokio_postgres::Statement> {
        let key = format!("{}\u{0}{sql}", self.schema);
        if let Some(s) = conn.statements.get(&key) {
            return Ok(s.clone());
        }
        let statement = wait(conn.client.prepare(&numbered_for_postgres(sql)))?;
        conn.statements.insert(key, statement.clone());
        Ok(statement)
    }

    /// Runs `f` with the statement for `sql` (prepared on first use) and `params` bound.
    fn run<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        f: impl FnOnce(
            &tokio_postgres::Client,
            &tokio_postgres::Statement,
            &[&(dyn tokio_postgres::types::ToSql + Sync)],
        ) -> Result<T>,
    ) -> Result<T> {
        self.with(|this, conn| {
            let statement = this.statement(conn, sql)?;
            let values: Vec<PgParam<'_>> = params.iter().map(|p| PgParam(p.value())).collect();
            let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = values
                .iter()
                .map(|v| v as &(dyn tokio_postgres::types::ToSql + Sync))
                .collect();
            f(&conn.client, &statement, &refs)
        })
    }

    pub(crate) fn execute(&self, sql: &str, params: &[&dyn Param]) -> Result<usize> {
        self.run(sql, params, |client, statement, refs| {
            let n = wait(client.execute(statement, refs))?;
            Ok(usize::try_from(n).unwrap_or(usize::MAX))
        })
    }

    pub(crate) fn query(
        &self,
        sql: &str,
        params: &[&dyn Param],
    ) -> Result<Vec<tokio_postgres::Row>> {
        self.run(sql, params, |client, statement, refs| {
            Ok(wait(client.query(statement, refs))?)
        })
    }

    pub(crate) fn query_opt(
        &self,
        sql: &str,
        params: &[&dyn Param],
    ) -> Result<Option<tokio_postgres::Row>> {
        Ok(self.query(sql, params)?.into_iter().next())
    }

    pub(crate) fn schema_version(&self) -> Result<i64> {
        let rows = self.query("SELECT version FROM schema_version", &[])?;
        match rows.first() {
            Some(r) => crate::sql::Row::Postgres(r).get(0),
            None => Ok(0),
        }
    }
}

impl Drop for PgSession {
    fn drop(&mut self) {
        // Still holding the connection: `f` panicked half-way through the transaction. Roll it
        // back before the connection goes back to the pool.
        if let Some(mut pooled) = self.conn.get_mut().take() {
            let _ = wait(pooled.get().client.batch_execute("ROLLBACK"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_names_are_checked_and_lock_keys_are_stable() {
        assert!(check_schema("user_12").is_ok());
        assert!(check_schema("tavo").is_ok());
        for bad in ["", "1x", "User", "a-b", "a;drop", &"x".repeat(64)] {
            assert!(check_schema(bad).is_err(), "{bad}");
        }
        assert_eq!(lock_key("tavo"), lock_key("tavo"));
        assert_ne!(lock_key("user_1"), lock_key("user_2"));
    }
}
