//! `tavo settings get|set|list`: the adjustable settings (tool use, limits, reasoning mode),
//! validated against the engine's catalogue so that a bad value is refused, not stored.

use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::{Value, json};
use tavo_engine::settings::{self, SETTINGS, SettingError};

use crate::context::Context;
use crate::library::open_store;

/// Read and change settings.
#[derive(Debug, Args)]
pub struct SettingsArgs {
    #[command(subcommand)]
    command: SettingsCommand,
}

#[derive(Debug, Subcommand)]
enum SettingsCommand {
    /// Print a setting's value as JSON (its default when never set).
    Get {
        /// The key, e.g. tools.enabled.
        key: String,
    },
    /// Validate and store a setting; prints the stored value as JSON.
    Set {
        /// The key, e.g. tools.recursionLimit.
        key: String,
        /// The value: true/false, an integer, or a name (JSON accepted).
        value: String,
    },
    /// Every setting with its value and what it does.
    List {
        /// Print a JSON array of {key, value, about}.
        #[arg(long)]
        json: bool,
    },
}

/// Runs `tavo settings …`.
pub fn run(args: SettingsArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    let store = open_store(ctx)?;
    let result = match args.command {
        SettingsCommand::Get { key } => settings::get(&store, &key).map(|v| println!("{v}")),
        SettingsCommand::Set { key, value } => {
            settings::set(&store, &key, &value).map(|v| println!("{v}"))
        }
        SettingsCommand::List { json } => {
            let mut rows = Vec::new();
            for spec in &SETTINGS {
                let value = settings::get(&store, spec.key)?;
                rows.push((spec, value));
            }
            if json {
                let list: Vec<Value> = rows
                    .iter()
                    .map(|(s, v)| json!({"key": s.key, "value": v, "about": s.about}))
                    .collect();
                println!("{}", serde_json::to_string_pretty(&list)?);
            } else {
                for (s, v) in rows {
                    println!("{:<26} {:<22} {}", s.key, v.to_string(), s.about);
                }
            }
            Ok(())
        }
    };
    match result {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e @ (SettingError::Unknown(_) | SettingError::Invalid { .. })) => {
            eprintln!("error: {e}");
            Ok(ExitCode::from(2))
        }
        Err(SettingError::Store(e)) => Err(e.into()),
    }
}
