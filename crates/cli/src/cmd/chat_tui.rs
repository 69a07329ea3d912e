//! `tavo chat [ID]`: an interactive terminal chat over the reply engine — streaming text,
//! reasoning shown apart (dimmed, on stderr), each tool call as one compact line,
//! confirmations and `tavo_ask_user` as prompts. Ctrl-C cancels the running reply, not the
//! program; Ctrl-D or `/quit` leaves.
//!
//! The event pump and the prompts here are shared with `tavo reply`.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use anyhow::{Context as _, bail};
use tavo_engine::send::{Outgoing, Sent};
use tavo_engine::{
    CallStatus, Engine, EventKind, Interaction, ReplyEvent, ReplyHandle, ReplyKind, ReplyRequest,
    ReplyStatus, Response,
};
use tavo_model::ChatId;
use tavo_store::Store;
use tavo_tools::{GenerationKind, Question, UserAnswer};

use crate::context::Context;
use crate::library::open_store;

/// How confirmations are answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Approve {
    /// Ask on the terminal (refused when there is none).
    Ask,
    /// Allow every confirmation of this reply.
    All,
    /// Refuse every confirmation of this reply.
    None,
}

/// How the pump shows and answers a reply.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pump {
    /// Events as JSON lines on stdout instead of text.
    pub json: bool,
    pub approve: Approve,
}

fn dim(text: &str) -> String {
    if std::io::stderr().is_terminal() {
        format!("\x1b[2m{text}\x1b[0m")
    } else {
        text.to_owned()
    }
}

/// One event as a terminal shows it: answer text on stdout, everything else on stderr.
fn render(ev: &ReplyEvent, in_reasoning: &mut bool) {
    let mut out = std::io::stdout();
    let mut err = std::io::stderr();
    match &ev.kind {
        EventKind::TextDelta { text } => {
            if std::mem::take(in_reasoning) {
                let _ = writeln!(err);
            }
            let _ = write!(out, "{text}");
            let _ = out.flush();
        }
        EventKind::ReasoningDelta { text } => {
            if !*in_reasoning {
                *in_reasoning = true;
                let _ = write!(err, "{}", dim("thinking: "));
            }
            let _ = write!(err, "{}", dim(text));
            let _ = err.flush();
        }
        EventKind::ToolCall { call }
            if matches!(call.status, CallStatus::Ok | CallStatus::Error) =>
        {
            let outcome = call.error_code.as_deref().unwrap_or("ok");
            let label = if call.label.is_empty() {
                String::new()
            } else {
                format!(" ({})", call.label)
            };
            let _ = writeln!(
                err,
                "{}",
                dim(&format!("  ⚙ {}{label} → {outcome}", call.tool))
            );
        }
        EventKind::Speaker { name, turn, .. } => {
            // Each group member's answer on its own lines, introduced on stderr.
            if *turn > 1 {
                let _ = writeln!(out);
                let _ = out.flush();
            }
            let _ = writeln!(err, "{}", dim(&format!("{name}:")));
        }
        EventKind::Warning { message } => {
            let _ = writeln!(err, "warning: {message}");
        }
        EventKind::Error { message } => {
            let _ = writeln!(err, "error: {message}");
        }
        EventKind::Finished { text, .. } if !text.is_empty() => {
            let _ = writeln!(out);
        }
        _ => {}
    }
}

/// Follows a reply to its end: prints its events, answers what it waits for. Returns the final
/// status and the whole answer text.
pub(crate) async fn pump(handle: &ReplyHandle, how: Pump) -> anyhow::Result<(ReplyStatus, String)> {
    let mut sub = handle.subscribe(0);
    let mut in_reasoning = false;
    while let Some(item) = sub.next().await {
        let ev = match item {
            Ok(ev) => ev,
            Err(gap) => {
                eprintln!("warning: {gap}");
                continue;
            }
        };
        if how.json {
            println!("{}", ev.to_json_line());
            // Warnings (history cut to fit, rules skipped) also reach the terminal.
            if let EventKind::Warning { message } = &ev.kind {
                eprintln!("warning: {message}");
            }
        } else {
            render(&ev, &mut in_reasoning);
        }
        match &ev.kind {
            EventKind::Waiting {
                pending_id,
                interaction,
            } => answer(handle, *pending_id, interaction, how.approve).await?,
            EventKind::Finished { status, text, .. } => return Ok((*status, text.clone())),
            _ => {}
        }
    }
    Ok((handle.status(), String::new()))
}

async fn answer(
    handle: &ReplyHandle,
    pending_id: u64,
    interaction: &Interaction,
    approve: Approve,
) -> anyhow::Result<()> {
    loop {
        let response = match interaction {
            Interaction::Confirmation {
                tool, arguments, ..
            } => match approve {
                Approve::All => Response::Approve { remember: false },
                Approve::None => Response::Deny { remember: false },
                Approve::Ask => {
                    let prompt = format!("{tool} wants to run with {arguments}");
                    tokio::task::spawn_blocking(move || confirm_on_terminal(&prompt)).await??
                }
            },
            Interaction::Question { question, .. } => {
                let q = question.clone();
                Response::Answer {
                    answer: tokio::task::spawn_blocking(move || ask_on_terminal(&q)).await??,
                }
            }
        };
        match handle.respond(pending_id, response) {
            Ok(()) => return Ok(()),
            Err(tavo_engine::RespondError::Invalid(why)) => eprintln!("{why}"),
            Err(e) => {
                // Cancelled or already answered elsewhere: nothing left to do here.
                eprintln!("note: {e}");
                return Ok(());
            }
        }
    }
}

/// Asks to allow a call: yes, no, always (this chat), never (this chat).
fn confirm_on_terminal(prompt: &str) -> anyhow::Result<Response> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        eprintln!("{prompt}: refused (no terminal to ask; pass --approve all to allow)");
        return Ok(Response::Deny { remember: false });
    }
    let mut err = std::io::stderr();
    loop {
        write!(
            err,
            "? {prompt}\n  allow? [y]es / [n]o / [a]lways in this chat / ne[v]er in this chat > "
        )?;
        err.flush()?;
        let mut line = String::new();
        if stdin.lock().read_line(&mut line)? == 0 {
            return Ok(Response::Deny { remember: false });
        }
        match line.trim().to_lowercase().as_str() {
            "y" | "yes" => return Ok(Response::Approve { remember: false }),
            "n" | "no" | "" => return Ok(Response::Deny { remember: false }),
            "a" | "always" => return Ok(Response::Approve { remember: true }),
            "v" | "never" => return Ok(Response::Deny { remember: true }),
            _ => writeln!(err, "please answer y, n, a or v")?,
        }
    }
}

/// Asks a `tavo_ask_user` question; without a terminal the question is closed (cancelled).
fn ask_on_terminal(q: &Question) -> anyhow::Result<UserAnswer> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        eprintln!(
            "(no terminal to ask {:?}; the question was closed)",
            q.question
        );
        return Ok(UserAnswer::Cancelled);
    }
    let mut err = std::io::stderr();
    writeln!(err, "? {}", q.question)?;
    for (i, o) in q.options.iter().enumerate() {
        let mark = if q.default_value.as_deref() == Some(o.value.as_str()) {
            " (default)"
        } else {
            ""
        };
        let desc = o
            .description
            .as_deref()
            .map(|d| format!(" — {d}"))
            .unwrap_or_default();
        writeln!(err, "  {}. {}{desc}{mark}", i + 1, o.label)?;
    }
    let hint = match (q.options.is_empty(), q.allow_other) {
        (true, _) => q
            .placeholder
            .clone()
            .unwrap_or_else(|| "type your answer".into()),
        (false, true) => "a number, or type your own answer".into(),
        (false, false) => "a number".into(),
    };
    write!(err, "[{hint}; empty line closes the question] > ")?;
    err.flush()?;
    let mut line = String::new();
    if stdin.lock().read_line(&mut line)? == 0 {
        return Ok(UserAnswer::Cancelled);
    }
    let line = line.trim();
    if line.is_empty() {
        return Ok(match &q.default_value {
            Some(d) if q.options.iter().any(|o| &o.value == d) => {
                UserAnswer::Option { value: d.clone() }
            }
            _ => UserAnswer::Cancelled,
        });
    }
    if let Ok(n) = line.parse::<usize>()
        && let Some(o) = n.checked_sub(1).and_then(|i| q.options.get(i))
    {
        return Ok(UserAnswer::Option {
            value: o.value.clone(),
        });
    }
    if let Some(o) = q.options.iter().find(|o| o.value == line) {
        return Ok(UserAnswer::Option {
            value: o.value.clone(),
        });
    }
    Ok(UserAnswer::Custom {
        text: line.to_owned(),
    })
}

const HELP: &str = "commands: /regenerate  /swipe  /continue  /impersonate  /quit   (Ctrl-C cancels a reply, Ctrl-D quits)";

fn latest_chat(store: &Store) -> anyhow::Result<i64> {
    match tavo_tools::reads::latest_chat(store)? {
        Some(id) => Ok(id.0),
        None => bail!("there are no chats yet; create one with `tavo chat create --character ID`"),
    }
}

fn read_line() -> Option<String> {
    let mut err = std::io::stderr();
    let _ = write!(err, "> ");
    let _ = err.flush();
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line),
    }
}

/// Starts a reply of `kind` that sends no message; a refusal is printed.
fn start(engine: &Engine, chat: i64, kind: GenerationKind) -> Option<ReplyHandle> {
    engine
        .start(ReplyRequest::new(ChatId(chat), ReplyKind::plain(kind)))
        .map_err(|e| eprintln!("error: {e}"))
        .ok()
}

/// Sends a typed line through the engine's one send, as every composer does: `/imagine
/// <prompt>` makes an image (shown here, no reply), an empty line is refused. Answers the reply
/// it started.
async fn send(engine: &Engine, chat: i64, text: &str) -> Option<ReplyHandle> {
    match engine.send(Outgoing::text(ChatId(chat), text)).await {
        Ok(Sent::Reply { handle, .. }) => Some(handle),
        Ok(Sent::Imagined(done)) => {
            println!("{}", done.content);
            eprintln!("{}", dim(&format!("(image {})", done.path)));
            None
        }
        Err(e) => {
            eprintln!("error: {e}");
            None
        }
    }
}

/// Runs `tavo chat [ID]`.
pub fn run(id: Option<i64>, ctx: &Context) -> anyhow::Result<ExitCode> {
    let store = open_store(ctx)?;
    let chat_id = match id {
        Some(id) => id,
        None => latest_chat(&store)?,
    };
    let chat = tavo_tools::reads::chat(&store, ChatId(chat_id))?
        .with_context(|| format!("chat {chat_id} not found (see `tavo list chats`)"))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let result = runtime.block_on(async {
        let engine = crate::engine::for_replies(store.clone()).await?;
        eprintln!("chat {chat_id}: {} — {HELP}", chat.name);
        for m in tavo_tools::reads::last_messages(&store, ChatId(chat_id), 6)? {
            let who = m.name.clone().unwrap_or_else(|| m.role.as_str().to_owned());
            eprintln!("{}", dim(&format!("[{who}] {}", m.content)));
        }
        let current: Arc<Mutex<Option<ReplyHandle>>> = Arc::new(Mutex::new(None));
        let watcher = current.clone();
        let ctrl_c = tokio::spawn(async move {
            while tokio::signal::ctrl_c().await.is_ok() {
                let handle = watcher.lock().ok().and_then(|h| h.clone());
                match handle {
                    Some(h) if h.status().is_live() => {
                        eprintln!("\n(cancelling the reply)");
                        h.cancel();
                    }
                    _ => eprintln!("\n(no reply is running; Ctrl-D or /quit leaves)"),
                }
            }
        });
        loop {
            let Some(line) = tokio::task::spawn_blocking(read_line).await? else {
                break;
            };
            let line = line.trim();
            let (kind, handle) = match line {
                "/quit" | "/exit" => break,
                "/help" => {
                    eprintln!("{HELP}");
                    continue;
                }
                "/regenerate" => (
                    GenerationKind::Regenerate,
                    start(&engine, chat_id, GenerationKind::Regenerate),
                ),
                "/swipe" => (
                    GenerationKind::Swipe,
                    start(&engine, chat_id, GenerationKind::Swipe),
                ),
                "/continue" => (
                    GenerationKind::Continue,
                    start(&engine, chat_id, GenerationKind::Continue),
                ),
                "/impersonate" => (
                    GenerationKind::Impersonate,
                    start(&engine, chat_id, GenerationKind::Impersonate),
                ),
                text => (GenerationKind::Normal, send(&engine, chat_id, text).await),
            };
            let Some(handle) = handle else { continue };
            if let Ok(mut slot) = current.lock() {
                *slot = Some(handle.clone());
            }
            let (status, text) = pump(
                &handle,
                Pump {
                    json: false,
                    approve: Approve::Ask,
                },
            )
            .await?;
            if kind == GenerationKind::Impersonate && status == ReplyStatus::Finished {
                eprintln!(
                    "{}",
                    dim("(written to the input draft; send it by typing it or edit it first)")
                );
                let _ = text;
            }
            if status == ReplyStatus::Cancelled {
                eprintln!("{}", dim("(reply cancelled)"));
            }
        }
        ctrl_c.abort();
        Ok::<(), anyhow::Error>(())
    });
    runtime.shutdown_background();
    result.map(|()| ExitCode::SUCCESS)
}
