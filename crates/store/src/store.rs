//! Opening the library and running work against it, one transaction at a time.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{Connection, TransactionBehavior};

use crate::error::{Result, StoreError};
use crate::files::FileStore;
use crate::migrations::migrations;

/// File name of the SQLite database inside the data directory.
pub const DATABASE_FILE: &str = "tavo.db";

/// How long a writer waits for another process (a CLI next to the server) to release the lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The platform's default library directory (`~/.local/share/tavo` on Linux), or `./tavo-data`
/// on a platform that has none. Callers honour `--data-dir` and `TAVO_DATA_DIR` before this.
pub fn default_data_dir() -> PathBuf {
    dirs::data_dir()
        .map(|d| d.join("tavo"))
        .unwrap_or_else(|| PathBuf::from("tavo-data"))
}

/// The library: one SQLite database plus the chat and global file storage beside it.
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
    conn: Mutex<Connection>,
    files: FileStore,
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
                conn: Mutex::new(conn),
                files,
            }),
        })
    }

    /// The directory this library lives in.
    pub fn data_dir(&self) -> &Path {
        &self.inner.data_dir
    }

    /// The chat and global file storage (`<data>/files/...`).
    pub fn files(&self) -> &FileStore {
        &self.inner.files
    }

    /// Runs `f` in one write transaction (`BEGIN IMMEDIATE`): it commits if `f` returns `Ok`,
    /// and rolls back — leaving the library exactly as it was — if `f` returns an error.
    pub fn write<T>(&self, f: impl FnOnce(&Tx<'_>) -> Result<T>) -> Result<T> {
        let mut conn = self.lock();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let value = f(&Tx { conn: &tx })?;
        tx.commit()?;
        Ok(value)
    }

    /// Runs `f` in one read transaction, so that several reads see one consistent snapshot.
    pub fn read<T>(&self, f: impl FnOnce(&Tx<'_>) -> Result<T>) -> Result<T> {
        let mut conn = self.lock();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Deferred)?;
        let value = f(&Tx { conn: &tx })?;
        tx.commit()?;
        Ok(value)
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        // A panic inside a transaction leaves the connection usable: the transaction rolled back
        // when it was dropped during unwinding, so a poisoned lock carries no torn state.
        self.inner
            .conn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A transaction in progress. Every repository operation is a method on `Tx`; the same
/// operations on [`Store`] are shorthands that run one of them in its own transaction.
pub struct Tx<'c> {
    pub(crate) conn: &'c Connection,
}

fn configure(conn: &Connection) -> Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
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
    /// The schema version (`PRAGMA user_version`): how many migrations have run.
    pub fn user_version(&self) -> Result<i64> {
        Ok(self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))?)
    }
}

impl Tx<'_> {
    /// SQLite's query plan for `sql`, one line per step (tests assert that hot queries use
    /// their index).
    pub fn explain(&self, sql: &str) -> Result<Vec<String>> {
        let mut stmt = self.conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))?;
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
                let mode = tx.conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
                let fk = tx.conn.query_row("PRAGMA foreign_keys", [], |r| r.get(0))?;
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
}
