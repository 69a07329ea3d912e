//! `tavo export KIND ID [--format F] -o FILE`: one asset back to a SillyTavern / CCv3 / Tavo
//! file, through `tavo_tools::library::export_asset`, the export every door shares (so the
//! default format is the same as `GET /api/export/{kind}/{id}`'s).

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use tavo_model::AssetKind;
use tavo_tools::library::{export_asset, export_format_for};
use tavo_tools::{ErrorCode, ToolError};

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
    #[arg(long, short = 'f')]
    pub format: Option<String>,
    /// Where to write; `-` writes to stdout.
    #[arg(long = "output", short = 'o', value_name = "FILE")]
    pub output: PathBuf,
}

/// The operation's refusal on stderr as every command prints one (`error: code: message`, the
/// code and message `GET /api/export` answers); a format the kind does not support (or an
/// unknown one) is a usage error.
fn refused(err: &ToolError) -> ExitCode {
    eprintln!("error: {err}");
    match err.code {
        ErrorCode::InvalidArguments => ExitCode::from(2),
        _ => ExitCode::FAILURE,
    }
}

pub fn run(args: ExportArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    // The format is checked against the kind before the library is opened.
    let format = match export_format_for(args.kind, args.format.as_deref()) {
        Ok(format) => format,
        Err(err) => return Ok(refused(&err)),
    };
    let store = open_store(ctx)?;
    let exported = match export_asset(&store, args.kind, args.id, Some(format)) {
        Ok(exported) => exported,
        Err(err) => return Ok(refused(&err)),
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
