//! `tavo audit list|clear`: the audit log of tool calls (arguments, results, timing) — what
//! messages leave out. Both call `tavo_tools::audit`, as `GET`/`DELETE /api/audit` do.

use std::process::ExitCode;

use clap::{Args, Subcommand};
use tavo_tools::audit::{clear_audit, list_audit};

use crate::context::Context;
use crate::library::open_store;

/// Read or clear the audit log.
#[derive(Debug, Args)]
pub struct AuditArgs {
    #[command(subcommand)]
    pub command: AuditCommand,
}

#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Entries, newest first: `ID<TAB>AT<TAB>ACTION<TAB>TARGET` per line.
    List {
        /// Entries to show (1–500).
        #[arg(long, default_value_t = 50)]
        limit: u32,
        /// Only entries older than this id (the previous page's `nextBefore`).
        #[arg(long, value_name = "ID")]
        before: Option<i64>,
        /// Print `{entries: [{id, at, action, target?, details}], nextBefore?, capacity}`.
        #[arg(long)]
        json: bool,
    },
    /// Remove every entry. Messages keep their compact tool-call cards.
    Clear {
        /// Print `{"removed": N}`.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(args: AuditArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    let store = open_store(ctx)?;
    match args.command {
        AuditCommand::List {
            limit,
            before,
            json,
        } => {
            let page = list_audit(&store, limit, before)?;
            if json {
                println!("{}", serde_json::to_string(&page)?);
                return Ok(ExitCode::SUCCESS);
            }
            for e in &page.entries {
                println!(
                    "{}\t{}\t{}\t{}",
                    e.id,
                    e.at,
                    e.action,
                    e.target.as_deref().unwrap_or("-")
                );
            }
            if page.entries.is_empty() {
                eprintln!("the audit log is empty");
            }
            if let Some(next) = page.next_before {
                eprintln!("older entries: tavo audit list --before {next}");
            }
        }
        AuditCommand::Clear { json } => {
            let cleared = clear_audit(&store)?;
            if json {
                println!("{}", serde_json::to_string(&cleared)?);
            } else {
                eprintln!("cleared the audit log ({} entries)", cleared.removed);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
