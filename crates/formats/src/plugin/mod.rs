//! Tavo plugin packages (`.tpg`, a zip; `.zip` also accepted): reading, root selection, the
//! path rules, `manifest.json` validation for spec 1 and spec 2, and spec 2 localisation
//! (`shared/reference/tavo-docs.md` §6.3–6.6).
//!
//! [`read_package`] is the one reader every door uses (CLI, HTTP, MCP): bytes in, a validated
//! [`Package`] plus warnings out, or one [`PluginError`] naming the member, the field and the
//! problem. Refusals are the ones Tavo lists (missing/empty/invalid manifest, unsafe path,
//! unsupported `specVersion`, missing entry, unsupported contribution shapes) plus zip-slip and
//! zip bombs; resources that are merely missing or undecodable (a cover, an icon, a catalog) are
//! warnings and the UI falls back, as Tavo does.

mod archive;
mod contributes;
mod error;
pub mod i18n;
pub mod manifest;
mod paths;
pub mod settings;

use std::collections::BTreeMap;

pub use archive::{MAX_ENTRIES, MAX_FILE_BYTES, MAX_PACKAGE_BYTES, MAX_TOTAL_BYTES};
pub use contributes::{Contributes, Fragment, Mount, PluginAction};
pub use error::PluginError;
pub use i18n::{Catalogs, LocalText};
pub use manifest::{Manifest, SUPPORTED_SPEC};
pub use paths::check_path;
pub use settings::{SettingsElement, SettingsSchema};

use crate::error::Warning;

/// The Tavo version whose plugin contract tavo implements; `minAppVersion` is checked against
/// it (tavo's own crate version says nothing to plugin authors, who target Tavo releases).
pub const TAVO_COMPAT_VERSION: &str = "1.0.0";

/// A validated plugin package.
#[derive(Debug, Clone)]
pub struct Package {
    /// The validated manifest (id lower-cased, paths normalised).
    pub manifest: Manifest,
    /// `manifest.json` as the author wrote it (returned by `GET /api/plugins/{id}` and MCP).
    pub raw_manifest: serde_json::Value,
    /// The files under the chosen root, by package-relative path (`manifest.json` included).
    pub files: BTreeMap<String, Vec<u8>>,
    /// The spec 2 catalogs that could be read (empty for spec 1).
    pub catalogs: Catalogs,
    /// What was tolerated: skipped catalogs, a missing cover, an ignored legacy field.
    pub warnings: Vec<Warning>,
}

/// Reads and validates a plugin package. `bytes` is the whole `.tpg` / `.zip`.
pub fn read_package(bytes: &[u8]) -> Result<Package, PluginError> {
    let mut warnings = Vec::new();
    let files = archive::read(bytes, &mut warnings)?;
    from_files(files, warnings)
}

/// Validates a package given as files (the MCP `tavo_plugin_package` and tests build packages
/// this way); the same rules as [`read_package`] after unzipping.
pub fn from_files(
    files: BTreeMap<String, Vec<u8>>,
    mut warnings: Vec<Warning>,
) -> Result<Package, PluginError> {
    for path in files.keys() {
        check_path(path).map_err(|problem| PluginError::member(path, problem))?;
    }
    let raw = files
        .get("manifest.json")
        .ok_or_else(|| PluginError::member("manifest.json", "is missing from the package root"))?;
    let raw_manifest = manifest::parse_json(raw)?;
    let manifest = manifest::validate(&raw_manifest, &files, &mut warnings)?;
    let catalogs = match &manifest.localization {
        Some(loc) => i18n::read_catalogs(loc, &files, &mut warnings),
        None => Catalogs::default(),
    };
    manifest::check_keys_exist(&manifest, &catalogs, &mut warnings);
    Ok(Package {
        manifest,
        raw_manifest,
        files,
        catalogs,
        warnings,
    })
}

/// Validates a manifest alone (MCP `tavo_plugin_validate_manifest`): the files it names are
/// looked up in `files`, which may be empty (then missing files are not reported).
pub fn validate_manifest(
    raw: &serde_json::Value,
    files: Option<&BTreeMap<String, Vec<u8>>>,
) -> Result<(Manifest, Vec<Warning>), PluginError> {
    let mut warnings = Vec::new();
    let empty = BTreeMap::new();
    let manifest = match files {
        Some(f) => manifest::validate(raw, f, &mut warnings)?,
        None => manifest::validate_shape(raw, &empty, &mut warnings)?,
    };
    Ok((manifest, warnings))
}

/// The catalogs of an installed manifest, read from its files (unreadable ones skipped).
pub fn catalogs(manifest: &Manifest, files: &BTreeMap<String, Vec<u8>>) -> Catalogs {
    match &manifest.localization {
        Some(loc) => i18n::read_catalogs(loc, files, &mut Vec::new()),
        None => Catalogs::default(),
    }
}

/// Writes files as a zip package (deflate), in path order, so the same files give the same bytes.
pub fn write_package(files: &BTreeMap<String, Vec<u8>>) -> Result<Vec<u8>, PluginError> {
    archive::write(files)
}

#[cfg(test)]
mod tests;
