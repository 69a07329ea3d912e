//! `tavo prompt --chat ID`: the exact message list that would be sent for the chat's next
//! reply. Changes nothing unless `--record` is given.

use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use serde_json::json;
use tavo_model::{CharacterId, ChatId};
use tavo_prompt::loader::{self, LoadError};
use tavo_prompt::{GenerationType, PromptConverter, PromptEngine, PromptOptions};

use crate::context::Context;
use crate::library::open_store;

#[derive(Debug, Clone, Copy, ValueEnum)]
enum ConverterArg {
    None,
    Merge,
    SingleSystem,
    SystemThenUser,
}

/// Print the prompt the chat's next reply would send.
#[derive(Debug, Args)]
pub struct PromptArgs {
    /// The chat's id.
    #[arg(long, value_name = "ID")]
    chat: i64,
    /// Print JSON: the message array, or with --explain one object with `messages`,
    /// `activatedEntries`, `skippedEntries`, `regexApplied`, `tokens`, `diagnostics`.
    #[arg(long)]
    json: bool,
    /// Also report lorebook activations and gates, regex rules applied, and token counts.
    #[arg(long)]
    explain: bool,
    /// Seed of random macros and lorebook probability (default: derived from the chat id and
    /// its message count, so it is stable until the chat changes).
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Record the assembly as a generation: lorebook timed effects advance and variable
    /// macros are saved, exactly as after a real reply.
    #[arg(long)]
    record: bool,
    /// Model the prompt is for (chooses the tokenizer).
    #[arg(long, value_name = "NAME", default_value = "gpt-4o")]
    model: String,
    /// Context window in tokens.
    #[arg(long, value_name = "TOKENS", default_value_t = 16_384)]
    context: usize,
    /// Tokens reserved for the reply.
    #[arg(long, value_name = "TOKENS", default_value_t = 1_024)]
    response: usize,
    /// Provider prompt converter applied last.
    #[arg(long, value_enum, default_value = "none")]
    converter: ConverterArg,
    /// Build for "continue the last message".
    #[arg(long, conflicts_with = "impersonate")]
    r#continue: bool,
    /// Build for "write the user's next message".
    #[arg(long)]
    impersonate: bool,
    /// The character who replies in a group chat (default: the next member in turn).
    #[arg(long, value_name = "ID")]
    speaker: Option<i64>,
}

pub fn run(args: PromptArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    let store = open_store(ctx)?;
    let chat_id = ChatId(args.chat);
    let loaded = match loader::load(&store, chat_id) {
        Ok(loaded) => loaded,
        Err(LoadError::ChatNotFound(id)) => {
            eprintln!("error: chat {id} not found (see `tavo list chats`)");
            return Ok(ExitCode::FAILURE);
        }
        Err(e) => return Err(e).context("cannot load the chat"),
    };
    for missing in &loaded.missing {
        eprintln!(
            "warning: the chat is bound to {missing}, which no longer exists; it was skipped"
        );
    }
    let speaker = match args.speaker {
        Some(id) => loaded
            .characters
            .iter()
            .position(|c| c.id == Some(CharacterId(id)))
            .with_context(|| format!("character {id} is not a member of chat {chat_id}"))?,
        None => loaded.next_speaker(),
    };
    let mut options = PromptOptions::new(tavo_prompt::local_now());
    options.seed = args.seed.unwrap_or_else(|| {
        (args.chat as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ loaded.messages.len() as u64
    });
    options.model = args.model;
    options.max_context_tokens = args.context;
    options.max_response_tokens = args.response;
    options.converter = match args.converter {
        ConverterArg::None => PromptConverter::None,
        ConverterArg::Merge => PromptConverter::MergeConsecutive,
        ConverterArg::SingleSystem => PromptConverter::SingleSystem,
        ConverterArg::SystemThenUser => PromptConverter::SystemThenUser,
    };
    options.generation = if args.r#continue {
        GenerationType::Continue
    } else if args.impersonate {
        GenerationType::Impersonate
    } else {
        GenerationType::Normal
    };
    let output = PromptEngine::new().build(&loaded.input(speaker), &options);
    for d in &output.explain.diagnostics {
        match &d.text {
            Some(text) => eprintln!("warning: {}: {} ({text})", d.location, d.message),
            None => eprintln!("warning: {}: {}", d.location, d.message),
        }
    }
    if args.record {
        loader::record(&store, chat_id, &output).context("cannot record the generation")?;
    }
    let e = &output.explain;
    if args.json {
        let value = if args.explain {
            json!({
                "messages": output.messages,
                "activatedEntries": e.activated_entries,
                "skippedEntries": e.skipped_entries,
                "regexApplied": e.regex_applied,
                "tokens": e.tokens,
                "diagnostics": e.diagnostics,
            })
        } else {
            serde_json::to_value(&output.messages)?
        };
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(ExitCode::SUCCESS);
    }
    let mut first = true;
    for m in &output.messages {
        if !first {
            println!();
        }
        first = false;
        match &m.name {
            Some(name) => println!("[{}:{name}]", m.role.as_str()),
            None => println!("[{}]", m.role.as_str()),
        }
        println!("{}", m.content);
    }
    if args.explain {
        println!("\n==== explain ====");
        for a in &e.activated_entries {
            println!(
                "activated  lorebook {} entry {:?} ({}) at {:?}: {}",
                a.lorebook_id.map(|i| i.to_string()).unwrap_or_default(),
                a.identifier,
                a.name,
                a.injection_position,
                serde_json::to_string(&a.reason)?
            );
        }
        for s in &e.skipped_entries {
            println!(
                "skipped    lorebook {} entry {:?} ({}): {:?}",
                s.lorebook_id.map(|i| i.to_string()).unwrap_or_default(),
                s.identifier,
                s.name,
                s.gate
            );
        }
        for r in &e.regex_applied {
            println!(
                "regex      {:?} ({}) on {}: {} replacement(s)",
                r.identifier, r.name, r.target, r.replacements
            );
        }
        for p in &e.tokens.parts {
            println!("tokens     {:<20} {}", p.part, p.tokens);
        }
        println!(
            "tokens     total {} of {} ({}{}); history {}/{} messages",
            e.tokens.total,
            e.tokens.budget,
            e.tokens.encoding,
            if e.tokens.estimated {
                ", estimated"
            } else {
                ""
            },
            e.tokens.history_included,
            e.tokens.history_available
        );
    }
    Ok(ExitCode::SUCCESS)
}
