//! `tavo export KIND ID [--format F] -o FILE`: one asset back to a SillyTavern / CCv3 / Tavo
//! file, through `tavo_tools::library::export_asset`, the export every door shares (so the
//! default format is the same as `GET /api/export/{kind}/{id}`'s).

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use tavo_formats::ExportFormat;
use tavo_model::AssetKind;
use tavo_tools::ErrorCode;
use tavo_tools::library::export_asset;

use crate::context::Context;
use crate::library::{open_store, parse_kind};

/// Export one asset. Formats (the first is the default) — character: png, ccv3-json,
/// ccv2-json, charx, tavo; lorebook: st, ccv3, tavo; preset and regex: st, tavo; persona: tavo;
/// chat: jsonl, tavo.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// character, persona, preset, lorebook, regex or chat (plurals accepted).
    #[arg(value_parser = parse_kind)]
    pub kind: AssetKind,
    /// The asset's id.
    pub id: i64,
    /// The file format (see above); without it, the kind's default.
    #[arg(long, short = 'f', value_parser = parse_format)]
    pub format: Option<ExportFormat>,
    /// Where to write; `-` writes to stdout.
    #[arg(long = "output", short = 'o', value_name = "FILE")]
    pub output: PathBuf,
}

fn parse_format(value: &str) -> Result<ExportFormat, String> {
    value.parse()
}

pub fn run(args: ExportArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    let store = open_store(ctx)?;
    let exported = match export_asset(&store, args.kind, args.id, args.format) {
        Ok(exported) => exported,
        Err(err) => {
            eprintln!("error: {}", err.message);
            return Ok(match err.code {
                // A format the kind does not support is a usage error.
                ErrorCode::InvalidArguments => ExitCode::from(2),
                _ => ExitCode::FAILURE,
            });
        }
    };
    if args.output.as_os_str() == "-" {
        std::io::stdout().lock().write_all(&exported.bytes)?;
    } else {
        std::fs::write(&args.output, &exported.bytes)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", args.output.display()))?;
        eprintln!(
            "wrote {} ({} bytes, {})",
            args.output.display(),
            exported.bytes.len(),
            exported.format
        );
    }
    Ok(ExitCode::SUCCESS)
}
