//! `tavo mcp-server add|list|remove|enable|disable`: the outside MCP servers whose tools join the
//! chat loop (namespaced `mcp_<server>_<tool>`, asking before each call until allowed).

use std::collections::BTreeMap;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, Subcommand};
use tavo_engine::mcp_servers::{McpServerConfig, McpServers, config};
use tavo_tools::extension::ExtensionRegistry;

use crate::context::Context;
use crate::library::open_store;

/// `tavo mcp-server` flags.
#[derive(Debug, Args)]
pub struct McpServerArgs {
    #[command(subcommand)]
    command: McpServerCommand,
}

#[derive(Debug, Subcommand)]
enum McpServerCommand {
    /// Add a server: `--command PROG [--arg A]... [--env K=V]...` (stdio) or
    /// `--url URL [--header 'K: V']...` (streamable HTTP). Enabled at once.
    Add {
        /// Its name: 1-32 of a-z A-Z 0-9 _ - (its tools are named mcp_<name>_<tool>).
        name: String,
        /// The program to start.
        #[arg(long, conflicts_with = "url")]
        command: Option<String>,
        /// One argument of the program (repeat for more).
        #[arg(long = "arg", value_name = "ARG", allow_hyphen_values = true)]
        args: Vec<String>,
        /// An environment variable for the program, K=V (repeat for more).
        #[arg(long = "env", value_name = "K=V")]
        env: Vec<String>,
        /// The streamable-HTTP endpoint.
        #[arg(long)]
        url: Option<String>,
        /// A header for every request, 'Name: value' (repeat for more).
        #[arg(long = "header", value_name = "NAME: VALUE")]
        headers: Vec<String>,
        /// Add it disabled.
        #[arg(long)]
        disabled: bool,
    },
    /// List the servers; with --check, start each enabled one and show its tools or its error.
    List {
        /// Connect to the enabled servers to show their state and tools.
        #[arg(long)]
        check: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Remove a server.
    Remove { name: String },
    /// Let a server's tools join the chat loop again.
    Enable { name: String },
    /// Keep a server's tools out of the chat loop.
    Disable { name: String },
}

fn pairs(list: &[String], sep: char, what: &str) -> anyhow::Result<BTreeMap<String, String>> {
    list.iter()
        .map(|p| {
            let (k, v) = p
                .split_once(sep)
                .with_context(|| format!("{what} {p:?} must look like NAME{sep}VALUE"))?;
            Ok((k.trim().to_owned(), v.trim().to_owned()))
        })
        .collect()
}

/// Runs `tavo mcp-server …`.
pub fn run(args: McpServerArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    let store = open_store(ctx)?;
    let changed = match args.command {
        McpServerCommand::Add {
            name,
            command,
            args,
            env,
            url,
            headers,
            disabled,
        } => {
            let server = McpServerConfig {
                name: name.clone(),
                command,
                args,
                env: pairs(&env, '=', "--env")?,
                url,
                headers: pairs(&headers, ':', "--header")?,
                enabled: !disabled,
            };
            config::add(&store, server).map(|()| format!("added {name}"))
        }
        McpServerCommand::Remove { name } => {
            config::remove(&store, &name).map(|()| format!("removed {name}"))
        }
        McpServerCommand::Enable { name } => {
            config::set_enabled(&store, &name, true).map(|()| format!("enabled {name}"))
        }
        McpServerCommand::Disable { name } => {
            config::set_enabled(&store, &name, false).map(|()| format!("disabled {name}"))
        }
        McpServerCommand::List { check, json } => return list(&store, check, json),
    };
    match changed {
        Ok(line) => {
            println!("{line}");
            Ok(ExitCode::SUCCESS)
        }
        Err(config::ChangeError::Config(e)) => {
            eprintln!("error: {e}");
            Ok(ExitCode::from(2))
        }
        Err(e) => Err(e.into()),
    }
}

fn list(store: &tavo_store::Store, check: bool, json: bool) -> anyhow::Result<ExitCode> {
    let configs = config::load(store)?;
    let statuses = if check {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("starting the async runtime")?;
        runtime.block_on(async {
            let servers = McpServers::new(store.clone(), ExtensionRegistry::default());
            servers.connect_enabled().await;
            servers.status().await
        })
    } else {
        Vec::new()
    };
    if json {
        let rows: Vec<serde_json::Value> = configs
            .iter()
            .map(|c| {
                let mut row = c.redacted();
                if let Some(s) = statuses.iter().find(|s| s.name == c.name) {
                    row["status"] = serde_json::to_value(s).unwrap_or_default();
                }
                row
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(ExitCode::SUCCESS);
    }
    if configs.is_empty() {
        println!("no MCP servers; add one with `tavo mcp-server add NAME --command … | --url …`");
    }
    for c in &configs {
        let target = match (&c.command, &c.url) {
            (Some(cmd), _) => format!("{cmd} {}", c.args.join(" ")),
            (_, Some(url)) => url.clone(),
            _ => String::new(),
        };
        let state = if c.enabled { "enabled" } else { "disabled" };
        println!("{}\t{state}\t{}", c.name, target.trim());
        if let Some(s) = statuses.iter().find(|s| s.name == c.name) {
            match &s.last_error {
                Some(e) => println!("\t{}: {e}", s.state),
                None => println!(
                    "\t{}: {} tools: {}",
                    s.state,
                    s.tools.len(),
                    s.tools.join(", ")
                ),
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
