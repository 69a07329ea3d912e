//! The library assets: characters, personas, presets, lorebooks and regex groups
//! (seed 002's objects; seed 000's write rules: a character write takes bare CC-compatible
//! `data`, a CCv2/CCv3 wrapper or a SillyTavern character wrapper; preset and regex imports
//! take SillyTavern exports, create/update Tavo's native fields; nested validation errors name
//! their path, `preset.entries[0].enabled`).
//!
//! Each namespace offers `all`, `get`, `find`, `create`, `update`, `delete`, and (except
//! personas) `import`. create/update use Tavo's native camelCase fields (and, for characters,
//! the CCv3 snake_case names) with a strict schema generated from the model type, and call
//! [`crate::assets`], the writes every door shares; `import` takes the outside formats (a CCv2/CCv3 card or bare
//! `data`, a SillyTavern character wrapper, SillyTavern presets, World Info, CCv3
//! `character_book`, SillyTavern regex scripts) through `tavo-formats`.
//!
//! `update` writes the fields it is given over the stored object (top-level merge; arrays such
//! as `entries` are replaced whole, as the seed says), so a partial update never wipes fields
//! the model did not mention.

use serde_json::{Map, Value, json};
use tavo_model::{AssetKind, Character, Lorebook, Persona, Preset, RegexGroup};
use tavo_store::Store;

use crate::context::{OpContext, store_error};
use crate::error::ToolError;
use crate::operation::{BoxFuture, Handler, OpSpec, Outcome, Safety};
use crate::ops::common::{FindArgs, IdArgs, NoArgs, missing};
use crate::registry::Registry;
use crate::schema::{OPEN_OBJECT, schema_keeping_extras_for, strict_schema_for};
use crate::validate::SchemaError;

pub use crate::assets::LibraryAsset;

/// `{ "<label>": <strict schema of A> }` with the object required.
/// The `{<kind>: {…}}` arguments of create (strict: a misspelt field is refused) and update
/// (`keep_extras`: what `get` returned is taken back, unknown keys kept as the asset's extras).
fn wrapped_schema<A: LibraryAsset>(what: &str, keep_extras: bool) -> Value {
    let mut inner = if keep_extras {
        schema_keeping_extras_for::<A>()
    } else {
        strict_schema_for::<A>()
    };
    if let Value::Object(m) = &mut inner {
        m.remove("$schema");
        m.remove("title");
        m.insert("description".into(), Value::String(what.to_owned()));
        // The CCv3 names (first_mes, …) are accepted beside the camelCase ones.
        if let Some(Value::Object(props)) = m.get_mut("properties") {
            for (snake, camel) in A::ALIASES {
                let schema = if camel.ends_with("Date") {
                    json!({"type": ["integer", "string"], "description": format!("CCv3 name of {camel} (Unix seconds or RFC 3339).")})
                } else {
                    let mut s = props.get(*camel).cloned().unwrap_or_else(|| json!({}));
                    if let Value::Object(o) = &mut s {
                        o.insert(
                            "description".into(),
                            json!(format!("CCv3 name of {camel}.")),
                        );
                    }
                    s
                };
                props.insert((*snake).to_owned(), schema);
            }
        }
    }
    if A::KIND == AssetKind::Lorebook {
        entry_ccv3_names(&mut inner);
    }
    json!({"type": "object", "properties": {A::LABEL: inner}, "required": [A::LABEL]})
}

/// A lorebook entry's CCv3 names beside Tavo's ([`crate::assets::LOREBOOK_ENTRY_CCV3`]).
fn entry_ccv3_names(lorebook: &mut Value) {
    let Some(Value::Object(props)) = lorebook.pointer_mut("/properties/entries/items/properties")
    else {
        return;
    };
    for (ccv3, tavo, description) in crate::assets::LOREBOOK_ENTRY_CCV3 {
        let schema = match *ccv3 {
            "keys" | "secondary_keys" => {
                let mut s = props
                    .get(*tavo)
                    .cloned()
                    .unwrap_or_else(|| json!({"type": "array"}));
                if let Value::Object(o) = &mut s {
                    o.insert("description".into(), json!(description));
                }
                s
            }
            "position" => {
                json!({"type": "string", "enum": ["before_char", "after_char"], "description": description})
            }
            _ => json!({"type": "boolean", "description": description}),
        };
        props.insert((*ccv3).to_owned(), schema);
    }
}

fn open_schema(field: &str, what: &str) -> Value {
    json!({"type": "object", "properties": {field: {"type": "object", "description": what, OPEN_OBJECT: true}}, "required": [field]})
}

fn object_arg(args: &mut Value, field: &str) -> Result<Map<String, Value>, ToolError> {
    match args.get_mut(field).map(Value::take) {
        Some(Value::Object(m)) => Ok(m),
        Some(other) => Err(ToolError::invalid_at(
            field,
            "object",
            crate::error::json_type_name(&other),
        )),
        None => Err(ToolError::invalid_at(field, "object (required)", "missing")),
    }
}

fn summaries(store: &Store, kind: AssetKind) -> Result<Vec<Value>, ToolError> {
    let list = store
        .asset_summaries(kind)
        .map_err(|e| store_error("listing", e))?;
    Ok(list
        .into_iter()
        .map(|s| match kind {
            AssetKind::Character => json!({"id": s.id, "name": s.name, "avatar": s.avatar}),
            AssetKind::Lorebook | AssetKind::Regex => {
                json!({"id": s.id, "name": s.name, "entries": s.entries.unwrap_or(0)})
            }
            _ => json!({"id": s.id, "name": s.name}),
        })
        .collect())
}

fn handler<F>(f: F) -> Box<Handler>
where
    F: Fn(Value, Store) -> Result<Outcome, ToolError> + Send + Sync + Clone + 'static,
{
    Box::new(move |args: Value, ctx: OpContext| {
        let f = f.clone();
        Box::pin(async move {
            ctx.blocking("the library operation", move |store| f(args, store.clone()))
                .await
        }) as BoxFuture<_>
    })
}

/// Descriptions and safety of one namespace's operations.
struct Names {
    all: &'static str,
    get: &'static str,
    find: &'static str,
    create: (&'static str, Safety),
    update: (&'static str, Safety),
    delete: &'static str,
    import: Option<(&'static str, Safety, &'static str, AssetKind)>,
    keywords: &'static [&'static str],
    /// Human noun for descriptions.
    noun: &'static str,
}

fn register_ns<A: LibraryAsset>(r: &mut Registry, n: Names) -> Result<(), SchemaError> {
    register_reads::<A>(r, &n)?;
    register_writes::<A>(r, &n)?;
    if let Some(import) = n.import {
        register_import(r, &n, import)?;
    }
    Ok(())
}

/// List, get and find: reads the model may run without asking.
fn register_reads<A: LibraryAsset>(r: &mut Registry, n: &Names) -> Result<(), SchemaError> {
    let kind = A::KIND;
    let label = A::LABEL;
    let noun = n.noun;
    let kw = n.keywords;

    r.add(
        OpSpec::described(
            n.all,
            Safety::Read,
            format!("List every {noun}: summaries with id and name."),
        )
        .keywords(kw),
        move |_: NoArgs, ctx: OpContext| async move {
            ctx.blocking("listing", move |store| {
                Outcome::value(summaries(store, kind)?)
            })
            .await
        },
    )?;
    r.add(
        OpSpec::described(
            n.get,
            Safety::Read,
            format!("Get one {noun} by id (or {{id}}) as a complete object."),
        )
        .keywords(kw),
        move |args: IdArgs, ctx: OpContext| async move {
            let id = args.id.get();
            ctx.blocking("reading", move |store| {
                let v = store
                    .asset_json(kind, id)
                    .map_err(|e| store_error("reading", e))?;
                Outcome::value(v.ok_or_else(|| missing(label, id))?)
            })
            .await
        },
    )?;
    r.add(
        OpSpec::described(
            n.find,
            Safety::Read,
            format!(
                "Find {noun}s by name; options.match is exact (default), contains, prefix or suffix. Returns \
                 an array of complete objects (empty when none matches)."
            ),
        )
        .keywords(kw),
        move |args: FindArgs, ctx: OpContext| async move {
            let (name, mode) = args.parts()?;
            let name = name.to_owned();
            ctx.blocking("finding", move |store| {
                let ids = store.asset_find_ids(kind, &name, mode).map_err(|e| store_error("finding", e))?;
                let mut out = Vec::with_capacity(ids.len());
                for id in ids {
                    if let Some(v) = store.asset_json(kind, id).map_err(|e| store_error("finding", e))? {
                        out.push(v);
                    }
                }
                Outcome::value(out)
            })
            .await
        },
    )?;
    Ok(())
}

/// Create, update and delete, through the library's one write path
/// ([`crate::assets::create_asset`], [`crate::assets::update_asset`]).
fn register_writes<A: LibraryAsset>(r: &mut Registry, n: &Names) -> Result<(), SchemaError> {
    let kind = A::KIND;
    let label = A::LABEL;
    let noun = n.noun;
    let kw = n.keywords;
    let required = std::iter::once("name")
        .chain(A::CREATE_REQUIRES.iter().copied())
        .collect::<Vec<_>>()
        .join(" and ")
        + " required";
    let extra = match kind {
        AssetKind::Character => {
            "; CCv3 names such as first_mes, mes_example, alternate_greetings are accepted too"
        }
        AssetKind::Preset => "; built-in entries left out get their defaults",
        AssetKind::Lorebook | AssetKind::Regex => "; entries without an identifier get one",
        _ => "",
    };
    let required = required + extra;
    r.add_raw(
        OpSpec::described(
            n.create.0,
            n.create.1,
            format!("Create a {noun} from Tavo's native fields ({required}). Returns {{id}}."),
        )
        .keywords(kw),
        wrapped_schema::<A>(&format!("The new {noun}."), false),
        handler(move |mut args: Value, store: Store| {
            let obj = object_arg(&mut args, label)?;
            let id = crate::assets::create_asset(&store, kind, obj)?;
            Outcome::value(json!({"id": id}))
        }),
    )?;
    r.add_raw(
        OpSpec::described(
            n.update.0,
            n.update.1,
            format!(
                "Update a {noun}: id is required; the fields given replace the stored ones (arrays such as \
                 entries are replaced whole; get, modify, then update: keys tavo does not know, as an \
                 imported file carries them, are kept). Returns {{id, revision}}."
            ),
        )
        .keywords(kw),
        wrapped_schema::<A>(&format!("The {noun} fields to write, with its id."), true),
        handler(move |mut args: Value, store: Store| {
            let patch = object_arg(&mut args, label)?;
            let (id, revision) = crate::assets::update_asset(&store, kind, patch)?;
            Outcome::value(json!({"id": id, "revision": revision}))
        }),
    )?;
    r.add(
        OpSpec::described(
            n.delete,
            Safety::Confirm,
            format!("Delete a {noun} by id (or {{id}}). Returns {{id}}."),
        )
        .keywords(kw),
        move |args: IdArgs, ctx: OpContext| async move {
            let id = args.id.get();
            ctx.blocking("deleting", move |store| {
                crate::assets::delete_asset(store, kind, id)?;
                Outcome::value(json!({"id": id}))
            })
            .await
        },
    )?;
    Ok(())
}

/// The `*_import` tool of a kind that has one: an outside format in, through the import every
/// door shares.
fn register_import(
    r: &mut Registry,
    n: &Names,
    (name, safety, field, import_kind): (&'static str, Safety, &'static str, AssetKind),
) -> Result<(), SchemaError> {
    let (noun, kw) = (n.noun, n.keywords);
    let what = match import_kind {
        AssetKind::Character => {
            "A character card: CCv3 {spec, data}, CCv2, bare card data, or a SillyTavern character."
        }
        AssetKind::Preset => {
            "A SillyTavern chat-completion preset (prompts, prompt_order, …); name optional."
        }
        AssetKind::Lorebook => {
            "A lorebook: CCv3 character_book / lorebook_v3, SillyTavern World Info, or Tavo native."
        }
        _ => {
            "SillyTavern regex scripts: {name?, entries: [{scriptName, findRegex, replaceString, placement, …}]}."
        }
    };
    r.add_raw(
        OpSpec::described(
            name,
            safety,
            format!("Import a {noun} from an outside format. {what}"),
        )
        .keywords(kw),
        open_schema(field, what),
        handler(move |mut args: Value, store: Store| {
            let obj = object_arg(&mut args, field)?;
            import_one(&store, Value::Object(obj), field, import_kind)
        }),
    )?;
    Ok(())
}

/// The `*_import` tools: [`crate::library::import_value`], the import every door shares, so
/// the result names its ids as the CLI and HTTP do (`characterId`, `lorebookId`, `regexId`,
/// `presetId`) and carries the same `warnings` objects.
fn import_one(
    store: &Store,
    value: Value,
    field: &str,
    kind: AssetKind,
) -> Result<Outcome, ToolError> {
    let imported = crate::library::import_value(store, field, &value, kind)?;
    Outcome::value(imported.to_json())
}

/// Registers every library namespace.
pub fn register(r: &mut Registry) -> Result<(), SchemaError> {
    register_ns::<Character>(
        r,
        Names {
            all: "character.all",
            get: "character.get",
            find: "character.find",
            create: ("character.create", Safety::Confirm),
            update: ("character.update", Safety::Confirm),
            delete: "character.delete",
            import: Some((
                "character.import",
                Safety::Confirm,
                "card",
                AssetKind::Character,
            )),
            keywords: &["character", "card", "bot", "role", "角色"],
            noun: "character",
        },
    )?;
    register_ns::<Persona>(
        r,
        Names {
            all: "persona.all",
            get: "persona.get",
            find: "persona.find",
            create: ("persona.create", Safety::Write),
            update: ("persona.update", Safety::Write),
            delete: "persona.delete",
            import: None,
            keywords: &["persona", "user identity", "profile", "用户身份"],
            noun: "persona",
        },
    )?;
    register_ns::<Preset>(
        r,
        Names {
            all: "preset.all",
            get: "preset.get",
            find: "preset.find",
            create: ("preset.create", Safety::Write),
            update: ("preset.update", Safety::Write),
            delete: "preset.delete",
            import: Some((
                "preset.import",
                Safety::Confirm,
                "preset",
                AssetKind::Preset,
            )),
            keywords: &["preset", "prompt", "system prompt", "entries", "预设"],
            noun: "preset",
        },
    )?;
    register_ns::<Lorebook>(
        r,
        Names {
            all: "lorebook.all",
            get: "lorebook.get",
            find: "lorebook.find",
            create: ("lorebook.create", Safety::Write),
            update: ("lorebook.update", Safety::Write),
            delete: "lorebook.delete",
            import: Some((
                "lorebook.import",
                Safety::Confirm,
                "lorebook",
                AssetKind::Lorebook,
            )),
            keywords: &["lorebook", "world info", "worldbook", "lore", "世界书"],
            noun: "lorebook",
        },
    )?;
    register_ns::<RegexGroup>(
        r,
        Names {
            all: "regex.all",
            get: "regex.get",
            find: "regex.find",
            create: ("regex.create", Safety::Confirm),
            update: ("regex.update", Safety::Confirm),
            delete: "regex.delete",
            import: Some(("regex.import", Safety::Confirm, "regex", AssetKind::Regex)),
            keywords: &[
                "regex",
                "regular expression",
                "replace",
                "find and replace",
                "正则",
            ],
            noun: "regex group",
        },
    )
}
