//! Writing library assets — characters, personas, presets, lorebooks, regex groups — once for
//! every door: the model's `tavo_<kind>_create/update`, `POST` / `PUT /api/library/{kind}` and
//! the CLI all call [`create_asset`], [`update_asset`] or [`replace_asset`].
//!
//! What a write does before anything is stored, in order:
//! 1. **CCv3 / CCv2 names** ([`normalize_names`]): a character may be written with the card
//!    spec's snake_case names (`first_mes`, `mes_example`, `alternate_greetings`, …, seed:
//!    "创建和更新时同样接受 CCv3 规范的字段名"); each is moved onto its camelCase field. Both forms
//!    with different values are refused, naming the snake_case path. CCv3 dates (Unix seconds)
//!    become RFC 3339. A whole card (`spec` + `data`) or a `character_book` belongs to import.
//! 2. **Required fields** on create: `name`, and `firstMes` for a character, `description` for a
//!    persona (seed: "character.name 和 character.firstMes 为必填项").
//! 3. **Defaults** on create: a preset's missing built-in entries
//!    ([`tavo_model::Preset::fill_missing_builtins`]). On every write, lorebook and regex entries
//!    without an `identifier` get a generated one (as the importers give them).
//! 4. The model type's own validation; errors carry the field path (`preset.entries[1].identifier`).

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use tavo_model::{Character, Chat, Lorebook, Persona, Preset, RegexGroup};
use tavo_store::{Asset, AssetKind, Store, StoreError};

use crate::context::store_error;
use crate::error::{ErrorCode, ToolError, json_type_name};
use crate::ops::validation_error;

/// A model type with its seed rules for writes.
pub trait LibraryAsset: Asset + JsonSchema + DeserializeOwned + Serialize + Send + 'static {
    /// Argument name (`character`, `persona`, …) and the prefix of error paths.
    const LABEL: &'static str;
    /// Fields create requires besides `name`.
    const CREATE_REQUIRES: &'static [&'static str];
    /// Outside (CCv3) names accepted for camelCase fields: `(snake_case, camelCase)`.
    const ALIASES: &'static [(&'static str, &'static str)] = &[];
    /// Outside names that are not a plain rename (a lorebook entry's CCv3 fields), moved onto
    /// Tavo's fields before a write; refuses what cannot be read.
    fn outside_names(_obj: &mut Map<String, Value>) -> Result<(), ToolError> {
        Ok(())
    }
    /// The model's own validation.
    fn check(&self) -> Result<(), tavo_model::ValidationErrors>;
    /// Defaults a new asset gets (a preset's missing built-in entries).
    fn fill_on_create(&mut self) {}
    /// Defaults every write fills (generated entry identifiers).
    fn fill_on_write(&mut self) {}
}

/// The CCv3 `data` names of character fields and Tavo's names for them.
pub const CHARACTER_ALIASES: &[(&str, &str)] = &[
    ("first_mes", "firstMes"),
    ("mes_example", "mesExample"),
    ("alternate_greetings", "alternateGreetings"),
    ("system_prompt", "systemPrompt"),
    ("post_history_instructions", "postHistoryInstructions"),
    ("creator_notes", "creatorNotes"),
    ("character_version", "characterVersion"),
    ("group_only_greetings", "groupOnlyGreetings"),
    ("creation_date", "creationDate"),
    ("modification_date", "modificationDate"),
];

impl LibraryAsset for Character {
    const LABEL: &'static str = "character";
    const CREATE_REQUIRES: &'static [&'static str] = &["firstMes"];
    const ALIASES: &'static [(&'static str, &'static str)] = CHARACTER_ALIASES;
    fn check(&self) -> Result<(), tavo_model::ValidationErrors> {
        self.validate()
    }
}
impl LibraryAsset for Persona {
    const LABEL: &'static str = "persona";
    const CREATE_REQUIRES: &'static [&'static str] = &["description"];
    fn check(&self) -> Result<(), tavo_model::ValidationErrors> {
        self.validate()
    }
}
impl LibraryAsset for Preset {
    const LABEL: &'static str = "preset";
    const CREATE_REQUIRES: &'static [&'static str] = &[];
    fn check(&self) -> Result<(), tavo_model::ValidationErrors> {
        self.validate()
    }
    fn fill_on_create(&mut self) {
        self.fill_missing_builtins();
    }
}
impl LibraryAsset for Lorebook {
    const LABEL: &'static str = "lorebook";
    const CREATE_REQUIRES: &'static [&'static str] = &[];
    fn check(&self) -> Result<(), tavo_model::ValidationErrors> {
        self.validate()
    }
    fn outside_names(obj: &mut Map<String, Value>) -> Result<(), ToolError> {
        if let Some(Value::Array(entries)) = obj.get_mut("entries") {
            for (i, entry) in entries.iter_mut().enumerate() {
                if let Value::Object(e) = entry {
                    ccv3_entry(e, &format!("lorebook.entries[{i}]"))?;
                }
            }
        }
        Ok(())
    }
    fn fill_on_write(&mut self) {
        fill_identifiers(self.entries.iter_mut().map(|e| &mut e.identifier));
    }
}
impl LibraryAsset for RegexGroup {
    const LABEL: &'static str = "regex";
    const CREATE_REQUIRES: &'static [&'static str] = &[];
    fn check(&self) -> Result<(), tavo_model::ValidationErrors> {
        self.validate()
    }
    fn fill_on_write(&mut self) {
        fill_identifiers(self.entries.iter_mut().map(|e| &mut e.identifier));
    }
}
impl LibraryAsset for Chat {
    const LABEL: &'static str = "chat";
    const CREATE_REQUIRES: &'static [&'static str] = &[];
    fn check(&self) -> Result<(), tavo_model::ValidationErrors> {
        self.validate()
    }
}

/// The CCv3 names of a lorebook entry's fields (seed 002: create and update take them too),
/// with how each maps onto Tavo's field. Shown in the tools' schemas.
pub const LOREBOOK_ENTRY_CCV3: &[(&str, &str, &str)] = &[
    ("keys", "keywords", "CCv3 name of keywords."),
    (
        "secondary_keys",
        "secondaryKeywords",
        "CCv3 name of secondaryKeywords.",
    ),
    (
        "constant",
        "strategy",
        "CCv3: true is strategy 'constant', false 'keyword'.",
    ),
    (
        "position",
        "injectionPosition",
        "CCv3: 'before_char' is injectionPosition 'lorebookBefore', 'after_char' 'lorebookAfter'.",
    ),
    (
        "selective",
        "secondaryKeywordStrategy",
        "CCv3: true is secondaryKeywordStrategy 'andAny', false 'none'.",
    ),
];

/// Moves one entry's CCv3 names onto Tavo's fields (the seed's mapping); both names of one
/// field with different meanings, or a value CCv3 does not define, are refused at `path`.
fn ccv3_entry(e: &mut Map<String, Value>, path: &str) -> Result<(), ToolError> {
    for (ccv3, tavo, _) in LOREBOOK_ENTRY_CCV3 {
        let Some(value) = e.shift_remove(*ccv3) else {
            continue;
        };
        let at = format!("{path}.{ccv3}");
        let mapped = match (*ccv3, &value) {
            ("keys" | "secondary_keys", Value::Array(_)) => value.clone(),
            ("constant", Value::Bool(b)) => json!(if *b { "constant" } else { "keyword" }),
            ("selective", Value::Bool(b)) => json!(if *b { "andAny" } else { "none" }),
            ("position", Value::String(s)) if s == "before_char" => json!("lorebookBefore"),
            ("position", Value::String(s)) if s == "after_char" => json!("lorebookAfter"),
            ("position", _) => {
                return Err(ToolError::invalid_at(
                    &at,
                    "'before_char' or 'after_char' (or injectionPosition for the other places)",
                    &value.to_string(),
                ));
            }
            ("keys" | "secondary_keys", _) => {
                return Err(ToolError::invalid_at(
                    &at,
                    "an array of strings",
                    json_type_name(&value),
                ));
            }
            _ => {
                return Err(ToolError::invalid_at(
                    &at,
                    "true or false",
                    json_type_name(&value),
                ));
            }
        };
        if let Some(existing) = e.get(*tavo)
            && *existing != mapped
        {
            return Err(ToolError::invalid_at(
                &at,
                format!(
                    "the same meaning as {path}.{tavo} (it is the CCv3 name of that field; send one of the two)"
                ),
                "a different value",
            ));
        }
        e.insert((*tavo).to_owned(), mapped);
    }
    Ok(())
}

/// Gives every blank identifier a fresh one (lorebook and regex entries alike).
fn fill_identifiers<'a>(identifiers: impl Iterator<Item = &'a mut String>) {
    for id in identifiers.filter(|id| id.trim().is_empty()) {
        *id = new_identifier();
    }
}

/// A fresh entry identifier (a UUID, as the SillyTavern importers generate).
pub fn new_identifier() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Moves CCv3 snake_case names onto their camelCase fields (see the module doc); refuses a
/// whole card, a `character_book`, and both names of one field with different values.
pub fn normalize_names<A: LibraryAsset>(obj: &mut Map<String, Value>) -> Result<(), ToolError> {
    A::outside_names(obj)?;
    if A::ALIASES.is_empty() {
        return Ok(());
    }
    let label = A::LABEL;
    for key in ["spec", "data", "character_book"] {
        if obj.contains_key(key) {
            return Err(ToolError::invalid_at(
                &format!("{label}.{key}"),
                "the character's own fields (a whole card or one with a character_book is imported: \
                 tavo_character_import, POST /api/import or `tavo import`)",
                "a card field",
            ));
        }
    }
    for (snake, camel) in A::ALIASES {
        let Some(mut value) = obj.shift_remove(*snake) else {
            continue;
        };
        if camel.ends_with("Date") {
            value = unix_to_rfc3339(value);
        }
        if let Some(existing) = obj.get(*camel) {
            let mut existing = existing.clone();
            if camel.ends_with("Date") {
                existing = unix_to_rfc3339(existing);
            }
            if existing != value {
                return Err(ToolError::invalid_at(
                    &format!("{label}.{snake}"),
                    format!(
                        "the same value as {label}.{camel} (it is the CCv3 name of that field; send one of the two)"
                    ),
                    "a different value",
                ));
            }
        }
        obj.insert((*camel).to_owned(), value);
    }
    Ok(())
}

/// CCv3 stores dates as Unix seconds; Tavo's fields are RFC 3339 strings.
fn unix_to_rfc3339(v: Value) -> Value {
    match v.as_i64() {
        Some(secs) => chrono::DateTime::from_timestamp(secs, 0)
            .map(|d| Value::String(d.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)))
            .unwrap_or(v),
        None => v,
    }
}

fn require_fields<A: LibraryAsset>(obj: &Map<String, Value>) -> Result<(), ToolError> {
    for field in std::iter::once(&"name").chain(A::CREATE_REQUIRES.iter()) {
        let present = obj
            .get(*field)
            .and_then(Value::as_str)
            .is_some_and(|s| !s.trim().is_empty());
        if !present {
            let path = format!("{}.{field}", A::LABEL);
            let found = obj.get(*field).map_or("missing", |v| match v {
                Value::String(_) => "empty string",
                other => json_type_name(other),
            });
            return Err(ToolError::invalid_at(
                &path,
                "non-empty string (required)",
                found,
            ));
        }
    }
    Ok(())
}

/// Deserialises, fills the defaults (`create` adds the create-only ones), then validates.
fn parse<A: LibraryAsset>(obj: Map<String, Value>, create: bool) -> Result<A, ToolError> {
    let mut asset: A = serde_json::from_value(Value::Object(obj))
        .map_err(|e| ToolError::new(ErrorCode::InvalidArguments, format!("{}: {e}", A::LABEL)))?;
    if create {
        asset.fill_on_create();
    }
    asset.fill_on_write();
    asset.check().map_err(|e| validation_error(A::LABEL, e))?;
    Ok(asset)
}

/// The envelope of a store failure; a lost update keeps its revisions in `details`.
fn write_error(what: &str, e: StoreError) -> ToolError {
    match e {
        StoreError::Conflict {
            kind,
            id,
            expected,
            actual,
        } => ToolError::new(
            ErrorCode::Conflict,
            format!(
                "{kind} {id} was written since revision {expected} (it is at revision {actual}); \
                 read it again, apply the change, and write with the new revision"
            ),
        )
        .with_details(
            json!({"kind": kind, "id": id, "expectedRevision": expected, "revision": actual}),
        ),
        other => store_error(what, other),
    }
}

/// The typed, validated asset a create would store (exposed for tests and dry runs).
pub fn prepare_create<A: LibraryAsset>(mut obj: Map<String, Value>) -> Result<A, ToolError> {
    obj.shift_remove("id");
    obj.shift_remove("revision");
    normalize_names::<A>(&mut obj)?;
    require_fields::<A>(&obj)?;
    parse(obj, true)
}

fn create_one<A: LibraryAsset>(store: &Store, obj: Map<String, Value>) -> Result<i64, ToolError> {
    let asset = prepare_create::<A>(obj)?;
    let id = store
        .create(&asset)
        .map_err(|e| write_error("creating", e))?;
    Ok(A::raw_id(id))
}

fn update_one<A: LibraryAsset>(
    store: &Store,
    patch: Map<String, Value>,
) -> Result<(i64, u64), ToolError> {
    let mut patch = patch;
    let id = positive_id(&patch, A::LABEL)?;
    normalize_names::<A>(&mut patch)?;
    let stored = store
        .asset_json(A::KIND, id)
        .map_err(|e| write_error("updating", e))?;
    let Some(Value::Object(mut merged)) = stored else {
        return Err(ToolError::not_found(A::LABEL, id));
    };
    for (k, v) in patch {
        if k != "revision" {
            merged.insert(k, v);
        }
    }
    let asset: A = parse(merged, false)?;
    let revision = store
        .update(&asset, None)
        .map_err(|e| write_error("updating", e))?;
    Ok((id, revision))
}

fn replace_one<A: LibraryAsset>(
    store: &Store,
    id: i64,
    mut obj: Map<String, Value>,
    revision: u64,
) -> Result<u64, ToolError> {
    obj.shift_remove("revision");
    obj.insert("id".into(), json!(id));
    normalize_names::<A>(&mut obj)?;
    let asset: A = parse(obj, false)?;
    store
        .update(&asset, Some(revision))
        .map_err(|e| write_error("writing", e))
}

fn preview_update_one<A: LibraryAsset>(
    store: &Store,
    mut patch: Map<String, Value>,
) -> Result<UpdatePreview, ToolError> {
    let id = positive_id(&patch, A::LABEL)?;
    normalize_names::<A>(&mut patch)?;
    let stored = store
        .asset_json(A::KIND, id)
        .map_err(|e| write_error("reading", e))?;
    let Some(Value::Object(before)) = stored else {
        return Err(ToolError::not_found(A::LABEL, id));
    };
    let revision = before.get("revision").and_then(Value::as_u64).unwrap_or(0);
    let mut merged = before.clone();
    for (k, v) in patch {
        if k != "revision" {
            merged.insert(k, v);
        }
    }
    let asset: A = parse(merged, false)?;
    let mut after = match serde_json::to_value(&asset) {
        Ok(Value::Object(m)) => m,
        _ => return Err(ToolError::internal("previewing the update")),
    };
    after.insert("id".into(), json!(id));
    after.insert("revision".into(), json!(revision));
    Ok(UpdatePreview {
        id,
        revision,
        before: Value::Object(before),
        after,
    })
}

/// What an update would do, checked but not stored (a dry run shows it; the write itself is
/// [`replace_asset`] of `after` at `revision`, so a write in between is a conflict).
#[derive(Debug, Clone, PartialEq)]
pub struct UpdatePreview {
    /// The asset's id.
    pub id: i64,
    /// The revision the preview was made from.
    pub revision: u64,
    /// The asset as stored (the JSON every read shows).
    pub before: Value,
    /// The asset as the update would store it (validated, defaults filled).
    pub after: Map<String, Value>,
}

/// The update of `patch` (which names the `id`) over the stored asset, validated, without
/// storing it: same merge and checks as [`update_asset`].
pub fn preview_update(
    store: &Store,
    kind: AssetKind,
    patch: Map<String, Value>,
) -> Result<UpdatePreview, ToolError> {
    match kind {
        AssetKind::Character => preview_update_one::<Character>(store, patch),
        AssetKind::Persona => preview_update_one::<Persona>(store, patch),
        AssetKind::Preset => preview_update_one::<Preset>(store, patch),
        AssetKind::Lorebook => preview_update_one::<Lorebook>(store, patch),
        AssetKind::Regex => preview_update_one::<RegexGroup>(store, patch),
        AssetKind::Chat => preview_update_one::<Chat>(store, patch),
    }
}

/// The asset a create of `obj` would store, as JSON, validated and with its defaults filled;
/// nothing is stored.
pub fn preview_create(kind: AssetKind, obj: Map<String, Value>) -> Result<Value, ToolError> {
    fn one<A: LibraryAsset>(obj: Map<String, Value>) -> Result<Value, ToolError> {
        let asset = prepare_create::<A>(obj)?;
        serde_json::to_value(&asset).map_err(|_| ToolError::internal("previewing the create"))
    }
    match kind {
        AssetKind::Character => one::<Character>(obj),
        AssetKind::Persona => one::<Persona>(obj),
        AssetKind::Preset => one::<Preset>(obj),
        AssetKind::Lorebook => one::<Lorebook>(obj),
        AssetKind::Regex => one::<RegexGroup>(obj),
        AssetKind::Chat => Err(chat_refused()),
    }
}

/// `{label}.id`, a positive integer.
pub fn positive_id(obj: &Map<String, Value>, label: &str) -> Result<i64, ToolError> {
    let path = format!("{label}.id");
    match obj.get("id") {
        Some(v) => v
            .as_i64()
            .filter(|i| *i > 0)
            .ok_or_else(|| ToolError::invalid_at(&path, "positive integer", json_type_name(v))),
        None => Err(ToolError::invalid_at(
            &path,
            "positive integer (required)",
            "missing",
        )),
    }
}

fn chat_refused() -> ToolError {
    ToolError::invalid_at(
        "kind",
        "character, persona, preset, lorebook or regex (a chat is created with tavo_chat_create)",
        "chat",
    )
}

/// Creates an asset from its JSON object (TavoJS shape, CCv3 names accepted for characters);
/// `id` and `revision` are ignored. Returns the new id. Chats are created by
/// [`crate::chats::create_chat`].
pub fn create_asset(
    store: &Store,
    kind: AssetKind,
    obj: Map<String, Value>,
) -> Result<i64, ToolError> {
    match kind {
        AssetKind::Character => create_one::<Character>(store, obj),
        AssetKind::Persona => {
            let default = makes_default(&obj);
            let id = create_one::<Persona>(store, obj)?;
            if default {
                keep_one_default_persona(store, id)?;
            }
            Ok(id)
        }
        AssetKind::Preset => create_one::<Preset>(store, obj),
        AssetKind::Lorebook => create_one::<Lorebook>(store, obj),
        AssetKind::Regex => create_one::<RegexGroup>(store, obj),
        AssetKind::Chat => Err(chat_refused()),
    }
}

/// Writes the fields of `patch` (which names the `id`) over the stored asset: a top-level merge,
/// arrays replaced whole (seed: update). Returns `(id, revision)`.
pub fn update_asset(
    store: &Store,
    kind: AssetKind,
    patch: Map<String, Value>,
) -> Result<(i64, u64), ToolError> {
    match kind {
        AssetKind::Character => update_one::<Character>(store, patch),
        AssetKind::Persona => {
            let default = makes_default(&patch);
            let written = update_one::<Persona>(store, patch)?;
            if default {
                keep_one_default_persona(store, written.0)?;
            }
            Ok(written)
        }
        AssetKind::Preset => update_one::<Preset>(store, patch),
        AssetKind::Lorebook => update_one::<Lorebook>(store, patch),
        AssetKind::Regex => update_one::<RegexGroup>(store, patch),
        AssetKind::Chat => Err(chat_refused()),
    }
}

/// Replaces a whole asset if it is still at `revision` (HTTP `PUT`); returns the new revision.
pub fn replace_asset(
    store: &Store,
    kind: AssetKind,
    id: i64,
    obj: Map<String, Value>,
    revision: u64,
) -> Result<u64, ToolError> {
    match kind {
        AssetKind::Character => replace_one::<Character>(store, id, obj, revision),
        AssetKind::Persona => {
            let default = makes_default(&obj);
            let revision = replace_one::<Persona>(store, id, obj, revision)?;
            if default {
                keep_one_default_persona(store, id)?;
            }
            Ok(revision)
        }
        AssetKind::Preset => replace_one::<Preset>(store, id, obj, revision),
        AssetKind::Lorebook => replace_one::<Lorebook>(store, id, obj, revision),
        AssetKind::Regex => replace_one::<RegexGroup>(store, id, obj, revision),
        AssetKind::Chat => replace_one::<Chat>(store, id, obj, revision),
    }
}

/// Deletes an asset: a chat with its messages, variables and files; a character also leaves
/// every chat's member list. The one delete of `tavo delete`, `DELETE /api/library/{kind}/{id}`
/// and the `tavo_<kind>_delete` tools, so a missing id is refused in the same words.
pub fn delete_asset(store: &Store, kind: AssetKind, id: i64) -> Result<(), ToolError> {
    let existed = match kind {
        AssetKind::Chat => store.chat_delete(tavo_model::ChatId(id)),
        other => store.asset_delete(other, id),
    }
    .map_err(|e| store_error("deleting", e))?;
    if existed {
        Ok(())
    } else {
        Err(crate::ops::common::missing(kind.as_str(), id))
    }
}

/// Whether a persona write makes it the default (`active: true`).
fn makes_default(fields: &Map<String, Value>) -> bool {
    fields.get("active") == Some(&Value::Bool(true))
}

/// One default persona at a time, whichever door wrote it (the CLI's `--default`, a
/// `PUT` from the app, a tool's update): the others stop being the default.
fn keep_one_default_persona(store: &Store, keep: i64) -> Result<(), ToolError> {
    let all = store
        .list::<Persona>()
        .map_err(|e| store_error("listing personas", e))?;
    for other in all
        .into_iter()
        .filter(|p| p.active)
        .filter_map(|p| p.id.map(|i| i.0))
        .filter(|id| *id != keep)
    {
        let patch = Map::from_iter([
            ("id".to_owned(), json!(other)),
            ("active".to_owned(), json!(false)),
        ]);
        update_one::<Persona>(store, patch)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_persona_made_the_default_by_any_write_is_the_only_default() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path()).expect("open");
        let persona =
            |name: &str| obj(json!({"name": name, "description": "someone", "active": true}));
        let a = create_asset(&store, AssetKind::Persona, persona("A")).expect("A");
        let b = create_asset(&store, AssetKind::Persona, persona("B")).expect("B");
        let defaults = |store: &Store| -> Vec<i64> {
            store
                .list::<Persona>()
                .expect("list")
                .into_iter()
                .filter(|p| p.active)
                .filter_map(|p| p.id.map(|i| i.0))
                .collect()
        };
        assert_eq!(defaults(&store), [b], "creating B as the default");
        update_asset(
            &store,
            AssetKind::Persona,
            obj(json!({"id": a, "active": true})),
        )
        .expect("update");
        assert_eq!(defaults(&store), [a], "updating A to the default");
        let revision = store
            .asset_summaries(AssetKind::Persona)
            .expect("summaries")
            .into_iter()
            .find(|s| s.id == b)
            .map(|s| s.revision)
            .expect("B");
        replace_asset(&store, AssetKind::Persona, b, persona("B"), revision).expect("replace");
        assert_eq!(defaults(&store), [b], "replacing B as the default");
        update_asset(
            &store,
            AssetKind::Persona,
            obj(json!({"id": b, "active": false})),
        )
        .expect("update");
        assert!(defaults(&store).is_empty(), "no default is allowed");
    }

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn ccv3_names_land_on_the_camel_case_fields() {
        let c: Character = prepare_create(obj(json!({
            "name": "Zed", "first_mes": "Yo", "alternate_greetings": ["Hey"],
            "mes_example": "<START>", "creation_date": 1_700_000_000
        })))
        .unwrap_or_default();
        assert_eq!(c.first_mes, "Yo");
        assert_eq!(c.alternate_greetings, ["Hey"]);
        assert_eq!(c.mes_example, "<START>");
        assert!(c.creation_date.is_some());
        assert!(!c.extra.contains_key("first_mes"));
    }

    #[test]
    fn disagreeing_names_are_refused_with_the_path() {
        let e = prepare_create::<Character>(obj(
            json!({"name": "Zed", "firstMes": "a", "first_mes": "b"}),
        ))
        .err()
        .unwrap_or_else(|| ToolError::internal("x"));
        assert_eq!(e.code, ErrorCode::InvalidArguments);
        assert_eq!(
            e.details.as_ref().and_then(|d| d["path"].as_str()),
            Some("character.first_mes")
        );
        let same = prepare_create::<Character>(obj(
            json!({"name": "Z", "firstMes": "a", "first_mes": "a"}),
        ));
        assert!(same.is_ok());
    }

    #[test]
    fn create_requires_the_greeting_and_the_persona_description() {
        let e = prepare_create::<Character>(obj(json!({"name": "OnlyName"})))
            .err()
            .unwrap_or_else(|| ToolError::internal("x"));
        assert_eq!(
            e.details.as_ref().and_then(|d| d["path"].as_str()),
            Some("character.firstMes")
        );
        assert!(prepare_create::<Persona>(obj(json!({"name": "P"}))).is_err());
    }

    #[test]
    fn entries_get_identifiers_and_presets_their_builtins() {
        let r: RegexGroup = prepare_create(obj(
            json!({"name": "R", "entries": [{"name": "a", "findRegex": "x"}]}),
        ))
        .unwrap_or_default();
        assert!(!r.entries[0].identifier.is_empty());
        let l: Lorebook = prepare_create(obj(json!({"name": "L", "entries": [{"content": "x"}]})))
            .unwrap_or_default();
        assert!(!l.entries[0].identifier.is_empty());
        let p: Preset = prepare_create(obj(json!({"name": "Mini", "entries": [{"identifier": "abc123", "name": "style", "content": "x"}]})))
            .unwrap_or_default();
        assert!(p.entry("chatHistory").is_some());
        assert_eq!(
            p.entries.last().map(|e| e.identifier.as_str()),
            Some("abc123")
        );
    }
}
