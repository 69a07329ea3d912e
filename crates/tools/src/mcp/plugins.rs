//! The plugin tools of Tavo's MCP server (§6.9): `tavo_plugin_search`, `_get`, `_package`,
//! `_install`, `_uninstall`, `_set_enabled`, `_set_config`, `_reset_config`,
//! `_validate_manifest`, `_get_runtime_contributions` — thin doors onto [`crate::plugins`], the
//! operations `tavo plugin` and `/api/plugins` run.
//!
//! The agent flow Tavo documents works end to end: read `tavo://docs/plugins`, write the files,
//! validate, package, install, enable. Packages travel as base64 (`zipBase64`) or, while the
//! server is reachable from this machine only (`mcp.scope` = `loopback`, the default), as a
//! local path (`zipPath`, `sourcePath`): a client that can reach the server from the network
//! must not be able to make it read the host's files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde_json::{Map, Value, json};
use sha2::Digest as _;
use tavo_formats::plugin::{self as format, PluginError};
use tavo_store::Store;

use super::search::{self, Search};
use super::{McpContext, McpTools, Step, WritePlan, handler, string_field};
use crate::error::{ErrorCode, ToolError, json_type_name};
use crate::plugins::{self, DEFAULT_LOCALE, package_error};

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

fn id_schema(extra: Value) -> Value {
    let mut props = json!({"pluginId": {"type": "string", "description": "The plugin's manifest id."},
                           "locale": {"type": "string", "description": "Locale for names and texts (default en)."}});
    if let (Some(p), Value::Object(e)) = (props.as_object_mut(), extra) {
        p.extend(e);
    }
    let mut required = vec![json!("pluginId")];
    required.extend(
        props
            .as_object()
            .into_iter()
            .flat_map(|p| p.iter())
            .filter(|(k, v)| v.get("x-required").is_some() && *k != "pluginId")
            .map(|(k, _)| json!(k)),
    );
    for v in props
        .as_object_mut()
        .into_iter()
        .flat_map(|p| p.values_mut())
    {
        if let Some(o) = v.as_object_mut() {
            o.remove("x-required");
        }
    }
    json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
}

fn locale(args: &Map<String, Value>) -> String {
    args.get("locale")
        .and_then(Value::as_str)
        .unwrap_or(DEFAULT_LOCALE)
        .to_owned()
}

/// Whether local paths may be read: only while `/mcp` answers loopback clients alone.
fn local_paths_allowed(store: &Store) -> bool {
    store
        .setting_get("mcp.scope")
        .ok()
        .flatten()
        .and_then(|v| v.as_str().map(str::to_owned))
        .is_none_or(|s| s == "loopback")
}

fn local_path(
    store: &Store,
    args: &Map<String, Value>,
    field: &str,
) -> Result<Option<PathBuf>, ToolError> {
    let Some(v) = args.get(field) else {
        return Ok(None);
    };
    let p = v.as_str().ok_or_else(|| {
        ToolError::invalid_at(field, "string (a path on this machine)", json_type_name(v))
    })?;
    if !local_paths_allowed(store) {
        return Err(ToolError::denied(format!(
            "{field}: local paths are read only while mcp.scope is loopback; send the package as zipBase64 / files instead"
        )));
    }
    Ok(Some(PathBuf::from(p)))
}

/// The files of a package the agent sends: `files` ({path: text} or {path: {base64}}) or a
/// local `sourcePath` folder.
fn source_files(
    store: &Store,
    args: &Map<String, Value>,
) -> Result<BTreeMap<String, Vec<u8>>, ToolError> {
    if let Some(dir) = local_path(store, args, "sourcePath")? {
        return read_dir(&dir);
    }
    let files = match args.get("files") {
        Some(Value::Object(m)) => m,
        Some(v) => {
            return Err(ToolError::invalid_at(
                "files",
                "object of path → text or {base64}",
                json_type_name(v),
            ));
        }
        None => {
            return Err(ToolError::invalid_at(
                "files",
                "object (or sourcePath)",
                "missing",
            ));
        }
    };
    let mut out = BTreeMap::new();
    for (path, v) in files {
        let field = format!("files.{path}");
        let data = match v {
            Value::String(s) => s.clone().into_bytes(),
            Value::Object(o) if o.get("base64").is_some_and(Value::is_string) => B64
                .decode(o["base64"].as_str().unwrap_or_default())
                .map_err(|e| {
                    ToolError::invalid_at(&field, format!("valid base64 ({e})"), "string")
                })?,
            Value::Object(_) | Value::Array(_) if path.ends_with(".json") => {
                serde_json::to_vec_pretty(v).unwrap_or_default()
            }
            other => {
                return Err(ToolError::invalid_at(
                    &field,
                    "text, {base64}, or JSON for a .json file",
                    json_type_name(other),
                ));
            }
        };
        out.insert(path.clone(), data);
    }
    Ok(out)
}

fn read_dir(root: &Path) -> Result<BTreeMap<String, Vec<u8>>, ToolError> {
    let mut out = BTreeMap::new();
    let mut total = 0u64;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| {
            ToolError::new(
                ErrorCode::ResourceNotFound,
                format!("sourcePath: cannot read {}: {e}", dir.display()),
            )
        })?;
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_symlink() {
                continue; // a link could lead out of the folder
            }
            if kind.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .to_string_lossy()
                .replace('\\', "/");
            let data = std::fs::read(&path).map_err(|e| {
                ToolError::new(
                    ErrorCode::InvalidArguments,
                    format!("sourcePath: cannot read {rel}: {e}"),
                )
            })?;
            total += data.len() as u64;
            if out.len() >= format::MAX_ENTRIES || total > format::MAX_TOTAL_BYTES {
                return Err(ToolError::new(
                    ErrorCode::LimitExceeded,
                    "sourcePath: the folder is larger than a plugin package may be",
                ));
            }
            out.insert(rel, data);
        }
    }
    Ok(out)
}

/// The package bytes of an install: `zipBase64` or a local `zipPath`.
fn package_bytes(store: &Store, args: &Map<String, Value>) -> Result<(Vec<u8>, String), ToolError> {
    if let Some(p) = local_path(store, args, "zipPath")? {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "package.tpg".into());
        let meta = std::fs::metadata(&p).map_err(|e| {
            ToolError::new(
                ErrorCode::ResourceNotFound,
                format!("zipPath: {}: {e}", p.display()),
            )
        })?;
        if meta.len() as usize > format::MAX_PACKAGE_BYTES {
            return Err(ToolError::new(
                ErrorCode::LimitExceeded,
                format!(
                    "zipPath: {name} is larger than {} bytes",
                    format::MAX_PACKAGE_BYTES
                ),
            ));
        }
        let bytes = std::fs::read(&p)
            .map_err(|e| ToolError::new(ErrorCode::InvalidArguments, format!("zipPath: {e}")))?;
        return Ok((bytes, name));
    }
    let b64 = string_field(args, "zipBase64").map_err(|_| {
        ToolError::invalid_at("zipBase64", "base64 of the .tpg (or zipPath)", "missing")
    })?;
    if b64.len() / 4 * 3 > format::MAX_PACKAGE_BYTES {
        return Err(ToolError::new(
            ErrorCode::LimitExceeded,
            format!(
                "zipBase64: the package is larger than {} bytes",
                format::MAX_PACKAGE_BYTES
            ),
        ));
    }
    let bytes = B64
        .decode(b64.trim())
        .map_err(|e| ToolError::invalid_at("zipBase64", format!("valid base64 ({e})"), "string"))?;
    let name = args
        .get("fileName")
        .and_then(Value::as_str)
        .unwrap_or("package.tpg")
        .to_owned();
    Ok((bytes, name))
}

fn problem(e: &PluginError) -> Value {
    json!({"member": e.member, "field": e.field, "problem": e.problem, "message": e.to_string()})
}

pub(super) fn register(set: &mut McpTools) {
    register_reads(set);
    register_authoring(set);
    register_installation(set);
    register_runtime(set);
}

/// Search and read.
fn register_reads(set: &mut McpTools) {
    set.add(
        "tavo_plugin_search",
        "Find installed plugins by id, name, author, description or version. Answers {items: [{id, name, version, specVersion, enabled, author, description, permissions, tags}], total, nextCursor}.",
        search::schema(json!({"locale": {"type": "string"}})),
        false,
        handler(|cx: McpContext, args| async move {
            let s = Search::from_args(&args)?;
            let loc = locale(&args);
            let rows = cx.blocking("listing plugins", move |store| plugins::list(store, "", &loc)).await?;
            let hits = rows
                .into_iter()
                .filter(|p| s.matches([p.id.as_str(), p.name.as_str(), p.version.as_str()].into_iter().chain(p.author.as_deref()).chain(p.description.as_deref())))
                .map(|p| serde_json::to_value(p).unwrap_or_default())
                .collect();
            Ok(Step::Answer(s.page(hits)))
        }),
    );
    set.add(
        "tavo_plugin_get",
        "One installed plugin: its manifest, resolved contributions, settings values (config, overrides), i18n and file list.",
        id_schema(json!({})),
        false,
        handler(|cx: McpContext, args| async move {
            let id = string_field(&args, "pluginId")?;
            let loc = locale(&args);
            let d = cx.blocking("reading the plugin", move |store| plugins::get(store, &id, &loc)).await?;
            Ok(Step::Answer(serde_json::to_value(d).unwrap_or_default()))
        }),
    );
}

/// Checking and packaging a plugin before it is installed (nothing is written).
fn register_authoring(set: &mut McpTools) {
    set.add(
        "tavo_plugin_validate_manifest",
        "Check a plugin before packaging: `manifest` (the manifest.json object) alone, or `files` ({path: text | {base64}}) / `sourcePath` for the whole package (then entry, catalogs and resources are checked too), or `zipBase64`. Answers {valid, error?: {member, field, problem, message}, warnings, manifest?}.",
        json!({"type": "object", "properties": {
            "manifest": {"type": "object"}, "files": {"type": "object"}, "sourcePath": {"type": "string"}, "zipBase64": {"type": "string"}
        }, "additionalProperties": false}),
        false,
        handler(|cx: McpContext, args| async move {
            cx.blocking("validating the plugin", move |store| {
                let result = if let Some(m) = args.get("manifest") {
                    format::validate_manifest(m, None).map(|(m, w)| (serde_json::to_value(m).unwrap_or_default(), w))
                } else if args.contains_key("zipBase64") {
                    let (bytes, _) = package_bytes(store, &args)?;
                    format::read_package(&bytes).map(|p| (serde_json::to_value(p.manifest).unwrap_or_default(), p.warnings))
                } else {
                    let files = source_files(store, &args)?;
                    format::from_files(files, Vec::new()).map(|p| (serde_json::to_value(p.manifest).unwrap_or_default(), p.warnings))
                };
                Ok(Step::Answer(match result {
                    Ok((manifest, warnings)) => json!({"valid": true, "manifest": manifest, "warnings": warnings}),
                    Err(e) => json!({"valid": false, "error": problem(&e), "warnings": []}),
                }))
            })
            .await
        }),
    );
    set.add(
        "tavo_plugin_package",
        "Zip a plugin's files into a .tpg after validating them: `files` ({path: text | {base64}}, JSON allowed for .json files) or `sourcePath` (a folder on this machine). Answers {pluginId, version, size, sha256, warnings, zipBase64 (unless zipBase64: false)}. A refused package answers invalid_arguments naming the member and field.",
        json!({"type": "object", "properties": {
            "files": {"type": "object"}, "sourcePath": {"type": "string"},
            "zipBase64": {"type": "boolean", "description": "Return the package as base64 (default true)."}
        }, "additionalProperties": false}),
        false,
        handler(|cx: McpContext, args| async move {
            cx.blocking("packaging the plugin", move |store| {
                let files = source_files(store, &args)?;
                let package = format::from_files(files, Vec::new()).map_err(package_error)?;
                let zip = format::write_package(&package.files).map_err(package_error)?;
                let mut out = json!({
                    "pluginId": package.manifest.id, "version": package.manifest.version, "size": zip.len(),
                    "sha256": hex::encode(sha2::Sha256::digest(&zip)), "warnings": package.warnings,
                });
                if args.get("zipBase64").and_then(Value::as_bool) != Some(false) {
                    out["zipBase64"] = json!(B64.encode(&zip));
                }
                Ok(Step::Answer(out))
            })
            .await
        }),
    );
}

/// Install, uninstall, enable and configure: writes the approval policy sees.
fn register_installation(set: &mut McpTools) {
    set.add(
        "tavo_plugin_install",
        "Install a .tpg package: `zipBase64` (from tavo_plugin_package) or `zipPath` (a file on this machine), optional `fileName` for messages. A reinstall of an installed id replaces its files and keeps its settings and enabled state. Answers {plugin, warnings, replaces?, installed}.",
        json!({"type": "object", "properties": {
            "zipBase64": {"type": "string"}, "zipPath": {"type": "string"}, "fileName": {"type": "string"}, "locale": {"type": "string"}
        }, "additionalProperties": false}),
        true,
        handler(|cx: McpContext, args| async move {
            let loc = locale(&args);
            let (package, before) = cx
                .blocking("reading the plugin package", move |store| {
                    let (bytes, name) = package_bytes(store, &args)?;
                    let package = plugins::read(&bytes, &name)?;
                    let before = plugins::get(store, &package.manifest.id, &loc).ok().map(|d| serde_json::to_value(d.summary).unwrap_or_default());
                    Ok((package, before))
                })
                .await?;
            let after = json!({"id": package.manifest.id, "version": package.manifest.version, "files": package.files.keys().collect::<Vec<_>>()});
            Ok(Step::Write(WritePlan {
                revision: None,
                before,
                after: Some(after),
                commit: Box::new(move |cx: McpContext| {
                    Box::pin(async move {
                        cx.blocking("installing the plugin", move |store| {
                            let done = plugins::install_package(store, package, false, DEFAULT_LOCALE)?;
                            Ok(serde_json::to_value(done).unwrap_or_default())
                        })
                        .await
                    })
                }),
            }))
        }),
    );
    write_tool(
        set,
        "tavo_plugin_uninstall",
        "Uninstall a plugin with its files and settings.",
        json!({}),
        |store, id, _args| {
            plugins::uninstall(store, id)?;
            Ok(json!({"uninstalled": true, "pluginId": id}))
        },
        |_| None,
    );
    write_tool(
        set,
        "tavo_plugin_set_enabled",
        "Enable or disable a plugin (`enabled`).",
        json!({"enabled": {"type": "boolean", "x-required": true}}),
        |store, id, args| {
            let enabled = args
                .get("enabled")
                .and_then(Value::as_bool)
                .ok_or_else(|| ToolError::invalid_at("enabled", "boolean (required)", "missing"))?;
            Ok(
                serde_json::to_value(plugins::set_enabled(store, id, enabled, &locale(args))?)
                    .unwrap_or_default(),
            )
        },
        |args| Some(json!({"enabled": args.get("enabled")})),
    );
    write_tool(
        set,
        "tavo_plugin_set_config",
        "Save one settings value (`key`, `value`), checked against the plugin's settings schema. Answers {config, overrides}.",
        json!({"key": {"type": "string", "x-required": true}, "value": {"x-required": true}}),
        |store, id, args| {
            let key = string_field(args, "key")?;
            let value = args.get("value").cloned().ok_or_else(|| {
                ToolError::invalid_at("value", "any JSON value (required)", "missing")
            })?;
            Ok(
                serde_json::to_value(plugins::set_config(store, id, &key, value, &locale(args))?)
                    .unwrap_or_default(),
            )
        },
        |args| {
            Some(
                json!({"overrides": {args.get("key").and_then(Value::as_str).unwrap_or(""): args.get("value")}}),
            )
        },
    );
    write_tool(
        set,
        "tavo_plugin_reset_config",
        "Forget saved settings values (`key`, or all) so the schema defaults apply. Answers {config, overrides}.",
        json!({"key": {"type": "string"}}),
        |store, id, args| {
            let key = args.get("key").and_then(Value::as_str);
            Ok(
                serde_json::to_value(plugins::reset_config(store, id, key, &locale(args))?)
                    .unwrap_or_default(),
            )
        },
        |args| Some(json!({"reset": args.get("key").cloned().unwrap_or(json!("all"))})),
    );
}

/// What enabled plugins add to the app (entries, input actions, sidebar, fragments).
fn register_runtime(set: &mut McpTools) {
    set.add(
        "tavo_plugin_get_runtime_contributions",
        "What enabled plugins add to the app: per plugin {pluginId, name, entry, inputActions, sidebar, htmlFragments (with mount point, role, position), settings}. Optional `pluginId` for one.",
        json!({"type": "object", "properties": {"pluginId": {"type": "string"}, "locale": {"type": "string"}}, "additionalProperties": false}),
        false,
        handler(|cx: McpContext, args| async move {
            let loc = locale(&args);
            let only = args.get("pluginId").and_then(Value::as_str).map(str::to_ascii_lowercase);
            let rows = cx.blocking("reading plugins", move |store| plugins::runtime(store, &loc)).await?;
            let items: Vec<Value> = rows
                .into_iter()
                .filter(|d| only.as_ref().is_none_or(|o| *o == d.summary.id))
                .map(|d| json!({"pluginId": d.summary.id, "name": d.summary.name, "entry": d.entry,
                                "inputActions": d.contributes["inputActions"], "sidebar": d.contributes["sidebar"],
                                "htmlFragments": d.contributes["htmlFragments"], "settings": d.contributes["settings"]}))
                .collect();
            Ok(Step::Answer(json!({"plugins": items})))
        }),
    );
}

type WriteFn = fn(&Store, &str, &Map<String, Value>) -> Result<Value, ToolError>;
type AfterFn = fn(&Map<String, Value>) -> Option<Value>;

/// A write on one installed plugin: read it for the diff, then run `write` on commit.
fn write_tool(
    set: &mut McpTools,
    name: &str,
    description: &str,
    extra: Value,
    write: WriteFn,
    after: AfterFn,
) {
    set.add(
        name,
        description,
        id_schema(extra),
        true,
        handler(move |cx: McpContext, args| async move {
            let id = string_field(&args, "pluginId")?.to_ascii_lowercase();
            let loc = locale(&args);
            let read_id = id.clone();
            let before = cx
                .blocking("reading the plugin", move |store| {
                    let d = plugins::get(store, &read_id, &loc)?;
                    Ok(json!({"enabled": d.summary.enabled, "overrides": d.config.overrides}))
                })
                .await?;
            let after = after(&args);
            Ok(Step::Write(WritePlan {
                revision: None,
                before: Some(before),
                after,
                commit: Box::new(move |cx: McpContext| {
                    Box::pin(async move {
                        cx.blocking("changing the plugin", move |store| write(store, &id, &args))
                            .await
                    })
                }),
            }))
        }),
    );
}
