//! `tavo reply --chat ID --message TEXT [--speaker CID] [--connection NAME] [--json]
//! [--approve ask|all|none]`: one reply, with the engine's full tool loop. In a group chat the
//! chat's reply mode decides who answers (each speaker's answer is its own message, each
//! introduced by a `speaker` event; on a terminal, by a `Name:` line on stderr); `--speaker`
//! makes one member answer, muted or not. Without `--json` stdout carries the answer
//! text as it streams (tool lines and reasoning on stderr); with `--json` every event is one
//! JSON line on stdout (`seq`, `replyId`, `type`, …; the last is `finished` with the whole
//! text). Ctrl-C cancels the reply.

use std::process::ExitCode;

use clap::{Args, ValueEnum};
use tavo_engine::{ReplyRequest, ReplyStatus};
use tavo_tools::GenerationKind;

use super::chat_tui::{Approve, Pump, engine, pump};
use crate::context::Context;
use crate::library::open_store;

#[derive(Debug, Clone, Copy, ValueEnum)]
enum KindArg {
    Normal,
    Regenerate,
    Swipe,
    Continue,
    Impersonate,
    Quiet,
}

/// Generate one reply in a chat.
#[derive(Debug, Args)]
pub struct ReplyArgs {
    /// The chat's id.
    #[arg(long, value_name = "ID")]
    chat: i64,
    /// The user's message, stored before the reply (normal replies).
    #[arg(long, value_name = "TEXT")]
    message: Option<String>,
    /// Connection name (default: the default connection).
    #[arg(long, value_name = "NAME")]
    connection: Option<String>,
    /// Print every event as a JSON line.
    #[arg(long)]
    json: bool,
    /// How confirmations are answered: ask on the terminal, allow all, or refuse all.
    #[arg(long, value_enum, default_value = "ask")]
    approve: Approve,
    /// What to generate.
    #[arg(long, value_enum, default_value = "normal")]
    kind: KindArg,
    /// Group chats: the member (character id) who answers, instead of the reply mode.
    #[arg(long, value_name = "CID")]
    speaker: Option<i64>,
}

/// Runs `tavo reply`.
pub fn run(args: ReplyArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    let store = open_store(ctx)?;
    let kind = match args.kind {
        KindArg::Normal => GenerationKind::Normal,
        KindArg::Regenerate => GenerationKind::Regenerate,
        KindArg::Swipe => GenerationKind::Swipe,
        KindArg::Continue => GenerationKind::Continue,
        KindArg::Impersonate => GenerationKind::Impersonate,
        KindArg::Quiet => GenerationKind::Quiet,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    // `/imagine <prompt>` generates an image into the chat instead of a reply (`tavo image
    // imagine`).
    if kind == GenerationKind::Normal
        && let Some(prompt) = args
            .message
            .as_deref()
            .and_then(tavo_engine::image::imagine_prompt)
    {
        let prompt = prompt.to_owned();
        let done = runtime.block_on(async {
            let engine = engine(store).await?;
            anyhow::Ok(engine.imagine(args.chat, &prompt, None).await)
        });
        runtime.shutdown_background();
        return match done? {
            Ok(d) if args.json => {
                println!("{}", serde_json::json!({"type": "image", "image": d}));
                Ok(ExitCode::SUCCESS)
            }
            Ok(d) => {
                println!("{}\n({})", d.content, d.path);
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => {
                eprintln!("error: {} ({})", e.message, e.code.as_str());
                Ok(ExitCode::FAILURE)
            }
        };
    }
    let result = runtime.block_on(async {
        let engine = engine(store).await?;
        let request = ReplyRequest {
            chat: args.chat,
            kind,
            message: args.message,
            connection: args.connection,
            limits: None,
        };
        let handle = engine.start_with_speaker(request, args.speaker)?;
        let canceller = handle.clone();
        let ctrl_c = tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("\n(cancelling the reply)");
                canceller.cancel();
            }
        });
        let (status, _) = pump(
            &handle,
            Pump {
                json: args.json,
                approve: args.approve,
            },
        )
        .await?;
        ctrl_c.abort();
        // A memory extraction the reply made due runs after it; this process waits for it
        // before exiting (the answer is already printed and saved).
        engine.wait_background().await;
        Ok::<ReplyStatus, anyhow::Error>(status)
    });
    runtime.shutdown_background();
    Ok(match result? {
        ReplyStatus::Finished => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    })
}
