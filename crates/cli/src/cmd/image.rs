//! `tavo image …`: image generation (Tavo §14.3) and the image connections it uses.
//!
//! - `tavo image generate PROMPT [--chat ID] [--connection NAME] [--size WxH] [--aspect-ratio R]
//!   [--negative TEXT] [--reference FILE|files/chat/NAME]… [--extra JSON] [--save-as NAME]
//!   [--global] [-o FILE] [--json]`: one image over the connection given, else the chat's
//!   binding, else the default image connection. With `-o` the image is written to FILE and
//!   nothing is stored in the library; otherwise it is stored (the chat's files with `--chat`,
//!   else the global files; `--save-as` names it) and its virtual path is printed.
//! - `tavo image imagine --chat ID PROMPT`: `/imagine` — the image stored in the chat and
//!   written as a message with the injection template (`image.injectionTemplate`).
//! - `tavo image describe --message ID [--connection NAME] [--json]`: image sending (§14.4) — the
//!   image a message carries described by the image-description connection (a chat connection:
//!   `--connection`, else `imageSending.connection`, else the default) and stored on it.
//! - `tavo image connection add|list|show|update|remove|default`: the image connection book
//!   (`image.connections`). Keys are write-only: every output masks them.
//!
//! Everything runs through `tavo_engine::image`, the code the model's `tavo_image_generate`
//! and `POST /api/images/generate` run.

use std::process::ExitCode;

use anyhow::{Context as _, bail};
use clap::{Args, Subcommand};
use serde_json::{Value, json};
use tavo_engine::Engine;
use tavo_llm::media::image::{ImageConnection, ImageData, ImagePlatform};
use tavo_llm::media::{KeyChange, MediaPatch, Platform as _};
use tavo_model::{ChatId, ImageType, MessageId};
use tavo_tools::ToolError;
use tavo_tools::ops::files::ScopeArg;
use tavo_tools::ops::image::{ImageOptions, ImageRef, Storage};

use crate::context::Context;
use crate::library::open_store;

/// `tavo image` flags.
#[derive(Debug, Args)]
pub struct ImageArgs {
    #[command(subcommand)]
    command: ImageCommand,
}

#[derive(Debug, Subcommand)]
enum ImageCommand {
    /// Generate one image (prints its stored path, or writes it to -o FILE).
    Generate(GenerateArgs),
    /// `/imagine PROMPT` in a chat: store the image and write it as a message.
    Imagine {
        /// The chat.
        #[arg(long, value_name = "ID")]
        chat: i64,
        /// What to draw.
        prompt: String,
        /// An image connection instead of the chat's / the default.
        #[arg(long, value_name = "NAME")]
        connection: Option<String>,
        /// Print `{messageId, path, mimeType, size, content, prompt}`.
        #[arg(long)]
        json: bool,
    },
    /// Describe the image a message carries (image sending) and store the description on it.
    Describe {
        /// The message.
        #[arg(long, value_name = "ID")]
        message: i64,
        /// A chat connection whose model takes images, instead of `imageSending.connection` /
        /// the default.
        #[arg(long, value_name = "NAME")]
        connection: Option<String>,
        /// Print `{messageId, text, injected, connection}`.
        #[arg(long)]
        json: bool,
    },
    /// Image connections (keys are never printed).
    Connection {
        #[command(subcommand)]
        command: ConnectionCommand,
    },
}

#[derive(Debug, Args)]
struct GenerateArgs {
    /// What to draw.
    prompt: String,
    /// The chat whose image connection and file storage are used.
    #[arg(long, value_name = "ID")]
    chat: Option<i64>,
    /// An image connection by name instead of the chat's / the default.
    #[arg(long, value_name = "NAME")]
    connection: Option<String>,
    /// Pixel size (OpenAI-style platforms), e.g. 1024x1024.
    #[arg(long, value_name = "WxH")]
    size: Option<String>,
    /// Aspect ratio (Gemini, OpenRouter; NovelAI and OpenAI pick a size from it), e.g. 16:9.
    #[arg(long, value_name = "R")]
    aspect_ratio: Option<String>,
    /// Negative prompt (NovelAI).
    #[arg(long, value_name = "TEXT")]
    negative: Option<String>,
    /// A reference image for img2img: a local file, or a stored files/chat/… or files/global/…
    /// path. Repeatable (NovelAI uses only the first).
    #[arg(long, value_name = "FILE")]
    reference: Vec<String>,
    /// Extra provider request fields as a JSON object, e.g. '{"seed": 42}'.
    #[arg(long, value_name = "JSON")]
    extra: Option<String>,
    /// Store under this file name.
    #[arg(long, value_name = "NAME", conflicts_with = "output")]
    save_as: Option<String>,
    /// Store in the global files even with --chat.
    #[arg(long, conflicts_with = "output")]
    global: bool,
    /// Write the image to this file instead of storing it in the library.
    #[arg(short = 'o', long, value_name = "FILE")]
    output: Option<std::path::PathBuf>,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Subcommand)]
enum ConnectionCommand {
    /// Add an image connection (the first one becomes the default).
    Add {
        name: String,
        /// openai, gemini, openrouter or novelai.
        #[arg(long)]
        platform: String,
        #[arg(long)]
        model: String,
        /// Default: the platform's endpoint (https://api.openai.com/v1, …).
        #[arg(long)]
        base_url: Option<String>,
        /// The API key, stored with the data and never printed.
        #[arg(long, conflicts_with = "api_key_env")]
        api_key: Option<String>,
        /// Read the key from this environment variable at request time instead.
        #[arg(long)]
        api_key_env: Option<String>,
        /// A platform option merged into every request, KEY=VALUE (VALUE as JSON, else text).
        #[arg(long = "option", value_name = "KEY=VALUE")]
        options: Vec<String>,
        /// Make it the default image connection.
        #[arg(long)]
        default: bool,
        #[arg(long)]
        json: bool,
    },
    /// List the image connections (keys masked).
    List {
        #[arg(long)]
        json: bool,
    },
    /// Show one image connection as JSON (key masked).
    Show { name: String },
    /// Change fields of an image connection; the others stay.
    Update {
        name: String,
        /// A new name.
        #[arg(long, value_name = "NEW")]
        rename: Option<String>,
        #[arg(long)]
        platform: Option<String>,
        #[arg(long)]
        base_url: Option<String>,
        #[arg(long)]
        model: Option<String>,
        #[arg(long, conflicts_with_all = ["api_key_env", "no_key"])]
        api_key: Option<String>,
        #[arg(long, conflicts_with = "no_key")]
        api_key_env: Option<String>,
        /// Forget the key.
        #[arg(long)]
        no_key: bool,
        /// Set an option, KEY=VALUE (VALUE as JSON, else text).
        #[arg(long = "option", value_name = "KEY=VALUE")]
        options: Vec<String>,
        /// Remove an option.
        #[arg(long = "unset-option", value_name = "KEY")]
        unset: Vec<String>,
        /// Make it the default.
        #[arg(long)]
        default: bool,
        #[arg(long)]
        json: bool,
    },
    /// Remove an image connection.
    Remove { name: String },
    /// Make an image connection the default.
    Default { name: String },
}

fn reference_of(r: &str) -> anyhow::Result<ImageRef> {
    if r.starts_with("files/chat/") || r.starts_with("files/global/") || r.starts_with("data:") {
        return Ok(ImageRef(r.to_owned()));
    }
    let bytes = std::fs::read(r).with_context(|| format!("--reference {r}"))?;
    if ImageType::sniff(&bytes).is_none() {
        bail!("--reference {r}: not a PNG, JPEG, WebP or GIF image");
    }
    Ok(ImageRef(ImageData::sniffed(bytes).data_url()))
}

fn fail(e: &ToolError) -> ExitCode {
    eprintln!("error: {} ({})", e.message, e.code.as_str());
    ExitCode::FAILURE
}

fn print_view(view: &Value, json: bool) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(view)?);
        return Ok(());
    }
    let default = view["default"].as_str();
    let list = view["connections"].as_array().cloned().unwrap_or_default();
    if list.is_empty() {
        println!("no image connections (add one with `tavo image connection add`)");
    }
    for c in list {
        let name = c["name"].as_str().unwrap_or_default();
        println!(
            "{}{}\t{}\t{}\t{}\t{}",
            if Some(name) == default { "* " } else { "  " },
            name,
            c["platform"].as_str().unwrap_or_default(),
            c["model"].as_str().unwrap_or_default(),
            c["baseUrl"].as_str().unwrap_or_default(),
            c["apiKey"]
                .as_str()
                .map(str::to_owned)
                .or_else(|| c["apiKeyEnv"].as_str().map(|v| format!("${v}")))
                .unwrap_or_else(|| "no key".into()),
        );
    }
    Ok(())
}

/// Runs `tavo image`.
pub fn run(args: ImageArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    let store = open_store(ctx)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let result = runtime.block_on(async move {
        let engine = crate::engine::build(store, tavo_engine::McpStart::Off).await?;
        run_in(&engine, args.command).await
    });
    runtime.shutdown_background();
    result
}

async fn run_in(engine: &Engine, command: ImageCommand) -> anyhow::Result<ExitCode> {
    match command {
        ImageCommand::Generate(g) => generate(engine, g).await,
        ImageCommand::Imagine {
            chat,
            prompt,
            connection,
            json,
        } => match engine.imagine(ChatId(chat), &prompt, connection).await {
            Ok(done) if json => {
                println!("{}", serde_json::to_string_pretty(&done)?);
                Ok(ExitCode::SUCCESS)
            }
            Ok(done) => {
                println!("{}\t{}", done.message_id, done.path);
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => Ok(fail(&e)),
        },
        ImageCommand::Describe {
            message,
            connection,
            json,
        } => match engine.describe_image(MessageId(message), connection).await {
            Ok(done) if json => {
                println!("{}", serde_json::to_string_pretty(&done)?);
                Ok(ExitCode::SUCCESS)
            }
            Ok(done) => {
                println!("{}", done.text);
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => {
                eprintln!("error: {}: {e}", e.code());
                Ok(ExitCode::FAILURE)
            }
        },
        ImageCommand::Connection { command } => connection(engine, command).await,
    }
}

async fn generate(engine: &Engine, g: GenerateArgs) -> anyhow::Result<ExitCode> {
    let extra_body = match &g.extra {
        None => None,
        Some(raw) => match serde_json::from_str::<Value>(raw) {
            Ok(Value::Object(m)) => Some(m),
            _ => bail!("--extra must be a JSON object, e.g. '{{\"seed\": 42}}'"),
        },
    };
    let references = g
        .reference
        .iter()
        .map(|r| reference_of(r))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let scope = if g.global || g.chat.is_none() {
        Some(ScopeArg::Global)
    } else {
        Some(ScopeArg::Chat)
    };
    let options = ImageOptions {
        size: g.size,
        aspect_ratio: g.aspect_ratio,
        negative_prompt: g.negative,
        reference_images: (!references.is_empty()).then_some(references),
        extra_body,
        save_as: g.save_as,
        scope: if g.output.is_some() { None } else { scope },
    };
    let storage = if g.output.is_some() {
        Storage::WhenSaveAs
    } else {
        Storage::Always
    };
    let image = match engine
        .generate_image(
            g.chat.map(ChatId),
            g.prompt,
            Some(options),
            g.connection,
            storage,
        )
        .await
    {
        Ok(i) => i,
        Err(e) => return Ok(fail(&e)),
    };
    if let (Some(out), Some(bytes)) = (&g.output, &image.bytes) {
        std::fs::write(out, bytes).with_context(|| format!("writing {}", out.display()))?;
        if g.json {
            println!(
                "{}",
                json!({"file": out.display().to_string(), "mimeType": image.mime, "size": image.size})
            );
        } else {
            println!("{}", out.display());
        }
        return Ok(ExitCode::SUCCESS);
    }
    if g.json {
        println!("{}", serde_json::to_string_pretty(&image.to_json())?);
    } else {
        println!("{}", image.path.unwrap_or_default());
    }
    Ok(ExitCode::SUCCESS)
}

async fn connection(engine: &Engine, command: ConnectionCommand) -> anyhow::Result<ExitCode> {
    let (view, json) = match command {
        ConnectionCommand::List { json } => (engine.image_connections().await, json),
        ConnectionCommand::Show { name } => {
            let view = match engine.image_connections().await {
                Ok(v) => v,
                Err(e) => return Ok(fail(&e)),
            };
            let found = view["connections"]
                .as_array()
                .and_then(|l| l.iter().find(|c| c["name"] == name.as_str()).cloned());
            let Some(mut c) = found else {
                eprintln!(
                    "error: no image connection named `{name}` (see `tavo image connection list`)"
                );
                return Ok(ExitCode::FAILURE);
            };
            c["default"] = json!(view["default"] == name.as_str());
            println!("{}", serde_json::to_string_pretty(&c)?);
            return Ok(ExitCode::SUCCESS);
        }
        ConnectionCommand::Add {
            name,
            platform,
            model,
            base_url,
            api_key,
            api_key_env,
            options,
            default,
            json,
        } => {
            let options = super::media::parse_options(&options)?;
            let view = engine
                .change_image_connections(move |book| {
                    let mut c = ImageConnection::new(name, ImagePlatform::parse(&platform)?, model);
                    if let Some(b) = base_url {
                        c.base_url = b;
                    }
                    c.api_key = api_key;
                    c.api_key_env = api_key_env;
                    c.options = options;
                    book.add(c, default)
                })
                .await;
            (view, json)
        }
        ConnectionCommand::Update {
            name,
            rename,
            platform,
            base_url,
            model,
            api_key,
            api_key_env,
            no_key,
            options,
            unset,
            default,
            json,
        } => {
            let options = super::media::parse_options(&options)?;
            let key = match (api_key, api_key_env, no_key) {
                (Some(k), _, _) => Some(KeyChange::Key(k)),
                (None, Some(v), _) => Some(KeyChange::Env(v)),
                (None, None, true) => Some(KeyChange::None),
                (None, None, false) => None,
            };
            let view = engine
                .change_image_connections(move |book| {
                    let patch = MediaPatch {
                        name: rename,
                        platform: platform.as_deref().map(ImagePlatform::parse).transpose()?,
                        base_url,
                        model,
                        key,
                        options,
                        unset,
                        make_default: default,
                    };
                    book.update(&name, patch).map(|_| ())
                })
                .await;
            (view, json)
        }
        ConnectionCommand::Remove { name } => (
            engine
                .change_image_connections(move |book| book.remove(&name).map(|_| ()))
                .await,
            false,
        ),
        ConnectionCommand::Default { name } => (
            engine
                .change_image_connections(move |book| book.set_default(&name))
                .await,
            false,
        ),
    };
    match view {
        Ok(v) => {
            print_view(&v, json)?;
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Ok(fail(&e)),
    }
}
