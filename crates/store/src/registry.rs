//! A small database of a door's own beside the libraries — the accounts registry (users and
//! sessions) — on SQLite (one file) or PostgreSQL (one schema), through the same neutral SQL as
//! the libraries: `?N` parameters, [`crate::params!`], [`Row::get`].
//!
//! Why here: the registry must live where the libraries live. On one machine a file in the data
//! folder is right; with several replicas on one PostgreSQL database every replica must see the
//! same users and sessions, so the registry moves into the database too — and the two spellings
//! of a statement, the pool and the transactions are the store's business, not the accounts'.

use std::path::Path;
use std::sync::{Arc, Mutex};

use rusqlite::Connection;
use rusqlite_migration::{M, Migrations};

use crate::error::{Result, StoreError};
use crate::postgres::{PgLibrary, PgPool};
use crate::sql::Param;
pub use crate::sql::Row;
use crate::store::{Conn, Tx};

/// A registry database (see the module's note).
pub struct Registry {
    backend: Backend,
}

enum Backend {
    Sqlite(Mutex<Connection>),
    Postgres(PgLibrary),
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.backend {
            Backend::Sqlite(_) => "sqlite",
            Backend::Postgres(_) => "postgres",
        };
        f.debug_struct("Registry")
            .field("backend", &kind)
            .finish_non_exhaustive()
    }
}

/// A transaction on a registry: its statements.
pub struct RegistryTx<'t, 'c>(&'t Tx<'c>);

impl Registry {
    /// Opens (creating and migrating) the SQLite registry at `path`. `migrations` are SQLite's
    /// spelling, applied in order, each once.
    pub fn open_sqlite(path: &Path, migrations: &[&'static str]) -> Result<Self> {
        let mut conn = Connection::open(path)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.execute_batch("PRAGMA foreign_keys = ON;")?;
        // `journal_mode` answers a row: read, not executed.
        let _: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
        Migrations::new(migrations.iter().map(|m| M::up(m)).collect()).to_latest(&mut conn)?;
        Ok(Self {
            backend: Backend::Sqlite(Mutex::new(conn)),
        })
    }

    /// Opens (creating and migrating) the registry in PostgreSQL schema `schema` of `pool`'s
    /// database. `migrations` are the same SQLite-spelled statements as for
    /// [`Registry::open_sqlite`], translated as the libraries' are.
    pub fn open_postgres(
        pool: Arc<PgPool>,
        schema: &str,
        migrations: &[&'static str],
    ) -> Result<Self> {
        let translated: Vec<String> = migrations
            .iter()
            .map(|m| crate::migrations::to_postgres(m))
            .collect();
        let library = PgLibrary::open_with(pool, schema, &translated)?;
        Ok(Self {
            backend: Backend::Postgres(library),
        })
    }

    /// The pool of a registry in PostgreSQL: the libraries beside it share it (one replica per
    /// process).
    pub fn pg_pool(&self) -> Option<Arc<PgPool>> {
        match &self.backend {
            Backend::Sqlite(_) => None,
            Backend::Postgres(l) => Some(l.pool().clone()),
        }
    }

    /// Whether the registry is in PostgreSQL.
    pub fn is_postgres(&self) -> bool {
        matches!(self.backend, Backend::Postgres(_))
    }

    /// Runs `f` in one write transaction; commits when it answers `Ok`.
    pub fn write<T, E: From<StoreError>>(
        &self,
        f: impl FnOnce(&RegistryTx<'_, '_>) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        self.transaction(true, f)
    }

    /// Runs `f` in one read transaction.
    pub fn read<T, E: From<StoreError>>(
        &self,
        f: impl FnOnce(&RegistryTx<'_, '_>) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        self.transaction(false, f)
    }

    fn transaction<T, E: From<StoreError>>(
        &self,
        write: bool,
        f: impl FnOnce(&RegistryTx<'_, '_>) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        match &self.backend {
            Backend::Sqlite(conn) => {
                let conn = conn.lock().unwrap_or_else(|p| p.into_inner());
                let behavior = if write {
                    rusqlite::TransactionBehavior::Immediate
                } else {
                    rusqlite::TransactionBehavior::Deferred
                };
                let txn = rusqlite::Transaction::new_unchecked(&conn, behavior)
                    .map_err(StoreError::from)?;
                let tx = Tx {
                    conn: Conn::Sqlite(&txn),
                };
                let value = f(&RegistryTx(&tx))?;
                txn.commit().map_err(StoreError::from)?;
                Ok(value)
            }
            Backend::Postgres(library) => library.transaction(write, |session| {
                let tx = Tx {
                    conn: Conn::Postgres(session),
                };
                f(&RegistryTx(&tx))
            }),
        }
    }

    /// Runs `f` on the SQLite connection outside a transaction (`VACUUM INTO`); `None` on
    /// PostgreSQL.
    pub fn with_sqlite<T>(&self, f: impl FnOnce(&Connection) -> T) -> Option<T> {
        match &self.backend {
            Backend::Sqlite(conn) => Some(f(&conn.lock().unwrap_or_else(|p| p.into_inner()))),
            Backend::Postgres(_) => None,
        }
    }
}

impl RegistryTx<'_, '_> {
    /// Runs one statement; the rows it changed.
    pub fn execute(&self, sql: &str, params: &[&dyn Param]) -> Result<usize> {
        self.0.execute(sql, params)
    }

    /// The first row through `f`, or `None`.
    pub fn query_opt<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        f: impl FnOnce(&Row<'_>) -> Result<T>,
    ) -> Result<Option<T>> {
        self.0.query_opt(sql, params, f)
    }

    /// Every row through `f`.
    pub fn query_map<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        f: impl FnMut(&Row<'_>) -> Result<T>,
    ) -> Result<Vec<T>> {
        self.0.query_map(sql, params, f)
    }

    /// After rows were inserted with their ids given (a copy of another registry), makes the
    /// next generated id of `table.column` follow the largest one (PostgreSQL's identity
    /// sequence; SQLite's `AUTOINCREMENT` follows by itself).
    pub fn reset_identity(&self, table: &str, column: &str) -> Result<usize> {
        match self.0.dialect() {
            crate::Dialect::Sqlite => Ok(0),
            crate::Dialect::Postgres => {
                let sql = format!(
                    "SELECT setval(pg_get_serial_sequence('{table}', '{column}'), \
                     COALESCE(MAX({column}), 0) + 1, false) FROM {table}"
                );
                self.0.query_opt(&sql, &[], |_| Ok(())).map(|_| 0)
            }
        }
    }

    /// Runs an `INSERT` and returns the new row's `id`.
    pub fn insert_id(&self, sql: &str, params: &[&dyn Param]) -> Result<i64> {
        self.0.insert_id(sql, params)
    }
}
