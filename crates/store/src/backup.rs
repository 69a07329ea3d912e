//! The database half of backup and restore: a consistent snapshot of a live library, and the
//! replacement of every row by a snapshot's in one transaction.
//!
//! The snapshot is `VACUUM INTO` on a second, read-only connection: WAL mode gives it one
//! consistent view while the library's own connection goes on reading and writing, so a
//! running server is never held up by a backup. The replacement runs on the library's own
//! connection (the one a running server holds), so every clone of the [`Store`] sees the
//! restored rows at once, and it is one `BEGIN IMMEDIATE` transaction: it lands whole or not
//! at all.

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use crate::error::{Result, StoreError};
use crate::migrations::migrations;
use crate::store::{DATABASE_FILE, Store};

/// The schema version this program writes: how many migrations it knows.
pub fn schema_version() -> i64 {
    static VERSION: std::sync::OnceLock<i64> = std::sync::OnceLock::new();
    // The embedded migrations run once on an empty in-memory database: the version they leave
    // is the one every library opened by this program has.
    *VERSION.get_or_init(|| {
        let run = || -> Result<i64> {
            let mut conn = Connection::open_in_memory()?;
            migrations().to_latest(&mut conn)?;
            Ok(conn.query_row("PRAGMA user_version", [], |r| r.get(0))?)
        };
        run().unwrap_or(0)
    })
}

/// Rows replaced by a restore, per table (for messages and logs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Replaced {
    /// `(table, rows now in it)`, in table-name order.
    pub tables: Vec<(String, u64)>,
}

impl Store {
    /// Writes a consistent copy of the database to `dest` (which must not exist), taken while
    /// other connections keep writing. The copy has no WAL: it is one self-contained file.
    pub fn snapshot_into(&self, dest: &Path) -> Result<()> {
        if dest.exists() {
            return Err(StoreError::InvalidArgument(format!(
                "{} already exists",
                dest.display()
            )));
        }
        if self.dialect() == crate::Dialect::Postgres {
            return self.snapshot_postgres_into(dest);
        }
        let conn = Connection::open_with_flags(
            self.data_dir().join(DATABASE_FILE),
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(std::time::Duration::from_secs(30))?;
        let target = dest.to_str().ok_or_else(|| {
            StoreError::InvalidArgument(format!("{} is not valid UTF-8", dest.display()))
        })?;
        conn.execute("VACUUM INTO ?1", [target])?;
        Ok(())
    }

    /// The schema version of this library (`PRAGMA user_version`).
    pub fn library_schema_version(&self) -> Result<i64> {
        self.read(|tx| tx.user_version())
    }

    /// Replaces every row of this library by the rows of the database at `source`, in one
    /// transaction. `source` is first brought up to this program's schema (a backup of an
    /// older version is migrated); a database of a newer schema is refused untouched.
    ///
    /// Revisions of the restored rows are raised above every revision this library had, so
    /// that nothing cached under an old `(id, revision)` is taken for a restored row, and an
    /// editor's draft of the old library is refused with a conflict instead of overwriting
    /// the restored one.
    pub fn replace_from(&self, source: &Path) -> Result<Replaced> {
        self.replace_library_from(source, None)
    }

    /// [`Store::replace_from`], and — when the library's files are in its database
    /// ([`crate::FileStore::kept_in_database`]) and `files` is given — every file replaced by
    /// those below `files` (a restore's staged `files/` tree), in the same transaction as the
    /// rows. The TTS cache stays. On disk `files` is not read: the caller swaps that directory
    /// in itself, by a rename.
    pub fn replace_library_from(&self, source: &Path, files: Option<&Path>) -> Result<Replaced> {
        {
            let mut src = Connection::open(source)?;
            let version: i64 = src.query_row("PRAGMA user_version", [], |r| r.get(0))?;
            if version > schema_version() {
                return Err(StoreError::InvalidArgument(format!(
                    "the backup's database has schema version {version}; this program knows {}",
                    schema_version()
                )));
            }
            let check: String = src.query_row("PRAGMA quick_check", [], |r| r.get(0))?;
            if check != "ok" {
                return Err(StoreError::InvalidArgument(format!(
                    "the backup's database is damaged: {check}"
                )));
            }
            migrations().to_latest(&mut src)?;
            // Leave no WAL behind: the copy below reads the main file through ATTACH.
            src.execute_batch("PRAGMA journal_mode = DELETE")?;
        }
        if self.dialect() == crate::Dialect::Postgres {
            return self.replace_postgres_from(source, files);
        }
        let path = source.to_str().ok_or_else(|| {
            StoreError::InvalidArgument(format!("{} is not valid UTF-8", source.display()))
        })?;
        self.with_connection(|conn| {
            conn.execute("ATTACH DATABASE ?1 AS restored", [path])?;
            let result = copy_all(conn);
            let detached = conn.execute_batch("DETACH DATABASE restored");
            let replaced = result?;
            detached?;
            Ok(replaced)
        })
    }
}

/// Tables of the live schema that hold library rows.
fn tables(conn: &Connection) -> Result<Vec<String>> {
    let mut stmt = conn.prepare(
        "SELECT name FROM main.sqlite_master WHERE type = 'table'
         AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )?;
    let names = stmt
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(names)
}

fn has_revision(conn: &Connection, table: &str) -> Result<bool> {
    let mut stmt = conn.prepare(&format!("PRAGMA main.table_info(\"{table}\")"))?;
    let found = stmt
        .query_map([], |r| r.get::<_, String>(1))?
        .collect::<rusqlite::Result<Vec<_>>>()?
        .iter()
        .any(|c| c == "revision");
    Ok(found)
}

fn copy_all(conn: &Connection) -> Result<Replaced> {
    let names = tables(conn)?;
    // Foreign keys are off for the copy (every table is emptied and refilled, so cascades
    // would only repeat work, and SQLite's deferred-violation counter miscounts child rows
    // inserted before their parents); the check before COMMIT stands in for them.
    conn.execute_batch("PRAGMA foreign_keys = OFF; BEGIN IMMEDIATE;")?;
    let body = || -> Result<Replaced> {
        let mut replaced = Replaced::default();
        let mut bumps = Vec::new();
        for t in &names {
            if has_revision(conn, t)? {
                let max: i64 = conn.query_row(
                    &format!("SELECT COALESCE(MAX(revision), 0) FROM main.\"{t}\""),
                    [],
                    |r| r.get(0),
                )?;
                bumps.push((t.clone(), max));
            }
        }
        for t in &names {
            conn.execute(&format!("DELETE FROM main.\"{t}\""), [])?;
        }
        for t in &names {
            let exists: i64 = conn.query_row(
                "SELECT COUNT(*) FROM restored.sqlite_master WHERE type = 'table' AND name = ?1",
                [t],
                |r| r.get(0),
            )?;
            if exists == 0 {
                continue;
            }
            let rows = conn.execute(
                &format!("INSERT INTO main.\"{t}\" SELECT * FROM restored.\"{t}\""),
                [],
            )?;
            replaced.tables.push((t.clone(), rows as u64));
        }
        for (t, max) in bumps.into_iter().filter(|(_, m)| *m > 0) {
            conn.execute(
                &format!("UPDATE main.\"{t}\" SET revision = revision + ?1"),
                [max],
            )?;
        }
        // AUTOINCREMENT counters, so new ids keep growing from the restored ones.
        conn.execute("DELETE FROM main.sqlite_sequence", [])?;
        conn.execute(
            "INSERT INTO main.sqlite_sequence SELECT * FROM restored.sqlite_sequence",
            [],
        )?;
        let violations = {
            let mut stmt = conn.prepare("PRAGMA main.foreign_key_check")?;
            let mut rows = stmt.query([])?;
            let mut n = 0u64;
            while rows.next()?.is_some() {
                n += 1;
            }
            n
        };
        if violations > 0 {
            return Err(StoreError::InvalidArgument(format!(
                "the backup's database has {violations} broken references"
            )));
        }
        Ok(replaced)
    };
    let outcome = match body() {
        Ok(replaced) => conn
            .execute_batch("COMMIT")
            .map(|()| replaced)
            .map_err(Into::into),
        Err(e) => Err(e),
    };
    if outcome.is_err() && !conn.is_autocommit() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    conn.execute_batch("PRAGMA foreign_keys = ON")?;
    outcome
}
