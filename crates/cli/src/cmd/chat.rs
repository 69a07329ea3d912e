//! `tavo chat create|update`: chats and their bindings (characters, persona, preset,
//! lorebooks, regex groups).

use std::process::ExitCode;

use anyhow::{Context as _, bail};
use clap::{Args, Subcommand};
use tavo_model::{
    Character, CharacterId, CharacterSummary, Chat, ChatId, Lorebook, LorebookId, Message, Persona,
    PersonaId, Preset, PresetId, RegexGroup, RegexId, Role, Summary,
};
use tavo_store::{Store, Tx};

use crate::context::Context;
use crate::library::open_store;

/// Create or rebind chats; with no subcommand, chat in the terminal.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ChatArgs {
    #[command(subcommand)]
    command: Option<ChatCommand>,
    /// Chat interactively in this chat (default: the newest chat).
    #[arg(value_name = "ID")]
    id: Option<i64>,
}

#[derive(Debug, Subcommand)]
enum ChatCommand {
    /// Create a chat; prints its id. The first character's greeting becomes the first message.
    Create(Bindings),
    /// Change a chat's bindings; only the flags given are changed (a list flag replaces the list).
    Update {
        /// The chat's id.
        id: i64,
        #[command(flatten)]
        bindings: Bindings,
    },
}

#[derive(Debug, Args)]
struct Bindings {
    /// Character ids (several = group chat), in membership order.
    #[arg(long = "character", value_name = "ID", num_args = 1..)]
    characters: Vec<i64>,
    /// Persona id.
    #[arg(long, value_name = "ID")]
    persona: Option<i64>,
    /// Preset id.
    #[arg(long, value_name = "ID")]
    preset: Option<i64>,
    /// Lorebook ids, in binding order (repeatable).
    #[arg(long = "lorebook", value_name = "ID")]
    lorebooks: Vec<i64>,
    /// Regex group ids, in binding order (repeatable).
    #[arg(long = "regex", value_name = "ID")]
    regexes: Vec<i64>,
    /// Chat name (default: the characters' names).
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// Do not add the greeting as the first message (create only).
    #[arg(long)]
    no_greeting: bool,
}

pub fn run(args: ChatArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    let Some(command) = args.command else {
        return crate::cmd::chat_tui::run(args.id, ctx);
    };
    let store = open_store(ctx)?;
    match command {
        ChatCommand::Create(bindings) => create(&store, bindings),
        ChatCommand::Update { id, bindings } => update(&store, ChatId(id), bindings),
    }
}

fn require<A: tavo_store::Asset>(tx: &Tx<'_>, what: &str, id: A::Id) -> tavo_store::Result<A>
where
    A::Id: std::fmt::Display + Copy,
{
    tx.get::<A>(id)?
        .ok_or_else(|| tavo_store::StoreError::NotFound {
            kind: match what {
                "character" => "character",
                "persona" => "persona",
                "preset" => "preset",
                "lorebook" => "lorebook",
                _ => "regex",
            },
            id: id.to_string(),
        })
}

fn apply(tx: &Tx<'_>, chat: &mut Chat, b: &Bindings) -> tavo_store::Result<Vec<Character>> {
    let mut characters = Vec::new();
    if !b.characters.is_empty() {
        chat.characters.clear();
        for id in &b.characters {
            let c: Character = require(tx, "character", CharacterId(*id))?;
            chat.characters.push(CharacterSummary {
                id: CharacterId(*id),
                name: c.name.clone(),
                avatar: c.avatar.clone(),
            });
            characters.push(c);
        }
    }
    if let Some(id) = b.persona {
        let p: Persona = require(tx, "persona", PersonaId(id))?;
        chat.persona = Some(Summary {
            id: PersonaId(id),
            name: p.name,
        });
    }
    if let Some(id) = b.preset {
        let p: Preset = require(tx, "preset", PresetId(id))?;
        chat.preset = Some(Summary {
            id: PresetId(id),
            name: p.name,
        });
    }
    if !b.lorebooks.is_empty() {
        chat.lorebooks.clear();
        for id in &b.lorebooks {
            let l: Lorebook = require(tx, "lorebook", LorebookId(*id))?;
            chat.lorebooks.push(Summary {
                id: LorebookId(*id),
                name: l.name,
            });
        }
    }
    if !b.regexes.is_empty() {
        chat.regexes.clear();
        for id in &b.regexes {
            let r: RegexGroup = require(tx, "regex", RegexId(*id))?;
            chat.regexes.push(Summary {
                id: RegexId(*id),
                name: r.name,
            });
        }
    }
    if let Some(name) = &b.name {
        chat.name = name.clone();
    }
    Ok(characters)
}

fn create(store: &Store, b: Bindings) -> anyhow::Result<ExitCode> {
    if b.characters.is_empty() {
        bail!(
            "a chat needs at least one character: pass --character ID (see `tavo list characters`)"
        );
    }
    let now = tavo_prompt::local_now();
    let id = store
        .write(|tx| {
            let mut chat = Chat::default();
            let characters = apply(tx, &mut chat, &b)?;
            if chat.name.trim().is_empty() {
                chat.name = characters
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ");
            }
            let persona = match &chat.persona {
                Some(p) => tx.get::<Persona>(p.id)?,
                None => tx.list::<Persona>()?.into_iter().find(|p| p.active),
            };
            let id = tx.chat_create(&chat)?;
            let greeting = (!b.no_greeting)
                .then(|| tavo_prompt::render_greeting(&characters, persona.as_ref(), now))
                .flatten();
            if let Some(text) = greeting {
                let mut greeting = Message::new(Role::Assistant, text);
                greeting.character_id = characters.first().and_then(|c| c.id);
                greeting.name = characters.first().map(|c| c.name.clone());
                greeting.send_date = Some(now.to_rfc3339());
                tx.message_append(id, &greeting)?;
            }
            Ok(id)
        })
        .context("cannot create the chat")?;
    println!("{id}");
    Ok(ExitCode::SUCCESS)
}

fn update(store: &Store, id: ChatId, b: Bindings) -> anyhow::Result<ExitCode> {
    store
        .write(|tx| {
            let mut chat = tx
                .chat_get(id)?
                .ok_or_else(|| tavo_store::StoreError::NotFound {
                    kind: "chat",
                    id: id.to_string(),
                })?;
            apply(tx, &mut chat, &b)?;
            tx.update(&chat, None)?;
            Ok(())
        })
        .with_context(|| format!("cannot update chat {id}"))?;
    println!("{id}");
    Ok(ExitCode::SUCCESS)
}
