//! `tavo show KIND ID [--json]`: one asset as TavoJS-shaped JSON.

use std::process::ExitCode;

use clap::Args;
use tavo_model::AssetKind;

use crate::context::Context;
use crate::library::{open_store, parse_kind};

/// Print one asset as the TavoJS API returns it (`tavo.character.get(id)`, …).
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// character, persona, preset, lorebook, regex or chat (plurals accepted).
    #[arg(value_parser = parse_kind)]
    pub kind: AssetKind,
    /// The asset's id (as printed by `tavo import` or `tavo list`).
    pub id: i64,
    /// Print compact JSON on one line instead of indented JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: ShowArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    let store = open_store(ctx)?;
    let Some(value) = tavo_tools::reads::asset(&store, args.kind, args.id)? else {
        eprintln!(
            "error: {} {} not found (see `tavo list {}`)",
            args.kind, args.id, args.kind
        );
        return Ok(ExitCode::FAILURE);
    };
    if args.json {
        println!("{}", serde_json::to_string(&value)?);
    } else {
        println!("{}", serde_json::to_string_pretty(&value)?);
    }
    Ok(ExitCode::SUCCESS)
}
