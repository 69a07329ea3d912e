//! `tavo delete KIND ID`: removes an asset (a chat with its messages, variables and files).

use std::process::ExitCode;

use clap::Args;
use tavo_model::AssetKind;

use crate::context::Context;
use crate::library::{open_store, parse_kind};

/// Delete one asset. Deleting a chat also deletes its messages, variables and chat files.
#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// character, persona, preset, lorebook, regex or chat (plurals accepted).
    #[arg(value_parser = parse_kind)]
    pub kind: AssetKind,
    /// The asset's id.
    pub id: i64,
}

pub fn run(args: DeleteArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    let store = open_store(ctx)?;
    // The delete (and the refusal) of `tavo_<kind>_delete` and `DELETE /api/library/…`.
    match tavo_tools::assets::delete_asset(&store, args.kind, args.id) {
        Ok(()) => {
            eprintln!("deleted {} {}", args.kind, args.id);
            Ok(ExitCode::SUCCESS)
        }
        Err(err) => {
            eprintln!("error: {err}");
            Ok(ExitCode::FAILURE)
        }
    }
}
