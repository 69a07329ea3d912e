//! `tavo reply --chat ID --message TEXT [--image FILE] [--speaker CID] [--connection NAME] [--json]
//! [--approve ask|all|none]`: one reply, with the engine's full tool loop. In a group chat the
//! chat's reply mode decides who answers (each speaker's answer is its own message, each
//! introduced by a `speaker` event; on a terminal, by a `Name:` line on stderr); `--speaker`
//! makes one member answer, muted or not. Without `--json` stdout carries the answer
//! text as it streams (tool lines and reasoning on stderr); with `--json` every event is one
//! JSON line on stdout (`seq`, `replyId`, `type`, …; the last is `finished` with the whole
//! text). Ctrl-C cancels the reply.

use std::process::ExitCode;

use clap::{Args, ValueEnum};
use tavo_engine::send::{Attachment, Outgoing, Sent};
use tavo_engine::{EngineError, ReplyKind, ReplyRequest, ReplyStatus};
use tavo_model::{CharacterId, ChatId};
use tavo_tools::GenerationKind;

use super::chat_tui::{Approve, Pump, pump};
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
    /// An image the message carries (normal replies): a picture on disk (saved into the
    /// chat's files first, as the app's "Attach image" does) or a file of the library,
    /// `files/chat/NAME` or `files/global/NAME`; with it `--message` may be left out.
    #[arg(long, value_name = "FILE")]
    image: Option<String>,
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
    let sending = args.message.is_some() || args.image.is_some();
    if sending && kind != GenerationKind::Normal {
        anyhow::bail!(
            "invalid_arguments: --message, --image: expected no message (only a normal reply sends one)"
        );
    }
    let result = runtime.block_on(async {
        let engine = crate::engine::for_replies(store).await?;
        let handle = if sending {
            // The engine's one send, as `tavo chat`, the app and `tavo_input_send` do:
            // `/imagine <prompt>` makes an image instead of a reply; nothing to send is refused.
            let out = Outgoing {
                chat: ChatId(args.chat),
                text: Some(args.message.unwrap_or_default()),
                image: args.image.map(attachment).transpose()?,
                connection: args.connection,
                speaker: args.speaker,
            };
            let sent = match engine.send(out).await {
                // The picture's refusal names this door's flag.
                Err(EngineError::Operation(e))
                    if e.details.as_ref().is_some_and(|d| d["path"] == "image") =>
                {
                    anyhow::bail!("{}: --{}", e.code.as_str(), e.message)
                }
                sent => sent?,
            };
            match sent {
                Sent::Reply { handle, .. } => handle,
                Sent::Imagined(d) => {
                    if args.json {
                        println!("{}", serde_json::json!({"type": "image", "image": d}));
                    } else {
                        println!("{}\n({})", d.content, d.path);
                    }
                    return Ok(ReplyStatus::Finished);
                }
            }
        } else {
            // No message: the reply answers the chat as it stands (or regenerates, swipes, …).
            let mut reply = ReplyKind::plain(kind);
            if let Some(speaker) = args.speaker {
                reply = reply
                    .with_speaker(CharacterId(speaker), "--speaker")
                    .map_err(|e| anyhow::anyhow!("{}: {}", e.code.as_str(), e.message))?;
            }
            let request = ReplyRequest {
                connection: args.connection,
                ..ReplyRequest::new(ChatId(args.chat), reply)
            };
            engine.start(request)?
        };
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

/// What `--image` names: a file of the library as given, else a picture on disk, read here
/// and saved into the chat's files by the engine's send (which checks its size and type).
fn attachment(image: String) -> anyhow::Result<Attachment> {
    use anyhow::Context as _;
    if image.starts_with("files/chat/") || image.starts_with("files/global/") {
        return Ok(Attachment::Stored(image));
    }
    let bytes = std::fs::read(&image).with_context(|| {
        format!("--image {image}: not a file on disk nor files/chat/NAME or files/global/NAME")
    })?;
    Ok(Attachment::Picture { name: image, bytes })
}
