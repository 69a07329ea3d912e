//! `tavo message append|list`: a chat's messages.

use std::process::ExitCode;

use anyhow::{Context as _, bail};
use clap::{Args, Subcommand, ValueEnum};
use tavo_model::{CharacterId, ChatId, Message, RegexGroup, Role};

use crate::context::Context;
use crate::library::open_store;

/// Append or list a chat's messages.
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
        /// Store it hidden (kept, never sent to the model).
        #[arg(long)]
        hidden: bool,
        /// The speaking character of an assistant message (group chats; default: the first member).
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
}

pub fn run(args: MessageArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    let store = open_store(ctx)?;
    match args.command {
        MessageCommand::Append {
            chat,
            role,
            content,
            hidden,
            character,
        } => {
            let chat_id = ChatId(chat);
            let Some(chat) = store.chat_get(chat_id)? else {
                bail!("chat {chat_id} not found (see `tavo list chats`)");
            };
            let role = match role {
                RoleArg::User => Role::User,
                RoleArg::Assistant => Role::Assistant,
                RoleArg::System => Role::System,
            };
            let mut message = Message::new(role, content);
            message.hidden = hidden;
            message.send_date = Some(tavo_prompt::local_now().to_rfc3339());
            if role == Role::Assistant {
                let member = match character {
                    Some(id) => Some(
                        chat.characters
                            .iter()
                            .find(|c| c.id == CharacterId(id))
                            .with_context(|| {
                                format!("character {id} is not a member of chat {chat_id}")
                            })?,
                    ),
                    None => chat.characters.first(),
                };
                if let Some(member) = member {
                    message.character_id = Some(member.id);
                    message.name = Some(member.name.clone());
                }
            }
            let mut groups = Vec::new();
            for r in &chat.regexes {
                if let Some(group) = store.get::<RegexGroup>(r.id)? {
                    groups.push(group);
                }
            }
            let (message, issues) = tavo_prompt::rewrite_for_storage(&message, &groups, false);
            for issue in issues {
                eprintln!("warning: {}: {}", issue.location, issue.error);
            }
            let id = store.message_append(chat_id, &message)?;
            println!("{id}");
            Ok(ExitCode::SUCCESS)
        }
        MessageCommand::List { chat, json } => {
            let chat_id = ChatId(chat);
            if store.chat_get(chat_id)?.is_none() {
                bail!("chat {chat_id} not found (see `tavo list chats`)");
            }
            let messages = store.messages_all(chat_id)?;
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
    }
}
