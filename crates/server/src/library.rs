//! Import and export glue between `tavo-formats` (bytes ⇄ model values) and `tavo-store`
//! (model values ⇄ rows): the same two steps `tavo import` / `tavo export` take, so a file
//! imported over HTTP lands exactly as one imported from the terminal.

use serde_json::{Map, Value, json};
use tavo_formats::{ExportFormat, Warning};
use tavo_model::{AssetKind, ChatId, Lorebook, Persona, RegexGroup};
use tavo_store::Store;
use tavo_tools::library::store_imported;

use crate::error::{ApiError, ApiResult};

/// What one imported file created.
#[derive(Debug, Clone)]
pub struct Created {
    /// What it was.
    pub kind: AssetKind,
    /// Its name.
    pub name: String,
    /// The seed's id names, main object first (`characterId`, `lorebookId`, `regexId`, …).
    pub ids: Vec<(&'static str, Option<i64>)>,
    /// Repairs and notes.
    pub warnings: Vec<Warning>,
}

impl Created {
    /// The per-file JSON result: `kind`, `name`, the ids, `warnings`.
    pub fn to_json(&self, file: &str) -> Value {
        let mut out = Map::new();
        out.insert("file".into(), json!(file));
        out.insert("ok".into(), json!(true));
        out.insert("kind".into(), json!(self.kind.as_str()));
        out.insert("name".into(), json!(self.name));
        for (key, id) in &self.ids {
            out.insert((*key).into(), json!(id));
        }
        out.insert("warnings".into(), json!(self.warnings));
        Value::Object(out)
    }
}

/// Reads one file's bytes and stores what it holds in one transaction per object group.
/// `file_name` is the client's name, used only in messages (never as a path).
pub fn import_file(
    store: &Store,
    bytes: &[u8],
    file_name: &str,
    kind: Option<AssetKind>,
) -> ApiResult<Created> {
    let outcome = tavo_formats::import_bytes(bytes, file_name, kind).map_err(|e| {
        ApiError::new(
            axum::http::StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_file",
            e.to_string(),
        )
    })?;
    let kind = outcome.imported.kind();
    let name = outcome.imported.name().to_owned();
    let mut warnings = outcome.warnings;
    let ids = store_imported(store, outcome.imported, &mut warnings)?;
    Ok(Created {
        kind,
        name,
        ids,
        warnings,
    })
}

/// The formats each kind can be exported to (the first is the default).
pub fn formats_of(kind: AssetKind) -> &'static [ExportFormat] {
    use ExportFormat::*;
    match kind {
        AssetKind::Character => &[Png, Ccv3Json, Ccv2Json, Charx, Tavo],
        AssetKind::Lorebook => &[St, Ccv3, Tavo],
        AssetKind::Preset | AssetKind::Regex => &[St, Tavo],
        AssetKind::Persona => &[Tavo],
        AssetKind::Chat => &[Jsonl, Tavo],
    }
}

/// The MIME type of an export.
pub fn mime_of(format: ExportFormat) -> &'static str {
    match format {
        ExportFormat::Png => "image/png",
        ExportFormat::Charx => "application/zip",
        ExportFormat::Jsonl => "application/jsonl",
        _ => "application/json",
    }
}

/// One asset as file bytes, and the asset's name (for the download's file name).
pub fn export(
    store: &Store,
    kind: AssetKind,
    id: i64,
    format: ExportFormat,
) -> ApiResult<(Vec<u8>, String)> {
    let unsupported = |e: tavo_formats::FormatError| ApiError::bad_request(e.to_string());
    Ok(match kind {
        AssetKind::Character => {
            let parts = store.character_export_parts(id.into())?;
            let bytes = tavo_formats::export_character(
                &parts.character,
                parts.lorebook.as_ref(),
                parts.regex.as_ref(),
                parts.avatar.as_ref().map(|a| a.bytes.as_slice()),
                format,
            )
            .map_err(unsupported)?;
            (bytes, parts.character.name.clone())
        }
        AssetKind::Persona => {
            let persona = store.require::<Persona>(id.into())?;
            (
                tavo_formats::export_persona(&persona, format).map_err(unsupported)?,
                persona.name,
            )
        }
        AssetKind::Preset => {
            let (preset, regex) = store.preset_export_parts(id.into())?;
            let bytes = tavo_formats::export_preset(&preset, regex.as_ref(), format)
                .map_err(unsupported)?;
            (bytes, preset.name)
        }
        AssetKind::Lorebook => {
            let book = store.require::<Lorebook>(id.into())?;
            (
                tavo_formats::export_lorebook(&book, format).map_err(unsupported)?,
                book.name,
            )
        }
        AssetKind::Regex => {
            let group = store.require::<RegexGroup>(id.into())?;
            (
                tavo_formats::export_regex(&group, format).map_err(unsupported)?,
                group.name,
            )
        }
        AssetKind::Chat => {
            let (chat, messages) = store.chat_export_parts(ChatId(id))?;
            let bytes = tavo_formats::export_chat(&chat, &messages, format).map_err(unsupported)?;
            (bytes, chat.name)
        }
    })
}
