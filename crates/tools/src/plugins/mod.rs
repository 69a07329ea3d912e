//! Plugins as operations (`shared/reference/tavo-docs.md` §6): install, list, get, enable,
//! uninstall, settings values, and what the app loads to run them. The CLI (`tavo plugin`),
//! HTTP (`/api/plugins`) and MCP (`tavo_plugin_*`) call these and nothing else, so a package
//! refused by one door is refused by all, with the same message.
//!
//! Reading and validating a package is `formats::plugin`; storing it is `store::plugins`. This
//! module decides what an operation means: a reinstall of an installed id replaces its files
//! and keeps its enabled state and settings; a settings value is checked against the schema of
//! the installed manifest; names are resolved for the caller's locale.

mod view;

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value, json};
use tavo_formats::Warning;
use tavo_formats::plugin::{self, Catalogs, Manifest, Package, PluginError};
use tavo_store::{NewPlugin, PluginRow, Store};

use crate::context::store_error;
use crate::error::{ErrorCode, ToolError};

pub use tavo_formats::plugin::{MAX_PACKAGE_BYTES, TAVO_COMPAT_VERSION};
pub use view::{ConfigView, PluginDetail, PluginSummary};

/// The locale used when a door has none (Tavo's resolution falls back to English too).
pub const DEFAULT_LOCALE: &str = "en";

/// What an install (or a dry run of one) answers.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Installed {
    /// The plugin as listed after the install (for a dry run: as it would be).
    pub plugin: PluginSummary,
    /// What was tolerated while reading the package.
    pub warnings: Vec<Warning>,
    /// The version this install replaces, when the id was installed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replaces: Option<Replaces>,
    /// Whether anything was stored (`false` for a dry run).
    pub installed: bool,
}

/// The installed plugin an install replaces.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Replaces {
    /// Its version.
    pub version: String,
}

/// A refused package as a tool error: `invalid_arguments` whose message is the refusal
/// (`FILE: manifest.json: FIELD: problem`) and whose details name file, member and field.
pub fn package_error(e: PluginError) -> ToolError {
    let details =
        json!({"file": e.file, "member": e.member, "field": e.field, "problem": e.problem});
    ToolError::new(ErrorCode::InvalidArguments, e.to_string()).with_details(details)
}

/// Reads and validates a package; `file` names it in messages.
pub fn read(bytes: &[u8], file: &str) -> Result<Package, ToolError> {
    plugin::read_package(bytes).map_err(|e| package_error(e.in_file(file)))
}

/// Installs a package (or only checks it, with `dry_run`).
pub fn install(
    store: &Store,
    bytes: &[u8],
    file: &str,
    dry_run: bool,
    locale: &str,
) -> Result<Installed, ToolError> {
    let package = read(bytes, file)?;
    install_package(store, package, dry_run, locale)
}

/// Installs an already validated package.
pub fn install_package(
    store: &Store,
    package: Package,
    dry_run: bool,
    locale: &str,
) -> Result<Installed, ToolError> {
    let m = &package.manifest;
    let before = store
        .read(|tx| tx.plugin_get(&m.id))
        .map_err(|e| store_error("reading the plugin", e))?;
    let replaces = before.as_ref().map(|r| Replaces {
        version: r.version.clone(),
    });
    if dry_run {
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let row = before.unwrap_or_else(|| PluginRow {
            id: m.id.clone(),
            version: m.version.clone(),
            spec_version: m.spec_version,
            manifest: package.raw_manifest.clone(),
            enabled: true,
            config: Map::new(),
            installed_at: now.clone(),
            updated_at: now,
        });
        let row = PluginRow {
            version: m.version.clone(),
            ..row
        };
        let plugin = PluginSummary::new(
            &row,
            m,
            &package.catalogs,
            locale,
            package
                .files
                .contains_key(m.cover.as_deref().unwrap_or("\0")),
        );
        return Ok(Installed {
            plugin,
            warnings: package.warnings,
            replaces,
            installed: false,
        });
    }
    let new = NewPlugin {
        id: &m.id,
        version: &m.version,
        spec_version: m.spec_version,
        manifest: &package.raw_manifest,
        files: &package.files,
    };
    let (row, _) = store
        .write(|tx| tx.plugin_put(&new))
        .map_err(|e| store_error("installing the plugin", e))?;
    let has_cover = m
        .cover
        .as_ref()
        .is_some_and(|c| package.files.contains_key(c));
    let plugin = PluginSummary::new(&row, m, &package.catalogs, locale, has_cover);
    tracing::info!(plugin = %row.id, version = %row.version, "plugin installed");
    Ok(Installed {
        plugin,
        warnings: package.warnings,
        replaces,
        installed: true,
    })
}

/// An installed plugin with its manifest parsed and its catalogs read.
pub(crate) struct Loaded {
    pub row: PluginRow,
    pub manifest: Manifest,
    pub catalogs: Catalogs,
    pub paths: Vec<String>,
}

fn load_row(store: &Store, row: PluginRow) -> Result<Loaded, ToolError> {
    let (manifest, _) = plugin::validate_manifest(&row.manifest, None).map_err(|e| {
        // The row was validated when it was installed; a manifest that no longer validates
        // means this build's rules changed. Say so rather than guessing.
        ToolError::new(
            ErrorCode::InternalError,
            format!(
                "installed plugin {} no longer validates ({e}); reinstall it",
                row.id
            ),
        )
    })?;
    let paths = store
        .read(|tx| tx.plugin_file_paths(&row.id))
        .map_err(|e| store_error("reading the plugin", e))?;
    let mut files = BTreeMap::new();
    if let Some(loc) = &manifest.localization {
        for path in loc.resources.values() {
            if let Some(data) = store
                .read(|tx| tx.plugin_file(&row.id, path))
                .map_err(|e| store_error("reading the plugin", e))?
            {
                files.insert(path.clone(), data);
            }
        }
    }
    let catalogs = plugin::catalogs(&manifest, &files);
    Ok(Loaded {
        row,
        manifest,
        catalogs,
        paths,
    })
}

pub(crate) fn load(store: &Store, id: &str) -> Result<Loaded, ToolError> {
    let id = id.to_ascii_lowercase();
    let row = store
        .read(|tx| tx.plugin_get(&id))
        .map_err(|e| store_error("reading the plugin", e))?
        .ok_or_else(|| ToolError::not_found("plugin", &id))?;
    load_row(store, row)
}

fn load_all(store: &Store) -> Result<Vec<Loaded>, ToolError> {
    let rows = store
        .read(|tx| tx.plugin_list())
        .map_err(|e| store_error("listing plugins", e))?;
    rows.into_iter().map(|r| load_row(store, r)).collect()
}

/// Installed plugins whose id, name, author, description or version contains `query`
/// (case-insensitive; every plugin when `query` is empty), names resolved for `locale`.
pub fn list(store: &Store, query: &str, locale: &str) -> Result<Vec<PluginSummary>, ToolError> {
    let q = query.trim().to_lowercase();
    Ok(load_all(store)?
        .iter()
        .map(|l| PluginSummary::of(l, locale))
        .filter(|s| q.is_empty() || s.matches(&q))
        .collect())
}

/// One plugin in full.
pub fn get(store: &Store, id: &str, locale: &str) -> Result<PluginDetail, ToolError> {
    Ok(PluginDetail::of(&load(store, id)?, locale))
}

/// What the chat page loads: every enabled plugin in full.
pub fn runtime(store: &Store, locale: &str) -> Result<Vec<PluginDetail>, ToolError> {
    Ok(load_all(store)?
        .iter()
        .filter(|l| l.row.enabled)
        .map(|l| PluginDetail::of(l, locale))
        .collect())
}

/// One package file.
pub fn file(store: &Store, id: &str, path: &str) -> Result<Vec<u8>, ToolError> {
    let id = id.to_ascii_lowercase();
    plugin::check_path(path).map_err(|p| ToolError::invalid_at("path", p, "string"))?;
    store
        .read(|tx| tx.plugin_file(&id, path))
        .map_err(|e| store_error("reading the plugin", e))?
        .ok_or_else(|| ToolError::not_found(&format!("file of plugin {id}"), path))
}

/// Every package file (for repackaging).
pub fn files(store: &Store, id: &str) -> Result<BTreeMap<String, Vec<u8>>, ToolError> {
    let l = load(store, id)?;
    store
        .read(|tx| tx.plugin_files(&l.row.id))
        .map_err(|e| store_error("reading the plugin", e))
}

/// Enables or disables a plugin.
pub fn set_enabled(
    store: &Store,
    id: &str,
    enabled: bool,
    locale: &str,
) -> Result<PluginSummary, ToolError> {
    let l = load(store, id)?;
    let row = store
        .write(|tx| tx.plugin_set_enabled(&l.row.id, enabled))
        .map_err(|e| store_error("changing the plugin", e))?;
    Ok(PluginSummary::of(&Loaded { row, ..l }, locale))
}

/// Uninstalls a plugin.
pub fn uninstall(store: &Store, id: &str) -> Result<(), ToolError> {
    let id = id.to_ascii_lowercase();
    let gone = store
        .write(|tx| tx.plugin_delete(&id))
        .map_err(|e| store_error("uninstalling the plugin", e))?;
    if gone {
        Ok(())
    } else {
        Err(ToolError::not_found("plugin", &id))
    }
}

/// The plugin's effective settings and saved overrides.
pub fn config(store: &Store, id: &str, locale: &str) -> Result<ConfigView, ToolError> {
    Ok(ConfigView::of(&load(store, id)?, locale))
}

/// Saves one settings value, checked against the schema.
pub fn set_config(
    store: &Store,
    id: &str,
    key: &str,
    value: Value,
    locale: &str,
) -> Result<ConfigView, ToolError> {
    let l = load(store, id)?;
    let el = l
        .manifest
        .contributes
        .settings
        .elements
        .iter()
        .find(|e| e.key() == Some(key))
        .ok_or_else(|| {
            let keys: Vec<&str> = l
                .manifest
                .contributes
                .settings
                .elements
                .iter()
                .filter_map(|e| e.key())
                .collect();
            ToolError::new(
                ErrorCode::InvalidArguments,
                format!(
                    "key: plugin {} has no setting {key:?} (settings: {})",
                    l.row.id,
                    if keys.is_empty() {
                        "none".to_owned()
                    } else {
                        keys.join(", ")
                    }
                ),
            )
            .with_details(json!({"path": "key"}))
        })?;
    el.check_value(&value).map_err(|p| {
        ToolError::new(ErrorCode::InvalidArguments, format!("value: {p}"))
            .with_details(json!({"path": "value"}))
    })?;
    let mut config = l.row.config.clone();
    config.insert(key.to_owned(), value);
    let row = store
        .write(|tx| tx.plugin_set_config(&l.row.id, &config))
        .map_err(|e| store_error("saving the setting", e))?;
    Ok(ConfigView::of(&Loaded { row, ..l }, locale))
}

/// Forgets saved values (one key, or all), so the schema defaults apply again.
pub fn reset_config(
    store: &Store,
    id: &str,
    key: Option<&str>,
    locale: &str,
) -> Result<ConfigView, ToolError> {
    let l = load(store, id)?;
    let mut config = l.row.config.clone();
    match key {
        Some(k) => {
            config.remove(k);
        }
        None => config.clear(),
    }
    let row = store
        .write(|tx| tx.plugin_set_config(&l.row.id, &config))
        .map_err(|e| store_error("resetting the settings", e))?;
    Ok(ConfigView::of(&Loaded { row, ..l }, locale))
}

/// The locale of a POSIX environment (`LC_ALL`, `LC_MESSAGES`, `LANG`: `zh_CN.UTF-8` →
/// `zh-CN`), for the CLI; `C`/`POSIX`/unset give [`DEFAULT_LOCALE`].
pub fn locale_from_env(get: impl Fn(&str) -> Option<String>) -> String {
    ["LC_ALL", "LC_MESSAGES", "LANG"]
        .iter()
        .find_map(|k| get(k).filter(|v| !v.is_empty()))
        .map(|v| v.split(['.', '@']).next().unwrap_or("").replace('_', "-"))
        .filter(|v| !v.is_empty() && v != "C" && v != "POSIX")
        .unwrap_or_else(|| DEFAULT_LOCALE.to_owned())
}

#[cfg(test)]
mod tests;
