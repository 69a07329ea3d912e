//! What every subcommand shares: where the library lives.

use std::path::PathBuf;

/// Process-wide settings resolved from global flags and the environment.
#[derive(Debug, Clone)]
pub struct Context {
    data_dir: PathBuf,
}

impl Context {
    /// `--data-dir` (which clap already fills from `TAVO_DATA_DIR`), else the platform data
    /// directory, else `./tavo-data` on a platform that has none.
    pub fn new(data_dir: Option<PathBuf>) -> Self {
        let data_dir = data_dir
            .or_else(|| dirs::data_dir().map(|d| d.join("tavo")))
            .unwrap_or_else(|| PathBuf::from("tavo-data"));
        Self { data_dir }
    }

    /// The library directory: the SQLite database and the file storage live under it.
    pub fn data_dir(&self) -> &std::path::Path {
        &self.data_dir
    }
}
