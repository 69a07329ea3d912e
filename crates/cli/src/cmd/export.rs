//! `tavo export KIND ID --format F -o FILE`: one asset back to a SillyTavern / CCv3 / Tavo file.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use tavo_formats::ExportFormat;
use tavo_model::AssetKind;
use tavo_store::{Store, StoreError};

use crate::context::Context;
use crate::library::{open_store, parse_kind};

/// Export one asset. Formats — character: ccv3-json, ccv2-json, png, charx, tavo; lorebook: st,
/// ccv3, tavo; preset and regex: st, tavo; persona: tavo; chat: jsonl, tavo.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// character, persona, preset, lorebook, regex or chat (plurals accepted).
    #[arg(value_parser = parse_kind)]
    pub kind: AssetKind,
    /// The asset's id.
    pub id: i64,
    /// The file format (see above).
    #[arg(long, short = 'f', value_parser = parse_format)]
    pub format: ExportFormat,
    /// Where to write; `-` writes to stdout.
    #[arg(long = "output", short = 'o', value_name = "FILE")]
    pub output: PathBuf,
}

fn parse_format(value: &str) -> Result<ExportFormat, String> {
    value.parse()
}

/// The formats each kind can be exported to.
pub fn formats_of(kind: AssetKind) -> &'static [ExportFormat] {
    use ExportFormat::*;
    match kind {
        AssetKind::Character => &[Ccv3Json, Ccv2Json, Png, Charx, Tavo],
        AssetKind::Lorebook => &[St, Ccv3, Tavo],
        AssetKind::Preset | AssetKind::Regex => &[St, Tavo],
        AssetKind::Persona => &[Tavo],
        AssetKind::Chat => &[Jsonl, Tavo],
    }
}

pub fn run(args: ExportArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    let allowed = formats_of(args.kind);
    if !allowed.contains(&args.format) {
        let names: Vec<&str> = allowed.iter().map(|f| f.as_str()).collect();
        eprintln!(
            "error: a {} cannot be exported as '{}'; use --format {}",
            args.kind,
            args.format,
            names.join(" | ")
        );
        return Ok(ExitCode::from(2));
    }
    let store = open_store(ctx)?;
    let bytes = match export(&store, args.kind, args.id, args.format) {
        Ok(bytes) => bytes,
        Err(err) => match err.downcast_ref::<StoreError>() {
            Some(StoreError::NotFound { kind, id }) => {
                eprintln!("error: {kind} {id} not found (see `tavo list {kind}`)");
                return Ok(ExitCode::FAILURE);
            }
            _ => return Err(err),
        },
    };
    if args.output.as_os_str() == "-" {
        std::io::stdout().lock().write_all(&bytes)?;
    } else {
        std::fs::write(&args.output, &bytes)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", args.output.display()))?;
        eprintln!("wrote {} ({} bytes)", args.output.display(), bytes.len());
    }
    Ok(ExitCode::SUCCESS)
}

fn export(
    store: &Store,
    kind: AssetKind,
    id: i64,
    format: ExportFormat,
) -> anyhow::Result<Vec<u8>> {
    let bytes = match kind {
        AssetKind::Character => {
            let parts = store.character_export_parts(id.into())?;
            tavo_formats::export_character(
                &parts.character,
                parts.lorebook.as_ref(),
                parts.regex.as_ref(),
                parts.avatar.as_ref().map(|a| a.bytes.as_slice()),
                format,
            )
        }
        AssetKind::Persona => {
            let persona = store.require::<tavo_model::Persona>(id.into())?;
            tavo_formats::export_persona(&persona, format)
        }
        AssetKind::Preset => {
            let (preset, regex) = store.preset_export_parts(id.into())?;
            tavo_formats::export_preset(&preset, regex.as_ref(), format)
        }
        AssetKind::Lorebook => {
            let book = store.require::<tavo_model::Lorebook>(id.into())?;
            tavo_formats::export_lorebook(&book, format)
        }
        AssetKind::Regex => {
            let group = store.require::<tavo_model::RegexGroup>(id.into())?;
            tavo_formats::export_regex(&group, format)
        }
        AssetKind::Chat => {
            let (chat, messages) = store.chat_export_parts(id.into())?;
            tavo_formats::export_chat(&chat, &messages, format)
        }
    }?;
    Ok(bytes)
}
