//! Chat themes (seed 000 "聊天主题"): all, get, find, create, update, import, export, delete.
//!
//! Official themes are read-only (`permission_denied`). Import and export use the reply's
//! chat files (`files/chat/<name>.thm`). Importing a theme whose name is taken asks the user
//! to overwrite it or save a copy ([`Outcome::NeedsUser`]); an official same-name theme can
//! only be copied.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tavo_model::theme::{Theme, ThemeStyle, merge_style};
use tavo_store::Store;
use tavo_store::files::FileScope;

use crate::ask::{Question, QuestionOption, UserAnswer};
use crate::context::{OpContext, store_error};
use crate::error::{ErrorCode, ToolError};
use crate::operation::{BoxFuture, OpSpec, Outcome, Safety};
use crate::ops::common::{FindArgs, IdArgs, NoArgs, missing, name_matches};
use crate::ops::files::check_name;
use crate::ops::require_chat;
use crate::registry::Registry;
use crate::schema::strict_schema_for;
use crate::theme_store as ts;
use crate::validate::SchemaError;

/// Format tag written into exported `.thm` files.
pub const FILE_FORMAT: &str = "tavo-theme";

/// Arguments of `tavo_theme_export`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExportArgs {
    /// Theme id.
    #[schemars(range(min = 1))]
    pub id: i64,
    /// File name ending in .thm (default: the theme's name + .thm).
    #[serde(default)]
    #[schemars(regex(pattern = r"\.thm$"))]
    pub name: Option<String>,
}

/// Arguments of `tavo_theme_import`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportArgs {
    /// Name of a .thm file in this chat's files (files/chat/<name>).
    #[schemars(regex(pattern = r"\.thm$"))]
    pub name: String,
}

/// `{ "theme": { name, …style } }` for create, `{ "theme": { id, name?, …style } }` for update.
fn theme_schema(update: bool) -> Value {
    let mut style = strict_schema_for::<ThemeStyle>();
    if let Value::Object(m) = &mut style {
        m.remove("$schema");
        m.remove("title");
        let props = m.entry("properties").or_insert_with(|| json!({}));
        if let Value::Object(p) = props {
            let mut with_id = Map::new();
            if update {
                with_id.insert(
                    "id".into(),
                    json!({"type": "integer", "minimum": 1, "description": "Theme id."}),
                );
            }
            with_id.insert(
                "name".into(),
                json!({"type": "string", "minLength": 1, "description": "Theme name (unique)."}),
            );
            with_id.extend(std::mem::take(p));
            *p = with_id;
        }
        m.insert(
            "required".into(),
            if update {
                json!(["id"])
            } else {
                json!(["name"])
            },
        );
    }
    json!({"type": "object", "properties": {
        "theme": style,
        "apply": {"type": "boolean", "description": "Also make it the app's current theme: every open page restyles at once (default false)."}
    }, "required": ["theme"]})
}

/// `apply: true`: the theme becomes the app's current one.
fn apply_if_asked(args: &Value, store: &Store, id: i64) -> Result<(), ToolError> {
    if args.get("apply").and_then(Value::as_bool) == Some(true) {
        ts::set_current(store, id).map_err(|e| store_error("applying the theme", e))?;
    }
    Ok(())
}

fn theme_json(t: &Theme) -> Result<Value, ToolError> {
    serde_json::to_value(t).map_err(|_| ToolError::internal("reading the theme"))
}

fn split(
    mut obj: Map<String, Value>,
) -> Result<(Option<i64>, Option<String>, ThemeStyle), ToolError> {
    let id = obj.shift_remove("id").and_then(|v| v.as_i64());
    let name = obj
        .shift_remove("name")
        .and_then(|v| v.as_str().map(|s| s.trim().to_owned()));
    let style: ThemeStyle = serde_json::from_value(Value::Object(obj))
        .map_err(|e| ToolError::new(ErrorCode::InvalidArguments, format!("theme: {e}")))?;
    Ok((id, name, style))
}

fn name_taken(store: &Store, name: &str, except: Option<i64>) -> Result<Option<Theme>, ToolError> {
    let all = ts::all(store).map_err(|e| store_error("reading themes", e))?;
    Ok(all
        .into_iter()
        .find(|t| t.name == name && t.id.map(|i| i.0) != except))
}

fn read_only(id: i64) -> ToolError {
    ToolError::denied(format!(
        "theme {id} is an official theme and is read-only; create a copy with tavo_theme_create and edit that"
    ))
}

/// Refuses a write to an official theme: `permission_denied` for one that exists, and
/// `resource_not_found` for an id in the reserved official range that names no theme (ids 3–100
/// today), as for any other id that does not exist.
fn refuse_official(id: i64) -> Result<(), ToolError> {
    if !ts::is_official(id) {
        return Ok(());
    }
    if ts::official_themes()
        .iter()
        .any(|t| t.id.map(|i| i.0) == Some(id))
    {
        Err(read_only(id))
    } else {
        Err(missing("theme", id))
    }
}

fn theme_arg(args: &mut Value) -> Result<Map<String, Value>, ToolError> {
    match args.get_mut("theme").map(Value::take) {
        Some(Value::Object(m)) => Ok(m),
        _ => Err(ToolError::invalid_at(
            "theme",
            "object (required)",
            "missing",
        )),
    }
}

async fn all(_: NoArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    ctx.blocking("listing themes", |store| {
        let list = ts::all(store).map_err(|e| store_error("listing themes", e))?;
        let out: Vec<Value> = list
            .iter()
            .map(|t| json!({"id": t.id.map(|i| i.0), "name": t.name, "official": t.official}))
            .collect();
        Outcome::value(out)
    })
    .await
}

async fn get(args: IdArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    let id = args.id.get();
    ctx.blocking("reading the theme", move |store| {
        let t = ts::get(store, id).map_err(|e| store_error("reading the theme", e))?;
        Outcome::value(theme_json(&t.ok_or_else(|| missing("theme", id))?)?)
    })
    .await
}

async fn find(args: FindArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    let (name, mode) = args.parts()?;
    let name = name.to_owned();
    ctx.blocking("finding themes", move |store| {
        let list = ts::all(store).map_err(|e| store_error("finding themes", e))?;
        let found: Result<Vec<Value>, ToolError> = list
            .iter()
            .filter(|t| name_matches(&t.name, &name, mode))
            .map(theme_json)
            .collect();
        Outcome::value(found?)
    })
    .await
}

fn create_raw(mut args: Value, store: &Store) -> Result<Outcome, ToolError> {
    let (_, name, style) = split(theme_arg(&mut args)?)?;
    let name = name.filter(|n| !n.is_empty()).ok_or_else(|| {
        ToolError::invalid_at("theme.name", "non-empty string (required)", "missing")
    })?;
    if name_taken(store, &name, None)?.is_some() {
        return Err(ToolError::invalid_at(
            "theme.name",
            format!("a name no other theme uses ({name:?} exists)"),
            "string",
        ));
    }
    let theme = ts::create(
        store,
        Theme {
            name,
            style,
            ..Default::default()
        },
    )
    .map_err(|e| store_error("creating the theme", e))?;
    if let Some(id) = theme.id {
        apply_if_asked(&args, store, id.0)?;
    }
    Outcome::value(json!({"id": theme.id.map(|i| i.0)}))
}

fn update_raw(mut args: Value, store: &Store) -> Result<Outcome, ToolError> {
    let (id, name, style) = split(theme_arg(&mut args)?)?;
    let id = id.ok_or_else(|| {
        ToolError::invalid_at("theme.id", "positive integer (required)", "missing")
    })?;
    refuse_official(id)?;
    let mut theme = ts::get(store, id)
        .map_err(|e| store_error("updating the theme", e))?
        .ok_or_else(|| missing("theme", id))?;
    if let Some(name) = name.filter(|n| !n.is_empty()) {
        if name_taken(store, &name, Some(id))?.is_some() {
            return Err(ToolError::invalid_at(
                "theme.name",
                format!("a name no other theme uses ({name:?} exists)"),
                "string",
            ));
        }
        theme.name = name;
    }
    merge_style(&mut theme.style, style);
    let theme = ts::replace(store, theme).map_err(|e| store_error("updating the theme", e))?;
    apply_if_asked(&args, store, id)?;
    Outcome::value(json!({"id": id, "revision": theme.revision}))
}

async fn delete(args: IdArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    let id = args.id.get();
    refuse_official(id)?;
    ctx.blocking("deleting the theme", move |store| {
        if !ts::delete(store, id).map_err(|e| store_error("deleting the theme", e))? {
            return Err(missing("theme", id));
        }
        Outcome::value(json!({"id": id}))
    })
    .await
}

async fn export(args: ExportArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    let chat = ctx.chat_id()?;
    ctx.blocking("exporting the theme", move |store| {
        require_chat(store, Some(chat))?;
        let theme = ts::get(store, args.id)
            .map_err(|e| store_error("exporting the theme", e))?
            .ok_or_else(|| missing("theme", args.id))?;
        let file = args
            .name
            .unwrap_or_else(|| format!("{}.thm", sanitize(&theme.name)));
        check_name("name", &file)?;
        let mut body = theme_json(&theme)?;
        if let Value::Object(m) = &mut body {
            m.shift_remove("id");
            m.shift_remove("revision");
            m.shift_remove("official");
        }
        let doc = json!({"format": FILE_FORMAT, "version": 1, "theme": body});
        let bytes = serde_json::to_vec_pretty(&doc)
            .map_err(|_| ToolError::internal("exporting the theme"))?;
        let path = store
            .files()
            .save(FileScope::Chat(chat.get()), &file, &bytes)
            .map_err(|e| store_error("exporting the theme", e))?;
        Outcome::value(json!({"path": path, "name": file, "size": bytes.len()}))
    })
    .await
}

fn sanitize(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | ':') || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect::<String>()
        .replace("..", "_");
    if cleaned.trim().is_empty() {
        "theme".into()
    } else {
        cleaned
    }
}

/// Reads a `.thm` document: `{format, version, theme}` or a bare theme object.
pub fn parse_theme_file(bytes: &[u8]) -> Result<Theme, String> {
    let doc: Value =
        serde_json::from_slice(bytes).map_err(|e| format!("the file is not JSON ({e})"))?;
    let body = match doc.get("format").and_then(Value::as_str) {
        Some(FILE_FORMAT) => doc
            .get("theme")
            .cloned()
            .ok_or("the file has no \"theme\" object")?,
        Some(other) => return Err(format!("unknown theme file format {other:?}")),
        None => doc,
    };
    let mut theme: Theme =
        serde_json::from_value(body).map_err(|e| format!("the theme is invalid: {e}"))?;
    if theme.name.trim().is_empty() {
        return Err("the theme has no name".into());
    }
    theme.id = None;
    theme.official = false;
    Ok(theme)
}

fn copy_name(store: &Store, base: &str) -> Result<String, ToolError> {
    for n in 1.. {
        let candidate = if n == 1 {
            format!("{base} (copy)")
        } else {
            format!("{base} (copy {n})")
        };
        if name_taken(store, &candidate, None)?.is_none() {
            return Ok(candidate);
        }
    }
    Err(ToolError::internal("naming the copy"))
}

fn store_import(
    store: &Store,
    mut theme: Theme,
    overwrite: Option<i64>,
) -> Result<Outcome, ToolError> {
    let err = |e| store_error("importing the theme", e);
    let (id, mode) = match overwrite {
        Some(id) => {
            theme.id = Some(tavo_model::theme::ThemeId(id));
            (ts::replace(store, theme).map_err(err)?.id, "overwritten")
        }
        None => (ts::create(store, theme).map_err(err)?.id, "created"),
    };
    Outcome::value(json!({"id": id.map(|i| i.0), "status": mode}))
}

async fn import(args: ImportArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    let chat = ctx.chat_id()?;
    check_name("name", &args.name)?;
    let name = args.name.clone();
    let (theme, clash) = ctx
        .blocking("importing the theme", move |store| {
            require_chat(store, Some(chat))?;
            let bytes = store
                .files()
                .load(FileScope::Chat(chat.get()), &name)
                .map_err(|e| store_error("importing the theme", e))?
                .ok_or_else(|| {
                    ToolError::new(ErrorCode::ResourceNotFound, format!("no file named {name:?} in this chat's files"))
                })?;
            let theme = parse_theme_file(&bytes).map_err(|e| {
                ToolError::new(ErrorCode::InvalidArguments, format!("files/chat/{name}: {e}"))
                    .with_details(json!({"path": "name", "expected": "a .thm theme file", "actualType": "string"}))
            })?;
            let clash = name_taken(store, &theme.name, None)?;
            Ok((theme, clash))
        })
        .await?;
    let Some(existing) = clash else {
        return ctx
            .blocking("importing the theme", move |store| {
                store_import(store, theme, None)
            })
            .await;
    };
    let existing_id = existing.id.map(|i| i.0).unwrap_or_default();
    let mut options = Vec::new();
    if !existing.official {
        options.push(QuestionOption {
            value: "overwrite".into(),
            label: format!("Overwrite \"{}\"", existing.name),
            description: Some("Replace the existing theme with the imported one.".into()),
            meta: None,
        });
    }
    options.push(QuestionOption {
        value: "copy".into(),
        label: "Save as a copy".into(),
        description: Some("Keep both; the import gets a new name.".into()),
        meta: None,
    });
    let question = Question {
        question: format!(
            "A theme named \"{}\" already exists. Overwrite it or save the import as a copy?",
            existing.name
        ),
        options,
        allow_other: false,
        default_value: Some("copy".into()),
        placeholder: None,
    };
    let store = ctx.store.clone();
    Ok(Outcome::NeedsUser {
        question,
        resume: Box::new(move |answer: UserAnswer| {
            Box::pin(async move {
                let overwrite = match answer {
                    UserAnswer::Option { value } if value == "overwrite" && !existing.official => {
                        true
                    }
                    UserAnswer::Option { value } if value == "copy" => false,
                    UserAnswer::Cancelled => {
                        return Ok(Outcome::json(json!({"status": "cancelled"})));
                    }
                    _ => {
                        return Err(ToolError::new(
                            ErrorCode::InvalidArguments,
                            "answer overwrite or copy",
                        ));
                    }
                };
                tokio::task::spawn_blocking(move || {
                    let mut theme = theme;
                    if overwrite {
                        store_import(&store, theme, Some(existing_id))
                    } else {
                        theme.name = copy_name(&store, &theme.name)?;
                        store_import(&store, theme, None)
                    }
                })
                .await
                .map_err(|_| ToolError::internal("importing the theme"))?
            }) as BoxFuture<_>
        }),
    })
}

/// Registers the theme tools.
pub fn register(r: &mut Registry) -> Result<(), SchemaError> {
    const KW: &[&str] = &[
        "theme",
        "style",
        "color",
        "bubble",
        "font",
        "appearance",
        "background",
        "css",
        "主题",
    ];
    let raw =
        |f: fn(Value, &Store) -> Result<Outcome, ToolError>| -> Box<crate::operation::Handler> {
            Box::new(move |args: Value, ctx: OpContext| {
                Box::pin(async move {
                    ctx.blocking("writing the theme", move |store| f(args, store))
                        .await
                }) as BoxFuture<_>
            })
        };
    r.add(
        OpSpec::new(
            "theme.all",
            Safety::Read,
            "List every chat theme: {id, name, official}.",
        )
        .keywords(KW),
        all,
    )?;
    r.add(
        OpSpec::new(
            "theme.get",
            Safety::Read,
            "Get one chat theme with all its style fields.",
        )
        .keywords(KW),
        get,
    )?;
    r.add(
        OpSpec::new(
            "theme.find",
            Safety::Read,
            "Find chat themes by name (options.match exact|contains|prefix|suffix).",
        )
        .keywords(KW),
        find,
    )?;
    r.add_raw(
        OpSpec::new(
            "theme.create",
            Safety::Write,
            "Create a chat theme. Every legal field is in the schema: background {color, image, opacity, blur}; \
             userBubble / characterBubble {color (fill), borderColor, borderWidth, borderRadius, opacity, side}; \
             userBubbleFont / characterBubbleFont {textStyle {color (text colour), fontSize, bold, italic, \
             fontFamily, lineHeight}, quoteStyle, emphasisStyle}; thinkingLabel / statusLabel {color, fontColor, \
             visible}; inputArea {color (background), fontColor (text)}; avatar {visible, shape, size}; customCss. \
             Colours are #RRGGBB or #AARRGGBB. apply: true also makes it the app's current theme.",
        )
        .keywords(KW),
        theme_schema(false),
        raw(create_raw),
    )?;
    r.add_raw(
        OpSpec::new(
            "theme.update",
            Safety::Write,
            "Update a chat theme: id is required; only the fields given change (nested fields merge). Official \
             themes are read-only. Same fields as tavo_theme_create; apply: true also makes it the app's current \
             theme (the open app restyles at once).",
        )
        .keywords(KW),
        theme_schema(true),
        raw(update_raw),
    )?;
    r.add(
        OpSpec::new(
            "theme.import",
            Safety::Write,
            "Import a chat theme from a .thm file in this chat's files (files/chat/<name>.thm). If a theme \
             with the same name exists, the user is asked whether to overwrite it or save a copy.",
        )
        .keywords(KW),
        import,
    )?;
    r.add(
        OpSpec::new(
            "theme.export",
            Safety::Write,
            "Export a chat theme to a .thm file in this chat's files; returns its path (files/chat/<name>.thm).",
        )
        .keywords(KW),
        export,
    )?;
    r.add(
        OpSpec::new(
            "theme.delete",
            Safety::Confirm,
            "Delete a user chat theme (official themes are read-only).",
        )
        .keywords(KW),
        delete,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn theme_files_parse_in_both_shapes() {
        let wrapped = br##"{"format":"tavo-theme","version":1,"theme":{"name":"N","userBubble":{"color":"#112233"}}}"##;
        assert_eq!(
            parse_theme_file(wrapped).map(|t| t.name).ok(),
            Some("N".into())
        );
        let bare = br#"{"name":"B"}"#;
        assert!(parse_theme_file(bare).is_ok());
        assert!(parse_theme_file(br#"{"name":""}"#).is_err());
        assert!(parse_theme_file(br#"{"format":"other"}"#).is_err());
        assert!(parse_theme_file(br##"{"name":"x","userBubble":{"fill":"#fff"}}"##).is_err());
    }

    #[test]
    fn export_names_are_safe() {
        assert_eq!(sanitize("a/b:c..d"), "a_b_c_d");
        assert_eq!(sanitize("  "), "theme");
    }
}
