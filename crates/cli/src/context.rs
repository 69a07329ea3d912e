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
}

impl Context {
    /// `--data-dir` (which clap already fills from `TAVO_DATA_DIR`), else the store's default
    /// (the platform data directory), so every door agrees on where the library lives.
    pub fn new(data_dir: Option<PathBuf>) -> Self {
        let data_dir = data_dir.unwrap_or_else(tavo_store::default_data_dir);
        Self {
            root: data_dir.clone(),
            data_dir,
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
            root: self.root,
        })
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
