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
        }
    }

    /// The same, working on the library of user `name` of the data folder's accounts
    /// (`--user NAME`, for a server run with `--accounts`).
    pub fn for_user(self, name: &str) -> anyhow::Result<Self> {
        if !tavo_accounts::Accounts::exists(&self.root) {
            anyhow::bail!(
                "{} has no accounts (no {}): --user works on a server run with --accounts; add users with `tavo user add NAME`",
                self.root.display(),
                tavo_accounts::ACCOUNTS_FILE
            );
        }
        let accounts = tavo_accounts::Accounts::open(&self.root)
            .with_context(|| format!("opening the accounts of {}", self.root.display()))?;
        let user = accounts.get(name)?;
        Ok(Self {
            data_dir: accounts.library_dir(&user),
            schema: accounts.library_schema(&user),
            root: self.root,
            database: self.database,
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
            Some(url) => {
                let pool = tavo_store::PgPool::connect(url)
                    .with_context(|| format!("connecting to {}", redact(url)))?;
                tavo_store::Store::open_postgres(pool, schema, dir)
                    .with_context(|| format!("cannot open the library {schema} in {}", redact(url)))
            }
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
