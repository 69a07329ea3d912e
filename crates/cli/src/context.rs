//! What every subcommand shares: where the library lives.

use std::path::PathBuf;

/// Process-wide settings resolved from global flags and the environment.
#[derive(Debug, Clone)]
pub struct Context {
    data_dir: PathBuf,
}

impl Context {
    /// `--data-dir` (which clap already fills from `TAVO_DATA_DIR`), else the store's default
    /// (the platform data directory), so every door agrees on where the library lives.
    pub fn new(data_dir: Option<PathBuf>) -> Self {
        let data_dir = data_dir.unwrap_or_else(tavo_store::default_data_dir);
        Self { data_dir }
    }

    /// The library directory: the SQLite database and the file storage live under it.
    pub fn data_dir(&self) -> &std::path::Path {
        &self.data_dir
    }
}
