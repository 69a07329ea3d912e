//! What every subcommand shares: where the library lives.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

/// Process-wide settings resolved from global flags and the environment.
#[derive(Debug, Clone)]
pub struct Context {
    /// The data folder `--data-dir` names (with accounts: the one holding `accounts.sqlite`).
    root: PathBuf,
    /// The library commands work on: the data folder, or `--user`'s library in it.
    data_dir: PathBuf,
    /// `--database postgres://…`: the libraries' rows live there (files stay in the folders).
    database: Option<String>,
    /// The library's PostgreSQL schema (with `--database`).
    schema: String,
    /// The connections to `database`, opened by the first library and shared by the others:
    /// a pool is this process's replica (one listening connection, one heartbeat).
    pool: std::sync::Arc<std::sync::OnceLock<std::sync::Arc<tavo_store::PgPool>>>,
}

impl Context {
    /// `--data-dir` (which clap already fills from `TAVO_DATA_DIR`), else the store's default
    /// (the platform data directory), so every door agrees on where the library lives.
    pub fn new(data_dir: Option<PathBuf>, database: Option<String>) -> Self {
        let data_dir = data_dir.unwrap_or_else(tavo_store::default_data_dir);
        Self {
            root: data_dir.clone(),
            data_dir,
            database: database.filter(|d| !d.trim().is_empty()),
            schema: tavo_accounts::ROOT_SCHEMA.to_owned(),
            pool: Default::default(),
        }
    }

    /// The same, working on the library of user `name` of the data folder's accounts
    /// (`--user NAME`, for a server run with `--accounts`).
    pub fn for_user(self, name: &str) -> anyhow::Result<Self> {
        if !self.accounts_exist()? {
            anyhow::bail!(
                "{} has no accounts (no {}): --user works on a server run with --accounts; add users with `tavo user add NAME`",
                self.root.display(),
                tavo_accounts::ACCOUNTS_FILE
            );
        }
        let accounts = self.open_accounts()?;
        let user = accounts.get(name)?;
        Ok(Self {
            data_dir: accounts.library_dir(&user),
            schema: accounts.library_schema(&user),
            root: self.root,
            database: self.database,
            pool: self.pool,
        })
    }

    /// The same with `database` as the PostgreSQL URL (the config file's), unless one was
    /// given already.
    pub fn with_database(mut self, database: Option<String>) -> Self {
        if self.database.is_none() {
            self.database = database.filter(|d| !d.trim().is_empty());
        }
        self
    }

    /// `--database`: the PostgreSQL URL the libraries live in, if any.
    pub fn database(&self) -> Option<&str> {
        self.database.as_deref()
    }

    /// Opens a library: `dir` on SQLite, or PostgreSQL schema `schema` (files in `dir`).
    pub fn open_library(&self, dir: &Path, schema: &str) -> anyhow::Result<tavo_store::Store> {
        match &self.database {
            None => tavo_store::Store::open(dir)
                .with_context(|| format!("cannot open the library in {}", dir.display())),
            Some(url) => tavo_store::Store::open_postgres(self.pool(url)?, schema, dir)
                .with_context(|| format!("cannot open the library {schema} in {}", redact(url))),
        }
    }

    /// The database pool (`--database`), connected on first use and shared by every library
    /// and the accounts registry this process opens: the process is one replica.
    fn pool(&self, url: &str) -> anyhow::Result<std::sync::Arc<tavo_store::PgPool>> {
        if let Some(pool) = self.pool.get() {
            return Ok(pool.clone());
        }
        let pool = tavo_store::PgPool::connect(url)
            .with_context(|| format!("connecting to {}", redact(url)))?;
        Ok(self.pool.get_or_init(|| pool).clone())
    }

    /// The accounts registry: `accounts.sqlite` in the data folder, or with `--database` the
    /// database's (created, and filled from the folder's file, the first time).
    pub fn open_accounts(&self) -> anyhow::Result<tavo_accounts::Accounts> {
        match &self.database {
            None => tavo_accounts::Accounts::open(&self.root)
                .with_context(|| format!("opening the accounts of {}", self.root.display())),
            Some(url) => tavo_accounts::Accounts::open_postgres(&self.root, self.pool(url)?)
                .with_context(|| format!("opening the accounts in {}", redact(url))),
        }
    }

    /// Whether there are accounts: the folder's registry file, or users in the database's.
    pub fn accounts_exist(&self) -> anyhow::Result<bool> {
        match &self.database {
            None => Ok(tavo_accounts::Accounts::exists(&self.root)),
            Some(_) => Ok(!self.open_accounts()?.is_empty()?),
        }
    }

    /// The library the command works on.
    pub fn open_store(&self) -> anyhow::Result<tavo_store::Store> {
        self.open_library(&self.data_dir, &self.schema)
    }

    /// The library directory: the SQLite database and the file storage live under it.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The data folder itself (accounts live here; `tavo user` and `tavo serve` use it).
    pub fn root(&self) -> &Path {
        &self.root
    }
}

/// A database URL without its password, for messages.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let creds = &url[scheme + 3..at];
            match creds.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn passwords_never_reach_a_message() {
        assert_eq!(
            super::redact("postgres://ann:s3cret@db:5432/tavo"),
            "postgres://ann:***@db:5432/tavo"
        );
        assert_eq!(
            super::redact("postgres://ann@db/tavo"),
            "postgres://ann@db/tavo"
        );
    }
}
