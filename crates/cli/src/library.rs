//! What the library commands (`import`, `list`, `show`, `export`, `delete`) share: the KIND
//! argument and opening the store.

use tavo_model::AssetKind;
use tavo_store::Store;

use crate::context::Context;

/// Parses a KIND argument (`character`, `characters`, `regex`, …) for clap; an unknown kind is
/// a usage error (exit 2) that lists the accepted ones.
pub fn parse_kind(value: &str) -> Result<AssetKind, String> {
    value
        .parse()
        .map_err(|e: tavo_model::UnknownKind| e.to_string())
}

/// Opens the library of the resolved data directory.
pub fn open_store(ctx: &Context) -> anyhow::Result<Store> {
    ctx.open_store()
}
