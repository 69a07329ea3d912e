//! Import and export, written once for every door.
//!
//! `tavo import` / `tavo export`, `POST /api/import` / `GET /api/export/{kind}/{id}` and the
//! model's `tavo_*_import` tools all call the functions here, so they cannot drift apart in
//! what they store, which ids they report and under which names (the seed's `characterId`,
//! `lorebookId`, `regexId`, `presetId`, `chatId`, `personaId`), which warnings they add, or
//! which format an export defaults to.
//!
//! - [`import_file`]: bytes → `tavo-formats` → library rows (each file in one transaction, so a
//!   file that fails changes nothing) → an [`ImportedFile`] whose [`ImportedFile::to_json`] is
//!   the result object every door shows (doors add only where the file came from).
//! - [`import_value`]: the model's door, where the "file" is a JSON argument.
//! - [`export_asset`]: one asset → file bytes, in a format the kind supports; without a format,
//!   the kind's [`default_export_format`] at every door.

use serde_json::{Map, Value, json};
use tavo_formats::{ExportFormat, FormatError, Imported, Warning};
use tavo_model::{AssetKind, ChatId, Lorebook, Persona, RegexGroup};
use tavo_store::{Store, StoreError};

use crate::context::store_error;

mod st;
use crate::error::{ErrorCode, ToolError};
pub use st::{
    ChatFilesAt, GivenFile, GroupChatFiles, file_stem, group_chat_file_names, pair_group_chats,
};

/// What one imported file created.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedFile {
    /// The kind of the main object (a card is a `character`, even with a lorebook inside).
    pub kind: AssetKind,
    /// The main object's name.
    pub name: String,
    /// The created ids under the seed's names, main object first (`characterId`, `lorebookId`,
    /// `regexId` for a card; `presetId`, `regexId` for a preset; one id otherwise). `None`: the
    /// file had no such part (a card without `character_book`).
    pub ids: Vec<(&'static str, Option<i64>)>,
    /// Repairs, coercions and notes, reader's first, then the library's
    /// (`chat.character-unmatched`, `chat.card-lore`).
    pub warnings: Vec<Warning>,
}

impl ImportedFile {
    /// The main object's id.
    pub fn main_id(&self) -> Option<i64> {
        self.ids.first().and_then(|(_, id)| *id)
    }

    /// Every created id with its kind, main object first (`[(Character, 3), (Lorebook, 5)]`).
    pub fn created(&self) -> Vec<(AssetKind, i64)> {
        self.ids
            .iter()
            .filter_map(|(key, id)| Some((AssetKind::of_id_key(key)?, (*id)?)))
            .collect()
    }

    /// The result object every door shows: `{kind, name, <ids>, warnings:[{code, path?,
    /// message}]}`. The CLI's `--json` line adds `path` in front, the HTTP result `file` and
    /// `ok`; the model's tool returns it as it is.
    pub fn to_json(&self) -> Map<String, Value> {
        let mut out = Map::new();
        out.insert("kind".into(), json!(self.kind));
        out.insert("name".into(), json!(self.name));
        for (key, id) in &self.ids {
            out.insert((*key).into(), json!(id));
        }
        out.insert("warnings".into(), json!(self.warnings));
        out
    }
}

/// Why a file was not imported. Nothing was stored in either case.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The bytes are not a supported file of the asked kind; names the file and JSON path.
    #[error("{0}")]
    Unreadable(#[from] FormatError),
    /// The file was read, but storing it failed.
    #[error("{file}: cannot store the {kind}: {source}")]
    Store {
        /// The file name as given.
        file: String,
        /// What was being stored.
        kind: AssetKind,
        /// The store's error.
        #[source]
        source: StoreError,
    },
}

impl ImportError {
    /// The error envelope every door reports: an unreadable file is `invalid_arguments` with
    /// `details: {file, path, problem}` (`path` empty when the problem is the whole file); a
    /// store failure is mapped as every library operation maps it.
    pub fn into_tool_error(self) -> ToolError {
        match self {
            ImportError::Unreadable(e) => {
                ToolError::new(ErrorCode::InvalidArguments, e.to_string())
                    .with_details(json!({"file": e.file, "path": e.path, "problem": e.message}))
            }
            ImportError::Store { source, .. } => store_error("importing", source),
        }
    }
}

/// Reads one file and stores what it holds; `file_name` names it in messages (never used as a
/// path) and hints `.jsonl` chats; `kind` forces a kind instead of detecting it.
///
/// A card lands with its avatar image, lorebook and regex group, linked; a preset with its
/// regex group; a chat matched to library characters by exact name and to a persona by the
/// user name, with the matched characters' own lorebooks and regex groups bound (a note says
/// so, `chat.card-lore`); a speaker no character matches is a `chat.character-unmatched`
/// warning, and nothing is created for it.
pub fn import_file(
    store: &Store,
    bytes: &[u8],
    file_name: &str,
    kind: Option<AssetKind>,
) -> Result<ImportedFile, ImportError> {
    let mut all = import_file_all(store, bytes, file_name, kind, &[])?.into_iter();
    let mut first = all.next().ok_or_else(|| {
        ImportError::Unreadable(
            FormatError::whole("the file holds nothing to import").in_file(file_name),
        )
    })?;
    let rest: Vec<String> = all
        .filter_map(|f| Some(format!("{} {}", f.kind, f.main_id()?)))
        .collect();
    if !rest.is_empty() {
        first.warnings.push(Warning::new(
            "import.several",
            format!(
                "the file held more than one {}; also created {}",
                first.kind,
                rest.join(", ")
            ),
        ));
    }
    Ok(first)
}

/// [`import_file`] with one result per object the file creates: a SillyTavern `settings.json`
/// gives one result per persona (all stored in one transaction; the file's warnings are on the
/// first), a SillyTavern group definition one per group chat. `group_chats` are chat files
/// (name, bytes) a door found with a group definition (the CLI: `<groups>/../group chats/
/// <name>.jsonl`; HTTP: the other file parts named after the group's chats): each one the
/// group lists becomes a group chat with the group's members, reply mode and muted members;
/// with none of them, one empty chat named after the group is created and a warning names the
/// missing files. Every other file gives one result, as [`import_file`].
pub fn import_file_all(
    store: &Store,
    bytes: &[u8],
    file_name: &str,
    kind: Option<AssetKind>,
    group_chats: &[(String, Vec<u8>)],
) -> Result<Vec<ImportedFile>, ImportError> {
    let outcome = tavo_formats::import_bytes(bytes, file_name, kind)?;
    let main_kind = outcome.imported.kind();
    let stored = |source| ImportError::Store {
        file: file_name.to_owned(),
        kind: main_kind,
        source,
    };
    let mut warnings = outcome.warnings;
    match outcome.imported {
        Imported::Personas(list) => {
            let ids = store
                .write(|tx| {
                    list.iter()
                        .map(|p| tx.create(p))
                        .collect::<tavo_store::Result<Vec<_>>>()
                })
                .map_err(stored)?;
            Ok(list
                .into_iter()
                .zip(ids)
                .enumerate()
                .map(|(i, (p, id))| ImportedFile {
                    kind: AssetKind::Persona,
                    name: p.name,
                    ids: vec![(AssetKind::Persona.id_key(), Some(id.0))],
                    warnings: if i == 0 {
                        std::mem::take(&mut warnings)
                    } else {
                        Vec::new()
                    },
                })
                .collect())
        }
        Imported::Group(group) => st::import_group(store, file_name, group, warnings, group_chats),
        imported => {
            let name = imported.name().to_owned();
            let ids = store_imported(store, imported, &mut warnings).map_err(stored)?;
            Ok(vec![ImportedFile {
                kind: main_kind,
                name,
                ids,
                warnings,
            }])
        }
    }
}

/// The notes a chat import adds: unmatched speakers (`chat.character-unmatched`) and the
/// characters' own lore bound (`chat.card-lore`).
pub(crate) fn chat_warnings(result: &tavo_store::ChatImportResult, warnings: &mut Vec<Warning>) {
    for name in &result.unmatched {
        warnings.push(Warning::new(
            "chat.character-unmatched",
            format!(
                "no character named {name:?} in the library; the chat was imported without it \
                 (import the character first, then import the chat again to link them)"
            ),
        ));
    }
    let lore: Vec<String> = result
        .card_lorebooks
        .iter()
        .map(|b| format!("lorebook {} ({:?})", b.id.0, b.name))
        .chain(
            result
                .card_regexes
                .iter()
                .map(|r| format!("regex {} ({:?})", r.id.0, r.name)),
        )
        .collect();
    if !lore.is_empty() {
        warnings.push(Warning::new(
            "chat.card-lore",
            format!(
                "bound the characters' own {}, as SillyTavern applies a card's lore to its chats \
                 (unbind them like any binding: `tavo chat update ID --no-lorebooks`, `tavo_chat_update`)",
                lore.join(", ")
            ),
        ));
    }
}

/// The model's door: the argument `field` holds the file's JSON (a card, a SillyTavern preset,
/// world info, regex scripts) of `kind`. Same rows, ids and warnings as [`import_file`] (a
/// nameless preset, lorebook or regex group is named `Preset`, `Lorebook`, `Regex`, where a
/// file would give its file name); an
/// error's `details.path` is the argument path (`card.data.character_book.entries[0].keys`),
/// with `expected` (the problem) and `actualType`, as every invalid argument reports it.
pub fn import_value(
    store: &Store,
    field: &str,
    value: &Value,
    kind: AssetKind,
) -> Result<ImportedFile, ToolError> {
    let bytes = serde_json::to_vec(value).map_err(|_| ToolError::internal("importing"))?;
    // The file name gives a nameless preset, lorebook or regex group its name: with no file,
    // the seed's defaults ("preset.name … 缺省为 'Preset'", "regex.name … 缺省为 'Regex'").
    let file_name = format!("{}.json", default_name(kind));
    import_file(store, &bytes, &file_name, Some(kind)).map_err(|e| match e {
        ImportError::Unreadable(e) => {
            let path = if e.path.is_empty() {
                field.to_owned()
            } else {
                format!("{field}.{}", e.path)
            };
            ToolError::new(
                ErrorCode::InvalidArguments,
                format!("{path}: {}", e.message),
            )
            .with_details(json!({
                "path": path,
                "expected": e.message,
                "actualType": crate::error::json_type_name(value),
            }))
        }
        other => other.into_tool_error(),
    })
}

/// The name a nameless asset imported through [`import_value`] gets.
pub fn default_name(kind: AssetKind) -> &'static str {
    match kind {
        AssetKind::Character => "Character",
        AssetKind::Persona => "Persona",
        AssetKind::Preset => "Preset",
        AssetKind::Lorebook => "Lorebook",
        AssetKind::Regex => "Regex",
        AssetKind::Chat => "Chat",
    }
}

/// Stores one value read by `tavo_formats::import_bytes` (each kind in one transaction) and
/// returns the created ids in the order [`ImportedFile::ids`] lists them.
fn store_imported(
    store: &Store,
    imported: Imported,
    warnings: &mut Vec<Warning>,
) -> tavo_store::Result<Vec<(&'static str, Option<i64>)>> {
    use AssetKind as K;
    Ok(match imported {
        Imported::Character {
            character,
            avatar,
            lorebook,
            regex,
            assets,
        } => {
            // A charx card's other members are kept as the character's card files.
            let files: Vec<(String, Vec<u8>)> =
                assets.into_iter().map(|a| (a.path, a.bytes)).collect();
            let r = store.import_character_with_files(
                &character,
                avatar.as_deref(),
                lorebook.as_ref(),
                regex.as_ref(),
                &files,
            )?;
            vec![
                (K::Character.id_key(), Some(r.character_id.0)),
                (K::Lorebook.id_key(), r.lorebook_id.map(|l| l.0)),
                (K::Regex.id_key(), r.regex_id.map(|g| g.0)),
            ]
        }
        Imported::Persona(persona) => vec![(K::Persona.id_key(), Some(store.create(&persona)?.0))],
        // Handled by `import_file_all` before this is reached; stored the same way here.
        Imported::Personas(list) => {
            let ids = store.write(|tx| {
                list.iter()
                    .map(|p| tx.create(p))
                    .collect::<tavo_store::Result<Vec<_>>>()
            })?;
            ids.into_iter()
                .map(|id| (K::Persona.id_key(), Some(id.0)))
                .collect()
        }
        Imported::Group(group) => {
            let result = store.write(|tx| {
                tx.import_group_chat(
                    group.chat.chat.clone(),
                    Vec::new(),
                    &group.chat.character_names,
                    None,
                    &group.muted,
                )
            })?;
            chat_warnings(&result, warnings);
            vec![(K::Chat.id_key(), Some(result.chat_id.0))]
        }
        Imported::Preset { preset, regex } => {
            let (preset_id, regex_id) = store.import_preset(&preset, regex.as_ref())?;
            vec![
                (K::Preset.id_key(), Some(preset_id.0)),
                (K::Regex.id_key(), regex_id.map(|r| r.0)),
            ]
        }
        Imported::Lorebook(book) => vec![(K::Lorebook.id_key(), Some(store.create(&book)?.0))],
        Imported::Regex(group) => vec![(K::Regex.id_key(), Some(store.create(&group)?.0))],
        Imported::Chat(chat) => {
            let result = store.import_chat(
                chat.chat,
                chat.messages,
                &chat.character_names,
                chat.user_name.as_deref(),
            )?;
            chat_warnings(&result, warnings);
            vec![(K::Chat.id_key(), Some(result.chat_id.0))]
        }
    })
}

/// The formats each kind can be exported to; the first is its default at every door.
pub fn export_formats(kind: AssetKind) -> &'static [ExportFormat] {
    use ExportFormat::*;
    match kind {
        // A PNG card is what SillyTavern writes and every front end reads.
        AssetKind::Character => &[Png, Ccv3Json, Ccv2Json, Charx, Tavo],
        AssetKind::Lorebook => &[St, Ccv3, Tavo],
        AssetKind::Preset | AssetKind::Regex => &[St, Tavo],
        // SillyTavern keeps personas inside its settings file: there is no outside format.
        AssetKind::Persona => &[Tavo],
        AssetKind::Chat => &[Jsonl, Tavo],
    }
}

/// The format an export of `kind` uses when none is asked for: character `png`, lorebook,
/// preset and regex `st`, persona `tavo`, chat `jsonl`.
pub fn default_export_format(kind: AssetKind) -> ExportFormat {
    export_formats(kind)[0]
}

/// One exported asset.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportedFile {
    /// The file's bytes.
    pub bytes: Vec<u8>,
    /// The format written.
    pub format: ExportFormat,
    /// The asset's name, for a download's file name.
    pub name: String,
}

impl ExportedFile {
    /// The MIME type of the file.
    pub fn mime_type(&self) -> &'static str {
        match self.format {
            ExportFormat::Png => "image/png",
            ExportFormat::Charx => "application/zip",
            ExportFormat::Jsonl => "application/jsonl",
            _ => "application/json",
        }
    }
}

/// A format `kind` supports, else `invalid_arguments` at `format` listing the ones it does.
fn supported(kind: AssetKind, format: ExportFormat) -> Result<ExportFormat, ToolError> {
    let allowed = export_formats(kind);
    if allowed.contains(&format) {
        return Ok(format);
    }
    Err(format_error(
        kind,
        format!("a {kind} cannot be exported as {format}"),
    ))
}

fn format_error(kind: AssetKind, problem: String) -> ToolError {
    let names = export_formats(kind)
        .iter()
        .map(|f| f.as_str())
        .collect::<Vec<_>>()
        .join(" | ");
    ToolError::new(
        ErrorCode::InvalidArguments,
        format!("format: {problem}; use {names}"),
    )
    .with_details(json!({"path": "format", "expected": names, "actualType": "string"}))
}

/// Parses a format name for `kind`: `None` (or blank) is the kind's default; an unknown name,
/// or one the kind does not support, is `invalid_arguments` at `format`, listing the ones it
/// does.
pub fn export_format_for(kind: AssetKind, name: Option<&str>) -> Result<ExportFormat, ToolError> {
    match name.map(str::trim).filter(|f| !f.is_empty()) {
        None => Ok(default_export_format(kind)),
        Some(name) => {
            let format = name
                .parse::<ExportFormat>()
                .map_err(|_| format_error(kind, format!("unknown format {name:?}")))?;
            supported(kind, format)
        }
    }
}

/// Exports asset `id` of `kind` as `format` (`None`: the kind's [`default_export_format`]): a
/// card with its linked lorebook, regex group and avatar image; a preset with its regex group;
/// a chat with its messages. A format the kind does not support is `invalid_arguments`, a
/// missing asset `resource_not_found`.
pub fn export_asset(
    store: &Store,
    kind: AssetKind,
    id: i64,
    format: Option<ExportFormat>,
) -> Result<ExportedFile, ToolError> {
    let format = supported(kind, format.unwrap_or(default_export_format(kind)))?;
    let read = |e| store_error("exporting", e);
    let unsupported = |e: FormatError| ToolError::new(ErrorCode::InvalidArguments, e.to_string());
    let (bytes, name) = match kind {
        AssetKind::Character => {
            let parts = store.character_export_parts(id.into()).map_err(read)?;
            // Only a charx has a place for the card's own files (sprites, `x_meta/` …).
            let assets: Vec<tavo_formats::charx::CharxAsset> = if format == ExportFormat::Charx {
                store
                    .character_card_files(id.into())
                    .map_err(read)?
                    .into_iter()
                    .map(|(path, bytes)| tavo_formats::charx::CharxAsset { path, bytes })
                    .collect()
            } else {
                Vec::new()
            };
            let bytes = tavo_formats::export_character_with_assets(
                &parts.character,
                parts.lorebook.as_ref(),
                parts.regex.as_ref(),
                parts.avatar.as_ref().map(|a| a.bytes.as_slice()),
                &assets,
                format,
            )
            .map_err(unsupported)?;
            (bytes, parts.character.name)
        }
        AssetKind::Persona => {
            let persona = store.require::<Persona>(id.into()).map_err(read)?;
            let bytes = tavo_formats::export_persona(&persona, format).map_err(unsupported)?;
            (bytes, persona.name)
        }
        AssetKind::Preset => {
            let (preset, regex) = store.preset_export_parts(id.into()).map_err(read)?;
            let bytes = tavo_formats::export_preset(&preset, regex.as_ref(), format)
                .map_err(unsupported)?;
            (bytes, preset.name)
        }
        AssetKind::Lorebook => {
            let book = store.require::<Lorebook>(id.into()).map_err(read)?;
            let bytes = tavo_formats::export_lorebook(&book, format).map_err(unsupported)?;
            (bytes, book.name)
        }
        AssetKind::Regex => {
            let group = store.require::<RegexGroup>(id.into()).map_err(read)?;
            let bytes = tavo_formats::export_regex(&group, format).map_err(unsupported)?;
            (bytes, group.name)
        }
        AssetKind::Chat => {
            let (chat, messages) = store.chat_export_parts(ChatId(id)).map_err(read)?;
            let bytes = tavo_formats::export_chat(&chat, &messages, format).map_err(unsupported)?;
            (bytes, chat.name)
        }
    };
    Ok(ExportedFile {
        bytes,
        format,
        name,
    })
}

#[cfg(test)]
mod tests;
