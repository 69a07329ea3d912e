//! `tavo var get|set|unset`: chat, global and message variables with dotted paths.

use std::process::ExitCode;

use anyhow::{Context as _, bail};
use clap::{Args, Subcommand, ValueEnum};
use serde_json::Value;
use tavo_model::{ChatId, MessageId};
use tavo_store::{Store, VarScope};

use crate::context::Context;
use crate::library::open_store;

/// Read and write variables (`status.hp` paths reach into JSON objects).
#[derive(Debug, Args)]
pub struct VarArgs {
    #[command(subcommand)]
    command: VarCommand,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum ScopeArg {
    Chat,
    Global,
    Message,
}

#[derive(Debug, Args)]
struct Target {
    /// Variable namespace.
    #[arg(long, value_enum, default_value = "chat")]
    scope: ScopeArg,
    /// The chat (chat scope; message scope without --message uses its last message).
    #[arg(long, value_name = "ID")]
    chat: Option<i64>,
    /// The message (message scope).
    #[arg(long, value_name = "ID")]
    message: Option<i64>,
}

#[derive(Debug, Subcommand)]
enum VarCommand {
    /// Print a variable as JSON (`null` when it does not exist).
    Get {
        /// Name or dotted path.
        name: String,
        #[command(flatten)]
        target: Target,
    },
    /// Set a variable; the value is JSON (text that is not JSON is stored as a string).
    Set {
        /// Name or dotted path.
        name: String,
        /// The value.
        value: String,
        #[command(flatten)]
        target: Target,
    },
    /// Remove a variable (only the leaf of a dotted path).
    Unset {
        /// Name or dotted path.
        name: String,
        #[command(flatten)]
        target: Target,
    },
}

fn scope(store: &Store, target: &Target) -> anyhow::Result<VarScope> {
    match target.scope {
        ScopeArg::Global => Ok(VarScope::Global),
        ScopeArg::Chat => {
            let Some(chat) = target.chat else {
                bail!("--scope chat needs --chat ID");
            };
            if store.chat_get(ChatId(chat))?.is_none() {
                bail!("chat {chat} not found (see `tavo list chats`)");
            }
            Ok(VarScope::Chat(chat))
        }
        ScopeArg::Message => {
            if let Some(message) = target.message {
                if store.message_get(MessageId(message))?.is_none() {
                    bail!("message {message} not found");
                }
                return Ok(VarScope::Message(message));
            }
            let Some(chat) = target.chat else {
                bail!(
                    "--scope message needs --message ID, or --chat ID to use the chat's last message"
                );
            };
            let last = store
                .messages_last(ChatId(chat), 1)?
                .into_iter()
                .next()
                .and_then(|m| m.id)
                .with_context(|| {
                    format!("chat {chat} has no messages to hold message variables")
                })?;
            Ok(VarScope::Message(last.0))
        }
    }
}

pub fn run(args: VarArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    let store = open_store(ctx)?;
    match args.command {
        VarCommand::Get { name, target } => {
            let value = store
                .var_get(scope(&store, &target)?, &name)?
                .unwrap_or(Value::Null);
            println!("{}", serde_json::to_string(&value)?);
        }
        VarCommand::Set {
            name,
            value,
            target,
        } => {
            let value = serde_json::from_str::<Value>(&value).unwrap_or(Value::String(value));
            store.var_set(scope(&store, &target)?, &name, &value)?;
        }
        VarCommand::Unset { name, target } => {
            store.var_unset(scope(&store, &target)?, &name)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
