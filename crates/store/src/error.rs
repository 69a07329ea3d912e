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
        /// What the store was doing (`cannot read`, `cannot write`, …); starts the message.
        action: &'static str,
        /// The file or directory it was doing it to.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// SQLite refused a statement (locked database, corrupt file, constraint).
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// PostgreSQL refused a statement, or could not be reached.
    #[error("database error: {0}")]
    Postgres(#[from] tokio_postgres::Error),
    /// A value read from the database was not what the store wrote (a column of another type).
    #[error("database error: {0}")]
    Database(String),
    /// The embedded schema migrations could not be applied.
    #[error("cannot migrate the database schema: {0}")]
    Migration(#[from] rusqlite_migration::Error),
    /// A stored JSON document could not be read back, or a value could not be serialised.
    #[error("invalid JSON in {what}: {source}")]
    Json {
        /// Which document (`character 12`, `variable "hp"`, …).
        what: String,
        /// serde_json's error, with the line and column.
        #[source]
        source: serde_json::Error,
    },
    /// The object does not exist (or no longer exists).
    #[error("{kind} {id} not found")]
    NotFound {
        /// What kind of object (`character`, `chat`, `message`, …).
        kind: &'static str,
        /// The id that was asked for, as text so any id type fits.
        id: String,
    },
    /// Optimistic concurrency: someone else wrote the object since the caller read it.
    #[error(
        "{kind} {id} was changed by someone else (expected revision {expected}, now {actual}); \
         reload it and apply your change again"
    )]
    Conflict {
        /// What kind of object (`character`, `message`, `memory`, …).
        kind: &'static str,
        /// The object's id; for `memory`, the chat's.
        id: i64,
        /// The revision the caller read and named in its write.
        expected: i64,
        /// The revision the object has now.
        actual: i64,
    },
    /// A file name broke the naming rules (`/ \ :` and `..` are forbidden).
    #[error("invalid file name {name:?}: {reason}")]
    InvalidFileName {
        /// The name as the caller gave it.
        name: String,
        /// The rule it broke, as a sentence for the user.
        reason: &'static str,
    },
    /// A variable path is empty or has an empty segment.
    #[error("invalid variable path {path:?}: {reason}")]
    InvalidPath {
        /// The path as the caller gave it.
        path: String,
        /// What is wrong with it, as a sentence for the user.
        reason: &'static str,
    },
    /// A file is larger than the store keeps ([`crate::files::MAX_FILE_BYTES`]); nothing was
    /// written.
    #[error(
        "{what} is {size} bytes; a stored file holds at most {limit} bytes; nothing was stored"
    )]
    FileTooLarge {
        /// The file's name or path.
        what: String,
        /// Its size in bytes.
        size: u64,
        /// The largest size kept.
        limit: u64,
    },
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
            StoreError::FileTooLarge { .. } => "limit_exceeded",
            StoreError::Io { .. }
            | StoreError::Sqlite(_)
            | StoreError::Postgres(_)
            | StoreError::Database(_)
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
