//! `tavo connection ...`: provider connections, kept in the store's settings under
//! `llm.connections` (see `tavo_llm::connection`). Keys are never printed: every output masks
//! them.

use std::io::Write as _;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context as _, anyhow, bail};
use clap::{Args, Subcommand};
use serde_json::json;
use tavo_engine::connections;
use tavo_llm::connection::{ConnectionError, ConnectionPatch, KeyChange};
use tavo_llm::{
    ChatRequest, Client, Connection, ConnectionBook, Endpoint, Message, Parameters, Protocol, Role,
};
use tavo_store::Store;

use super::llm::ProtocolArg;
use crate::context::Context;

#[derive(Debug, Args)]
pub struct ConnectionArgs {
    #[command(subcommand)]
    command: ConnectionCommand,
}

#[derive(Debug, Args)]
struct ParamArgs {
    /// Sampling temperature (0–2), overriding the global setting.
    #[arg(long)]
    temperature: Option<f64>,
    /// Top-P (0–1).
    #[arg(long)]
    top_p: Option<f64>,
    /// Top-K.
    #[arg(long)]
    top_k: Option<u32>,
    /// Reply token limit.
    #[arg(long)]
    max_output_tokens: Option<u32>,
    /// Streaming on or off.
    #[arg(long)]
    stream: Option<bool>,
    /// Context memory length (tokens) for the prompt builder.
    #[arg(long)]
    context_length: Option<u32>,
}

impl ParamArgs {
    fn into_parameters(self) -> Parameters {
        Parameters {
            temperature: self.temperature,
            top_p: self.top_p,
            top_k: self.top_k,
            max_output_tokens: self.max_output_tokens,
            stream: self.stream,
            context_length: self.context_length,
        }
    }
}

/// A parameter's JSON name from what a user types (`top-p`, `top_p` and `topP` alike).
fn parameter_name(typed: &str) -> String {
    let flat: String = typed
        .chars()
        .filter(|c| !matches!(c, '-' | '_'))
        .collect::<String>()
        .to_lowercase();
    tavo_llm::connection::PARAMETER_NAMES
        .iter()
        .find(|n| n.to_lowercase() == flat)
        .map_or_else(|| typed.to_owned(), |n| (*n).to_owned())
}

/// Add a connection (prints its name, or the masked connection with --json).
#[derive(Debug, Args)]
struct AddArgs {
    name: String,
    #[arg(long, value_enum)]
    protocol: ProtocolArg,
    /// Base URL (for OpenAI-compatible servers usually ending in /v1). Defaults to the
    /// source's URL when --source names one that has it.
    #[arg(long)]
    base_url: Option<String>,
    #[arg(long)]
    model: String,
    /// Catalogue source id (see `tavo connection sources`); guessed from the URL if absent.
    #[arg(long)]
    source: Option<String>,
    /// The API key, stored with the data and never printed.
    #[arg(long, conflicts_with = "api_key_env")]
    api_key: Option<String>,
    /// Read the key from this environment variable at request time instead.
    #[arg(long)]
    api_key_env: Option<String>,
    /// Make it the default connection.
    #[arg(long)]
    default: bool,
    #[command(flatten)]
    params: ParamArgs,
    #[arg(long)]
    json: bool,
}

/// Change fields of an existing connection; the others stay as they are (prints its name,
/// or the masked connection with --json). The key is write-only: it is never printed.
#[derive(Debug, Args)]
struct UpdateArgs {
    name: String,
    /// A new name.
    #[arg(long, value_name = "NEW")]
    rename: Option<String>,
    #[arg(long, value_enum)]
    protocol: Option<ProtocolArg>,
    #[arg(long)]
    base_url: Option<String>,
    #[arg(long)]
    model: Option<String>,
    /// Catalogue source id (see `tavo connection sources`).
    #[arg(long)]
    source: Option<String>,
    /// Store this API key (replacing a stored key or an --api-key-env).
    #[arg(long, conflicts_with_all = ["api_key_env", "no_api_key"])]
    api_key: Option<String>,
    /// Read the key from this environment variable instead (a stored key is forgotten).
    #[arg(long, conflicts_with = "no_api_key")]
    api_key_env: Option<String>,
    /// Use no key at all (local servers).
    #[arg(long)]
    no_api_key: bool,
    /// Make it the default connection.
    #[arg(long)]
    default: bool,
    #[command(flatten)]
    params: ParamArgs,
    /// Unset a parameter so the global value applies again (temperature, topP, topK,
    /// maxOutputTokens, stream, contextLength; repeatable).
    #[arg(long, value_name = "PARAM")]
    unset: Vec<String>,
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Subcommand)]
enum ConnectionCommand {
    /// Add a connection (prints its name, or the masked connection with --json).
    Add(AddArgs),
    /// Change fields of an existing connection; the others stay as they are (prints its name,
    /// or the masked connection with --json). The key is write-only: it is never printed.
    Update(UpdateArgs),
    /// List connections (`*` marks the default).
    List {
        #[arg(long)]
        json: bool,
    },
    /// Show one connection, key masked.
    Show {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Remove a connection.
    Remove { name: String },
    /// Make a connection the default.
    Default { name: String },
    /// Send one tiny request and report the latency and the reply, or the mapped error.
    Test {
        /// The connection (default: the default connection).
        name: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// The catalogue of provider sources with their protocol and default base URL.
    Sources {
        #[arg(long)]
        json: bool,
    },
}

fn load(store: &Store) -> anyhow::Result<ConnectionBook> {
    Ok(connections::book(store)?)
}

/// One change to the book, in one transaction (the path `/api/connections` takes too).
fn change<T>(
    store: &Store,
    f: impl FnOnce(&mut ConnectionBook) -> Result<T, ConnectionError>,
) -> anyhow::Result<T> {
    Ok(connections::change_book(store, f)?.0)
}

fn open(ctx: &Context) -> anyhow::Result<Store> {
    ctx.open_store()
}

fn print_human(c: &Connection, is_default: bool) {
    let key = match (&c.api_key, &c.api_key_env) {
        (Some(k), _) => tavo_llm::connection::mask_key(k),
        (None, Some(var)) => format!("${var}"),
        (None, None) => "-".into(),
    };
    println!(
        "{} {}\t{}\t{}\t{}\t{}\tkey {}",
        if is_default { "*" } else { " " },
        c.name,
        c.source,
        c.protocol,
        c.model,
        c.base_url,
        key
    );
}

pub fn run(args: ConnectionArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    match args.command {
        ConnectionCommand::Add(args) => add(args, ctx)?,
        ConnectionCommand::Update(args) => update(args, ctx)?,
        ConnectionCommand::List { json } => {
            let book = load(&open(ctx)?)?;
            if json {
                let items: Vec<_> = book
                    .connections
                    .iter()
                    .map(|c| {
                        let mut v = c.masked();
                        v["default"] = json!(book.default.as_deref() == Some(c.name.as_str()));
                        v
                    })
                    .collect();
                println!("{}", serde_json::to_string_pretty(&items)?);
            } else if book.connections.is_empty() {
                eprintln!(
                    "no connections yet: add one with `tavo connection add NAME --protocol ... --base-url ... --model ...`"
                );
            } else {
                for c in &book.connections {
                    print_human(c, book.default.as_deref() == Some(c.name.as_str()));
                }
            }
        }
        ConnectionCommand::Show { name, json } => {
            let book = load(&open(ctx)?)?;
            let c = book.get(&name)?;
            if json {
                let mut v = c.masked();
                v["default"] = json!(book.default.as_deref() == Some(c.name.as_str()));
                v["effectiveParameters"] = serde_json::to_value(book.effective_parameters(c))?;
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                print_human(c, book.default.as_deref() == Some(c.name.as_str()));
            }
        }
        ConnectionCommand::Remove { name } => {
            change(&open(ctx)?, |book| book.remove(&name).map(drop))?;
            eprintln!("removed connection `{name}`");
        }
        ConnectionCommand::Default { name } => {
            change(&open(ctx)?, |book| book.set_default(&name))?;
            eprintln!("`{name}` is now the default connection");
        }
        ConnectionCommand::Test { name, json } => return test(ctx, name.as_deref(), json),
        ConnectionCommand::Sources { json } => {
            let sources = tavo_llm::catalogue::sources();
            if json {
                println!("{}", serde_json::to_string_pretty(sources)?);
            } else {
                let mut out = std::io::stdout().lock();
                for s in sources {
                    let line = format!(
                        "{}\t{}\t{}\t{}",
                        s.id,
                        s.protocol,
                        s.base_url.unwrap_or("-"),
                        s.name
                    );
                    // A closed pipe (`| head`) ends the listing quietly.
                    if writeln!(out, "{line}").is_err() {
                        break;
                    }
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `tavo connection add`: one transaction, like every change to the book.
fn add(args: AddArgs, ctx: &Context) -> anyhow::Result<()> {
    let AddArgs {
        name,
        protocol,
        base_url,
        model,
        source,
        api_key,
        api_key_env,
        default,
        params,
        json,
    } = args;
    let protocol = Protocol::from(protocol);
    let known = source.as_deref().map(|s| {
        tavo_llm::catalogue::find(s).ok_or_else(|| {
            anyhow!("--source `{s}` is not in the catalogue (see `tavo connection sources`)")
        })
    });
    let known = known.transpose()?;
    let base_url = match (base_url, known.and_then(|s| s.base_url)) {
        (Some(u), _) => u,
        (None, Some(u)) => u.to_owned(),
        (None, None) => bail!("--base-url is required (this source has no default URL)"),
    };
    let source =
        source.unwrap_or_else(|| tavo_llm::catalogue::guess(protocol, &base_url).to_owned());
    let conn = Connection {
        name,
        source,
        protocol,
        base_url,
        model,
        api_key,
        api_key_env,
        parameters: params.into_parameters(),
    };
    let shown = conn.masked();
    let name = conn.name.clone();
    change(&open(ctx)?, |book| book.add(conn, default))?;
    if json {
        println!("{}", serde_json::to_string_pretty(&shown)?);
    } else {
        println!("{name}");
    }
    Ok(())
}

/// `tavo connection update`: read, change and write the book in one transaction.
fn update(args: UpdateArgs, ctx: &Context) -> anyhow::Result<()> {
    let UpdateArgs {
        name,
        rename,
        protocol,
        base_url,
        model,
        source,
        api_key,
        api_key_env,
        no_api_key,
        default,
        params,
        unset,
        json,
    } = args;
    if let Some(s) = source.as_deref()
        && tavo_llm::catalogue::find(s).is_none()
    {
        bail!("--source `{s}` is not in the catalogue (see `tavo connection sources`)");
    }
    let key = match (api_key, api_key_env, no_api_key) {
        (Some(k), _, _) => Some(KeyChange::Key(k)),
        (None, Some(var), _) => Some(KeyChange::Env(var)),
        (None, None, true) => Some(KeyChange::None),
        (None, None, false) => None,
    };
    let unset = unset.iter().map(|u| parameter_name(u)).collect();
    let patch = ConnectionPatch {
        name: rename,
        source,
        protocol: protocol.map(Protocol::from),
        base_url,
        model,
        key,
        parameters: params.into_parameters(),
        unset,
        make_default: default,
    };
    // One transaction, so a `tavo serve` writing the book at the same time loses nothing.
    let (name, shown) = change(&open(ctx)?, |book| {
        book.update(&name, patch)
            .map(|c| (c.name.clone(), c.masked()))
    })?;
    if json {
        println!("{}", serde_json::to_string_pretty(&shown)?);
    } else {
        println!("{name}");
    }
    Ok(())
}

/// One tiny request through the real transport.
fn test(ctx: &Context, name: Option<&str>, json: bool) -> anyhow::Result<ExitCode> {
    let book = load(&open(ctx)?)?;
    let c = book.pick(name)?.clone();
    let params = book.effective_parameters(&c);
    let endpoint = Endpoint {
        protocol: c.protocol,
        base_url: c.base_url.clone(),
        api_key: c.resolve_key()?,
    };
    let mut req = ChatRequest::new(
        c.model.clone(),
        vec![Message::text(
            Role::User,
            "Reply with the single word: pong",
        )],
    );
    params.apply(&mut req);
    req.sampling.max_output_tokens = Some(req.sampling.max_output_tokens.unwrap_or(64).min(64));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let client = Client::with(
        tavo_llm::retry::RetryPolicy::none(),
        tavo_llm::Timeouts {
            headers: Duration::from_secs(60),
            idle: Duration::from_secs(60),
            ..tavo_llm::Timeouts::default()
        },
    )?;
    let started = Instant::now();
    let result = rt.block_on(client.complete(&endpoint, &req));
    let latency_ms = started.elapsed().as_millis() as u64;
    let failure = match &result {
        Err(e) => Some((e.kind, e.message.clone(), e.status)),
        Ok(r) => r.error.clone().map(|(k, m)| (k, m, None)),
    };
    if let Some((kind, message, status)) = failure {
        if json {
            println!(
                "{}",
                json!({"ok": false, "connection": c.name, "latencyMs": latency_ms,
                       "error": {"kind": kind, "message": message, "status": status}})
            );
        } else {
            eprintln!(
                "connection `{}` failed after {latency_ms} ms: {kind}: {message}",
                c.name
            );
        }
        return Ok(ExitCode::FAILURE);
    }
    let reply = result.map_err(|e| anyhow!("{e}"))?;
    if json {
        println!(
            "{}",
            json!({"ok": true, "connection": c.name, "latencyMs": latency_ms, "reply": reply.text(),
                   "finish": reply.finish, "usage": reply.usage})
        );
    } else {
        println!("{}", reply.text());
        eprintln!("connection `{}` answered in {latency_ms} ms", c.name);
    }
    Ok(ExitCode::SUCCESS)
}
