//! What the doors answer about a plugin: the list row, the full view and the settings values,
//! with every `{"$t"}` text resolved for the caller's locale.

use serde::Serialize;
use serde_json::{Map, Value, json};
use tavo_formats::plugin::settings::effective;
use tavo_formats::plugin::{Catalogs, Manifest};
use tavo_store::PluginRow;

use super::Loaded;

/// A plugin as lists show it (`tavo plugin list --json`, `GET /api/plugins`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginSummary {
    /// Manifest id.
    pub id: String,
    /// Name for the locale.
    pub name: String,
    /// Manifest version.
    pub version: String,
    /// 1 or 2.
    pub spec_version: u32,
    /// Whether it runs.
    pub enabled: bool,
    /// Author, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// Description for the locale, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether the package has its cover image (`GET /api/plugins/{id}/files/{cover}`).
    pub has_cover: bool,
    /// The cover's package path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cover: Option<String>,
    /// Declared permissions (author intent; not enforced, as in Tavo).
    pub permissions: Vec<String>,
    /// Function tags: what the plugin touches (`inputActions`, `sidebar`, `htmlFragments`,
    /// `settings`, `hooks`).
    pub tags: Vec<&'static str>,
    /// First install.
    pub installed_at: String,
    /// Last change.
    pub updated_at: String,
}

impl PluginSummary {
    pub(crate) fn new(
        row: &PluginRow,
        m: &Manifest,
        catalogs: &Catalogs,
        locale: &str,
        has_cover: bool,
    ) -> Self {
        let c = &m.contributes;
        let mut tags = Vec::new();
        for (on, tag) in [
            (!c.input_actions.is_empty(), "inputActions"),
            (!c.sidebar.is_empty(), "sidebar"),
            (!c.html_fragments.is_empty(), "htmlFragments"),
            (!c.settings.elements.is_empty(), "settings"),
            (m.entry.is_some(), "hooks"),
        ] {
            if on {
                tags.push(tag);
            }
        }
        Self {
            id: row.id.clone(),
            name: catalogs.text(&m.name, locale),
            version: row.version.clone(),
            spec_version: row.spec_version,
            enabled: row.enabled,
            author: m.author.clone(),
            description: m.description.as_ref().map(|d| catalogs.text(d, locale)),
            has_cover,
            cover: m.cover.clone(),
            permissions: m.permissions.clone(),
            tags,
            installed_at: row.installed_at.clone(),
            updated_at: row.updated_at.clone(),
        }
    }

    pub(crate) fn of(l: &Loaded, locale: &str) -> Self {
        let has_cover = l
            .manifest
            .cover
            .as_ref()
            .is_some_and(|c| l.paths.iter().any(|p| p == c));
        Self::new(&l.row, &l.manifest, &l.catalogs, locale, has_cover)
    }

    /// Whether a lower-cased query matches id, name, author, description or version.
    pub(crate) fn matches(&self, q: &str) -> bool {
        [
            Some(&self.id),
            Some(&self.name),
            self.author.as_ref(),
            self.description.as_ref(),
            Some(&self.version),
        ]
        .into_iter()
        .flatten()
        .any(|f| f.to_lowercase().contains(q))
    }
}

/// A plugin's settings values.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigView {
    /// Saved value → schema default → `null`, for every schema key (`tavo.plugin.config.all()`).
    pub config: Map<String, Value>,
    /// Only what the user saved.
    pub overrides: Map<String, Value>,
}

impl ConfigView {
    pub(crate) fn of(l: &Loaded, locale: &str) -> Self {
        Self {
            config: effective(
                &l.manifest.contributes.settings,
                &l.row.config,
                &l.catalogs,
                locale,
            ),
            overrides: l.row.config.clone(),
        }
    }
}

/// A plugin in full (`GET /api/plugins/{id}`, `tavo_plugin_get`, and what the app runs).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginDetail {
    /// The list row.
    #[serde(flatten)]
    pub summary: PluginSummary,
    /// `manifest.json` as installed.
    pub manifest: Value,
    /// The entry script's package path.
    pub entry: Option<String>,
    /// Contributions with texts resolved: `inputActions`, `sidebar`, `htmlFragments` (with the
    /// parsed mount) and `settings.schema`.
    pub contributes: Value,
    /// Settings values.
    #[serde(flatten)]
    pub config: ConfigView,
    /// Spec 2 localisation for `tavo.plugin.i18n`; `null` for spec 1.
    pub i18n: Option<Value>,
    /// Package file paths.
    pub files: Vec<String>,
}

impl PluginDetail {
    pub(crate) fn of(l: &Loaded, locale: &str) -> Self {
        let m = &l.manifest;
        let cats = &l.catalogs;
        let action = |a: &tavo_formats::plugin::PluginAction| {
            let mut v = json!({"id": a.id, "label": cats.text(&a.label, locale)});
            if let Some(icon) = &a.icon {
                v["icon"] = json!(icon);
                v["hasIcon"] = json!(l.paths.iter().any(|p| p == icon));
            }
            v
        };
        let contributes = json!({
            "inputActions": m.contributes.input_actions.iter().map(action).collect::<Vec<_>>(),
            "sidebar": m.contributes.sidebar.iter().map(action).collect::<Vec<_>>(),
            "htmlFragments": m.contributes.html_fragments.iter()
                .filter(|f| l.paths.contains(&f.src))
                .map(|f| json!({"id": f.id, "src": f.src, "mount": f.mount.raw, "point": f.mount.point,
                                "role": f.mount.role, "position": f.mount.position}))
                .collect::<Vec<_>>(),
            "settings": {"schema": m.contributes.settings.elements.iter().map(|e| e.resolved(cats, locale)).collect::<Vec<_>>()},
        });
        let i18n = (m.spec_version >= 2).then(|| {
            json!({
                "defaultLocale": cats.default_locale,
                "requestedLocale": locale,
                "locale": cats.resolved_locale(locale),
                "supportedLocales": cats.supported(),
                "catalog": cats.merged(locale),
                "catalogs": cats.catalogs,
            })
        });
        Self {
            summary: PluginSummary::of(l, locale),
            manifest: l.row.manifest.clone(),
            entry: m.entry.clone(),
            contributes,
            config: ConfigView::of(l, locale),
            i18n,
            files: l.paths.clone(),
        }
    }
}
