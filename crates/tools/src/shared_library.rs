//! The shared library of a server with accounts: cards, personas, presets, lorebooks, regex
//! groups and themes an admin has published for every user.
//!
//! It is a library of its own (a [`Store`] beside the users' libraries), and what makes it
//! shared is explicit: only what an admin published is listed ([`REGISTRY_KEY`]), it is
//! written only by [`publish`] and [`unpublish`], and a user takes a published item by
//! [`copy`]ing it into their own library, where it is theirs to change. Nothing in a user's
//! library ever points into the shared one, so unpublishing never breaks a user's chats.
//!
//! Publishing and copying go through the same export and import as every door
//! ([`export_asset`] → [`import_file`]), so what travels is what an export keeps: a card with
//! its lorebook, regex group, avatar and (as a charx) its own files; a preset with its regex
//! group.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tavo_formats::ExportFormat;
use tavo_model::AssetKind;
use tavo_model::theme::OFFICIAL_THEME_IDS;
use tavo_store::Store;

use crate::context::store_error;
use crate::error::{ErrorCode, ToolError};
use crate::library::{ImportedFile, export_asset, import_file};
use crate::theme_store;

/// The setting of the shared library that lists what is published, oldest first.
pub const REGISTRY_KEY: &str = "shared.published";

/// What can be published: a library kind (not a chat: a chat is a person's) or a theme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SharedKind {
    /// A character card.
    Character,
    /// A persona.
    Persona,
    /// A prompt preset.
    Preset,
    /// A lorebook.
    Lorebook,
    /// A regex group.
    Regex,
    /// A chat theme.
    Theme,
}

impl SharedKind {
    /// The kind's name in routes and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            SharedKind::Character => "character",
            SharedKind::Persona => "persona",
            SharedKind::Preset => "preset",
            SharedKind::Lorebook => "lorebook",
            SharedKind::Regex => "regex",
            SharedKind::Theme => "theme",
        }
    }

    /// The library kind, `None` for a theme.
    pub fn asset(self) -> Option<AssetKind> {
        match self {
            SharedKind::Character => Some(AssetKind::Character),
            SharedKind::Persona => Some(AssetKind::Persona),
            SharedKind::Preset => Some(AssetKind::Preset),
            SharedKind::Lorebook => Some(AssetKind::Lorebook),
            SharedKind::Regex => Some(AssetKind::Regex),
            SharedKind::Theme => None,
        }
    }
}

impl std::str::FromStr for SharedKind {
    type Err = ToolError;

    fn from_str(s: &str) -> Result<Self, ToolError> {
        let t = s.trim().to_ascii_lowercase();
        Ok(match t.strip_suffix('s').unwrap_or(&t) {
            "character" => SharedKind::Character,
            "persona" => SharedKind::Persona,
            "preset" => SharedKind::Preset,
            "lorebook" => SharedKind::Lorebook,
            "regex" | "regexe" => SharedKind::Regex,
            "theme" => SharedKind::Theme,
            _ => {
                return Err(ToolError::new(
                    ErrorCode::InvalidArguments,
                    format!(
                        "kind: {s:?} cannot be shared; use character, persona, preset, lorebook, regex or theme"
                    ),
                ));
            }
        })
    }
}

/// One published item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SharedItem {
    /// What it is.
    pub kind: SharedKind,
    /// Its id in the shared library (the one routes name).
    pub id: i64,
    /// Its name when it was published.
    pub name: String,
    /// The admin who published it.
    pub published_by: String,
    /// When, RFC 3339 UTC.
    pub published_at: String,
    /// What came with it and goes with it (a card's lorebook and regex group, a preset's
    /// regex group): `[[kind, id]]`, never listed on their own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub companions: Vec<(AssetKind, i64)>,
}

/// What a copy created in the user's library.
#[derive(Debug, Clone, PartialEq)]
pub struct Copied {
    /// The item copied.
    pub item: SharedItem,
    /// The new id in the user's library.
    pub id: i64,
    /// Everything the import created (a card's lorebook and regex group too), `None` for a
    /// theme.
    pub imported: Option<ImportedFile>,
}

impl Copied {
    /// `{kind, id, name, from: {id}, created: [[kind, id]], warnings}`.
    pub fn to_json(&self) -> Value {
        let (created, warnings) = match &self.imported {
            Some(f) => (json!(f.created()), json!(f.warnings)),
            None => (json!([[SharedKind::Theme, self.id]]), json!([])),
        };
        json!({
            "kind": self.item.kind,
            "id": self.id,
            "name": self.item.name,
            "from": {"id": self.item.id},
            "created": created,
            "warnings": warnings,
        })
    }
}

fn not_published(kind: SharedKind, id: i64) -> ToolError {
    ToolError::new(
        ErrorCode::ResourceNotFound,
        format!(
            "no shared {} with id {id}: GET /api/shared lists what is published",
            kind.as_str()
        ),
    )
}

/// Everything published, oldest first.
pub fn list(shared: &Store) -> Result<Vec<SharedItem>, ToolError> {
    let value = shared
        .setting_get(REGISTRY_KEY)
        .map_err(|e| store_error("reading the shared library", e))?;
    match value {
        None => Ok(Vec::new()),
        Some(v) => serde_json::from_value(v).map_err(|e| {
            ToolError::new(
                ErrorCode::InternalError,
                format!("the shared library's list is unreadable: {e}"),
            )
        }),
    }
}

fn save(shared: &Store, items: &[SharedItem]) -> Result<(), ToolError> {
    shared
        .setting_set(REGISTRY_KEY, &json!(items))
        .map_err(|e| store_error("writing the shared library", e))
}

/// The published item, or `resource_not_found`.
pub fn item(shared: &Store, kind: SharedKind, id: i64) -> Result<SharedItem, ToolError> {
    list(shared)?
        .into_iter()
        .find(|i| i.kind == kind && i.id == id)
        .ok_or_else(|| not_published(kind, id))
}

/// The published item as its kind's JSON (what `GET /api/library/{kind}/{id}` shows), with
/// `shared: {publishedBy, publishedAt}`.
pub fn get(shared: &Store, kind: SharedKind, id: i64) -> Result<Value, ToolError> {
    let it = item(shared, kind, id)?;
    let mut value = match kind.asset() {
        Some(asset) => shared
            .asset_json(asset, id)
            .map_err(|e| store_error("reading the shared library", e))?
            .ok_or_else(|| not_published(kind, id))?,
        None => theme_store::get(shared, id)
            .map_err(|e| store_error("reading the shared library", e))?
            .map(|t| json!(t))
            .ok_or_else(|| not_published(kind, id))?,
    };
    if let Some(map) = value.as_object_mut() {
        map.insert(
            "shared".into(),
            json!({"publishedBy": it.published_by, "publishedAt": it.published_at}),
        );
    }
    Ok(value)
}

/// A published character's avatar (`None`: it has none), or `resource_not_found`.
pub fn avatar(shared: &Store, id: i64) -> Result<Option<tavo_store::Avatar>, ToolError> {
    item(shared, SharedKind::Character, id)?;
    shared
        .character_avatar_get(id.into())
        .map_err(|e| store_error("reading the shared library", e))
}

/// Copies an asset from one library to another through its export: a character as a charx
/// when it has files of its own (only a charx carries them), else Tavo's own JSON.
fn transfer(from: &Store, to: &Store, kind: AssetKind, id: i64) -> Result<ImportedFile, ToolError> {
    let format = if kind == AssetKind::Character
        && !from
            .character_card_files(id.into())
            .map_err(|e| store_error("exporting", e))?
            .is_empty()
    {
        ExportFormat::Charx
    } else {
        ExportFormat::Tavo
    };
    let file = export_asset(from, kind, id, Some(format))?;
    let name = format!("{}.{}", file.name, file.format.extension());
    import_file(to, &file.bytes, &name, Some(kind)).map_err(|e| e.into_tool_error())
}

fn copy_theme(from: &Store, to: &Store, id: i64) -> Result<(i64, String), ToolError> {
    let theme = theme_store::get(from, id)
        .map_err(|e| store_error("reading a theme", e))?
        .ok_or_else(|| {
            ToolError::new(
                ErrorCode::ResourceNotFound,
                format!("no theme with id {id}"),
            )
        })?;
    let mut theme = theme;
    // Theme names are unique in a library: a taken name gets " (copy)", " (copy 2)" …
    let taken: Vec<String> = theme_store::all(to)
        .map_err(|e| store_error("reading themes", e))?
        .into_iter()
        .map(|t| t.name)
        .collect();
    let base = theme.name.clone();
    let mut n = 1;
    while taken.contains(&theme.name) {
        theme.name = match n {
            1 => format!("{base} (copy)"),
            _ => format!("{base} (copy {n})"),
        };
        n += 1;
    }
    let created = theme_store::create(to, theme).map_err(|e| store_error("copying a theme", e))?;
    Ok((created.id.map_or(0, |i| i.0), created.name))
}

/// Publishes asset or theme `id` of the admin's library `from` under `by`: a copy lands in
/// the shared library and is listed. Official themes are everyone's already.
pub fn publish(
    from: &Store,
    shared: &Store,
    kind: SharedKind,
    id: i64,
    by: &str,
) -> Result<SharedItem, ToolError> {
    let (shared_id, name, companions) = match kind.asset() {
        Some(asset) => {
            let imported = transfer(from, shared, asset, id)?;
            let main = imported.main_id().ok_or_else(|| {
                ToolError::new(ErrorCode::InternalError, "the published copy has no id")
            })?;
            let companions = imported
                .created()
                .into_iter()
                .filter(|(k, i)| !(*k == asset && *i == main))
                .collect();
            (main, imported.name, companions)
        }
        None => {
            if id <= OFFICIAL_THEME_IDS {
                return Err(ToolError::new(
                    ErrorCode::InvalidArguments,
                    format!("theme {id} is an official theme: every user has it already"),
                ));
            }
            let (new_id, name) = copy_theme(from, shared, id)?;
            (new_id, name, Vec::new())
        }
    };
    let item = SharedItem {
        kind,
        id: shared_id,
        name,
        published_by: by.to_owned(),
        published_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        companions,
    };
    let mut items = list(shared)?;
    items.push(item.clone());
    save(shared, &items)?;
    Ok(item)
}

/// Takes a published item out of the shared library (with what came with it). Copies users
/// made stay theirs.
pub fn unpublish(shared: &Store, kind: SharedKind, id: i64) -> Result<SharedItem, ToolError> {
    let mut items = list(shared)?;
    let at = items
        .iter()
        .position(|i| i.kind == kind && i.id == id)
        .ok_or_else(|| not_published(kind, id))?;
    let item = items.remove(at);
    save(shared, &items)?;
    let gone = |e| store_error("unpublishing", e);
    match kind.asset() {
        Some(asset) => {
            shared.asset_delete(asset, id).map_err(gone)?;
        }
        None => {
            theme_store::delete(shared, id).map_err(gone)?;
        }
    }
    for (k, i) in &item.companions {
        shared.asset_delete(*k, *i).map_err(gone)?;
    }
    Ok(item)
}

/// Copies a published item into a user's library `to`, where it is theirs.
pub fn copy(shared: &Store, to: &Store, kind: SharedKind, id: i64) -> Result<Copied, ToolError> {
    let item = item(shared, kind, id)?;
    match kind.asset() {
        Some(asset) => {
            let imported = transfer(shared, to, asset, id)?;
            let new_id = imported
                .main_id()
                .ok_or_else(|| ToolError::new(ErrorCode::InternalError, "the copy has no id"))?;
            Ok(Copied {
                item,
                id: new_id,
                imported: Some(imported),
            })
        }
        None => {
            let (new_id, _) = copy_theme(shared, to, id)?;
            Ok(Copied {
                item,
                id: new_id,
                imported: None,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tavo_model::Character;

    fn library() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = Store::open(dir.path()).expect("open");
        (dir, store)
    }

    #[test]
    fn a_published_card_is_listed_copied_and_unpublished_without_touching_copies() {
        let (_a, admin) = library();
        let (_s, shared) = library();
        let (_u, user) = library();
        let card = import_file(
            &admin,
            br#"{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"Mira","description":"a guide","first_mes":"Hello.","character_book":{"entries":[{"keys":["tea"],"content":"Mira likes tea.","enabled":true,"insertion_order":1}]}}}"#,
            "mira.json",
            None,
        )
        .expect("card");
        let id = card.main_id().expect("id");

        let item = publish(&admin, &shared, SharedKind::Character, id, "ann").expect("publish");
        assert_eq!(item.name, "Mira");
        assert_eq!(item.companions.len(), 1, "{item:?}");
        assert_eq!(list(&shared).expect("list"), vec![item.clone()]);
        let got = get(&shared, SharedKind::Character, item.id).expect("get");
        assert_eq!(got["shared"]["publishedBy"], "ann");

        let copied = copy(&shared, &user, SharedKind::Character, item.id).expect("copy");
        let mine = user
            .asset_json(AssetKind::Character, copied.id)
            .expect("read")
            .expect("copied card");
        assert_eq!(mine["name"], "Mira");
        assert_eq!(
            user.asset_summaries(AssetKind::Lorebook)
                .expect("books")
                .len(),
            1
        );

        unpublish(&shared, SharedKind::Character, item.id).expect("unpublish");
        assert!(list(&shared).expect("list").is_empty());
        assert!(
            shared
                .asset_summaries(AssetKind::Lorebook)
                .expect("books")
                .is_empty(),
            "the card's lorebook goes with it"
        );
        assert!(user.require::<Character>(copied.id.into()).is_ok());
        let again = copy(&shared, &user, SharedKind::Character, item.id).expect_err("gone");
        assert_eq!(again.code, ErrorCode::ResourceNotFound);
    }

    #[test]
    fn only_listed_items_are_shared_and_official_themes_are_not_published() {
        let (_a, admin) = library();
        let (_s, shared) = library();
        let err = get(&shared, SharedKind::Persona, 1).expect_err("nothing published");
        assert_eq!(err.code, ErrorCode::ResourceNotFound);
        let err = publish(&admin, &shared, SharedKind::Theme, 1, "ann").expect_err("official");
        assert_eq!(err.code, ErrorCode::InvalidArguments);
        assert!("chat".parse::<SharedKind>().is_err());
        assert_eq!("Themes".parse::<SharedKind>().ok(), Some(SharedKind::Theme));
    }
}
