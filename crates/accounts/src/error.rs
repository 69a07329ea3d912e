//! What an account operation may refuse, each with what the user can do about it.

use crate::throttle::Throttled;

/// Why an account operation failed.
#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    /// The name breaks the rules.
    #[error(
        "user name {0:?} must be 1-32 characters of a-z, 0-9, '_', '-' or '.', starting with a letter or digit"
    )]
    BadName(String),
    /// The password is too short or too long.
    #[error("the password must be 8 to 1024 characters")]
    BadPassword,
    /// The name is taken.
    #[error("a user named {0} exists already")]
    Exists(String),
    /// No such user.
    #[error("there is no user named {0}; `tavo user list` shows them")]
    NoSuchUser(String),
    /// The name or the password is wrong (one message for both: which one is not said).
    #[error("wrong user name or password")]
    WrongCredentials,
    /// The account is disabled.
    #[error("this account is disabled; ask the server's admin")]
    Disabled,
    /// Too many failed logins.
    #[error(transparent)]
    Throttled(#[from] Throttled),
    /// The last admin would be removed or disabled.
    #[error("{0} is the last admin who can log in; make another user admin first")]
    LastAdmin(String),
    /// Removing the owner of the data folder's original library would delete it.
    #[error(
        "{0} owns the server's original library (the data folder itself); remove it with --keep-data, which keeps that library"
    )]
    OwnsRootLibrary(String),
    /// The accounts database failed.
    #[error("the accounts database ({context}): {source}")]
    Db {
        /// What was being done.
        context: &'static str,
        /// The store's error.
        source: tavo_store::StoreError,
    },
    /// A file operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// Why.
        source: std::io::Error,
    },
    /// Hashing failed (never expected: parameters are constants).
    #[error("hashing the password: {0}")]
    Hash(String),
}

impl AccountError {
    pub(crate) fn db(context: &'static str) -> impl FnOnce(tavo_store::StoreError) -> Self {
        move |source| AccountError::Db { context, source }
    }
}
