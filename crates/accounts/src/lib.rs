//! Accounts of a shared `tavo serve` (`--accounts`): who may log in, their sessions, and which
//! library each one owns.
//!
//! Each user owns a whole library — a folder with its own SQLite store, files, settings, keys
//! and MCP token — so every door that works on one library is isolated by construction: a
//! query of user B cannot see a row of user A because A's rows are in another database. The
//! first admin created on a data folder that already holds a library gets *that* library
//! (nothing is moved or rewritten); every other user gets `users/<id>/`.
//!
//! This crate knows nothing of HTTP: the server asks it to log in, to resolve a session token,
//! and where a user's library is.
//!
//! Code map: [`password`] (Argon2id), [`session`] (tokens and expiry), [`throttle`] (failed
//! logins per account and per address), [`Accounts`] (the `accounts.sqlite` registry).

mod accounts;
mod error;
pub mod password;
pub mod session;
pub mod throttle;

pub use accounts::{ACCOUNTS_FILE, Accounts, Login, ROOT_SCHEMA, SHARED_LIBRARY, User, UserName};
pub use error::AccountError;
pub use session::{ABSOLUTE_EXPIRY, IDLE_EXPIRY, SessionToken};
pub use throttle::Throttled;
