//! Copying a library's rows between the two databases: the snapshot of a PostgreSQL library
//! into a SQLite file (its backup, and `tavo migrate` to SQLite) and the replacement of a
//! PostgreSQL library's rows by a SQLite file's (its restore, and `tavo migrate` to
//! PostgreSQL). The SQLite side of backup and restore is `backup.rs`; both write and read the
//! same file, so a backup taken on one database restores on the other.
//!
//! A PostgreSQL library's files (`migrations::PG_FILES`) are not rows of that file: a backup
//! carries them in its `files/` tree, as it does a SQLite library's, so the snapshot leaves
//! those tables out and the replacement takes the files from the restore's staged tree.

use std::path::Path;

use rusqlite::Connection;

use crate::error::{Result, StoreError};
use crate::migrations::{PG_FILE_TABLES, migrations};
use crate::sql::{Cell, Param};
use crate::store::{Conn, Store, Tx};

/// Every table of a library, parents before children: the order rows are inserted in, so
/// that each reference finds its row (PostgreSQL checks them at once).
pub(crate) const TABLES: &[&str] = &[
    "settings",
    "characters",
    "character_avatars",
    "personas",
    "persona_avatars",
    "presets",
    "lorebooks",
    "regex_groups",
    "character_links",
    "preset_links",
    "chats",
    "messages",
    "global_variables",
    "chat_variables",
    "message_variables",
    "chat_state",
    "memories",
    "audit_log",
    "client_requests",
    "plugins",
    "plugin_files",
    "tool_rounds",
];

/// The tables whose `id` the database generates.
const GENERATED_IDS: &[&str] = &[
    "characters",
    "personas",
    "presets",
    "lorebooks",
    "regex_groups",
    "chats",
    "messages",
    "memories",
    "audit_log",
];

/// The tables whose rows carry a `revision`.
const REVISIONED: &[&str] = &[
    "characters",
    "personas",
    "presets",
    "lorebooks",
    "regex_groups",
    "chats",
    "messages",
    "memories",
];

/// Every row of every table, as read in one transaction.
type Dump = Vec<(&'static str, Vec<Vec<Cell>>)>;

fn dump(tx: &Tx<'_>) -> Result<Dump> {
    TABLES
        .iter()
        .map(|t| {
            let rows = tx.query_map(&format!("SELECT * FROM {t}"), &[], |r| r.cells())?;
            Ok((*t, rows))
        })
        .collect()
}

fn insert_all(tx: &Tx<'_>, dump: &Dump) -> Result<Vec<(String, u64)>> {
    let mut counts = Vec::new();
    for (table, rows) in dump {
        for row in rows {
            let slots: Vec<String> = (1..=row.len()).map(|i| format!("?{i}")).collect();
            let params: Vec<&dyn Param> = row.iter().map(|c| c as &dyn Param).collect();
            tx.execute(
                &format!("INSERT INTO {table} VALUES ({})", slots.join(", ")),
                &params,
            )?;
        }
        counts.push(((*table).to_owned(), rows.len() as u64));
    }
    Ok(counts)
}

impl Store {
    /// The PostgreSQL side of [`Store::snapshot_into`]: one snapshot of every table, written
    /// into a new SQLite file with this program's schema.
    pub(crate) fn snapshot_postgres_into(&self, dest: &Path) -> Result<()> {
        let rows = self.read(|tx| {
            check_postgres_tables(tx)?;
            dump(tx)
        })?;
        let write = || -> Result<()> {
            let mut conn = Connection::open(dest)?;
            migrations().to_latest(&mut conn)?;
            check_tables(&conn)?;
            conn.execute_batch("BEGIN IMMEDIATE")?;
            let tx = Tx {
                conn: Conn::Sqlite(&conn),
            };
            insert_all(&tx, &rows)?;
            conn.execute_batch("COMMIT")?;
            Ok(())
        };
        write().inspect_err(|_| {
            let _ = std::fs::remove_file(dest);
        })
    }

    /// The PostgreSQL side of [`Store::replace_library_from`]: every row replaced by the SQLite
    /// file's, and (`files`) every file but the TTS cache by those of a staged `files/` tree,
    /// in one transaction (which holds the library's write lock on every replica).
    pub(crate) fn replace_postgres_from(
        &self,
        source: &Path,
        files: Option<&Path>,
    ) -> Result<crate::Replaced> {
        let rows = {
            let conn = Connection::open(source)?;
            let tx = Tx {
                conn: Conn::Sqlite(&conn),
            };
            conn.execute_batch("BEGIN DEFERRED")?;
            let rows = dump(&tx);
            conn.execute_batch("COMMIT")?;
            rows?
        };
        self.write(|tx| {
            let mut bumps = Vec::new();
            for t in REVISIONED {
                let max: i64 = tx
                    .query_opt(
                        &format!("SELECT COALESCE(MAX(revision), 0) FROM {t}"),
                        &[],
                        |r| r.get(0),
                    )?
                    .unwrap_or(0);
                bumps.push((*t, max));
            }
            tx.execute(&format!("TRUNCATE {} CASCADE", TABLES.join(", ")), &[])?;
            let tables = insert_all(tx, &rows)?;
            for (t, max) in bumps.into_iter().filter(|(_, m)| *m > 0) {
                tx.execute(
                    &format!("UPDATE {t} SET revision = revision + ?1"),
                    crate::sql::params![max],
                )?;
            }
            // New ids go on from the restored ones.
            for t in GENERATED_IDS {
                tx.query_opt(
                    &format!(
                        "SELECT setval(pg_get_serial_sequence('{t}', 'id'), COALESCE(MAX(id), 0) + 1, false) FROM {t}"
                    ),
                    &[],
                    |_| Ok(()),
                )?;
            }
            if let Some(files) = files {
                crate::files::db::clear_library(tx)?;
                crate::files::store_tree(tx, files)?;
            }
            let mut tables = tables;
            tables.sort();
            Ok(crate::Replaced { tables })
        })
    }
}

/// Whether a SQLite file's tables are exactly [`TABLES`] (a new table must be added there, or
/// a backup or migration would leave it behind).
pub(crate) fn check_tables(conn: &Connection) -> Result<()> {
    let mut stmt = conn.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )?;
    let mut found: Vec<String> = stmt
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<_>>()?;
    found.sort();
    let mut known: Vec<String> = TABLES.iter().map(|t| (*t).to_owned()).collect();
    known.sort();
    if found == known {
        Ok(())
    } else {
        Err(StoreError::Database(format!(
            "the library's tables {found:?} are not the ones a copy knows {known:?}"
        )))
    }
}

/// Whether a PostgreSQL library's tables are exactly [`TABLES`] and the files' tables (the
/// same guard as [`check_tables`], on the database a snapshot reads).
fn check_postgres_tables(tx: &Tx<'_>) -> Result<()> {
    let mut found: Vec<String> = tx.query_map(
        "SELECT CAST(tablename AS TEXT) FROM pg_tables WHERE schemaname = current_schema()",
        &[],
        |r| r.get(0),
    )?;
    found.sort();
    let mut known: Vec<String> = TABLES
        .iter()
        .chain(PG_FILE_TABLES)
        .chain(&["schema_version"])
        .map(|t| (*t).to_owned())
        .collect();
    known.sort();
    if found == known {
        Ok(())
    } else {
        Err(StoreError::Database(format!(
            "the library's tables {found:?} are not the ones a copy knows {known:?}"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_of_the_schema_is_copied() {
        let mut conn = Connection::open_in_memory().expect("memory");
        migrations().to_latest(&mut conn).expect("migrate");
        check_tables(&conn).expect("TABLES lists every table");
    }
}
