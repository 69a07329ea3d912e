//! `tavo memory show|extract|set|append|prompt`: a chat's long-term memory (Tavo §15).
//!
//! - `show --chat ID [--json]` prints `{id, enabled, memories}` (TavoJS `tavo.memory.current()`).
//! - `extract --chat ID [--connection NAME] [--model M] [--json]` is "extract now": one request
//!   on the chat's connection with the extraction prompt; new memories are appended,
//!   de-duplicated against the ones the chat has.
//! - `set --chat ID [--enable|--disable] [--memory TEXT]… [--file F] [--clear]` replaces the
//!   list (with `--memory`, `--file` or `--clear`) and/or switches injection on or off.
//! - `append --chat ID TEXT…` adds memories at the end (never switches injection on).
//! - `prompt [--set TEXT | --file F | --reset]` prints or changes the extraction prompt.

use std::io::Read;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use clap::{ArgGroup, Args, Subcommand};
use serde_json::{Value, json};
use tavo_model::{ChatId, Memory};
use tavo_store::Store;
use tavo_tools::{ToolError, memories};

use crate::context::Context;
use crate::library::open_store;

/// Read, extract and edit a chat's long-term memory.
#[derive(Debug, Args)]
pub struct MemoryArgs {
    #[command(subcommand)]
    command: MemoryCommand,
}

#[derive(Debug, Subcommand)]
enum MemoryCommand {
    /// Print the chat's memory: {id, enabled, memories}.
    Show {
        /// The chat's id.
        #[arg(long, value_name = "ID")]
        chat: i64,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Extract memories from the recent conversation now (one model request).
    Extract {
        /// The chat's id.
        #[arg(long, value_name = "ID")]
        chat: i64,
        /// Connection name (default: the memory.connection setting, else the default connection).
        #[arg(long, value_name = "NAME")]
        connection: Option<String>,
        /// Model instead of the connection's.
        #[arg(long, value_name = "MODEL")]
        model: Option<String>,
        /// Print {memory, added, duplicates, messages, mergedWithEdit} as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Replace the memory list and/or switch memory injection on or off.
    #[command(group(ArgGroup::new("list").args(["memory", "file", "clear"]).multiple(false)))]
    #[command(group(ArgGroup::new("switch").args(["enable", "disable"]).multiple(false)))]
    Set {
        /// The chat's id.
        #[arg(long, value_name = "ID")]
        chat: i64,
        /// Inject memories into prompts from now on.
        #[arg(long)]
        enable: bool,
        /// Stop injecting memories (they are kept).
        #[arg(long)]
        disable: bool,
        /// A memory of the new list (repeat for several).
        #[arg(long, value_name = "TEXT")]
        memory: Vec<String>,
        /// Read the new list from a file (`-` = stdin): a JSON array of strings, or one memory per line.
        #[arg(long, value_name = "FILE")]
        file: Option<String>,
        /// Empty the list.
        #[arg(long)]
        clear: bool,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Add memories at the end of the list.
    Append {
        /// The chat's id.
        #[arg(long, value_name = "ID")]
        chat: i64,
        /// The memories to add.
        #[arg(required = true, value_name = "TEXT")]
        texts: Vec<String>,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print the extraction prompt, or change it (placeholders: {{char}}, {{user}}, {{memories}}, {{messages}}).
    #[command(group(ArgGroup::new("change").args(["set", "file", "reset"]).multiple(false)))]
    Prompt {
        /// The new prompt.
        #[arg(long, value_name = "TEXT")]
        set: Option<String>,
        /// Read the new prompt from a file (`-` = stdin).
        #[arg(long, value_name = "FILE")]
        file: Option<String>,
        /// Go back to the built-in prompt.
        #[arg(long)]
        reset: bool,
    },
}

fn require_chat(store: &Store, chat: i64) -> anyhow::Result<()> {
    if tavo_tools::reads::chat(store, ChatId(chat))?.is_none() {
        bail!("chat {chat} not found (see `tavo list chats`)");
    }
    Ok(())
}

fn print_memory(chat: i64, memory: &Memory, json: bool) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(memory)?);
        return Ok(());
    }
    let state = if memory.enabled {
        "enabled"
    } else {
        "disabled"
    };
    println!(
        "memory of chat {chat} ({state}, {} memories)",
        memory.memories.len()
    );
    for (i, m) in memory.memories.iter().enumerate() {
        println!("{:>3}. {m}", i + 1);
    }
    Ok(())
}

fn read_text(path: &str) -> anyhow::Result<String> {
    if path == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .context("reading stdin")?;
        return Ok(s);
    }
    std::fs::read_to_string(path).with_context(|| format!("reading {path}"))
}

/// A JSON array of strings, else one memory per non-empty line.
fn parse_list(text: &str) -> anyhow::Result<Vec<String>> {
    if let Ok(Value::Array(items)) = serde_json::from_str::<Value>(text.trim()) {
        return items
            .into_iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::String(s) => Ok(s),
                other => bail!("item {i} of the list is not a string: {other}"),
            })
            .collect();
    }
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect())
}

/// A refusal as the other doors word it: `code: message`.
fn refused(e: ToolError) -> anyhow::Error {
    anyhow::anyhow!("{}: {}", e.code, e.message)
}

/// Runs `tavo memory`.
pub fn run(args: MemoryArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    let store = open_store(ctx)?;
    match args.command {
        MemoryCommand::Show { chat, json } => {
            let memory = memories::memory(&store, ChatId(chat)).map_err(refused)?;
            print_memory(chat, &memory, json)?;
        }
        MemoryCommand::Extract {
            chat,
            connection,
            model,
            json,
        } => return extract(store, chat, connection, model, json),
        MemoryCommand::Set {
            chat,
            enable,
            disable,
            memory,
            file,
            clear,
            json,
        } => {
            let enabled = match (enable, disable) {
                (true, _) => Some(true),
                (_, true) => Some(false),
                _ => None,
            };
            let list = match (file, clear, memory.is_empty()) {
                (Some(f), _, _) => Some(parse_list(&read_text(&f)?)?),
                (None, true, _) => Some(Vec::new()),
                (None, false, false) => Some(memory),
                (None, false, true) => None,
            };
            if enabled.is_none() && list.is_none() {
                bail!(
                    "nothing to set: pass --enable/--disable and/or --memory TEXT, --file F or --clear"
                );
            }
            let m = memories::update_memory(&store, ChatId(chat), enabled, list.as_deref())
                .map_err(refused)?;
            print_memory(chat, &m, json)?;
        }
        MemoryCommand::Append { chat, texts, json } => {
            let m = memories::append_memory(&store, ChatId(chat), &texts).map_err(refused)?;
            print_memory(chat, &m, json)?;
        }
        MemoryCommand::Prompt { set, file, reset } => {
            let new = match (set, file) {
                (Some(s), _) => Some(s),
                (None, Some(f)) => Some(read_text(&f)?),
                (None, None) => None,
            };
            let current = if reset {
                tavo_engine::memory::set_prompt(&store, None)?
            } else if let Some(text) = new {
                tavo_engine::memory::set_prompt(&store, Some(&text))?
            } else {
                tavo_engine::memory::MemorySettings::load(&store)?.prompt
            };
            println!("{current}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn extract(
    store: Store,
    chat: i64,
    connection: Option<String>,
    model: Option<String>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    require_chat(&store, chat)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let result = runtime.block_on(async move {
        let engine = crate::engine::build(store, tavo_engine::McpStart::Off).await?;
        anyhow::Ok(engine.extract_memory(ChatId(chat), connection, model).await)
    });
    runtime.shutdown_background();
    let extraction = result??;
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "memory": extraction.memory,
                "added": extraction.added,
                "duplicates": extraction.duplicates,
                "messages": extraction.messages,
                "mergedWithEdit": extraction.merged_with_edit,
            }))?
        );
    } else {
        if extraction.added.is_empty() {
            eprintln!(
                "no new memories from {} messages ({} already known)",
                extraction.messages, extraction.duplicates
            );
        }
        for m in &extraction.added {
            println!("+ {m}");
        }
        if extraction.merged_with_edit {
            eprintln!(
                "note: the memory was edited during the extraction; the new memories were added to the edited list"
            );
        }
        if !extraction.memory.enabled {
            eprintln!(
                "note: memory is disabled for chat {chat}, so memories are not injected into prompts (`tavo memory set --chat {chat} --enable`)"
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
