//! `tavo list KIND [--json]`: the library's assets of one kind.

use std::process::ExitCode;

use clap::Args;
use tavo_model::AssetKind;

use crate::context::Context;
use crate::library::{open_store, parse_kind};

/// List the characters, personas, presets, lorebooks, regex groups or chats of the library.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// character, persona, preset, lorebook, regex or chat (plurals accepted).
    #[arg(value_parser = parse_kind)]
    pub kind: AssetKind,
    /// Print a JSON array of `{id, name, revision, createdAt, updatedAt, avatar?, entries?}`.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: ListArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    let store = open_store(ctx)?;
    let rows = tavo_tools::reads::summaries(&store, args.kind)?;
    if args.json {
        println!("{}", serde_json::to_string(&rows)?);
    } else {
        for row in &rows {
            match row.entries {
                Some(n) => println!("{}\t{}\t({n} entries)", row.id, row.name),
                None => println!("{}\t{}", row.id, row.name),
            }
        }
        if rows.is_empty() {
            eprintln!("no {} in {}", args.kind, ctx.data_dir().display());
        }
    }
    Ok(ExitCode::SUCCESS)
}
