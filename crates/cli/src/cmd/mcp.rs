//! `tavo mcp`: tavo's MCP server on stdin/stdout, for desktop agents that start tavo
//! themselves (the same tools and resources as `POST /mcp` on `tavo serve`); `tavo mcp info`:
//! the connection text Tavo lets users copy, with the bearer token — the one place it is shown.

use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, Subcommand};
use tavo_engine::settings;
use tavo_server::{Overrides, ServeConfig};

use crate::context::Context;
use crate::library::open_store;

/// `tavo mcp` flags.
#[derive(Debug, Args)]
pub struct McpArgs {
    #[command(subcommand)]
    command: Option<McpCommand>,
}

#[derive(Debug, Subcommand)]
enum McpCommand {
    /// Print the connection text for `POST /mcp` on `tavo serve`: server URL and bearer token
    /// (the only command that prints the token), and whether the server is on.
    Info,
}

/// Runs `tavo mcp [info]`.
pub fn run(args: McpArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    match args.command {
        None => stdio(ctx),
        Some(McpCommand::Info) => info(ctx),
    }
}

fn stdio(ctx: &Context) -> anyhow::Result<ExitCode> {
    // stdout carries the protocol: every log line goes to stderr.
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
    let store = open_store(ctx)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async move {
        let engine = crate::engine::build(store, tavo_engine::McpStart::Wait).await?;
        tavo_server::serve_stdio(engine.dispatcher()).await?;
        Ok::<(), anyhow::Error>(())
    })?;
    Ok(ExitCode::SUCCESS)
}

fn info(ctx: &Context) -> anyhow::Result<ExitCode> {
    let store = open_store(ctx)?;
    let enabled = settings::get(&store, settings::MCP_ENABLED)? == serde_json::json!(true);
    let scope = settings::get(&store, settings::MCP_SCOPE)?;
    let token = settings::secret(&store, settings::MCP_TOKEN)?;
    let config = ServeConfig::resolve(ctx.data_dir(), Overrides::default())
        .context("reading the server settings (config.toml)")?;
    println!("Tavo MCP Server: {}", env!("CARGO_PKG_VERSION"));
    println!("Preferred access: direct HTTP JSON-RPC");
    println!("Server URL: http://{}/mcp", config.addr);
    match &token {
        Some(t) => println!("Authorization: Bearer {t}"),
        None => println!("Authorization: (no token yet: enabling the server generates one)"),
    }
    println!(
        "Status: {} (scope {}); stdio: `tavo mcp`",
        if enabled {
            "on"
        } else {
            "off — turn it on with `tavo settings set mcp.enabled true`"
        },
        scope.as_str().unwrap_or("loopback")
    );
    Ok(ExitCode::SUCCESS)
}
