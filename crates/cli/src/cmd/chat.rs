//! `tavo chat create|update|clone|mute|unmute`: chats and their bindings (characters, persona,
//! preset, lorebooks, regex groups), a group chat's reply mode and muted members. The work is [`tavo_tools::chats`], the functions HTTP and the
//! model's tools call too; this module only maps flags onto their arguments.

use std::process::ExitCode;

use anyhow::anyhow;
use clap::{Args, Subcommand};
use tavo_model::{CharacterId, ChatId, ReplyMode};
use tavo_tools::ToolError;
use tavo_tools::chats::{AssetRef, ChatEdit, NewChat, clone_chat, create_chat, update_chat};

use crate::context::Context;
use crate::library::open_store;

/// Create, rebind or clone chats; with no subcommand, chat in the terminal.
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
    /// Create a chat; prints its id. The first character's greeting becomes the first message
    /// (its other greetings are swipes), and each character's own lorebook and regex group
    /// (the ones its card came with) are bound.
    Create {
        #[command(flatten)]
        bindings: Bindings,
        /// Do not add the greeting as the first message.
        #[arg(long)]
        no_greeting: bool,
        /// Do not bind the characters' own lorebooks and regex groups.
        #[arg(long)]
        no_card_bindings: bool,
        /// Group chats: who answers a user's message (default natural).
        #[arg(long, value_enum, value_name = "MODE")]
        reply_mode: Option<ModeArg>,
    },
    /// Change a chat's bindings; only the flags given are changed (a list flag replaces the list).
    Update {
        /// The chat's id.
        id: i64,
        #[command(flatten)]
        bindings: Bindings,
        /// Unbind the persona (the chat follows the active persona).
        #[arg(long, conflicts_with = "persona")]
        no_persona: bool,
        /// Unbind the preset (the built-in default preset applies).
        #[arg(long, conflicts_with = "preset")]
        no_preset: bool,
        /// Unbind every lorebook (the characters' own included).
        #[arg(long, conflicts_with = "lorebooks")]
        no_lorebooks: bool,
        /// Unbind every regex group (the characters' own included).
        #[arg(long, conflicts_with = "regexes")]
        no_regexes: bool,
        /// Advanced rendering in the browser app: messages as HTML + CSS (on) or Markdown only (off).
        #[arg(long, value_name = "on|off", value_parser = on_off)]
        advanced_rendering: Option<bool>,
        /// Group chats: who answers a user's message.
        #[arg(long, value_enum, value_name = "MODE")]
        reply_mode: Option<ModeArg>,
    },
    /// Mute a group member: it no longer answers unless chosen with `tavo reply --speaker`.
    Mute {
        /// The chat's id.
        id: i64,
        /// The member's character id.
        #[arg(long = "character", value_name = "CID")]
        character: i64,
    },
    /// Unmute a group member.
    Unmute {
        /// The chat's id.
        id: i64,
        /// The member's character id.
        #[arg(long = "character", value_name = "CID")]
        character: i64,
    },
    /// Copy a chat with its messages, variables, memory and files; prints the new id.
    Clone {
        /// The chat to copy.
        id: i64,
        /// Name of the copy (default: "<name> (copy)").
        #[arg(long, value_name = "NAME")]
        name: Option<String>,
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
}

/// A group chat's reply mode (Tavo §12).
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum ModeArg {
    /// Mentioned members answer, in mention order; else one random member.
    Natural,
    /// Every unmuted member answers, in member order.
    All,
    /// Only members addressed as @name answer.
    Designated,
    /// A speaker-selection request on the connection picks who answers.
    Contextual,
}

impl From<ModeArg> for ReplyMode {
    fn from(m: ModeArg) -> Self {
        match m {
            ModeArg::Natural => ReplyMode::Natural,
            ModeArg::All => ReplyMode::All,
            ModeArg::Designated => ReplyMode::Designated,
            ModeArg::Contextual => ReplyMode::Contextual,
        }
    }
}

/// `on`/`off` (also `true`/`false`) for a switch flag.
fn on_off(s: &str) -> Result<bool, String> {
    match s {
        "on" | "true" => Ok(true),
        "off" | "false" => Ok(false),
        _ => Err(format!("expected on or off, got {s:?}")),
    }
}

fn refs(ids: &[i64]) -> Vec<AssetRef> {
    ids.iter().copied().map(AssetRef::from).collect()
}

/// A refusal as the other doors word it: `code: message`.
fn refused(e: ToolError) -> anyhow::Error {
    anyhow!("{}: {}", e.code, e.message)
}

fn mute(store: &tavo_store::Store, id: i64, character: i64, muted: bool) -> anyhow::Result<ChatId> {
    tavo_tools::group::set_muted(store, ChatId(id), CharacterId(character), muted)
        .map_err(refused)?;
    Ok(ChatId(id))
}

pub fn run(args: ChatArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    let Some(command) = args.command else {
        return crate::cmd::chat_tui::run(args.id, ctx);
    };
    let store = open_store(ctx)?;
    let id = match command {
        ChatCommand::Create {
            bindings: b,
            no_greeting,
            no_card_bindings,
            reply_mode,
        } => {
            let new = NewChat {
                name: b.name,
                characters: refs(&b.characters),
                persona: b.persona.map(AssetRef::from),
                preset: b.preset.map(AssetRef::from),
                lorebooks: refs(&b.lorebooks),
                regexes: refs(&b.regexes),
                background: None,
                card_bindings: Some(!no_card_bindings),
                greeting: Some(!no_greeting),
                advanced_rendering: None,
                reply_mode: reply_mode.map(ReplyMode::from),
            };
            create_chat(&store, new).map_err(refused)?.id
        }
        ChatCommand::Update {
            id,
            bindings: b,
            no_persona,
            no_preset,
            no_lorebooks,
            no_regexes,
            advanced_rendering,
            reply_mode,
        } => {
            let one = |flag: Option<i64>, clear: bool| {
                if clear {
                    Some(None)
                } else {
                    flag.map(|id| Some(AssetRef::from(id)))
                }
            };
            let list = |ids: &[i64], clear: bool| (clear || !ids.is_empty()).then(|| refs(ids));
            let edit = ChatEdit {
                name: b.name,
                characters: (!b.characters.is_empty()).then(|| refs(&b.characters)),
                persona: one(b.persona, no_persona),
                preset: one(b.preset, no_preset),
                lorebooks: list(&b.lorebooks, no_lorebooks),
                regexes: list(&b.regexes, no_regexes),
                background: None,
                advanced_rendering,
                reply_mode: reply_mode.map(ReplyMode::from),
            };
            update_chat(&store, ChatId(id), edit).map_err(refused)?;
            ChatId(id)
        }
        ChatCommand::Clone { id, name } => clone_chat(&store, ChatId(id), name).map_err(refused)?,
        ChatCommand::Mute { id, character } => mute(&store, id, character, true)?,
        ChatCommand::Unmute { id, character } => mute(&store, id, character, false)?,
    };
    println!("{id}");
    Ok(ExitCode::SUCCESS)
}
