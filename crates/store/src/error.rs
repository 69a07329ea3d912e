//! The store's typed error.
//!
//! Every variant names what the caller can act on: the missing object and its id, the revision
//! that was expected, the rule a file name broke. Doors map [`StoreError::code`] onto their own
//! error vocabularies (the tool envelope's `resource_not_found`, an HTTP status, an exit code).

use std::path::PathBuf;

/// What went wrong in the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The data directory or a file below it could not be read or written.
    #[error("{action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// SQLite refused a statement (locked database, corrupt file, constraint).
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The embedded schema migrations could not be applied.
    #[error("cannot migrate the database schema: {0}")]
    Migration(#[from] rusqlite_migration::Error),
    /// A stored JSON document could not be read back, or a value could not be serialised.
    #[error("invalid JSON in {what}: {source}")]
    Json {
        what: String,
        #[source]
        source: serde_json::Error,
    },
    /// The object does not exist (or no longer exists).
    #[error("{kind} {id} not found")]
    NotFound { kind: &'static str, id: String },
    /// Optimistic concurrency: someone else wrote the object since the caller read it.
    #[error(
        "{kind} {id} was changed by someone else (expected revision {expected}, now {actual}); \
         reload it and apply your change again"
    )]
    Conflict {
        kind: &'static str,
        id: i64,
        expected: i64,
        actual: i64,
    },
    /// A file name broke the naming rules (`/ \ :` and `..` are forbidden).
    #[error("invalid file name {name:?}: {reason}")]
    InvalidFileName { name: String, reason: &'static str },
    /// A variable path is empty or has an empty segment.
    #[error("invalid variable path {path:?}: {reason}")]
    InvalidPath { path: String, reason: &'static str },
    /// Any other argument the caller can fix; the message names the field.
    #[error("{0}")]
    InvalidArgument(String),
}

impl StoreError {
    /// A stable machine-readable code, in the vocabulary of the tool envelope.
    pub fn code(&self) -> &'static str {
        match self {
            StoreError::NotFound { .. } => "resource_not_found",
            StoreError::Conflict { .. } => "conflict",
            StoreError::InvalidFileName { .. }
            | StoreError::InvalidPath { .. }
            | StoreError::InvalidArgument(_) => "invalid_arguments",
            StoreError::Io { .. }
            | StoreError::Sqlite(_)
            | StoreError::Migration(_)
            | StoreError::Json { .. } => "internal_error",
        }
    }

    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        StoreError::Io {
            action,
            path: path.into(),
            source,
        }
    }

    pub(crate) fn json(what: impl Into<String>, source: serde_json::Error) -> Self {
        StoreError::Json {
            what: what.into(),
            source,
        }
    }

    pub(crate) fn not_found(kind: &'static str, id: impl ToString) -> Self {
        StoreError::NotFound {
            kind,
            id: id.to_string(),
        }
    }
}

/// The store's result type.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;
