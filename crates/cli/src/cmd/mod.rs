//! One module per command group. Each exposes a clap `Args`/`Subcommand` type and a `run`
//! function that takes the parsed arguments and the [`crate::context::Context`].
pub mod delete;
pub mod export;
pub mod import;
pub mod list;
pub mod show;
pub mod tool;
pub mod web;
pub mod llm;
pub mod connection;
pub mod chat;
pub mod message;
pub mod var;
pub mod prompt;
pub mod reply;
pub mod settings;
pub mod chat_tui;
pub mod serve;
