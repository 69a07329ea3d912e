//! `contributes` (§6.6): input actions, sidebar rows, HTML fragments with their mounts, and the
//! settings schema — the shapes, and the refusal of any field or contribution Tavo does not define.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::{Map, Value};

use super::error::PluginError;
use super::i18n::{LocalText, kind};
use super::manifest::opt_path;
use super::paths::check_path;
use super::settings::{self, SettingsSchema};

/// `contributes`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Contributes {
    /// The composer "+" menu.
    pub input_actions: Vec<PluginAction>,
    /// Rows in the chat's right sidebar.
    pub sidebar: Vec<PluginAction>,
    /// HTML mounted in the chat or on messages.
    pub html_fragments: Vec<Fragment>,
    /// The settings page.
    pub settings: SettingsSchema,
}

/// An input or sidebar action.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginAction {
    /// Matched exactly (case, hyphens) by `onInputAction` / `onSidebarAction`.
    pub id: String,
    /// Single-line label.
    pub label: LocalText,
    /// Package image path (input actions only; a missing file falls back to the default icon).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icon: Option<String>,
}

/// An HTML fragment.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Fragment {
    /// Fragment id (`tavo.plugin.fragmentId`).
    pub id: String,
    /// Package path of the UTF-8 HTML.
    pub src: String,
    /// Where it is mounted.
    pub mount: Mount,
}

/// A parsed mount: the point (aliases resolved: `/chat` = `/chat/body/end`, `/messages` =
/// `/messages/end`) and the `/messages` filters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Mount {
    /// As the manifest wrote it.
    pub raw: String,
    /// `/chat/head/start`, `/chat/head/end`, `/chat/body/start`, `/chat/body/end`,
    /// `/messages/start` or `/messages/end`.
    pub point: String,
    /// `user` or `character` (`/messages` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// `first` or `last` (`/messages` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub position: Option<String>,
}

impl Mount {
    /// Parses a mount string; the error is the problem.
    pub fn parse(raw: &str) -> Result<Mount, String> {
        let (path, query) = raw.split_once('?').unwrap_or((raw, ""));
        let point = match path {
            "/chat" | "/chat/body/end" => "/chat/body/end",
            "/chat/head/start" | "/chat/head/end" | "/chat/body/start" => path,
            "/messages" | "/messages/end" => "/messages/end",
            "/messages/start" => path,
            _ => {
                return Err(format!(
                    "{path:?} is not a mount (/chat, /chat/head/start, /chat/head/end, /chat/body/start, \
                     /chat/body/end, /messages, /messages/start, /messages/end)"
                ));
            }
        };
        let mut mount = Mount {
            raw: raw.to_owned(),
            point: point.to_owned(),
            role: None,
            position: None,
        };
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            if !point.starts_with("/messages") {
                return Err(format!(
                    "{path} takes no query; role and position filter /messages mounts"
                ));
            }
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            match (k, v) {
                ("role", "user" | "character") if mount.role.is_none() => {
                    mount.role = Some(v.to_owned())
                }
                ("position", "first" | "last") if mount.position.is_none() => {
                    mount.position = Some(v.to_owned())
                }
                ("role", _) => {
                    return Err(format!(
                        "role={v:?}: expected role=user or role=character, once"
                    ));
                }
                ("position", _) => {
                    return Err(format!(
                        "position={v:?}: expected position=first or position=last, once"
                    ));
                }
                _ => return Err(format!("{k:?} is not a mount filter (role, position)")),
            }
        }
        Ok(mount)
    }
}

pub(super) fn contributes(v: Option<&Value>, spec: u32) -> Result<Contributes, PluginError> {
    let Some(v) = v.filter(|v| !v.is_null()) else {
        return Ok(Contributes::default());
    };
    let o = v.as_object().ok_or_else(|| {
        PluginError::field(
            "contributes",
            format!("expected an object, found {}", kind(v)),
        )
    })?;
    let mut c = Contributes::default();
    for (k, v) in o {
        match k.as_str() {
            "inputActions" => c.input_actions = actions(v, "contributes.inputActions", spec, true)?,
            "sidebar" => c.sidebar = actions(v, "contributes.sidebar", spec, false)?,
            "htmlFragments" => c.html_fragments = fragments(v)?,
            "settings" => c.settings = settings::read(v, spec)?,
            other => {
                return Err(PluginError::field(
                    format!("contributes.{other}"),
                    "is not a contribution this version supports (inputActions, sidebar, htmlFragments, settings)",
                ));
            }
        }
    }
    Ok(c)
}

fn items<'a>(v: &'a Value, base: &str) -> Result<&'a Vec<Value>, PluginError> {
    v.as_array()
        .ok_or_else(|| PluginError::field(base, format!("expected an array, found {}", kind(v))))
}

fn item_id(
    o: &Map<String, Value>,
    field: &str,
    seen: &mut BTreeSet<String>,
) -> Result<String, PluginError> {
    let id = match o.get("id").and_then(Value::as_str) {
        Some(id) if !id.is_empty() && id.len() <= 128 && !id.chars().any(char::is_whitespace) => {
            id.to_owned()
        }
        _ => {
            return Err(PluginError::field(
                format!("{field}.id"),
                "is required: a non-empty id without spaces",
            ));
        }
    };
    if !seen.insert(id.clone()) {
        return Err(PluginError::field(
            format!("{field}.id"),
            format!("{id:?} is used twice"),
        ));
    }
    Ok(id)
}

fn only_fields(o: &Map<String, Value>, field: &str, allowed: &[&str]) -> Result<(), PluginError> {
    match o.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(PluginError::field(
            format!("{field}.{k}"),
            format!("is not supported here (fields: {})", allowed.join(", ")),
        )),
        None => Ok(()),
    }
}

fn actions(
    v: &Value,
    base: &str,
    spec: u32,
    icons: bool,
) -> Result<Vec<PluginAction>, PluginError> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for (i, a) in items(v, base)?.iter().enumerate() {
        let field = format!("{base}[{i}]");
        let o = a.as_object().ok_or_else(|| {
            PluginError::field(&field, format!("expected an object, found {}", kind(a)))
        })?;
        only_fields(
            o,
            &field,
            if icons {
                &["id", "label", "icon"]
            } else {
                &["id", "label"]
            },
        )?;
        let id = item_id(o, &field, &mut seen)?;
        let label = o
            .get("label")
            .ok_or_else(|| PluginError::field(format!("{field}.label"), "is required"))?;
        let label = LocalText::read(label, &format!("{field}.label"), spec)?;
        let icon = if icons {
            opt_path(o, "icon").map_err(|mut e| {
                e.field = format!("{field}.{}", e.field);
                e
            })?
        } else {
            None
        };
        out.push(PluginAction { id, label, icon });
    }
    Ok(out)
}

fn fragments(v: &Value) -> Result<Vec<Fragment>, PluginError> {
    let base = "contributes.htmlFragments";
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for (i, a) in items(v, base)?.iter().enumerate() {
        let field = format!("{base}[{i}]");
        let o = a.as_object().ok_or_else(|| {
            PluginError::field(&field, format!("expected an object, found {}", kind(a)))
        })?;
        only_fields(o, &field, &["id", "src", "mount"])?;
        let id = item_id(o, &field, &mut seen)?;
        let src = o.get("src").and_then(Value::as_str).ok_or_else(|| {
            PluginError::field(
                format!("{field}.src"),
                "is required: the package path of an HTML file",
            )
        })?;
        check_path(src).map_err(|why| PluginError::field(format!("{field}.src"), why))?;
        let mount = o.get("mount").and_then(Value::as_str).ok_or_else(|| {
            PluginError::field(
                format!("{field}.mount"),
                "is required (e.g. \"/chat\" or \"/messages?role=character\")",
            )
        })?;
        let mount =
            Mount::parse(mount).map_err(|why| PluginError::field(format!("{field}.mount"), why))?;
        out.push(Fragment {
            id,
            src: src.to_owned(),
            mount,
        });
    }
    Ok(out)
}
