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
use tavo_engine::{ReplyRequest, ReplyStatus};
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
            let engine = crate::engine::for_replies(store).await?;
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
        let engine = crate::engine::for_replies(store).await?;
        let image = match args.image {
            Some(image) => Some(attachment(&engine, args.chat, image).await?),
            None => None,
        };
        let request = ReplyRequest {
            chat: args.chat,
            kind,
            message: args.message,
            connection: args.connection,
            limits: None,
            image,
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

/// Largest picture `--image` saves, as the app's composer: what a description request sends.
const MAX_ATTACHMENT_BYTES: u64 = tavo_engine::describe::MAX_IMAGE_BYTES as u64;

/// The library reference of `--image`: as given when it names a file of the library, else the
/// picture on disk saved into the chat's files by `tavo_file_save` (the operation every door
/// saves with) under `upload-<seconds>-<name>`.
async fn attachment(
    engine: &tavo_engine::Engine,
    chat: i64,
    image: String,
) -> anyhow::Result<String> {
    use anyhow::Context as _;
    use base64::Engine as _;
    if image.starts_with("files/chat/") || image.starts_with("files/global/") {
        return Ok(image);
    }
    let path = std::path::Path::new(&image);
    let size = std::fs::metadata(path)
        .with_context(|| {
            format!("--image {image}: not a file on disk nor files/chat/NAME or files/global/NAME")
        })?
        .len();
    anyhow::ensure!(
        size <= MAX_ATTACHMENT_BYTES,
        "--image {image}: {size} bytes; at most {MAX_ATTACHMENT_BYTES} are attached"
    );
    let bytes = std::fs::read(path).with_context(|| format!("reading {image}"))?;
    // Known by its bytes, as the description reads it.
    let Some(mime) = tavo_llm::media::image::sniff_mime(&bytes) else {
        anyhow::bail!("--image {image}: not a picture the providers take (png, jpeg, webp or gif)");
    };
    let ext = mime.trim_start_matches("image/");
    let stem: String = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("image")
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(60)
        .collect();
    let name = format!("upload-{}-{stem}.{ext}", chrono::Utc::now().timestamp());
    let content = format!(
        "data:{mime};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(&bytes)
    );
    let args = serde_json::json!({"name": name, "content": content, "options": {"scope": "chat"}});
    // Passing --image is the user's consent to saving it.
    let envelope = super::tool::call_tool(engine, Some(chat), "tavo_file_save", args, true).await;
    if envelope.get("ok").and_then(serde_json::Value::as_bool) != Some(true) {
        anyhow::bail!(
            "saving --image {image} into the chat's files: {}",
            envelope["error"]
        );
    }
    Ok(format!("files/chat/{name}"))
}
