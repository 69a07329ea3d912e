//! `tavo var get|set|unset`: chat, global and message variables with dotted paths.

use std::process::ExitCode;

use anyhow::bail;
use clap::{Args, Subcommand, ValueEnum};
use serde_json::Value;
use tavo_model::{ChatId, MessageId};
use tavo_tools::variables::{self, MessageTarget, VarTarget};

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

/// Where the flags point; the library checks it ([`variables::resolve`]) like every door's.
fn target_of(target: &Target) -> anyhow::Result<VarTarget> {
    match target.scope {
        ScopeArg::Global => Ok(VarTarget::Global),
        ScopeArg::Chat => match target.chat {
            Some(chat) => Ok(VarTarget::Chat(ChatId(chat))),
            None => bail!("--scope chat needs --chat ID"),
        },
        ScopeArg::Message => match (target.chat, target.message) {
            (Some(chat), id) => Ok(VarTarget::Message(
                ChatId(chat),
                MessageTarget { id, index: None },
            )),
            (None, Some(id)) => Ok(VarTarget::AnyMessage(MessageId(id))),
            (None, None) => bail!(
                "--scope message needs --message ID, or --chat ID to use the chat's last message"
            ),
        },
    }
}

pub fn run(args: VarArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    let store = open_store(ctx)?;
    match args.command {
        VarCommand::Get { name, target } => {
            let value = variables::get(&store, target_of(&target)?, &name)?.unwrap_or(Value::Null);
            println!("{}", serde_json::to_string(&value)?);
        }
        VarCommand::Set {
            name,
            value,
            target,
        } => {
            let value = serde_json::from_str::<Value>(&value).unwrap_or(Value::String(value));
            variables::set(&store, target_of(&target)?, &name, &value)?;
        }
        VarCommand::Unset { name, target } => {
            variables::unset(&store, target_of(&target)?, &name)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
