//! The library tools of Tavo's MCP server: for characters, lorebooks, regex groups, presets and
//! personas `search`, `get`, `create`, `update`, `import` (`import_card` for characters) and
//! `delete`; `entry_upsert` / `entry_delete` for the kinds with entries; `set_active` for
//! presets and personas; `tavo_regex_test`.
//!
//! Writes go through [`crate::assets`] (the checks every door shares: CCv3 names, required
//! fields, defaults, the model's validation) and imports through [`crate::library`]; a plan's
//! commit replaces the asset at the revision the plan read, so a write in between is a
//! `conflict`.

use base64::Engine as _;
use serde_json::{Map, Value, json};
use tavo_formats::card::{CardSpec, data_object};
use tavo_model::{AssetKind, Character, RegexEntry};
use tavo_store::Store;

use super::search::{self, Search};
use super::{McpContext, McpTools, Step, WritePlan, handler, id_field, object_field, string_field};
use crate::context::store_error;
use crate::error::{ErrorCode, ToolError};

/// The kinds with library tools, their argument names and what differs between them.
struct Kind {
    kind: AssetKind,
    /// `character`, `lorebook`, …: the tool-name part.
    tool: &'static str,
    /// Human noun.
    noun: &'static str,
    /// The import tool's suffix (`import_card`, `import`), if the kind imports.
    import: Option<&'static str>,
    /// The entries' argument id field (`lorebookId`) when the kind has entries.
    entries: Option<&'static str>,
    /// Fields a new entry needs besides `identifier`.
    entry_requires: &'static [&'static str],
    set_active: bool,
}

const KINDS: [Kind; 5] = [
    Kind {
        kind: AssetKind::Character,
        tool: "character",
        noun: "character card",
        import: Some("import_card"),
        entries: None,
        entry_requires: &[],
        set_active: false,
    },
    Kind {
        kind: AssetKind::Lorebook,
        tool: "lorebook",
        noun: "lorebook",
        import: Some("import"),
        entries: Some("lorebookId"),
        entry_requires: &["name", "content", "strategy"],
        set_active: false,
    },
    Kind {
        kind: AssetKind::Regex,
        tool: "regex",
        noun: "regex group",
        import: Some("import"),
        entries: Some("regexId"),
        entry_requires: &[],
        set_active: false,
    },
    Kind {
        kind: AssetKind::Preset,
        tool: "preset",
        noun: "preset",
        import: Some("import"),
        entries: Some("presetId"),
        entry_requires: &[],
        set_active: true,
    },
    Kind {
        kind: AssetKind::Persona,
        tool: "persona",
        noun: "persona",
        import: None,
        entries: None,
        entry_requires: &[],
        set_active: true,
    },
];

/// The setting that holds the library's active preset (new chats without a preset bind it).
pub const ACTIVE_PRESET: &str = "preset.active";

pub(super) fn register(set: &mut McpTools) {
    for k in &KINDS {
        register_kind(set, k);
    }
    register_regex_test(set);
}

/// A blocking handler: `f` runs behind the gate with the store.
fn blocking<F>(what: &'static str, f: F) -> super::Handler
where
    F: Fn(&Store, Map<String, Value>) -> Result<Step, ToolError> + Send + Sync + Clone + 'static,
{
    handler(move |cx, args| {
        let f = f.clone();
        async move { cx.blocking(what, move |store| f(store, args)).await }
    })
}

fn id_schema(field: &str, noun: &str) -> Value {
    json!({"type": "object", "properties": {field: {"type": "integer", "minimum": 1, "description": format!("The {noun}'s id.")}}, "required": [field], "additionalProperties": false})
}

fn register_kind(set: &mut McpTools, k: &Kind) {
    let kind = k.kind;
    let noun = k.noun;
    set.add(
        format!("tavo_{}_search", k.tool),
        format!("Find {noun}s by name (and tags for characters): `query`, `match` (exact/prefix/suffix/contains), `limit`, `cursor`. Answers `{{items: [{{id, name, revision, …}}], total, nextCursor}}`."),
        search::schema(json!({})),
        false,
        blocking("searching the library", move |store, args| {
            let s = Search::from_args(&args)?;
            Ok(Step::Answer(s.page(search_hits(store, kind, &s)?)))
        }),
    );
    let get_description = if kind == AssetKind::Character {
        "Read a character card: `{id, revision, avatar, data}` with `data` the card body in CCv3 snake_case.".to_owned()
    } else {
        format!("Read a {noun} with its `revision` (pass it as `expectedRevision` when you write).")
    };
    set.add(
        format!("tavo_{}_get", k.tool),
        get_description,
        id_schema("id", noun),
        false,
        blocking("reading the library", move |store, args| {
            let id = id_field(&args, "id")?;
            Ok(Step::Answer(read(store, kind, id)?))
        }),
    );
    set.add(
        format!("tavo_{}_create", k.tool),
        create_description(kind, noun),
        create_schema(kind),
        true,
        blocking("checking the new asset", move |_store, args| {
            plan_create(kind, args)
        }),
    );
    set.add(
        format!("tavo_{}_update", k.tool),
        format!("Change fields of a {noun}: `id` plus the fields to write (top-level merge; arrays such as `entries` are replaced whole)."),
        json!({"type": "object", "properties": {"id": {"type": "integer", "minimum": 1}}, "required": ["id"], "additionalProperties": true}),
        true,
        blocking("checking the update", move |store, args| plan_update(store, kind, args)),
    );
    if let Some(suffix) = k.import {
        let (schema, description) = import_schema(kind, noun);
        set.add(
            format!("tavo_{}_{suffix}", k.tool),
            description,
            schema,
            true,
            blocking("reading the import", move |_store, args| {
                plan_import(kind, args)
            }),
        );
    }
    let tool = k.tool;
    set.add(
        format!("tavo_{}_delete", k.tool),
        format!("Delete a {noun} by `id`."),
        id_schema("id", noun),
        true,
        blocking("reading the library", move |store, args| {
            let id = id_field(&args, "id")?;
            let before = read(store, kind, id)?;
            let op = format!("tavo_{tool}_delete");
            Ok(Step::Write(WritePlan {
                revision: before["revision"].as_u64(),
                before: Some(before),
                after: None,
                commit: Box::new(move |cx: McpContext| {
                    Box::pin(async move {
                        cx.run_operation(&op, None, json!({"id": id})).await?;
                        Ok(json!({"deleted": true, "id": id}))
                    })
                }),
            }))
        }),
    );
    if let Some(field) = k.entries {
        register_entries(set, k, field);
    }
    if k.set_active {
        register_set_active(set, k);
    }
}

fn create_description(kind: AssetKind, noun: &str) -> String {
    match kind {
        AssetKind::Character => "Create a character card. Fields in CCv3 snake_case (`name`, `description`, `first_mes` required; `personality`, `scenario`, `mes_example`, `creator_notes`, `system_prompt`, `post_history_instructions`, `alternate_greetings`, `tags`, `creator`, `character_version`, `nickname`, `extensions`) or Tavo's camelCase; a `character_book` becomes the card's own lorebook and `extensions.regex_scripts` its regex group.".into(),
        _ => format!("Create a {noun} from its fields (Tavo's names; see tavo://schemas/{}).", schema_name(kind)),
    }
}

fn schema_name(kind: AssetKind) -> &'static str {
    match kind {
        AssetKind::Regex => "regex",
        other => other.as_str(),
    }
}

fn create_schema(kind: AssetKind) -> Value {
    match kind {
        AssetKind::Character => {
            let text = json!({"type": "string"});
            let list = json!({"type": "array", "items": {"type": "string"}});
            json!({"type": "object", "properties": {
                "name": text, "description": text, "first_mes": text, "personality": text,
                "scenario": text, "mes_example": text, "creator_notes": text, "system_prompt": text,
                "post_history_instructions": text, "alternate_greetings": list, "tags": list,
                "creator": text, "character_version": text, "nickname": text,
                "character_book": {"type": "object"}, "extensions": {"type": "object"}
            }, "required": ["name", "description", "first_mes"], "additionalProperties": true})
        }
        AssetKind::Persona => {
            json!({"type": "object", "properties": {"name": {"type": "string"}, "description": {"type": "string"}, "active": {"type": "boolean"}}, "required": ["name", "description"], "additionalProperties": true})
        }
        _ => {
            json!({"type": "object", "properties": {"name": {"type": "string"}, "entries": {"type": "array", "items": {"type": "object"}}}, "required": ["name"], "additionalProperties": true})
        }
    }
}

fn import_schema(kind: AssetKind, noun: &str) -> (Value, String) {
    match kind {
        AssetKind::Character => (
            json!({"type": "object", "properties": {
                "card": {"type": "object", "description": "The card JSON (CCv2 / CCv3, or bare `data`)."},
                "base64": {"type": "string", "description": "A PNG, CHARX or JSON card file, base64-encoded."},
                "fileName": {"type": "string", "description": "The file's name, for messages and the kind of file (default card.png for base64)."}
            }, "additionalProperties": false}),
            "Import a character card (JSON in `card`, or a PNG / CHARX / JSON file in `base64`): its lorebook and regex scripts come with it. Answers the ids and the import's warnings.".into(),
        ),
        _ => (
            json!({"type": "object", "properties": {
                "data": {"type": "object", "description": "Tavo's own JSON or the compatible SillyTavern shape."}
            }, "required": ["data"], "additionalProperties": false}),
            format!("Import a {noun} from Tavo's JSON or SillyTavern's (`data`). Answers the ids and the import's warnings."),
        ),
    }
}

fn summaries(store: &Store, kind: AssetKind) -> Result<Vec<tavo_store::AssetSummary>, ToolError> {
    store
        .asset_summaries(kind)
        .map_err(|e| store_error("listing the library", e))
}

fn search_hits(store: &Store, kind: AssetKind, s: &Search) -> Result<Vec<Value>, ToolError> {
    let active_preset = match kind {
        AssetKind::Preset => active_preset(store)?,
        _ => None,
    };
    let mut hits = Vec::new();
    for sum in summaries(store, kind)? {
        let mut texts = vec![sum.name.clone()];
        if kind == AssetKind::Character
            && let Some(Value::Object(c)) = store
                .asset_json(kind, sum.id)
                .map_err(|e| store_error("reading the library", e))?
            && let Some(Value::Array(tags)) = c.get("tags")
        {
            texts.extend(tags.iter().filter_map(|t| t.as_str().map(str::to_owned)));
        }
        if !s.matches(texts.iter().map(String::as_str)) {
            continue;
        }
        let mut item = json!({"id": sum.id, "name": sum.name, "revision": sum.revision, "updatedAt": sum.updated_at});
        if let Some(n) = sum.entries {
            item["entries"] = json!(n);
        }
        if kind == AssetKind::Preset {
            item["active"] = json!(active_preset == Some(sum.id));
        }
        hits.push(item);
    }
    Ok(hits)
}

fn active_preset(store: &Store) -> Result<Option<i64>, ToolError> {
    Ok(store
        .setting_get(ACTIVE_PRESET)
        .map_err(|e| store_error("reading the settings", e))?
        .and_then(|v| v.as_i64()))
}

fn stored(store: &Store, kind: AssetKind, id: i64) -> Result<Map<String, Value>, ToolError> {
    match store
        .asset_json(kind, id)
        .map_err(|e| store_error("reading the library", e))?
    {
        Some(Value::Object(m)) => Ok(m),
        _ => Err(ToolError::not_found(kind.as_str(), id)),
    }
}

/// A read as MCP shows it: the stored JSON with its `revision`; a character as
/// `{id, revision, avatar, data}` in CCv3 snake_case.
fn read(store: &Store, kind: AssetKind, id: i64) -> Result<Value, ToolError> {
    let obj = stored(store, kind, id)?;
    match kind {
        AssetKind::Character => {
            let c: Character = serde_json::from_value(Value::Object(obj.clone()))
                .map_err(|_| ToolError::internal("reading the character"))?;
            Ok(json!({
                "id": id,
                "revision": obj.get("revision"),
                "avatar": obj.get("avatar"),
                "data": data_object(&c, None, None, CardSpec::V3),
            }))
        }
        AssetKind::Preset => {
            let mut obj = obj;
            obj.insert("active".into(), json!(active_preset(store)? == Some(id)));
            Ok(Value::Object(obj))
        }
        _ => Ok(Value::Object(obj)),
    }
}

fn plan_create(kind: AssetKind, args: Map<String, Value>) -> Result<Step, ToolError> {
    // A card with its own book or regex scripts is a card import: the book becomes a
    // lorebook linked to the card, as every door imports it.
    let carries_lore = kind == AssetKind::Character
        && (args.contains_key("character_book")
            || args
                .get("extensions")
                .and_then(|e| e.get("regex_scripts"))
                .is_some());
    if carries_lore {
        let card = json!({"spec": "chara_card_v3", "spec_version": "3.0", "data": args});
        return plan_import(kind, Map::from_iter([("card".to_owned(), card)]));
    }
    let after = crate::assets::preview_create(kind, args.clone())?;
    Ok(Step::Write(WritePlan {
        revision: None,
        before: None,
        after: Some(after),
        commit: Box::new(move |cx: McpContext| {
            Box::pin(async move {
                cx.blocking("creating the asset", move |store| {
                    let id = crate::assets::create_asset(store, kind, args)?;
                    Ok(json!({"id": id, "revision": 1, "kind": kind.as_str()}))
                })
                .await
            })
        }),
    }))
}

fn plan_update(
    store: &Store,
    kind: AssetKind,
    args: Map<String, Value>,
) -> Result<Step, ToolError> {
    let preview = crate::assets::preview_update(store, kind, args)?;
    Ok(replace_plan(kind, preview))
}

/// The plan that writes `preview.after` at the revision the preview read.
fn replace_plan(kind: AssetKind, preview: crate::assets::UpdatePreview) -> Step {
    let crate::assets::UpdatePreview {
        id,
        revision,
        before,
        after,
    } = preview;
    Step::Write(WritePlan {
        revision: Some(revision),
        before: Some(before),
        after: Some(Value::Object(after.clone())),
        commit: Box::new(move |cx: McpContext| {
            Box::pin(async move {
                cx.blocking("writing the asset", move |store| {
                    let revision = crate::assets::replace_asset(store, kind, id, after, revision)?;
                    Ok(json!({"id": id, "revision": revision, "kind": kind.as_str()}))
                })
                .await
            })
        }),
    })
}

/// The file an import names: `(bytes, file name, field for errors)`.
fn import_input(
    kind: AssetKind,
    mut args: Map<String, Value>,
) -> Result<(Vec<u8>, String, &'static str), ToolError> {
    if kind == AssetKind::Character {
        if let Some(Value::String(b64)) = args.get("base64") {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(b64.trim())
                .map_err(|_| ToolError::invalid_at("base64", "base64 text", "string"))?;
            let name = match args.get("fileName") {
                Some(Value::String(n)) if !n.is_empty() => n.clone(),
                _ => "card.png".into(),
            };
            return Ok((bytes, name, "base64"));
        }
        let card = object_field(&mut args, "card")
            .map_err(|_| ToolError::invalid_at("card", "object (or pass base64)", "missing"))?;
        let bytes = serde_json::to_vec(&card).map_err(|_| ToolError::internal("importing"))?;
        return Ok((bytes, "card.json".into(), "card"));
    }
    let data = object_field(&mut args, "data")?;
    let bytes = serde_json::to_vec(&data).map_err(|_| ToolError::internal("importing"))?;
    let name = format!("{}.json", crate::library::default_name(kind));
    Ok((bytes, name, "data"))
}

fn plan_import(kind: AssetKind, args: Map<String, Value>) -> Result<Step, ToolError> {
    let (bytes, file_name, field) = import_input(kind, args)?;
    // Reading the file is the dry run: everything but the store.
    let outcome = tavo_formats::import_bytes(&bytes, &file_name, Some(kind)).map_err(|e| {
        let path = if e.path.is_empty() {
            field.to_owned()
        } else {
            format!("{field}.{}", e.path)
        };
        ToolError::new(
            ErrorCode::InvalidArguments,
            format!("{path}: {}", e.message),
        )
        .with_details(json!({"path": path, "expected": e.message, "actualType": "invalid value"}))
    })?;
    let preview = json!({
        "kind": outcome.imported.kind().as_str(),
        "name": outcome.imported.name(),
        "warnings": outcome.warnings,
    });
    Ok(Step::Write(WritePlan {
        revision: None,
        before: None,
        after: Some(preview),
        commit: Box::new(move |cx: McpContext| {
            Box::pin(async move {
                cx.blocking("importing", move |store| {
                    crate::library::import_file(store, &bytes, &file_name, Some(kind))
                        .map(|done| Value::Object(done.to_json()))
                        .map_err(crate::library::ImportError::into_tool_error)
                })
                .await
            })
        }),
    }))
}

fn register_entries(set: &mut McpTools, k: &Kind, field: &'static str) {
    let kind = k.kind;
    let noun = k.noun;
    let requires = k.entry_requires;
    let required_note = if requires.is_empty() {
        String::new()
    } else {
        format!(
            " A new entry needs `identifier`, `{}`.",
            requires.join("`, `")
        )
    };
    set.add(
        format!("tavo_{}_entry_upsert", k.tool),
        format!("Add or change one entry of a {noun}: `{field}` and `entry` (with its `identifier`; an existing entry keeps the fields not given).{required_note}"),
        json!({"type": "object", "properties": {
            field: {"type": "integer", "minimum": 1},
            "entry": {"type": "object", "properties": {"identifier": {"type": "string", "minLength": 1}}, "required": ["identifier"], "additionalProperties": true}
        }, "required": [field, "entry"], "additionalProperties": false}),
        true,
        blocking("checking the entry", move |store, mut args| {
            let id = id_field(&args, field)?;
            let entry = object_field(&mut args, "entry")?;
            let identifier = string_field(&entry, "identifier")
                .map_err(|_| ToolError::invalid_at("entry.identifier", "non-empty string", "missing"))?;
            if identifier.trim().is_empty() {
                return Err(ToolError::invalid_at("entry.identifier", "non-empty string", "string"));
            }
            let obj = stored(store, kind, id)?;
            let mut entries = match obj.get("entries") {
                Some(Value::Array(a)) => a.clone(),
                _ => Vec::new(),
            };
            match entries.iter_mut().find(|e| e["identifier"] == json!(identifier)) {
                Some(Value::Object(existing)) => existing.extend(entry),
                _ => {
                    for f in requires {
                        if !entry.contains_key(*f) {
                            return Err(ToolError::invalid_at(&format!("entry.{f}"), "present for a new entry", "missing"));
                        }
                    }
                    entries.push(Value::Object(entry));
                }
            }
            let patch = Map::from_iter([("id".to_owned(), json!(id)), ("entries".to_owned(), Value::Array(entries))]);
            Ok(replace_plan(kind, crate::assets::preview_update(store, kind, patch)?))
        }),
    );
    set.add(
        format!("tavo_{}_entry_delete", k.tool),
        format!("Remove one entry of a {noun} by its `identifier`."),
        json!({"type": "object", "properties": {
            field: {"type": "integer", "minimum": 1},
            "identifier": {"type": "string", "minLength": 1}
        }, "required": [field, "identifier"], "additionalProperties": false}),
        true,
        blocking("checking the entry", move |store, args| {
            let id = id_field(&args, field)?;
            let identifier = string_field(&args, "identifier")?;
            let obj = stored(store, kind, id)?;
            let mut entries = match obj.get("entries") {
                Some(Value::Array(a)) => a.clone(),
                _ => Vec::new(),
            };
            let before = entries.len();
            entries.retain(|e| e["identifier"] != json!(identifier));
            if entries.len() == before {
                return Err(ToolError::not_found(&format!("{noun} entry"), &identifier));
            }
            let patch = Map::from_iter([
                ("id".to_owned(), json!(id)),
                ("entries".to_owned(), Value::Array(entries)),
            ]);
            Ok(replace_plan(
                kind,
                crate::assets::preview_update(store, kind, patch)?,
            ))
        }),
    );
}

fn register_set_active(set: &mut McpTools, k: &Kind) {
    let kind = k.kind;
    let description = match kind {
        AssetKind::Preset => {
            "Make a preset the library's active one: new chats created without a preset bind it (a chat's own binding always wins)."
        }
        _ => "Make a persona the default one (`active`): new chats without a persona take it.",
    };
    set.add(
        format!("tavo_{}_set_active", k.tool),
        description,
        id_schema("id", k.noun),
        true,
        blocking("reading the library", move |store, args| {
            let id = id_field(&args, "id")?;
            stored(store, kind, id)?;
            if kind == AssetKind::Preset {
                let was = active_preset(store)?;
                return Ok(Step::Write(WritePlan {
                    revision: None,
                    before: Some(json!({"activePreset": was})),
                    after: Some(json!({"activePreset": id})),
                    commit: Box::new(move |cx: McpContext| {
                        Box::pin(async move {
                            cx.blocking("saving the setting", move |store| {
                                store
                                    .setting_set(ACTIVE_PRESET, &json!(id))
                                    .map_err(|e| store_error("saving the setting", e))?;
                                Ok(json!({"id": id, "active": true}))
                            })
                            .await
                        })
                    }),
                }));
            }
            let was: Vec<i64> = summaries(store, kind)?
                .into_iter()
                .filter_map(|s| {
                    let obj = store.asset_json(kind, s.id).ok().flatten()?;
                    (obj["active"] == json!(true)).then_some(s.id)
                })
                .collect();
            Ok(Step::Write(WritePlan {
                revision: None,
                before: Some(json!({"active": was})),
                after: Some(json!({"active": [id]})),
                commit: Box::new(move |cx: McpContext| {
                    Box::pin(async move {
                        cx.blocking("writing the personas", move |store| {
                            // The library's write keeps one default: the others are cleared.
                            let patch = Map::from_iter([
                                ("id".to_owned(), json!(id)),
                                ("active".to_owned(), json!(true)),
                            ]);
                            let (_, revision) = crate::assets::update_asset(store, kind, patch)?;
                            Ok(json!({"id": id, "active": true, "revision": revision}))
                        })
                        .await
                    })
                }),
            }))
        }),
    );
}

fn register_regex_test(set: &mut McpTools) {
    set.add(
        "tavo_regex_test",
        "Run one regex rule on a text, with the engine's own JavaScript semantics (no chat involved): `findRegex` (`/pattern/flags` or bare), `replaceString` (`$1`, `{{match}}`), `input`, optional `caseSensitive` and `trimStrings`. Answers the output and each match.",
        json!({"type": "object", "properties": {
            "findRegex": {"type": "string", "minLength": 1},
            "replaceString": {"type": "string"},
            "input": {"type": "string"},
            "caseSensitive": {"type": "boolean"},
            "trimStrings": {"type": "array", "items": {"type": "string"}}
        }, "required": ["findRegex", "input"], "additionalProperties": false}),
        false,
        handler(|cx: McpContext, args| async move {
            let find = string_field(&args, "findRegex")?;
            let input = string_field(&args, "input")?;
            let replace = match args.get("replaceString") {
                Some(Value::String(s)) => s.clone(),
                _ => String::new(),
            };
            let case_sensitive = args.get("caseSensitive").and_then(Value::as_bool).unwrap_or(true);
            let trims: Vec<String> = match args.get("trimStrings") {
                Some(Value::Array(a)) => a.iter().filter_map(|t| t.as_str().map(str::to_owned)).collect(),
                _ => Vec::new(),
            };
            cx.blocking("testing the rule", move |_| {
                let mut pattern = tavo_prompt::regex::parse_find_regex(&find);
                if !case_sensitive && !pattern.flags.contains('i') {
                    pattern.flags.push('i');
                }
                let find_regex = if pattern.flags.is_empty() {
                    pattern.source.clone()
                } else {
                    format!("/{}/{}", pattern.source, pattern.flags)
                };
                let entry = RegexEntry {
                    find_regex,
                    replace_string: replace,
                    trim_strings: trims,
                    ..RegexEntry::default()
                };
                let js = tavo_prompt::regex::JsRegex::shared()
                    .map_err(|_| ToolError::internal("starting the regex engine"))?;
                let sample = tavo_prompt::regex::RuleSample { text: &input, placement: None, depth: None };
                let ctx = tavo_prompt::macros::MacroContext::new("User", "Character", tavo_prompt::local_now());
                let tested = tavo_prompt::regex::test_rule(js, &entry, &sample, &ctx);
                if let Some(e) = &tested.error {
                    return Err(ToolError::invalid_at("findRegex", format!("a valid JavaScript regular expression ({e})"), "string"));
                }
                Ok(Step::Answer(json!({
                    "output": tested.output,
                    "matched": tested.replacements > 0,
                    "matches": tested.matches,
                })))
            })
            .await
        }),
    );
}
