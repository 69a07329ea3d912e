//! `manifest.json` (§6.4, §6.6): the fields, their rules for spec 1 and spec 2, and the
//! contribution shapes.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::{Map, Value};

use super::TAVO_COMPAT_VERSION;
use super::contributes::{Contributes, contributes};
use super::error::PluginError;
use super::i18n::{self, Catalogs, LocalText, Localization, kind};
use super::paths::check_path;
use crate::error::Warning;

/// The highest `specVersion` this build understands.
pub const SUPPORTED_SPEC: u32 = 2;

/// Fields a manifest may carry; others are kept in the raw manifest with a warning.
const KNOWN_FIELDS: &[&str] = &[
    "id",
    "name",
    "version",
    "specVersion",
    "entry",
    "scripts",
    "author",
    "description",
    "cover",
    "icon",
    "minAppVersion",
    "localization",
    "permissions",
    "contributes",
];

/// A validated manifest.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// Lower-cased id (`com.author.my-plugin`).
    pub id: String,
    /// Display name.
    pub name: LocalText,
    /// Spec 1: any non-empty string; spec 2: SemVer.
    pub version: String,
    /// 1 (compat mode, also when omitted) or 2.
    pub spec_version: u32,
    /// The entry script (`entry`, or the legacy `scripts.actions`).
    pub entry: Option<String>,
    /// Author, as written.
    pub author: Option<String>,
    /// Description.
    pub description: Option<LocalText>,
    /// Cover image path (a missing file is a warning).
    pub cover: Option<String>,
    /// Spec 2: the lowest Tavo version the plugin needs.
    pub min_app_version: Option<String>,
    /// Spec 2 localisation.
    pub localization: Option<Localization>,
    /// Declared intent only; not enforced at runtime (as in Tavo).
    pub permissions: Vec<String>,
    /// What the plugin adds to the app.
    pub contributes: Contributes,
}

/// Parses `manifest.json` bytes into JSON (an object).
pub(super) fn parse_json(bytes: &[u8]) -> Result<Value, PluginError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| PluginError::member("manifest.json", format!("is not UTF-8: {e}")))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(PluginError::member("manifest.json", "is empty"));
    }
    let v: Value = serde_json::from_str(text)
        .map_err(|e| PluginError::member("manifest.json", format!("is not valid JSON: {e}")))?;
    if !v.is_object() {
        return Err(PluginError::member(
            "manifest.json",
            format!("must be a JSON object, found {}", kind(&v)),
        ));
    }
    Ok(v)
}

/// Validates the manifest and the files it names.
pub(super) fn validate(
    raw: &Value,
    files: &BTreeMap<String, Vec<u8>>,
    warnings: &mut Vec<Warning>,
) -> Result<Manifest, PluginError> {
    let m = validate_shape(raw, files, warnings)?;
    if let Some(entry) = &m.entry
        && !files.contains_key(entry)
    {
        let field = if raw.get("entry").is_some() {
            "entry"
        } else {
            "scripts.actions"
        };
        return Err(PluginError::field(
            field,
            format!("{entry:?} is not in the package"),
        ));
    }
    for (i, frag) in m.contributes.html_fragments.iter().enumerate() {
        match files.get(&frag.src) {
            None => warnings.push(Warning::at(
                "plugin.fragment-missing",
                &format!("contributes.htmlFragments[{i}].src"),
                format!(
                    "{} is not in the package; the fragment is skipped",
                    frag.src
                ),
            )),
            Some(b) if std::str::from_utf8(b).is_err() => warnings.push(Warning::at(
                "plugin.fragment-encoding",
                &format!("contributes.htmlFragments[{i}].src"),
                format!("{} is not UTF-8; the fragment is skipped", frag.src),
            )),
            Some(_) => {}
        }
    }
    let mut images: Vec<(String, &str)> = m
        .cover
        .iter()
        .map(|c| ("cover".to_owned(), c.as_str()))
        .collect();
    for (i, a) in m.contributes.input_actions.iter().enumerate() {
        if let Some(icon) = &a.icon {
            images.push((format!("contributes.inputActions[{i}].icon"), icon));
        }
    }
    for (field, path) in images {
        if !files.contains_key(path) {
            warnings.push(Warning::at(
                "plugin.image-missing",
                &field,
                format!("{path} is not in the package; the default image is shown"),
            ));
        }
    }
    Ok(m)
}

/// Validates the manifest's own fields (no lookups in the package).
pub(super) fn validate_shape(
    raw: &Value,
    _files: &BTreeMap<String, Vec<u8>>,
    warnings: &mut Vec<Warning>,
) -> Result<Manifest, PluginError> {
    let o = raw.as_object().ok_or_else(|| {
        PluginError::member(
            "manifest.json",
            format!("must be a JSON object, found {}", kind(raw)),
        )
    })?;
    for k in o.keys().filter(|k| !KNOWN_FIELDS.contains(&k.as_str())) {
        warnings.push(Warning::at(
            "plugin.unknown-field",
            k,
            "is not a manifest field Tavo defines; kept but unused",
        ));
    }
    let spec = spec_version(o)?;
    let id = plugin_id(o)?;
    let name = match o.get("name") {
        Some(v) => LocalText::read(v, "name", spec)?,
        None => return Err(PluginError::field("name", "is required")),
    };
    if matches!(&name, LocalText::Literal(s) if s.trim().is_empty()) {
        return Err(PluginError::field("name", "is empty"));
    }
    let version = version(o, spec)?;
    let entry = entry(o, warnings)?;
    let author = opt_string(o, "author")?;
    let description = o
        .get("description")
        .filter(|v| !v.is_null())
        .map(|v| LocalText::read(v, "description", spec))
        .transpose()?;
    let cover = opt_path(o, "cover")?;
    if o.contains_key("icon") {
        warnings.push(Warning::at(
            "plugin.icon-ignored",
            "icon",
            "is deprecated and ignored; use \"cover\"",
        ));
    }
    let min_app_version = min_app_version(o, spec, warnings)?;
    let localization = i18n::read_localization(o.get("localization"), spec)?;
    if spec < 2 && o.contains_key("localization") {
        warnings.push(Warning::at(
            "plugin.spec1-localization",
            "localization",
            "is ignored with specVersion 1 (compat mode)",
        ));
    }
    let permissions = match o.get("permissions") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, p)| {
                p.as_str().map(str::to_owned).ok_or_else(|| {
                    PluginError::field(format!("permissions[{i}]"), "expected a string")
                })
            })
            .collect::<Result<_, _>>()?,
        Some(v) => {
            return Err(PluginError::field(
                "permissions",
                format!("expected an array of strings, found {}", kind(v)),
            ));
        }
    };
    let contributes = contributes(o.get("contributes"), spec)?;
    if entry.is_none() && !(contributes.input_actions.is_empty() && contributes.sidebar.is_empty())
    {
        return Err(PluginError::field(
            "entry",
            "is required when contributes.inputActions or contributes.sidebar is declared (the script that handles them)",
        ));
    }
    Ok(Manifest {
        id,
        name,
        version,
        spec_version: spec,
        entry,
        author,
        description,
        cover,
        min_app_version,
        localization,
        permissions,
        contributes,
    })
}

fn spec_version(o: &Map<String, Value>) -> Result<u32, PluginError> {
    match o.get("specVersion") {
        None | Some(Value::Null) => Ok(1),
        Some(Value::Number(n)) => match n.as_u64() {
            Some(v @ 1..=2) => Ok(v as u32),
            Some(v) if v > SUPPORTED_SPEC as u64 => Err(PluginError::field(
                "specVersion",
                format!(
                    "{v} is newer than this tavo supports ({SUPPORTED_SPEC}); upgrade tavo to install this plugin"
                ),
            )),
            _ => Err(PluginError::field(
                "specVersion",
                format!("{n} is not a spec version (1 or 2)"),
            )),
        },
        Some(v) => Err(PluginError::field(
            "specVersion",
            format!("expected the number 1 or 2, found {}", kind(v)),
        )),
    }
}

fn plugin_id(o: &Map<String, Value>) -> Result<String, PluginError> {
    let raw = o.get("id").and_then(Value::as_str).ok_or_else(|| {
        PluginError::field(
            "id",
            "is required: a string such as \"com.author.my-plugin\"",
        )
    })?;
    let id = raw.to_ascii_lowercase();
    let ok = !id.is_empty()
        && id.len() <= 128
        && id.split(['.', '_', '-']).all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        });
    if ok {
        Ok(id)
    } else {
        Err(PluginError::field(
            "id",
            format!(
                "{raw:?} is not a plugin id: letters and digits joined by `.`, `_` or `-` (e.g. com.author.my-plugin)"
            ),
        ))
    }
}

fn version(o: &Map<String, Value>, spec: u32) -> Result<String, PluginError> {
    let v = o
        .get("version")
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| PluginError::field("version", "is required: a non-empty string"))?;
    if spec >= 2 {
        semver::Version::parse(v).map_err(|e| {
            PluginError::field(
                "version",
                format!("{v:?} is not a valid SemVer version (major.minor.patch[-pre]): {e}"),
            )
        })?;
    }
    Ok(v.to_owned())
}

fn entry(
    o: &Map<String, Value>,
    warnings: &mut Vec<Warning>,
) -> Result<Option<String>, PluginError> {
    let entry = opt_path(o, "entry")?;
    let legacy = match o.get("scripts") {
        None | Some(Value::Null) => None,
        Some(Value::Object(s)) => match s.get("actions") {
            None | Some(Value::Null) => None,
            Some(Value::String(p)) => {
                check_path(p).map_err(|why| PluginError::field("scripts.actions", why))?;
                Some(p.clone())
            }
            Some(v) => {
                return Err(PluginError::field(
                    "scripts.actions",
                    format!("expected a path string, found {}", kind(v)),
                ));
            }
        },
        Some(v) => {
            return Err(PluginError::field(
                "scripts",
                format!("expected an object, found {}", kind(v)),
            ));
        }
    };
    if entry.is_some() && legacy.is_some() {
        warnings.push(Warning::at(
            "plugin.entry-alias",
            "scripts.actions",
            "is ignored: \"entry\" is set and wins",
        ));
    }
    Ok(entry.or(legacy))
}

fn min_app_version(
    o: &Map<String, Value>,
    spec: u32,
    warnings: &mut Vec<Warning>,
) -> Result<Option<String>, PluginError> {
    let Some(v) = o.get("minAppVersion").filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let s = v.as_str().ok_or_else(|| {
        PluginError::field(
            "minAppVersion",
            format!("expected a version string, found {}", kind(v)),
        )
    })?;
    if spec < 2 {
        warnings.push(Warning::at(
            "plugin.spec1-min-app",
            "minAppVersion",
            "is not enforced with specVersion 1",
        ));
        return Ok(Some(s.to_owned()));
    }
    let need = semver::Version::parse(s).map_err(|e| {
        PluginError::field(
            "minAppVersion",
            format!("{s:?} is not a valid SemVer version: {e}"),
        )
    })?;
    let have = semver::Version::parse(TAVO_COMPAT_VERSION).expect("TAVO_COMPAT_VERSION is SemVer");
    if need > have {
        return Err(PluginError::field(
            "minAppVersion",
            format!(
                "the plugin needs Tavo {s}; this tavo implements the Tavo {TAVO_COMPAT_VERSION} plugin API"
            ),
        ));
    }
    Ok(Some(s.to_owned()))
}

fn opt_string(o: &Map<String, Value>, field: &str) -> Result<Option<String>, PluginError> {
    match o.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(v) => Err(PluginError::field(
            field,
            format!("expected a string, found {}", kind(v)),
        )),
    }
}

pub(super) fn opt_path(o: &Map<String, Value>, field: &str) -> Result<Option<String>, PluginError> {
    let p = opt_string(o, field)?;
    if let Some(p) = &p {
        check_path(p).map_err(|why| PluginError::field(field, why))?;
    }
    Ok(p)
}

/// Warns about `{"$t"}` keys no catalog defines (they show as the key itself).
pub(super) fn check_keys_exist(m: &Manifest, catalogs: &Catalogs, warnings: &mut Vec<Warning>) {
    if m.spec_version < 2 {
        return;
    }
    let mut keys: Vec<&str> = Vec::new();
    keys.extend(m.name.key());
    keys.extend(m.description.as_ref().and_then(LocalText::key));
    for a in m
        .contributes
        .input_actions
        .iter()
        .chain(&m.contributes.sidebar)
    {
        keys.extend(a.label.key());
    }
    for el in &m.contributes.settings.elements {
        keys.extend(el.keys());
    }
    let missing: BTreeSet<&str> = keys
        .into_iter()
        .filter(|k| !catalogs.catalogs.values().any(|c| c.contains_key(*k)))
        .collect();
    if !missing.is_empty() {
        warnings.push(Warning::new(
            "plugin.key-missing",
            format!(
                "no catalog defines {}; these texts show as their key",
                missing.into_iter().collect::<Vec<_>>().join(", ")
            ),
        ));
    }
}
