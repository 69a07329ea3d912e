//! The `tavo` binary: every door a terminal user has onto the library, the prompt engine,
//! the providers and the server.
//!
//! Architecture invariant: this crate holds no business logic. Each subcommand parses its
//! arguments, calls one library function, and prints the result (human text, or JSON with
//! `--json`). Diagnostics go to stderr; stdout carries only the result, so scripts can pipe it.
//! Exit codes: 0 success, 1 failure, 2 usage error (clap's own code for bad arguments).

/// std's `println!`, except that a closed stdout ends the command quietly instead of
/// panicking (see [`stdout`]). Defined before the modules, so it shadows std's in all of them.
macro_rules! println {
    () => {
        $crate::stdout::write(format_args!(""), true)
    };
    ($($arg:tt)*) => {
        $crate::stdout::write(format_args!($($arg)*), true)
    };
}

/// std's `print!`, with [`println!`]'s handling of a closed stdout.
macro_rules! print {
    ($($arg:tt)*) => {
        $crate::stdout::write(format_args!($($arg)*), false)
    };
}

mod cmd;
mod context;
mod engine;
mod library;
mod stdout;

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

    /// Work on this user's library (a data folder served with `tavo serve --accounts`).
    #[arg(long, global = true, env = "TAVO_USER", value_name = "NAME")]
    user: Option<String>,

    /// Keep the libraries in PostgreSQL (`postgres://user:password@host:port/database`) instead
    /// of SQLite files in the data folder; the data folder still holds the files and accounts.
    #[arg(
        long,
        global = true,
        env = "TAVO_DATABASE",
        value_name = "URL",
        hide_env_values = true
    )]
    database: Option<String>,

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
    /// Create, rebind and clone chats.
    Chat(cmd::chat::ChatArgs),
    /// Create and change personas.
    Persona(cmd::persona::PersonaArgs),
    /// Append, list, edit, delete and hide a chat's messages.
    Message(cmd::message::MessageArgs),
    /// Read and write chat, global and message variables.
    Var(cmd::var::VarArgs),
    /// A chat's long-term memory: show, extract now, set, append, the extraction prompt.
    Memory(cmd::memory::MemoryArgs),
    /// Write the whole library (database snapshot and files) to one backup file.
    Backup(cmd::backup::BackupArgs),
    /// Replace the library with a backup file (refuses a backup of a newer tavo).
    Restore(cmd::backup::RestoreArgs),
    /// Print the exact prompt the chat's next reply would send.
    Prompt(cmd::prompt::PromptArgs),
    /// Generate one reply in a chat (the full tool loop); events as JSON lines with --json.
    Reply(cmd::reply::ReplyArgs),
    /// Read and change settings (tools.enabled, tools.recursionLimit, …).
    Settings(cmd::settings::SettingsArgs),
    /// Read or clear the audit log of tool calls (`list`, `clear`).
    Audit(cmd::audit::AuditArgs),
    /// Serve the HTTP API (loopback by default; a token is required for any other address).
    Serve(cmd::serve::ServeArgs),
    /// Serve tavo's MCP server on stdin/stdout; `tavo mcp info` prints the /mcp connection text.
    Mcp(cmd::mcp::McpArgs),
    /// Outside MCP servers whose tools join the chat loop: add, list, remove, enable, disable.
    #[command(name = "mcp-server")]
    McpServer(cmd::mcp_server::McpServerArgs),
    /// Accounts of `tavo serve --accounts`: add, list, passwd, disable, enable, admin, remove.
    User(cmd::user::UserArgs),
    /// Copy libraries between SQLite folders and PostgreSQL (rows, files, keys), losslessly.
    Migrate(cmd::migrate::MigrateArgs),
    /// The shared library of `tavo serve --accounts`: list, publish (an admin's), remove.
    Shared(cmd::shared::SharedArgs),
    /// Tavo plugins (.tpg): install, list, show, enable, disable, uninstall, config.
    Plugin(cmd::plugin::PluginArgs),
    /// Translate a message into another language and keep the translation on it.
    Translate(cmd::translate::TranslateArgs),
    /// Image generation and image connections: generate, imagine, connection add|list|….
    Image(cmd::image::ImageArgs),
    /// Text-to-speech and voice connections: say, connection add|list|…, bind, settings, cache.
    Tts(cmd::tts::TtsArgs),
    // Subcommands are added here, one variant per command group, each implemented in
    // its own module under `cmd/`.
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // A closed stdout unwinds with `StdoutClosed` from wherever the result was being printed.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(cli)));
    match outcome {
        Ok(_) if stdout::closed() => ExitCode::SUCCESS,
        Ok(Ok(code)) => code,
        Ok(Err(err)) if stdout::is_closed_pipe(&err) => ExitCode::SUCCESS,
        Ok(Err(err)) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
        Err(payload) if payload.is::<stdout::StdoutClosed>() => ExitCode::SUCCESS,
        Err(payload) => std::panic::resume_unwind(payload),
    }
}

/// Runs one command.
fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let base = Context::new(cli.data_dir, cli.database);
    // Migrate picks its libraries itself (every user's, or --user's).
    let ctx = match &cli.user {
        Some(name) if !matches!(cli.command, Command::Migrate(_)) => base.clone().for_user(name)?,
        _ => base.clone(),
    };
    match cli.command {
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
        Command::Persona(args) => cmd::persona::run(args, &ctx),
        Command::Message(args) => cmd::message::run(args, &ctx),
        Command::Var(args) => cmd::var::run(args, &ctx),
        Command::Memory(args) => cmd::memory::run(args, &ctx),
        Command::Backup(args) => cmd::backup::backup(args, &ctx),
        Command::Restore(args) => cmd::backup::restore(args, &ctx),
        Command::Prompt(args) => cmd::prompt::run(args, &ctx),
        Command::Serve(args) => cmd::serve::run(args, &ctx),
        Command::Mcp(args) => cmd::mcp::run(args, &ctx),
        Command::McpServer(args) => cmd::mcp_server::run(args, &ctx),
        Command::Plugin(args) => cmd::plugin::run(args, &ctx),
        Command::User(args) => cmd::user::run(args, &ctx),
        Command::Shared(args) => cmd::shared::run(args, &ctx),
        Command::Migrate(args) => cmd::migrate::run(args, &base, cli.user.as_deref()),
        Command::Translate(args) => cmd::translate::run(args, &ctx),
        Command::Image(args) => cmd::image::run(args, &ctx),
        Command::Tts(args) => cmd::tts::run(args, &ctx),
        Command::Reply(args) => cmd::reply::run(args, &ctx),
        Command::Settings(args) => cmd::settings::run(args, &ctx),
        Command::Audit(args) => cmd::audit::run(args, &ctx),
    }
}
