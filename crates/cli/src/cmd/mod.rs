//! One module per command group. Each exposes a clap `Args`/`Subcommand` type and a `run`
//! function that takes the parsed arguments and the [`crate::context::Context`].
pub mod audit;
pub mod backup;
pub mod chat;
pub mod chat_tui;
pub mod connection;
pub mod delete;
pub mod export;
pub mod image;
pub mod import;
pub mod list;
pub mod llm;
pub mod mcp;
pub mod mcp_server;
pub mod memory;
pub mod message;
pub mod persona;
pub mod plugin;
pub mod prompt;
pub mod reply;
pub mod serve;
pub mod settings;
pub mod show;
pub mod tool;
pub mod translate;
pub mod var;
pub mod web;
