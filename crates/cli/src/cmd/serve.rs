//! `tavo serve [--addr 127.0.0.1:7860] [--token T] [--config FILE]`: the HTTP API.
//!
//! Settings come from the flags, then the environment (`TAVO_ADDR`, `TAVO_TOKEN`), then the
//! config file (`<data-dir>/config.toml`, or `--config`), then the defaults. A bind other than
//! loopback without a token is refused (exit 2) with an explanation. Stops gracefully on
//! SIGINT/SIGTERM. The listening address is printed on stdout once the server accepts
//! requests, so a script can wait for that line.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;
use tavo_server::{ConfigError, Overrides, ServeConfig, ServeError, Server};

use crate::context::Context;
use crate::library::open_store;

/// `tavo serve` flags.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on (IP:PORT). Default 127.0.0.1:7860.
    #[arg(long, env = "TAVO_ADDR", value_name = "IP:PORT")]
    addr: Option<String>,
    /// Access token every route but /api/health requires (at least 16 characters). Required
    /// for any address other than loopback.
    #[arg(long, env = "TAVO_TOKEN", hide_env_values = true, value_name = "TOKEN")]
    token: Option<String>,
    /// Config file (TOML: addr, token, allowed_hosts, accounts, database, [limits]). Default:
    /// <data-dir>/config.toml when it exists.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Serve accounts: everyone logs in with a name and password (`tavo user add`) and has a
    /// library of their own; the data folder's existing library is the first admin's.
    #[arg(long)]
    accounts: bool,
}

/// Runs `tavo serve`.
pub fn run(args: ServeArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    let overrides = Overrides {
        addr: args.addr,
        token: args.token,
        config: args.config,
        accounts: args.accounts,
        database: ctx.database().map(str::to_owned),
    };
    let dir = if args.accounts {
        ctx.root()
    } else {
        ctx.data_dir()
    };
    let config = match ServeConfig::resolve(dir, overrides) {
        Ok(c) => c,
        Err(
            e @ (ConfigError::OpenToNetwork(_)
            | ConfigError::WeakToken(_)
            | ConfigError::Addr(_)
            | ConfigError::AccountsWithToken),
        ) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
        Err(e) => return Err(e.into()),
    };
    init_logging();
    // `database` in the config file counts as --database.
    let ctx = &ctx.clone().with_database(config.database.clone());
    if config.accounts {
        return serve_accounts(config, ctx);
    }
    let store = open_store(ctx)?;
    runtime()?.block_on(async move {
        let server = match Server::bind(config, store).await {
            Ok(s) => s,
            Err(e @ ServeError::Bind { .. }) => {
                eprintln!("error: {e}");
                return Ok(ExitCode::FAILURE);
            }
            Err(e) => return Err(anyhow::Error::from(e)),
        };
        announce(server.local_addr()?, "");
        server.run(tavo_server::shutdown_signal()).await?;
        eprintln!("tavo serve: stopped");
        Ok(ExitCode::SUCCESS)
    })
}

/// `tavo serve --accounts`: the front door with sessions, one library per user.
fn serve_accounts(config: ServeConfig, ctx: &Context) -> anyhow::Result<ExitCode> {
    let accounts = ctx.open_accounts()?;
    let client = tavo_llm::Client::new().map_err(|e| anyhow::anyhow!(e.message))?;
    runtime()?.block_on(async move {
        let server =
            match tavo_server::AccountsServer::bind(config, std::sync::Arc::new(accounts), client)
                .await
            {
                Ok(s) => s,
                Err(e @ (ServeError::Bind { .. } | ServeError::NoUsers)) => {
                    eprintln!("error: {e}");
                    return Ok(ExitCode::FAILURE);
                }
                Err(e) => return Err(anyhow::Error::from(e)),
            };
        announce(server.local_addr()?, " with accounts");
        server.run(tavo_server::shutdown_signal()).await?;
        eprintln!("tavo serve: stopped");
        Ok(ExitCode::SUCCESS)
    })
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// The listening address on stdout (what scripts wait for), and the same for people on stderr.
fn announce(addr: std::net::SocketAddr, how: &str) {
    println!("http://{addr}");
    std::io::stdout().flush().ok();
    eprintln!("tavo serve: listening on http://{addr}{how} (Ctrl-C to stop)");
}

/// Logs to stderr; `RUST_LOG` tunes it (default: info for tavo, warn for the rest).
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new("warn,tavo_server=info,tavo_engine=info")
    });
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}
