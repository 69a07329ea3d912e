//! `tavo plugin install|list|show|enable|disable|uninstall|config`: Tavo plugins (`.tpg`,
//! `shared/reference/tavo-docs.md` §6), through the operations `GET/POST /api/plugins` and the
//! MCP `tavo_plugin_*` tools use ([`tavo_tools::plugins`]).
//!
//! A refused package exits 1 with exactly `FILE: manifest.json: FIELD: problem` on stderr and
//! installs nothing. Names are resolved for the locale of `LC_ALL` / `LC_MESSAGES` / `LANG`
//! (override with `--locale`).

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, Subcommand};
use serde_json::Value;
use tavo_tools::ToolError;
use tavo_tools::plugins::{self, Installed};

use crate::context::Context;
use crate::library::open_store;

/// `tavo plugin` flags.
#[derive(Debug, Args)]
pub struct PluginArgs {
    /// Locale for plugin names and texts (default: from LC_ALL / LC_MESSAGES / LANG, else en).
    #[arg(long, global = true, value_name = "TAG")]
    locale: Option<String>,
    #[command(subcommand)]
    command: PluginCommand,
}

#[derive(Debug, Subcommand)]
enum PluginCommand {
    /// Install a .tpg (or .zip) package; prints the plugin id. Reinstalling an installed id
    /// replaces its files and keeps its settings and enabled state.
    Install {
        /// The package file.
        file: PathBuf,
        /// Install without the risk question (plugins run code in the app with your library).
        #[arg(long, short = 'y')]
        yes: bool,
        /// Only check the package: print what would be installed, store nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// List installed plugins (`--json`: [{id, name, version, specVersion, enabled, author?,
    /// description?, …}]).
    List {
        /// Only plugins whose id, name, author, description or version contains this.
        #[arg(long, short = 'q')]
        query: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show one plugin in full (manifest, contributions, settings values) as JSON.
    Show { id: String },
    /// Let a plugin run.
    Enable { id: String },
    /// Stop a plugin from running (it stays installed with its settings).
    Disable { id: String },
    /// Remove a plugin, its files and its settings.
    Uninstall { id: String },
    /// Read or change a plugin's settings values.
    Config {
        #[command(subcommand)]
        command: ConfigCommand,
    },
}

#[derive(Debug, Subcommand)]
enum ConfigCommand {
    /// Print the effective values (saved, else default) as JSON, or one value with KEY.
    Get { id: String, key: Option<String> },
    /// Save one value, given as JSON (`true`, `3`, `"text"`; a bare word is taken as a string).
    Set {
        id: String,
        key: String,
        value: String,
    },
    /// Forget saved values (one KEY, or all) so the defaults apply.
    Reset { id: String, key: Option<String> },
}

/// Runs `tavo plugin …`.
pub fn run(args: PluginArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    let locale = args
        .locale
        .unwrap_or_else(|| plugins::locale_from_env(|k| std::env::var(k).ok()));
    let store = open_store(ctx)?;
    let done = match args.command {
        PluginCommand::Install { file, yes, dry_run } => {
            return install(&store, &file, yes, dry_run, &locale);
        }
        PluginCommand::List { query, json } => {
            let rows = plugins::list(&store, query.as_deref().unwrap_or(""), &locale);
            return rows.map_or_else(fail, |rows| {
                if json {
                    println!("{}", serde_json::to_string_pretty(&rows)?);
                } else if rows.is_empty() {
                    println!("no plugins; install one with `tavo plugin install FILE.tpg`");
                } else {
                    for p in rows {
                        let state = if p.enabled { "enabled" } else { "disabled" };
                        println!("{}\t{}\t{}\t{state}", p.id, p.version, p.name);
                    }
                }
                Ok(ExitCode::SUCCESS)
            });
        }
        PluginCommand::Show { id } => {
            plugins::get(&store, &id, &locale).map(|d| serde_json::to_value(d).unwrap_or_default())
        }
        PluginCommand::Enable { id } => {
            plugins::set_enabled(&store, &id, true, &locale).map(|p| Value::String(p.id))
        }
        PluginCommand::Disable { id } => {
            plugins::set_enabled(&store, &id, false, &locale).map(|p| Value::String(p.id))
        }
        PluginCommand::Uninstall { id } => {
            plugins::uninstall(&store, &id).map(|()| Value::String(id.to_ascii_lowercase()))
        }
        PluginCommand::Config { command } => match command {
            ConfigCommand::Get { id, key } => {
                plugins::config(&store, &id, &locale).and_then(|c| match key {
                    None => Ok(Value::Object(c.config)),
                    Some(k) => c.config.get(&k).cloned().ok_or_else(|| {
                        ToolError::new(
                            tavo_tools::ErrorCode::InvalidArguments,
                            format!("plugin {id} has no setting {k:?}"),
                        )
                    }),
                })
            }
            ConfigCommand::Set { id, key, value } => {
                let value = serde_json::from_str(&value).unwrap_or(Value::String(value));
                plugins::set_config(&store, &id, &key, value, &locale)
                    .map(|c| Value::Object(c.config))
            }
            ConfigCommand::Reset { id, key } => {
                plugins::reset_config(&store, &id, key.as_deref(), &locale)
                    .map(|c| Value::Object(c.config))
            }
        },
    };
    match done {
        Ok(Value::String(s)) => println!("{s}"),
        Ok(v) => println!("{}", serde_json::to_string_pretty(&v)?),
        Err(e) => return fail(e),
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints an operation's refusal as the one stderr line and exits 1.
fn fail(e: ToolError) -> anyhow::Result<ExitCode> {
    eprintln!("{}", e.message);
    Ok(ExitCode::FAILURE)
}

fn install(
    store: &tavo_store::Store,
    file: &std::path::Path,
    yes: bool,
    dry_run: bool,
    locale: &str,
) -> anyhow::Result<ExitCode> {
    let name = file.display().to_string();
    let bytes = match std::fs::metadata(file) {
        Ok(meta) if meta.len() as usize > plugins::MAX_PACKAGE_BYTES => {
            eprintln!(
                "{name}: the package is {} bytes, more than the {}-byte limit",
                meta.len(),
                plugins::MAX_PACKAGE_BYTES
            );
            return Ok(ExitCode::FAILURE);
        }
        _ => std::fs::read(file).with_context(|| format!("cannot read {name}"))?,
    };
    let checked = match plugins::install(store, &bytes, &name, true, locale) {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    print_warnings(&checked);
    if dry_run {
        println!("{}", serde_json::to_string_pretty(&checked)?);
        return Ok(ExitCode::SUCCESS);
    }
    if !yes && !confirm(&checked)? {
        eprintln!("{name}: not installed");
        return Ok(ExitCode::FAILURE);
    }
    match plugins::install(store, &bytes, &name, false, locale) {
        Ok(done) => {
            println!("{}", done.plugin.id);
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => fail(e),
    }
}

fn print_warnings(c: &Installed) {
    for w in &c.warnings {
        match &w.path {
            Some(p) => eprintln!("warning: {p}: {}", w.message),
            None => eprintln!("warning: {}", w.message),
        }
    }
}

/// The risk warning Tavo shows before an install; without a terminal, `--yes` is required.
fn confirm(c: &Installed) -> anyhow::Result<bool> {
    let p = &c.plugin;
    let mut err = std::io::stderr().lock();
    writeln!(
        err,
        "{} {} ({}){}",
        p.name,
        p.version,
        p.id,
        p.author
            .as_ref()
            .map(|a| format!(" by {a}"))
            .unwrap_or_default()
    )?;
    if let Some(r) = &c.replaces {
        writeln!(err, "replaces the installed version {}", r.version)?;
    }
    if !p.permissions.is_empty() {
        writeln!(err, "declares: {}", p.permissions.join(", "))?;
    }
    writeln!(
        err,
        "A plugin runs its own code in the app, with access to your chats and library. Install only plugins you trust."
    )?;
    if !std::io::stdin().is_terminal() {
        writeln!(err, "not a terminal: pass --yes to install")?;
        return Ok(false);
    }
    write!(err, "Install? [y/N] ")?;
    err.flush()?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    Ok(matches!(line.trim(), "y" | "Y" | "yes"))
}
