//! `tavo prompt --chat ID`: the exact request the chat's next reply would send first — its
//! messages (tool-history lines and the tool-use hint included), its tool declarations, model
//! and parameters — built by the reply's own code (`Engine::preview`). Changes nothing unless
//! `--record` is given.

use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;
use tavo_engine::McpStart;
use tavo_engine::prompt::{ParameterSource, Preview, PreviewRequest};
use tavo_llm::{Parameters, Role};
use tavo_model::{CharacterId, ChatId};
use tavo_tools::GenerationKind;

use crate::context::Context;
use crate::library::open_store;

/// Print the prompt the chat's next reply would send.
#[derive(Debug, Args)]
pub struct PromptArgs {
    /// The chat's id.
    #[arg(long)]
    chat: i64,
    /// Print JSON: the message array, or with --explain one object with `messages`, `tools`,
    /// `model`, `parameters`, `activatedEntries`, `skippedEntries`, `regexApplied`, `tokens`,
    /// `diagnostics`.
    #[arg(long)]
    json: bool,
    /// Also report lorebook activations and gates, regex rules applied, token counts, the
    /// parameters and where each came from, and the tools declared.
    #[arg(long)]
    explain: bool,
    /// Seed of random macros and lorebook probability (default: the reply's, derived from the
    /// chat id and its message count, so it is stable until the chat changes).
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Record the assembly as a generation: lorebook timed effects advance and variable
    /// macros are saved, exactly as after a real reply.
    #[arg(long)]
    record: bool,
    /// Connection the reply would use (default: the default connection). Its model, context
    /// length and reply tokens apply, under the preset's values (see `prompt.presetSamplers`).
    #[arg(long, value_name = "NAME")]
    connection: Option<String>,
    /// What-if: another model (chooses the tokenizer). A reply uses its connection's.
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
    /// What-if: another context window in tokens, over the preset's and the connection's.
    #[arg(long, value_name = "TOKENS")]
    context: Option<u32>,
    /// What-if: other reply tokens, over the preset's and the connection's.
    #[arg(long, value_name = "TOKENS")]
    response: Option<u32>,
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

fn role_name(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

fn source_name(s: ParameterSource) -> &'static str {
    match s {
        ParameterSource::Preset => "preset",
        ParameterSource::Connection => "connection",
        ParameterSource::Default => "default",
        ParameterSource::Override => "override",
    }
}

pub fn run(args: PromptArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    let store = open_store(ctx)?;
    // The engine a reply runs in — the outside MCP servers connected, so the tools shown are
    // the ones the request declares — without start-up recovery: a preview changes nothing.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let engine = runtime.block_on(crate::engine::build(store, McpStart::Wait))?;
    let kind = if args.r#continue {
        GenerationKind::Continue
    } else if args.impersonate {
        GenerationKind::Impersonate
    } else {
        GenerationKind::Normal
    };
    let request = PreviewRequest {
        chat: ChatId(args.chat),
        kind,
        connection: args.connection,
        model: args.model,
        overrides: Parameters {
            context_length: args.context,
            max_output_tokens: args.response,
            ..Parameters::default()
        },
        seed: args.seed,
        speaker: args.speaker.map(CharacterId),
        record: args.record,
    };
    let preview = engine.preview(&request)?;
    warn(&preview);
    if args.json {
        let value = if args.explain {
            preview.explain_json()
        } else {
            preview.messages_json()
        };
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(ExitCode::SUCCESS);
    }
    let mut first = true;
    for m in &preview.request.messages {
        if !first {
            println!();
        }
        first = false;
        println!("[{}]", role_name(m.role));
        println!("{}", m.joined_text());
    }
    if args.explain {
        explain_text(&preview)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn warn(preview: &Preview) {
    let base = &preview.base;
    for missing in &base.missing {
        eprintln!(
            "warning: the chat is bound to {missing}, which no longer exists; it was skipped"
        );
    }
    for d in &base.explain.diagnostics {
        match &d.text {
            Some(text) => eprintln!("warning: {}: {} ({text})", d.location, d.message),
            None => eprintln!("warning: {}: {}", d.location, d.message),
        }
    }
    if let Some(cut) = base.history_cut() {
        eprintln!("warning: {cut}");
    }
    if preview.connection.is_none() {
        eprintln!(
            "note: no connection is configured; the prompt is built for gpt-4o with the built-in defaults"
        );
    }
}

fn explain_text(preview: &Preview) -> anyhow::Result<()> {
    let e = &preview.base.explain;
    println!("\n==== explain ====");
    println!(
        "model      {} (connection {})",
        preview.request.model,
        preview
            .connection
            .as_deref()
            .unwrap_or("none: built-in defaults")
    );
    for p in &preview.base.parameters.sources {
        let from = match p.preset_key {
            Some(key) => format!("preset {key}"),
            None => source_name(p.source).to_owned(),
        };
        println!("parameter  {:<16} {} ({from})", p.name, p.value);
    }
    let tools: Vec<&str> = preview
        .request
        .tools
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    if tools.is_empty() {
        println!("tools      none (tools.enabled is off, or this kind of reply cannot call tools)");
    } else {
        println!("tools      {} declared: {}", tools.len(), tools.join(", "));
    }
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
    for d in &e.diagnostics {
        println!("diagnostic {}: {}", d.location, d.message);
    }
    let m = &preview.memory;
    let stored = m["stored"].as_u64().unwrap_or(0);
    if m["injected"].as_bool() == Some(true) {
        println!(
            "memory     {stored} long-term memories injected as {} ({} tokens)",
            m["position"].as_str().unwrap_or_default(),
            m["tokens"].as_u64().unwrap_or(0)
        );
    } else if m["enabled"].as_bool() == Some(true) {
        println!("memory     enabled, but the chat has no memories yet (`tavo memory extract`)");
    } else {
        println!(
            "memory     off for this chat ({stored} stored, not injected; `tavo memory set --enable`)"
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
    Ok(())
}
