//! The `tavo` binary: every door a terminal user has onto the library, the prompt engine,
//! the providers and the server.
//!
//! Architecture invariant: this crate holds no business logic. Each subcommand parses its
//! arguments, calls one library function, and prints the result (human text, or JSON with
//! `--json`). Diagnostics go to stderr; stdout carries only the result, so scripts can pipe it.
//! Exit codes: 0 success, 1 failure, 2 usage error (clap's own code for bad arguments).

mod cmd;
mod context;
mod library;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::context::Context;

#[derive(Debug, Parser)]
#[command(name = "tavo", version, about = "The tavo character-chat engine", long_about = None)]
struct Cli {
    /// Directory of the library (database and files). Defaults to $TAVO_DATA_DIR, else the
    /// platform data directory (for example ~/.local/share/tavo).
    #[arg(long, global = true, env = "TAVO_DATA_DIR", value_name = "DIR")]
    data_dir: Option<std::path::PathBuf>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the resolved data directory.
    DataDir,
    /// Import cards, personas, presets, lorebooks, regex scripts and chats (files or folders).
    Import(cmd::import::ImportArgs),
    /// Export one asset to a SillyTavern / CCv3 / Tavo file.
    Export(cmd::export::ExportArgs),
    /// List the library's assets of one kind.
    List(cmd::list::ListArgs),
    /// Print one asset as TavoJS-shaped JSON.
    Show(cmd::show::ShowArgs),
    /// Delete one asset.
    Delete(cmd::delete::DeleteArgs),
    /// List the built-in tools or call one exactly as a model would.
    Tool(cmd::tool::ToolArgs),
    #[command(flatten)]
    Web(cmd::web::WebCommand),
    /// Debug the provider codecs: decode a response into canonical events, encode a request.
    Llm(cmd::llm::LlmArgs),
    /// Manage provider connections (keys are never printed).
    Connection(cmd::connection::ConnectionArgs),
    /// Create chats and change their bindings.
    Chat(cmd::chat::ChatArgs),
    /// Append and list a chat's messages.
    Message(cmd::message::MessageArgs),
    /// Read and write chat, global and message variables.
    Var(cmd::var::VarArgs),
    /// Print the exact prompt the chat's next reply would send.
    Prompt(cmd::prompt::PromptArgs),
    /// Generate one reply in a chat (the full tool loop); events as JSON lines with --json.
    Reply(cmd::reply::ReplyArgs),
    /// Read and change settings (tools.enabled, tools.recursionLimit, …).
    Settings(cmd::settings::SettingsArgs),
    /// Serve the HTTP API (loopback by default; a token is required for any other address).
    Serve(cmd::serve::ServeArgs),
    // Subcommands are added here, one variant per command group, each implemented in
    // its own module under `cmd/`.
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let ctx = Context::new(cli.data_dir);
    let result: anyhow::Result<ExitCode> = match cli.command {
        Command::DataDir => {
            println!("{}", ctx.data_dir().display());
            Ok(ExitCode::SUCCESS)
        }
        Command::Import(args) => cmd::import::run(args, &ctx),
        Command::Export(args) => cmd::export::run(args, &ctx),
        Command::List(args) => cmd::list::run(args, &ctx),
        Command::Show(args) => cmd::show::run(args, &ctx),
        Command::Delete(args) => cmd::delete::run(args, &ctx),
        Command::Tool(args) => cmd::tool::run(args, &ctx),
        Command::Web(command) => cmd::web::run(command, &ctx),
        Command::Llm(args) => cmd::llm::run(args, &ctx),
        Command::Connection(args) => cmd::connection::run(args, &ctx),
        Command::Chat(args) => cmd::chat::run(args, &ctx),
        Command::Message(args) => cmd::message::run(args, &ctx),
        Command::Var(args) => cmd::var::run(args, &ctx),
        Command::Prompt(args) => cmd::prompt::run(args, &ctx),
        Command::Serve(args) => cmd::serve::run(args, &ctx),
        Command::Reply(args) => cmd::reply::run(args, &ctx),
        Command::Settings(args) => cmd::settings::run(args, &ctx),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
