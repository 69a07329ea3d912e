//! Backup and restore of a whole library (Tavo §20), for every door (`tavo backup`,
//! `tavo restore`, `GET|POST /api/backup`, `POST /api/restore`).
//!
//! A backup is one zip file:
//!
//! - `manifest.json` — [`Manifest`]: format, the app and schema versions that wrote it,
//!   when, the database's size and SHA-256, counts, and how the keys were sealed;
//! - `tavo.db` — a consistent snapshot of the database ([`tavo_store::Store::snapshot_into`],
//!   taken while a server keeps writing) with every secret taken out of the settings;
//! - `files/…` — the chat and global file storage (and any other library tree in [`TREES`]);
//! - `keys.bin` — only with keys: the secrets, encrypted with the passphrase ([`secrets`]).
//!
//! Restore reads and checks everything before it changes anything: the manifest (a backup of
//! a newer app or schema version is refused), the zip's CRCs, the database's SHA-256 and
//! SQLite's own check, the passphrase. The files are unpacked into a staging directory inside
//! the library; then the staged trees are swapped in by renames and the database rows are
//! replaced in one transaction ([`tavo_store::Store::replace_from`]); if that transaction
//! fails, the old trees are renamed back. A failed restore leaves the library as it was.

mod create;
mod migrate;
mod restore;
pub mod secrets;

use serde::{Deserialize, Serialize};

pub use create::{BackupOptions, BackupSummary, create_backup};
pub use migrate::{delete_postgres_library, migrate_library};
pub use restore::{RestoreOptions, RestoreSummary, inspect_backup, restore_backup};

/// The `format` of a backup's manifest.
pub const FORMAT: &str = "tavo-backup";
/// The manifest format this program writes and the newest it reads.
pub const FORMAT_VERSION: u32 = 1;
/// The file name suffix backups get by default.
pub const EXTENSION: &str = "tavobackup";
/// Library trees (directories under the data directory) a backup carries.
pub const TREES: [&str; 2] = ["files", "plugins"];
/// The zip entry that holds the [`Manifest`]; restore reads it before anything else.
pub const MANIFEST_ENTRY: &str = "manifest.json";
/// The zip entry that holds the database snapshot, secrets taken out.
pub const DATABASE_ENTRY: &str = "tavo.db";
/// The zip entry that holds the sealed secrets; present only in a backup made with keys.
pub const KEYS_ENTRY: &str = "keys.bin";

/// The program version written into manifests.
pub const APP_VERSION: &str = env!("CARGO_PKG_VERSION");

/// What a backup says about itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`FORMAT_VERSION`] of the writer.
    pub format_version: u32,
    /// The writing program's version (`0.1.0`).
    pub app_version: String,
    /// The database's schema version (migrations applied).
    pub schema_version: i64,
    /// RFC 3339 time the snapshot was taken.
    pub created_at: String,
    /// The database entry's size in bytes.
    pub database_bytes: u64,
    /// The database entry's SHA-256 (hex); restore compares it before it swaps anything in.
    pub database_sha256: String,
    /// How many files of the library trees the backup holds.
    pub files: u64,
    /// Those files' total size in bytes, uncompressed.
    pub file_bytes: u64,
    /// Row counts for people reading the manifest (`chats`, `messages`, `characters`, …).
    #[serde(default)]
    pub counts: serde_json::Map<String, serde_json::Value>,
    /// Whether `keys.bin` holds the library's API keys.
    pub with_keys: bool,
    /// How `keys.bin` was sealed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sealing: Option<secrets::Sealing>,
}

/// Why a backup or a restore did not happen.
#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    /// Reading or writing a file failed.
    #[error("{0}")]
    Io(String),
    /// The library refused.
    #[error(transparent)]
    Store(#[from] tavo_store::StoreError),
    /// The file is not a tavo backup, or it is damaged or cut short.
    #[error("not a usable tavo backup: {0}")]
    Corrupt(String),
    /// The backup was written by a newer tavo.
    #[error(
        "this backup was written by a newer tavo ({what}); this program ({APP_VERSION}, schema {schema}) cannot restore it — update tavo first",
        schema = tavo_store::schema_version()
    )]
    Newer {
        /// What is newer, with the backup's number (`backup format 2`, `version 0.3.0`,
        /// `schema 9`).
        what: String,
    },
    /// Missing or wrong passphrase.
    #[error("{0}")]
    Passphrase(String),
    /// The caller must confirm (the library is not empty).
    #[error("{0}")]
    NeedsConfirmation(String),
    /// Anything else.
    #[error("{0}")]
    Internal(String),
}

impl BackupError {
    /// The error envelope's code.
    pub fn code(&self) -> &'static str {
        match self {
            BackupError::Io(_) | BackupError::Internal(_) => "internal_error",
            BackupError::Store(e) => e.code(),
            BackupError::Corrupt(_) | BackupError::Newer { .. } => "invalid_arguments",
            BackupError::Passphrase(_) => "permission_denied",
            BackupError::NeedsConfirmation(_) => "confirmation_required",
        }
    }

    pub(crate) fn io(what: impl std::fmt::Display, e: impl std::fmt::Display) -> Self {
        BackupError::Io(format!("{what}: {e}"))
    }
}

/// `a.b.c` > `x.y.z` numerically (missing parts are 0; a pre-release suffix is ignored).
pub fn version_newer(a: &str, b: &str) -> bool {
    let parts = |v: &str| -> Vec<u64> {
        v.split(['-', '+'])
            .next()
            .unwrap_or_default()
            .split('.')
            .map(|p| p.parse().unwrap_or(0))
            .collect()
    };
    let (a, b) = (parts(a), parts(b));
    for i in 0..a.len().max(b.len()) {
        let (x, y) = (
            a.get(i).copied().unwrap_or(0),
            b.get(i).copied().unwrap_or(0),
        );
        if x != y {
            return x > y;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    #[test]
    fn versions_compare_numerically() {
        assert!(super::version_newer("0.10.0", "0.9.9"));
        assert!(super::version_newer("1.0", "0.99.1"));
        assert!(!super::version_newer("0.1.0", "0.1.0"));
        assert!(!super::version_newer("0.1.0-beta", "0.1.0"));
        assert!(!super::version_newer("0.0.9", "0.1.0"));
    }
}
