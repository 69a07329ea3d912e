//! Spec 2 localisation (§6.5): locale tags, `{"$t": key}` texts, catalogs and the resolution
//! order requested locale (and compatible variants) → English → the plugin's `defaultLocale` →
//! the key itself.

use std::collections::BTreeMap;

use serde::{Serialize, Serializer};
use serde_json::Value;

use super::error::PluginError;
use super::paths::check_path;
use crate::error::Warning;

/// A text a manifest may localise: a literal string, or (spec 2 only) exactly `{"$t": key}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LocalText {
    /// Shown as written (even when it starts with `$`).
    Literal(String),
    /// Looked up in the catalogs.
    Key(String),
}

impl Serialize for LocalText {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            LocalText::Literal(t) => s.serialize_str(t),
            LocalText::Key(k) => {
                use serde::ser::SerializeMap;
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("$t", k)?;
                m.end()
            }
        }
    }
}

impl LocalText {
    /// Reads a localisable text at `field`. `spec` 1 accepts strings only.
    pub fn read(v: &Value, field: &str, spec: u32) -> Result<Self, PluginError> {
        match v {
            Value::String(s) => Ok(LocalText::Literal(s.clone())),
            Value::Object(m) if spec >= 2 => {
                let key = m.get("$t").and_then(Value::as_str);
                match key {
                    Some(k) if m.len() == 1 && !k.is_empty() => Ok(LocalText::Key(k.to_owned())),
                    Some("") => Err(PluginError::field(field, "the `$t` key is empty")),
                    _ => Err(PluginError::field(
                        field,
                        "a localised text is exactly {\"$t\": \"key\"} (no other fields)",
                    )),
                }
            }
            Value::Object(_) => Err(PluginError::field(
                field,
                "{\"$t\": …} texts need \"specVersion\": 2; specVersion 1 takes plain strings",
            )),
            other => Err(PluginError::field(
                field,
                format!("expected a string, found {}", kind(other)),
            )),
        }
    }

    /// The key, for a `{"$t"}` text.
    pub fn key(&self) -> Option<&str> {
        match self {
            LocalText::Key(k) => Some(k),
            LocalText::Literal(_) => None,
        }
    }
}

/// The manifest's `localization` block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Localization {
    /// Required in spec 2.
    pub default_locale: String,
    /// Locale tag → package path of its catalog.
    pub resources: BTreeMap<String, String>,
}

/// The catalogs that could be read, by locale tag as the manifest spells it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Catalogs {
    /// The plugin's `defaultLocale` (empty for spec 1).
    pub default_locale: String,
    /// Locale → key → text.
    pub catalogs: BTreeMap<String, BTreeMap<String, String>>,
}

/// Whether `tag` is a locale tag as Tavo writes them: hyphen-separated subtags (`en`, `en-US`,
/// `zh-Hans`); underscores are invalid.
pub fn is_locale_tag(tag: &str) -> bool {
    let mut parts = tag.split('-');
    let Some(lang) = parts.next() else {
        return false;
    };
    (2..=8).contains(&lang.len())
        && lang.bytes().all(|b| b.is_ascii_alphabetic())
        && parts.all(|p| (1..=8).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// Reads `localization` (spec 2: required).
pub(super) fn read_localization(
    v: Option<&Value>,
    spec: u32,
) -> Result<Option<Localization>, PluginError> {
    let Some(v) = v else {
        return if spec >= 2 {
            Err(PluginError::field(
                "localization",
                "is required with \"specVersion\": 2 ({\"defaultLocale\": \"en\", \"resources\": {…}})",
            ))
        } else {
            Ok(None)
        };
    };
    if spec < 2 {
        return Ok(None);
    }
    let obj = v.as_object().ok_or_else(|| {
        PluginError::field(
            "localization",
            format!("expected an object, found {}", kind(v)),
        )
    })?;
    let default_locale = obj
        .get("defaultLocale")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            PluginError::field(
                "localization.defaultLocale",
                "is required (a locale tag such as \"en\")",
            )
        })?;
    if !is_locale_tag(default_locale) {
        return Err(PluginError::field(
            "localization.defaultLocale",
            format!(
                "{default_locale:?} is not a locale tag (use hyphens: \"zh-CN\", not \"zh_CN\")"
            ),
        ));
    }
    let mut resources = BTreeMap::new();
    if let Some(res) = obj.get("resources") {
        let res = res.as_object().ok_or_else(|| {
            PluginError::field(
                "localization.resources",
                format!("expected an object, found {}", kind(res)),
            )
        })?;
        for (tag, path) in res {
            let field = format!("localization.resources.{tag}");
            if !is_locale_tag(tag) {
                return Err(PluginError::field(
                    field,
                    format!("{tag:?} is not a locale tag (use hyphens: \"zh-CN\", not \"zh_CN\")"),
                ));
            }
            let path = path.as_str().ok_or_else(|| {
                PluginError::field(&field, "expected the package path of a JSON catalog")
            })?;
            check_path(path).map_err(|p| PluginError::field(&field, p))?;
            resources.insert(tag.clone(), path.to_owned());
        }
    }
    Ok(Some(Localization {
        default_locale: default_locale.to_owned(),
        resources,
    }))
}

/// Reads every catalog the manifest lists; a missing or undecodable one is skipped with a
/// warning (Tavo falls back rather than refusing).
pub(super) fn read_catalogs(
    loc: &Localization,
    files: &BTreeMap<String, Vec<u8>>,
    warnings: &mut Vec<Warning>,
) -> Catalogs {
    let mut catalogs = BTreeMap::new();
    for (tag, path) in &loc.resources {
        match files.get(path).map(|b| parse_catalog(b)) {
            None => warnings.push(Warning::at(
                "plugin.catalog-missing",
                path,
                format!("the {tag} catalog is not in the package; its texts fall back"),
            )),
            Some(Err(why)) => warnings.push(Warning::at(
                "plugin.catalog-invalid",
                path,
                format!("the {tag} catalog was skipped: {why}"),
            )),
            Some(Ok(c)) => {
                catalogs.insert(tag.clone(), c);
            }
        }
    }
    if !catalogs.contains_key(&loc.default_locale) {
        warnings.push(Warning::at(
            "plugin.default-locale-catalog",
            "localization.defaultLocale",
            format!(
                "no readable catalog for the default locale {}",
                loc.default_locale
            ),
        ));
    }
    Catalogs {
        default_locale: loc.default_locale.clone(),
        catalogs,
    }
}

/// A catalog is a flat UTF-8 JSON object of non-empty string keys to string values.
fn parse_catalog(bytes: &[u8]) -> Result<BTreeMap<String, String>, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "not UTF-8".to_owned())?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let v: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let obj = v.as_object().ok_or("not a JSON object")?;
    let mut out = BTreeMap::new();
    for (k, v) in obj {
        if k.is_empty() {
            return Err("has an empty key".into());
        }
        let s = v
            .as_str()
            .ok_or_else(|| format!("the value of {k:?} is not a string (catalogs are flat)"))?;
        out.insert(k.clone(), s.to_owned());
    }
    Ok(out)
}

impl Catalogs {
    /// The catalog locales, sorted (`tavo.plugin.i18n.supportedLocales`).
    pub fn supported(&self) -> Vec<String> {
        self.catalogs.keys().cloned().collect()
    }

    /// The lookup chain for `requested`: the locale itself and its compatible variants (same tag
    /// ignoring case, then shorter prefixes, then siblings with the same language), English,
    /// the default locale. Only catalogs that exist are listed, each once.
    pub fn chain(&self, requested: &str) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        let mut tag = requested.replace('_', "-");
        loop {
            self.push_tag(&tag, &mut out);
            match tag.rfind('-') {
                Some(i) => tag.truncate(i),
                None => break,
            }
        }
        let lang = requested.split(['-', '_']).next().unwrap_or("");
        for k in self.catalogs.keys() {
            let k_lang = k.split('-').next().unwrap_or("");
            if !lang.is_empty() && k_lang.eq_ignore_ascii_case(lang) && !out.contains(&k.as_str()) {
                out.push(k.as_str());
            }
        }
        self.push_tag("en", &mut out);
        for k in self.catalogs.keys() {
            if k.starts_with("en-") && !out.contains(&k.as_str()) {
                out.push(k.as_str());
            }
        }
        self.push_tag(&self.default_locale, &mut out);
        out
    }

    /// Adds the catalog tag equal to `tag` (ignoring case) to `out`, once.
    fn push_tag<'a>(&'a self, tag: &str, out: &mut Vec<&'a str>) {
        let found = self.catalogs.get_key_value(tag).or_else(|| {
            self.catalogs
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(tag))
        });
        if let Some((k, _)) = found
            && !out.contains(&k.as_str())
        {
            out.push(k.as_str());
        }
    }

    /// The locale actually used for `requested` (`tavo.plugin.i18n.locale`): the first catalog
    /// of the chain, else the default locale.
    pub fn resolved_locale(&self, requested: &str) -> String {
        self.chain(requested)
            .first()
            .map(|s| (*s).to_owned())
            .unwrap_or_else(|| self.default_locale.clone())
    }

    /// Looks a key up along the chain; a key no catalog has is shown as itself.
    pub fn lookup(&self, key: &str, requested: &str) -> String {
        self.chain(requested)
            .into_iter()
            .find_map(|tag| self.catalogs.get(tag).and_then(|c| c.get(key)))
            .cloned()
            .unwrap_or_else(|| key.to_owned())
    }

    /// A text for `requested`.
    pub fn text(&self, t: &LocalText, requested: &str) -> String {
        match t {
            LocalText::Literal(s) => s.clone(),
            LocalText::Key(k) => self.lookup(k, requested),
        }
    }

    /// Every key merged along the chain, nearest catalog first: what the page's `t()` reads.
    pub fn merged(&self, requested: &str) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for tag in self.chain(requested).into_iter().rev() {
            if let Some(c) = self.catalogs.get(tag) {
                out.extend(c.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
        out
    }
}

pub(super) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cats() -> Catalogs {
        let mut c = Catalogs {
            default_locale: "fr".into(),
            ..Default::default()
        };
        for (tag, text) in [
            ("en", "Hello"),
            ("zh-CN", "你好"),
            ("fr", "Bonjour"),
            ("zh-Hans", "你好呀"),
        ] {
            c.catalogs.insert(
                tag.into(),
                BTreeMap::from([("hi".to_owned(), text.to_owned())]),
            );
        }
        c.catalogs
            .get_mut("fr")
            .unwrap()
            .insert("only_fr".into(), "Seulement".into());
        c
    }

    #[test]
    fn resolution_order_is_requested_then_english_then_default_then_key() {
        let c = cats();
        assert_eq!(c.lookup("hi", "zh-CN"), "你好");
        assert_eq!(c.lookup("hi", "zh-cn"), "你好");
        assert_eq!(c.lookup("hi", "zh-Hans-CN"), "你好呀");
        assert_eq!(c.lookup("hi", "zh-TW"), "你好"); // a sibling of the same language
        assert_eq!(c.lookup("hi", "de"), "Hello");
        assert_eq!(c.lookup("only_fr", "de"), "Seulement");
        assert_eq!(c.lookup("nope", "de"), "nope");
        assert_eq!(c.resolved_locale("de"), "en");
    }

    #[test]
    fn locale_tags_use_hyphens() {
        assert!(is_locale_tag("en") && is_locale_tag("zh-Hans") && is_locale_tag("en-US"));
        assert!(!is_locale_tag("zh_CN") && !is_locale_tag("") && !is_locale_tag("e"));
    }

    #[test]
    fn only_exact_t_objects_translate() {
        let t = |v: Value| LocalText::read(&v, "name", 2);
        assert_eq!(
            t(serde_json::json!({"$t": "k"})),
            Ok(LocalText::Key("k".into()))
        );
        assert_eq!(
            t(serde_json::json!("$t")),
            Ok(LocalText::Literal("$t".into()))
        );
        assert!(t(serde_json::json!({"$t": "k", "x": 1})).is_err());
        assert!(t(serde_json::json!({"$t": ""})).is_err());
        assert!(LocalText::read(&serde_json::json!({"$t": "k"}), "name", 1).is_err());
    }
}
