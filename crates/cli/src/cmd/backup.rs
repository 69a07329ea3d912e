//! `tavo backup [-o FILE] [--with-keys --passphrase-file F]` and
//! `tavo restore FILE [--yes] [--passphrase-file F]`: the whole library in one file (Tavo §20).
//!
//! The library is the one `--data-dir` / `TAVO_DATA_DIR` names; restoring into a directory
//! that does not exist yet creates an empty library there first, so `TAVO_DATA_DIR=new tavo
//! restore lib.tavobackup` is the way to move a library. A library that is not empty is only
//! replaced with `--yes`. A backup may be taken while `tavo serve` runs on the same library.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use clap::Args;
use tavo_tools::backup::{
    BackupOptions, EXTENSION, RestoreOptions, create_backup, inspect_backup, restore_backup,
};

use crate::context::Context;
use crate::library::open_store;

/// Write a backup of the whole library.
#[derive(Debug, Args)]
pub struct BackupArgs {
    /// The backup file to write (default: tavo-YYYYMMDD-HHMMSS.tavobackup here).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Include the API keys, encrypted with the passphrase in --passphrase-file.
    #[arg(long, requires = "passphrase_file")]
    with_keys: bool,
    /// A file whose first line is the passphrase (with --with-keys).
    #[arg(long, value_name = "FILE")]
    passphrase_file: Option<PathBuf>,
    /// Print the backup's summary as JSON.
    #[arg(long)]
    json: bool,
}

/// Replace the library with a backup.
#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// The backup file.
    file: PathBuf,
    /// Replace a library that is not empty.
    #[arg(long, short = 'y')]
    yes: bool,
    /// The passphrase file of a backup made with --with-keys (without it the keys are not restored).
    #[arg(long, value_name = "FILE")]
    passphrase_file: Option<PathBuf>,
    /// Only check the backup and print its manifest; change nothing.
    #[arg(long)]
    check: bool,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

/// The passphrase: the file's first line, without its line ending.
fn passphrase(path: &PathBuf) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the passphrase file {}", path.display()))?;
    let line = text.lines().next().unwrap_or_default().to_owned();
    if line.is_empty() {
        bail!("the passphrase file {} is empty", path.display());
    }
    Ok(line)
}

/// Runs `tavo backup`.
pub fn backup(args: BackupArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    let store = open_store(ctx)?;
    let out = args.output.unwrap_or_else(|| {
        PathBuf::from(format!(
            "tavo-{}.{EXTENSION}",
            chrono::Local::now().format("%Y%m%d-%H%M%S")
        ))
    });
    let options = BackupOptions {
        passphrase: match (&args.with_keys, &args.passphrase_file) {
            (true, Some(p)) => Some(passphrase(p)?),
            _ => None,
        },
    };
    let summary = create_backup(&store, &out, &options)
        .with_context(|| format!("backing up {}", ctx.data_dir().display()))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        println!("{}", summary.path.display());
        let m = &summary.manifest;
        eprintln!(
            "backed up {} chats, {} characters and {} files ({} bytes){}",
            m.counts.get("chats").cloned().unwrap_or_default(),
            m.counts.get("characters").cloned().unwrap_or_default(),
            m.files,
            summary.bytes,
            if m.with_keys {
                format!("; {} API keys encrypted", summary.secrets)
            } else if summary.secrets > 0 {
                format!(
                    "; {} API keys left out (--with-keys --passphrase-file F includes them)",
                    summary.secrets
                )
            } else {
                String::new()
            }
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs `tavo restore`.
pub fn restore(args: RestoreArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    if args.check {
        let manifest = inspect_backup(&args.file)
            .with_context(|| format!("checking {}", args.file.display()))?;
        println!("{}", serde_json::to_string_pretty(&manifest)?);
        return Ok(ExitCode::SUCCESS);
    }
    let store = open_store(ctx)?;
    if let Some(live) = tavo_engine::status::live_replies(&store)?.first() {
        bail!(
            "a reply is running in chat {} ({}, pid {}); wait for it or cancel it before restoring",
            live.chat_id,
            live.id,
            live.pid
        );
    }
    let options = RestoreOptions {
        yes: args.yes,
        passphrase: args.passphrase_file.as_ref().map(passphrase).transpose()?,
    };
    let summary = restore_backup(&store, &args.file, &options).with_context(|| {
        format!(
            "restoring {} into {}",
            args.file.display(),
            ctx.data_dir().display()
        )
    })?;
    for w in &summary.warnings {
        eprintln!("warning: {w}");
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        eprintln!(
            "restored the backup of {} (tavo {}): {} chats, {} messages, {} files{}",
            summary.manifest.created_at,
            summary.manifest.app_version,
            summary.tables.get("chats").cloned().unwrap_or_default(),
            summary.tables.get("messages").cloned().unwrap_or_default(),
            summary.files,
            if summary.keys > 0 {
                format!(", {} API keys", summary.keys)
            } else {
                String::new()
            }
        );
    }
    Ok(ExitCode::SUCCESS)
}
