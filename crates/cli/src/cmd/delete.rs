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
    let existed = match args.kind {
        AssetKind::Chat => store.chat_delete(args.id.into())?,
        kind => store.asset_delete(kind, args.id)?,
    };
    if existed {
        eprintln!("deleted {} {}", args.kind, args.id);
        Ok(ExitCode::SUCCESS)
    } else {
        // The refusal `tavo_<kind>_delete` and `DELETE /api/library/{kind}/{id}` give.
        let err = tavo_tools::ops::common::missing(args.kind.as_str(), args.id);
        eprintln!("error: {err}");
        Ok(ExitCode::FAILURE)
    }
}
