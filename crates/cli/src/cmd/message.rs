//! `tavo message append|list|edit|delete|hide|unhide`: a chat's messages. Every write is the
//! one library operation the model's `tavo_message_*` tools call (`tavo_tools::messages`), so
//! the chat's regex rules and the speaker checks are the same at every door. A chat that does not
//! exist is refused first, as the tools refuse it (`tavo_tools::ops::require_chat`).

use std::process::ExitCode;

use anyhow::bail;
use clap::{Args, Subcommand, ValueEnum};
use tavo_model::{CharacterId, ChatId, MessageId, Role};
use tavo_tools::messages::{
    MessageChange, MessageDraft, Written, append_message, delete_message, edit_message,
    set_message_hidden,
};
use tavo_tools::ops::require_chat;

use crate::context::Context;
use crate::library::open_store;

/// Append, list, edit, delete, hide or show a chat's messages.
#[derive(Debug, Args)]
pub struct MessageArgs {
    #[command(subcommand)]
    command: MessageCommand,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum RoleArg {
    User,
    Assistant,
    System,
}

/// A message of a chat.
#[derive(Debug, Args)]
struct Target {
    /// The chat's id.
    #[arg(long, value_name = "ID")]
    chat: i64,
    /// The message's id (see `tavo message list`).
    #[arg(long, value_name = "ID")]
    id: i64,
}

#[derive(Debug, Subcommand)]
enum MessageCommand {
    /// Append a message; prints its id. The chat's `receive`/`editAndReceive` regex rules
    /// rewrite the stored content, as when Tavo receives a message.
    Append {
        /// The chat's id.
        #[arg(long, value_name = "ID")]
        chat: i64,
        /// Who wrote it.
        #[arg(long, value_enum)]
        role: RoleArg,
        /// The text.
        #[arg(long, value_name = "TEXT")]
        content: String,
        /// Reasoning text kept with the message.
        #[arg(long, value_name = "TEXT")]
        reasoning: Option<String>,
        /// Store it hidden (kept, never sent to the model).
        #[arg(long)]
        hidden: bool,
        /// The speaking character of an assistant message (required in group chats).
        #[arg(long, value_name = "ID")]
        character: Option<i64>,
    },
    /// List a chat's messages, oldest first.
    List {
        /// The chat's id.
        #[arg(long, value_name = "ID")]
        chat: i64,
        /// Print a JSON array of messages.
        #[arg(long)]
        json: bool,
    },
    /// Change a message's text; the chat's `editAndReceive` regex rules rewrite the new text
    /// (SillyTavern's "run on edit"). Prints the message as stored, as JSON.
    Edit {
        #[command(flatten)]
        target: Target,
        /// The new content (also the message's current swipe).
        #[arg(long, value_name = "TEXT")]
        content: Option<String>,
        /// The new reasoning text; "" clears it.
        #[arg(long, value_name = "TEXT")]
        reasoning: Option<String>,
    },
    /// Delete a message; later messages move up one floor.
    Delete {
        #[command(flatten)]
        target: Target,
    },
    /// Hide a message: it stays in the chat but is never sent to the model.
    Hide {
        #[command(flatten)]
        target: Target,
    },
    /// Show a hidden message again.
    Unhide {
        #[command(flatten)]
        target: Target,
    },
}

fn warn(written: &Written) {
    for w in written.warnings() {
        eprintln!("warning: {w}");
    }
}

pub fn run(args: MessageArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    let store = open_store(ctx)?;
    match args.command {
        MessageCommand::Append {
            chat,
            role,
            content,
            reasoning,
            hidden,
            character,
        } => {
            let role = match role {
                RoleArg::User => Role::User,
                RoleArg::Assistant => Role::Assistant,
                RoleArg::System => Role::System,
            };
            let mut draft = MessageDraft::new(role, content);
            draft.reasoning = reasoning;
            draft.hidden = hidden;
            draft.character_id = character.map(CharacterId);
            let written = append_message(&store, ChatId(chat), draft)?;
            warn(&written);
            println!(
                "{}",
                written
                    .message
                    .id
                    .map(|i| i.to_string())
                    .unwrap_or_default()
            );
            Ok(ExitCode::SUCCESS)
        }
        MessageCommand::List { chat, json } => {
            let chat_id = ChatId(chat);
            let Some(messages) = tavo_tools::reads::all_messages(&store, chat_id)? else {
                bail!("chat {chat_id} not found (see `tavo list chats`)");
            };
            if json {
                println!("{}", serde_json::to_string_pretty(&messages)?);
            } else {
                for m in &messages {
                    let id = m.id.map(|i| i.to_string()).unwrap_or_default();
                    let hidden = if m.hidden { " (hidden)" } else { "" };
                    let who = m.name.clone().unwrap_or_else(|| m.role.as_str().to_owned());
                    println!("#{id} [{}] {who}{hidden}: {}", m.role.as_str(), m.content);
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        MessageCommand::Edit {
            target,
            content,
            reasoning,
        } => {
            if content.is_none() && reasoning.is_none() {
                bail!("nothing to change: pass --content and/or --reasoning");
            }
            require_chat(&store, Some(ChatId(target.chat)))?;
            let change = MessageChange {
                content,
                reasoning,
                hidden: None,
            };
            let written = edit_message(&store, ChatId(target.chat), MessageId(target.id), change)?;
            warn(&written);
            println!("{}", serde_json::to_string_pretty(&written.message)?);
            Ok(ExitCode::SUCCESS)
        }
        MessageCommand::Delete { target } => {
            require_chat(&store, Some(ChatId(target.chat)))?;
            delete_message(&store, ChatId(target.chat), MessageId(target.id))?;
            eprintln!("deleted message {}", target.id);
            Ok(ExitCode::SUCCESS)
        }
        MessageCommand::Hide { target } => hide(&store, &target, true),
        MessageCommand::Unhide { target } => hide(&store, &target, false),
    }
}

fn hide(store: &tavo_store::Store, target: &Target, hidden: bool) -> anyhow::Result<ExitCode> {
    require_chat(store, Some(ChatId(target.chat)))?;
    set_message_hidden(store, ChatId(target.chat), MessageId(target.id), hidden)?;
    eprintln!(
        "message {} is {}",
        target.id,
        if hidden { "hidden" } else { "visible" }
    );
    Ok(ExitCode::SUCCESS)
}
