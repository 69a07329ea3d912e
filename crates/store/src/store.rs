//! Opening the library and running work against it, one transaction at a time.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::Connection;

use crate::sql::{Dialect, Param, Row};

use crate::error::{Result, StoreError};
use crate::files::FileStore;
use crate::migrations::migrations;

/// File name of the SQLite database inside the data directory.
pub const DATABASE_FILE: &str = "tavo.db";

/// Prepared statements kept per connection.
const STATEMENT_CACHE: usize = 256;

/// How long a writer waits for another process (a CLI next to the server) to release the lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The platform's default library directory (`~/.local/share/tavo` on Linux), or `./tavo-data`
/// on a platform that has none. Callers honour `--data-dir` and `TAVO_DATA_DIR` before this.
pub fn default_data_dir() -> PathBuf {
    dirs::data_dir()
        .map(|d| d.join("tavo"))
        .unwrap_or_else(|| PathBuf::from("tavo-data"))
}

/// The library: its database (SQLite or PostgreSQL) and its file storage ([`FileStore`]).
///
/// The store is synchronous (rusqlite). It is cheap to clone (an `Arc`), `Send` and `Sync`, so an
/// async caller moves a clone into `tokio::task::spawn_blocking` rather than blocking its
/// executor: `let s = store.clone(); spawn_blocking(move || s.setting_get("k")).await`.
/// Work is serialised over one connection; each public write is one transaction, and
/// [`Store::write`] groups several writes into one (an import either lands whole or not at all).
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    data_dir: PathBuf,
    backend: Backend,
    files: FileStore,
}

/// Where the library's rows live.
enum Backend {
    /// `tavo.db` in the data directory, over one connection.
    Sqlite(Mutex<Connection>),
    /// A schema of a PostgreSQL database, over a pool shared by every library on it.
    Postgres(crate::postgres::PgLibrary),
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("data_dir", &self.inner.data_dir)
            .finish_non_exhaustive()
    }
}

impl Store {
    /// Opens (creating if needed) the library in `data_dir`: creates the directory, opens the
    /// database in WAL mode with foreign keys on and a busy timeout, and applies every pending
    /// migration. Opening an up-to-date library twice changes nothing.
    pub fn open(data_dir: impl AsRef<Path>) -> Result<Self> {
        let data_dir = data_dir.as_ref().to_path_buf();
        std::fs::create_dir_all(&data_dir)
            .map_err(|e| StoreError::io("cannot create the data directory", &data_dir, e))?;
        let mut conn = Connection::open(data_dir.join(DATABASE_FILE))?;
        configure(&conn)?;
        migrations().to_latest(&mut conn)?;
        let files = FileStore::new(data_dir.join("files"));
        Ok(Self {
            inner: Arc::new(Inner {
                data_dir,
                backend: Backend::Sqlite(Mutex::new(conn)),
                files,
            }),
        })
    }

    /// Opens (creating and migrating if needed) the library in PostgreSQL schema `schema` of
    /// `pool`'s database. Its files (chat, global and card files, the TTS cache) are in the
    /// schema too ([`crate::files`]), so replicas share nothing but the database; `data_dir` is
    /// the library's scratch space (a backup's or restore's staging).
    pub fn open_postgres(
        pool: Arc<crate::postgres::PgPool>,
        schema: &str,
        data_dir: impl AsRef<Path>,
    ) -> Result<Self> {
        let data_dir = data_dir.as_ref().to_path_buf();
        std::fs::create_dir_all(&data_dir)
            .map_err(|e| StoreError::io("cannot create the data directory", &data_dir, e))?;
        let library = crate::postgres::PgLibrary::open(pool, schema)?;
        let files = FileStore::in_database(library.clone());
        Ok(Self {
            inner: Arc::new(Inner {
                data_dir,
                backend: Backend::Postgres(library),
                files,
            }),
        })
    }

    /// Runs a trivial read (`SELECT 1`) to check the database answers; how long it took.
    pub fn ping(&self) -> Result<Duration> {
        let started = std::time::Instant::now();
        self.read(|tx| tx.query_opt("SELECT 1", &[], |r| r.get::<i64>(0)))?;
        Ok(started.elapsed())
    }

    /// Which database the library is on.
    pub fn dialect(&self) -> Dialect {
        match self.inner.backend {
            Backend::Sqlite(_) => Dialect::Sqlite,
            Backend::Postgres(_) => Dialect::Postgres,
        }
    }

    /// The PostgreSQL schema of the library, `None` on SQLite.
    pub fn postgres_schema(&self) -> Option<&str> {
        match &self.inner.backend {
            Backend::Sqlite(_) => None,
            Backend::Postgres(l) => Some(l.schema()),
        }
    }

    /// The database pool of a PostgreSQL library (`None` on SQLite).
    pub(crate) fn pg_pool(&self) -> Option<&Arc<crate::postgres::PgPool>> {
        match &self.inner.backend {
            Backend::Sqlite(_) => None,
            Backend::Postgres(l) => Some(l.pool()),
        }
    }

    /// The directory this library lives in.
    pub fn data_dir(&self) -> &Path {
        &self.inner.data_dir
    }

    /// The file storage: chat, global and card files and the TTS cache (`<data>/files/...` on
    /// SQLite, the library's schema on PostgreSQL).
    pub fn files(&self) -> &FileStore {
        &self.inner.files
    }

    /// Runs `f` in one write transaction (`BEGIN IMMEDIATE`): it commits if `f` returns `Ok`,
    /// and rolls back — leaving the library exactly as it was — if `f` returns an error.
    pub fn write<T>(&self, f: impl FnOnce(&Tx<'_>) -> Result<T>) -> Result<T> {
        self.transaction(true, f)
    }

    /// Like [`Store::write`] for callers whose own error type wraps [`StoreError`] (an operation
    /// that refuses a field with its path after some reads): any `Err` rolls the transaction back.
    pub fn write_with<T, E: From<StoreError>>(
        &self,
        f: impl FnOnce(&Tx<'_>) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        self.transaction(true, f)
    }

    /// Runs `f` in one read transaction, so that several reads see one consistent snapshot.
    pub fn read<T>(&self, f: impl FnOnce(&Tx<'_>) -> Result<T>) -> Result<T> {
        self.transaction(false, f)
    }

    /// One transaction on either database: on SQLite `BEGIN IMMEDIATE` for a write (writers
    /// queue for the lock at the start, never half-way) and `BEGIN DEFERRED` for a read.
    fn transaction<T, E: From<StoreError>>(
        &self,
        write: bool,
        f: impl FnOnce(&Tx<'_>) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        match &self.inner.backend {
            Backend::Sqlite(conn) => {
                let conn = lock(conn);
                let open = Open::begin(
                    &conn,
                    if write {
                        "BEGIN IMMEDIATE"
                    } else {
                        "BEGIN DEFERRED"
                    },
                )?;
                let value = f(&Tx {
                    conn: Conn::Sqlite(&conn),
                })?;
                open.commit()?;
                Ok(value)
            }
            Backend::Postgres(library) => library.transaction(write, |session| {
                f(&Tx {
                    conn: Conn::Postgres(session),
                })
            }),
        }
    }

    /// Runs `f` on the library's connection outside any transaction (backup's restore, which
    /// attaches a second database and runs its own transaction).
    pub(crate) fn with_connection<T>(&self, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        match &self.inner.backend {
            Backend::Sqlite(conn) => f(&lock(conn)),
            Backend::Postgres(_) => Err(StoreError::InvalidArgument(
                "this works on a SQLite library only; a PostgreSQL library is backed up with `tavo migrate` or pg_dump".into(),
            )),
        }
    }
}

fn lock(conn: &Mutex<Connection>) -> MutexGuard<'_, Connection> {
    // A panic inside a transaction leaves the connection usable: the transaction rolled back
    // when it was dropped during unwinding, so a poisoned lock carries no torn state.
    conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// An open transaction that rolls back unless committed: on an error, and during unwinding.
///
/// Why not rusqlite's `Transaction`: it runs `BEGIN` and `COMMIT` through `execute_batch`,
/// which parses the SQL again every time; here they are prepared once and cached like every
/// other statement, which matters when hundreds of replies each commit several times a second.
struct Open<'c> {
    conn: &'c Connection,
    committed: bool,
}

impl<'c> Open<'c> {
    fn begin(conn: &'c Connection, begin: &str) -> Result<Self> {
        conn.prepare_cached(begin)?.execute([])?;
        Ok(Open {
            conn,
            committed: false,
        })
    }

    fn commit(mut self) -> Result<()> {
        self.conn.prepare_cached("COMMIT")?.execute([])?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for Open<'_> {
    fn drop(&mut self) {
        // A failed ROLLBACK (the transaction already ended, e.g. a failed COMMIT rolled it back
        // itself) leaves nothing to undo; the connection stays usable either way.
        if !self.committed && !self.conn.is_autocommit() {
            let _ = self
                .conn
                .prepare_cached("ROLLBACK")
                .and_then(|mut s| s.execute([]));
        }
    }
}

/// A transaction in progress. Every repository operation is a method on `Tx`; the same
/// operations on [`Store`] are shorthands that run one of them in its own transaction.
pub struct Tx<'c> {
    pub(crate) conn: Conn<'c>,
}

/// The connection a transaction runs on.
#[derive(Clone, Copy)]
pub(crate) enum Conn<'c> {
    Sqlite(&'c Connection),
    Postgres(&'c crate::postgres::PgSession),
}

fn configure(conn: &Connection) -> Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // Every statement goes through the cache (see `Tx::execute`); the library runs about a
    // hundred distinct ones, a few of them in variants (filters with a list of ids).
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    // `journal_mode` returns a row, so it is read with query_row rather than executed.
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        tracing::warn!(
            mode,
            "SQLite refused WAL mode; continuing with its journal mode"
        );
    }
    conn.execute_batch(
        "PRAGMA foreign_keys = ON;
         PRAGMA synchronous = NORMAL;
         PRAGMA cache_size = -8192;",
    )?;
    Ok(())
}

/// The current time as the store writes it: RFC 3339, UTC, millisecond precision.
pub(crate) fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

impl Tx<'_> {
    /// Which database this transaction runs on (for the few statements spelled differently).
    pub fn dialect(&self) -> Dialect {
        match self.conn {
            Conn::Sqlite(_) => Dialect::Sqlite,
            Conn::Postgres(_) => Dialect::Postgres,
        }
    }

    /// Runs one statement, prepared once per connection (SQLite parses and plans a statement
    /// each time it is prepared, which cost more than running most of ours); returns the rows
    /// it changed.
    pub(crate) fn execute(&self, sql: &str, params: &[&dyn Param]) -> Result<usize> {
        match self.conn {
            Conn::Sqlite(c) => Ok(c
                .prepare_cached(sql)?
                .execute(rusqlite::params_from_iter(params.iter().copied()))?),
            Conn::Postgres(pg) => pg.execute(sql, params),
        }
    }

    /// Runs an `INSERT` and returns the new row's `id` (`RETURNING id` on both databases).
    pub(crate) fn insert_id(&self, sql: &str, params: &[&dyn Param]) -> Result<i64> {
        let sql = format!("{sql} RETURNING id");
        self.query_opt(&sql, params, |r| r.get(0))?
            .ok_or_else(|| StoreError::Database("an INSERT returned no id".into()))
    }

    /// The first row of a query through `f`, or `None` when there is none.
    pub(crate) fn query_opt<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        f: impl FnOnce(&Row<'_>) -> Result<T>,
    ) -> Result<Option<T>> {
        match self.conn {
            Conn::Sqlite(c) => {
                let mut stmt = c.prepare_cached(sql)?;
                let mut rows = stmt.query(rusqlite::params_from_iter(params.iter().copied()))?;
                match rows.next()? {
                    Some(r) => f(&Row::Sqlite(r)).map(Some),
                    None => Ok(None),
                }
            }
            Conn::Postgres(pg) => match pg.query_opt(sql, params)? {
                Some(r) => f(&Row::Postgres(&r)).map(Some),
                None => Ok(None),
            },
        }
    }

    /// Every row of a query through `f`, in order.
    pub(crate) fn query_map<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        mut f: impl FnMut(&Row<'_>) -> Result<T>,
    ) -> Result<Vec<T>> {
        match self.conn {
            Conn::Sqlite(c) => {
                let mut stmt = c.prepare_cached(sql)?;
                let mut rows = stmt.query(rusqlite::params_from_iter(params.iter().copied()))?;
                let mut out = Vec::new();
                while let Some(r) = rows.next()? {
                    out.push(f(&Row::Sqlite(r))?);
                }
                Ok(out)
            }
            Conn::Postgres(pg) => pg
                .query(sql, params)?
                .iter()
                .map(|r| f(&Row::Postgres(r)))
                .collect(),
        }
    }

    /// The SQLite connection, for what only SQLite has (its query plan, its pragmas); `None`
    /// on PostgreSQL.
    pub(crate) fn sqlite(&self) -> Option<&Connection> {
        match self.conn {
            Conn::Sqlite(c) => Some(c),
            Conn::Postgres(_) => None,
        }
    }

    /// The schema version: how many migrations have run (`PRAGMA user_version` on SQLite).
    pub fn user_version(&self) -> Result<i64> {
        match self.conn {
            Conn::Sqlite(c) => Ok(c.query_row("PRAGMA user_version", [], |r| r.get(0))?),
            Conn::Postgres(pg) => pg.schema_version(),
        }
    }
}

impl Tx<'_> {
    /// SQLite's query plan for `sql`, one line per step (tests assert that hot queries use
    /// their index).
    pub fn explain(&self, sql: &str) -> Result<Vec<String>> {
        let Some(conn) = self.sqlite() else {
            return Ok(Vec::new());
        };
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(3))?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_creates_the_directory_and_enables_wal_and_foreign_keys() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("nested/lib")).unwrap();
        assert!(store.data_dir().join(DATABASE_FILE).exists());
        let (mode, fk): (String, i64) = store
            .read(|tx| {
                let mode = tx.query_opt("PRAGMA journal_mode", &[], |r| r.get(0))?;
                let fk = tx.query_opt("PRAGMA foreign_keys", &[], |r| r.get(0))?;
                let (Some(mode), Some(fk)) = (mode, fk) else {
                    panic!("pragmas answer")
                };
                Ok((mode, fk))
            })
            .unwrap();
        assert_eq!(mode.to_lowercase(), "wal");
        assert_eq!(fk, 1);
    }

    #[test]
    fn the_store_can_be_shared_across_threads() {
        fn shareable<T: Send + Sync + Clone + 'static>() {}
        shareable::<Store>();
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let handles: Vec<_> = (0..4)
            .map(|i| {
                let store = store.clone();
                std::thread::spawn(move || {
                    store.setting_set(&format!("k{i}"), &serde_json::json!(i))
                })
            })
            .collect();
        for handle in handles {
            handle.join().unwrap().unwrap();
        }
        assert_eq!(store.setting_list("k").unwrap().len(), 4);
    }

    #[test]
    fn a_failed_write_rolls_back() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let result: Result<()> = store.write(|tx| {
            tx.setting_set("a", &serde_json::json!(1))?;
            Err(StoreError::InvalidArgument("stop".into()))
        });
        assert!(result.is_err());
        assert_eq!(store.setting_get("a").unwrap(), None);
    }

    #[test]
    fn a_panic_inside_a_write_rolls_back_and_the_store_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let s = store.clone();
        let panicked = std::thread::spawn(move || {
            s.write(|tx| {
                tx.setting_set("half", &serde_json::json!(1))?;
                panic!("a bug half-way through a write");
                #[allow(unreachable_code)]
                Ok(())
            })
        })
        .join();
        assert!(panicked.is_err());
        assert_eq!(store.setting_get("half").unwrap(), None);
        store.setting_set("after", &serde_json::json!(2)).unwrap();
        assert_eq!(
            store.setting_get("after").unwrap(),
            Some(serde_json::json!(2))
        );
    }

    #[test]
    fn reads_and_writes_reuse_their_prepared_statements() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        for i in 0..3 {
            store.setting_set("k", &serde_json::json!(i)).unwrap();
            assert_eq!(store.setting_get("k").unwrap(), Some(serde_json::json!(i)));
        }
        // A nested BEGIN would fail: each transaction above was closed, cached statements and all.
        store
            .write(|tx| tx.setting_set("k", &serde_json::json!("last")))
            .unwrap();
        assert_eq!(
            store.setting_get("k").unwrap(),
            Some(serde_json::json!("last"))
        );
    }
}
