//! The media connection book: named provider endpoints for one kind of media (images, voices),
//! stored as one settings JSON value `{connections: [{name, platform, baseUrl, model, apiKey?,
//! apiKeyEnv?, options: {}}], default}`.
//!
//! Generic over a [`Platform`] enum, so the image book (`image.connections`) and the voice book
//! (`tts.connections`) share the code. As with chat connections ([`crate::connection`]) keys
//! are kept with the data and never shown: every view goes through [`MediaConnection::masked`]
//! or [`MediaBook::masked`]. Errors name the field (`baseUrl`, `options.quality`, …).

use std::fmt::Debug;
use std::hash::Hash;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

pub use crate::connection::{KeyChange, mask_key};

/// A media platform enum (the wire protocol a connection speaks).
///
/// `Serialize`/`Deserialize` must use the platform's lower-case id (`openai`, `gemini`, …).
pub trait Platform:
    Copy + Debug + PartialEq + Eq + Hash + Serialize + DeserializeOwned + Send + Sync + 'static
{
    /// The settings key the book of this kind is stored under (`image.connections`).
    const SETTINGS_KEY: &'static str;
    /// The CLI command that manages the book (`tavo image connection`), for hints in errors.
    const COMMAND: &'static str;

    /// Every platform, in documentation order.
    fn all() -> &'static [Self];

    /// The platform's id (`openai`).
    fn id(self) -> &'static str;

    /// The base URL used when a connection is added without one, if the platform has a
    /// well-known endpoint.
    fn default_base_url(self) -> Option<&'static str>;

    /// The platform with this id.
    fn parse(id: &str) -> Result<Self, MediaBookError> {
        let id = id.trim().to_ascii_lowercase();
        Self::all()
            .iter()
            .copied()
            .find(|p| p.id() == id)
            .ok_or_else(|| {
                MediaBookError::invalid(
                    "platform",
                    format!(
                        "`{id}` is not a platform (one of {})",
                        Self::all()
                            .iter()
                            .map(|p| p.id())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            })
    }
}

/// One media connection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", bound = "P: Platform")]
pub struct MediaConnection<P: Platform> {
    /// The user's name for it, unique in its book; doors pick a connection by it.
    pub name: String,
    /// The platform whose codec builds the requests.
    pub platform: P,
    /// The API base the codec joins its path to (`{base}/images/generations`);
    /// [`MediaConnection::new`] starts from [`Platform::default_base_url`].
    pub base_url: String,
    /// The platform's model id (`gpt-image-1`, `nai-diffusion-4-full`, ...); never empty.
    pub model: String,
    /// The key itself, stored with the data. Never printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    /// Or the name of an environment variable holding it (read at request time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Platform options (default size, quality, voice, sampler, …), passed to the codec.
    #[serde(default)]
    pub options: Map<String, Value>,
}

/// Problems with media connections. Every message names the field or the connection.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MediaBookError {
    /// A field's value is refused: `field` is its path (`baseUrl`, `options.size`).
    #[error("{field}: {problem}")]
    Invalid {
        /// The field's JSON path.
        field: String,
        /// What is wrong with the value, as a sentence fragment after the path.
        problem: String,
    },
    /// No connection has this name.
    #[error("no connection named `{name}` (see `{command} list`)")]
    NotFound {
        /// The name asked for.
        name: String,
        /// The book's CLI command ([`Platform::COMMAND`]), for the hint.
        command: &'static str,
    },
    /// Another connection already has this name.
    #[error("a connection named `{0}` already exists; remove it first or pick another name")]
    Exists(String),
    /// No connection was named and the book has no default.
    #[error(
        "no default connection: add one with `{command} add ... --default` or set one with `{command} default NAME`"
    )]
    NoDefault {
        /// The book's CLI command ([`Platform::COMMAND`]), for the hint.
        command: &'static str,
    },
    /// The key is to come from an environment variable that is not set.
    #[error("connection `{name}`: apiKeyEnv names ${var}, which is not set")]
    MissingEnv {
        /// The connection's name.
        name: String,
        /// The variable its `apiKeyEnv` names.
        var: String,
    },
}

impl MediaBookError {
    /// An [`MediaBookError::Invalid`] for `field`.
    pub fn invalid(field: impl Into<String>, problem: impl Into<String>) -> Self {
        Self::Invalid {
            field: field.into(),
            problem: problem.into(),
        }
    }

    /// True for "no such connection" and "no default connection" (a door answers 404).
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::NotFound { .. } | Self::NoDefault { .. })
    }

    /// The field path of an invalid value.
    pub fn field(&self) -> Option<&str> {
        match self {
            Self::Invalid { field, .. } => Some(field),
            Self::Exists(_) => Some("name"),
            _ => None,
        }
    }
}

impl<P: Platform> MediaConnection<P> {
    /// A connection with the platform's default base URL (empty when it has none) and no key.
    pub fn new(name: impl Into<String>, platform: P, model: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            platform,
            base_url: platform.default_base_url().unwrap_or_default().to_owned(),
            model: model.into(),
            api_key: None,
            api_key_env: None,
            options: Map::new(),
        }
    }

    /// Checks the fields a request needs; the error names the field.
    pub fn validate(&self) -> Result<(), MediaBookError> {
        if self.name.trim().is_empty() {
            return Err(MediaBookError::invalid("name", "must not be empty"));
        }
        if self.name.chars().any(char::is_control) {
            return Err(MediaBookError::invalid(
                "name",
                "must not contain control characters",
            ));
        }
        if self.model.trim().is_empty() {
            return Err(MediaBookError::invalid(
                "model",
                format!("connection `{}`: must not be empty", self.name),
            ));
        }
        match url::Url::parse(&self.base_url) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => {}
            _ => {
                return Err(MediaBookError::invalid(
                    "baseUrl",
                    format!(
                        "connection `{}`: `{}` is not an http(s) URL",
                        self.name, self.base_url
                    ),
                ));
            }
        }
        if let Some(var) = &self.api_key_env
            && (var.is_empty() || var.contains(['=', '\0']))
        {
            return Err(MediaBookError::invalid(
                "apiKeyEnv",
                "must be an environment variable name",
            ));
        }
        Ok(())
    }

    /// The key to send: the stored one, else the named environment variable.
    pub fn resolve_key(&self) -> Result<Option<String>, MediaBookError> {
        if let Some(k) = &self.api_key {
            return Ok(Some(k.clone()));
        }
        match &self.api_key_env {
            Some(var) => std::env::var(var)
                .map(Some)
                .map_err(|_| MediaBookError::MissingEnv {
                    name: self.name.clone(),
                    var: var.clone(),
                }),
            None => Ok(None),
        }
    }

    /// The connection as JSON with the key masked (`hasKey` says whether one is stored).
    pub fn masked(&self) -> Value {
        let mut v = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Some(k) = &self.api_key {
            v["apiKey"] = json!(mask_key(k));
        }
        v["hasKey"] = json!(self.api_key.is_some() || self.api_key_env.is_some());
        v
    }

    /// The base URL without a trailing slash, for joining paths.
    pub fn base(&self) -> &str {
        self.base_url.trim_end_matches('/')
    }
}

/// The fields of a connection to change; `None` leaves a field as it is.
#[derive(Debug, Clone, PartialEq)]
pub struct MediaPatch<P: Platform> {
    /// A new name (the default follows a renamed default connection).
    pub name: Option<String>,
    /// A new platform. The base URL and options are not touched, so patch them too when they
    /// belong to the old platform.
    pub platform: Option<P>,
    /// A new base URL (validated like a new connection's).
    pub base_url: Option<String>,
    /// A new model id.
    pub model: Option<String>,
    /// A new key, key variable, or no key; `None` keeps the current one.
    pub key: Option<KeyChange>,
    /// Options to set (merged over the existing ones; a `null` value removes the option).
    pub options: Map<String, Value>,
    /// Options to remove, by name.
    pub unset: Vec<String>,
    /// Make it the default connection.
    pub make_default: bool,
}

impl<P: Platform> Default for MediaPatch<P> {
    fn default() -> Self {
        Self {
            name: None,
            platform: None,
            base_url: None,
            model: None,
            key: None,
            options: Map::new(),
            unset: Vec::new(),
            make_default: false,
        }
    }
}

/// All media connections of one kind and which one is the default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", bound = "P: Platform")]
pub struct MediaBook<P: Platform> {
    /// Every connection, in the order they were added.
    #[serde(default)]
    pub connections: Vec<MediaConnection<P>>,
    /// The name of the connection used when none is named ([`MediaBook::pick`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

impl<P: Platform> Default for MediaBook<P> {
    fn default() -> Self {
        Self {
            connections: Vec::new(),
            default: None,
        }
    }
}

impl<P: Platform> MediaBook<P> {
    /// Reads the book from its settings value (`None`: no connections yet).
    pub fn from_setting(value: Option<Value>) -> Result<Self, MediaBookError> {
        match value {
            None | Some(Value::Null) => Ok(Self::default()),
            Some(v) => serde_json::from_value(v).map_err(|e| {
                MediaBookError::invalid(
                    P::SETTINGS_KEY,
                    format!("the setting is not a connection book: {e}"),
                )
            }),
        }
    }

    /// The value to store under [`Platform::SETTINGS_KEY`].
    pub fn to_setting(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The whole book as JSON with every key masked.
    pub fn masked(&self) -> Value {
        json!({
            "connections": self.connections.iter().map(MediaConnection::masked).collect::<Vec<_>>(),
            "default": self.default,
        })
    }

    fn not_found(name: &str) -> MediaBookError {
        MediaBookError::NotFound {
            name: name.to_owned(),
            command: P::COMMAND,
        }
    }

    /// Adds a validated connection; the first one becomes the default.
    pub fn add(&mut self, c: MediaConnection<P>, make_default: bool) -> Result<(), MediaBookError> {
        c.validate()?;
        if self.get(&c.name).is_ok() {
            return Err(MediaBookError::Exists(c.name));
        }
        if make_default || self.default.is_none() {
            self.default = Some(c.name.clone());
        }
        self.connections.push(c);
        Ok(())
    }

    /// The connection with this name.
    pub fn get(&self, name: &str) -> Result<&MediaConnection<P>, MediaBookError> {
        self.connections
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| Self::not_found(name))
    }

    /// Removes a connection; when it was the default, no connection is default afterwards.
    pub fn remove(&mut self, name: &str) -> Result<MediaConnection<P>, MediaBookError> {
        let pos = self
            .connections
            .iter()
            .position(|c| c.name == name)
            .ok_or_else(|| Self::not_found(name))?;
        if self.default.as_deref() == Some(name) {
            self.default = None;
        }
        Ok(self.connections.remove(pos))
    }

    /// Makes `name` the default connection.
    pub fn set_default(&mut self, name: &str) -> Result<(), MediaBookError> {
        self.get(name)?;
        self.default = Some(name.to_owned());
        Ok(())
    }

    /// Changes the fields `patch` names on connection `name`, in place (the list keeps its
    /// order). The changed connection is validated whole before anything changes, so an error
    /// (naming the field) leaves the book as it was.
    pub fn update(
        &mut self,
        name: &str,
        patch: MediaPatch<P>,
    ) -> Result<&MediaConnection<P>, MediaBookError> {
        let pos = self
            .connections
            .iter()
            .position(|c| c.name == name)
            .ok_or_else(|| Self::not_found(name))?;
        let mut c = self.connections[pos].clone();
        if let Some(new) = patch.name {
            if new != name && self.get(&new).is_ok() {
                return Err(MediaBookError::Exists(new));
            }
            c.name = new;
        }
        if let Some(platform) = patch.platform {
            c.platform = platform;
        }
        if let Some(base_url) = patch.base_url {
            c.base_url = base_url;
        }
        if let Some(model) = patch.model {
            c.model = model;
        }
        match patch.key {
            Some(KeyChange::Key(key)) => (c.api_key, c.api_key_env) = (Some(key), None),
            Some(KeyChange::Env(var)) => (c.api_key, c.api_key_env) = (None, Some(var)),
            Some(KeyChange::None) => (c.api_key, c.api_key_env) = (None, None),
            None => {}
        }
        for key in &patch.unset {
            if c.options.remove(key).is_none() {
                return Err(MediaBookError::invalid(
                    format!("options.{key}"),
                    format!("connection `{}` has no such option", c.name),
                ));
            }
        }
        for (key, value) in patch.options {
            if value.is_null() {
                c.options.remove(&key);
            } else {
                c.options.insert(key, value);
            }
        }
        c.validate()?;
        if patch.make_default || self.default.as_deref() == Some(name) {
            self.default = Some(c.name.clone());
        }
        self.connections[pos] = c;
        Ok(&self.connections[pos])
    }

    /// The named connection, or the default one when `name` is `None`.
    pub fn pick(&self, name: Option<&str>) -> Result<&MediaConnection<P>, MediaBookError> {
        match name.or(self.default.as_deref()) {
            Some(n) => self.get(n),
            None => Err(MediaBookError::NoDefault {
                command: P::COMMAND,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "lowercase")]
    enum Test {
        Alpha,
        Beta,
    }

    impl Platform for Test {
        const SETTINGS_KEY: &'static str = "test.connections";
        const COMMAND: &'static str = "tavo test connection";
        fn all() -> &'static [Self] {
            &[Test::Alpha, Test::Beta]
        }
        fn id(self) -> &'static str {
            match self {
                Test::Alpha => "alpha",
                Test::Beta => "beta",
            }
        }
        fn default_base_url(self) -> Option<&'static str> {
            match self {
                Test::Alpha => Some("https://alpha.example/v1"),
                Test::Beta => None,
            }
        }
    }

    fn conn(name: &str) -> MediaConnection<Test> {
        MediaConnection {
            name: name.into(),
            platform: Test::Beta,
            base_url: "http://127.0.0.1:8080/v1".into(),
            model: "m".into(),
            api_key: Some("sk-0123456789abcdef".into()),
            api_key_env: None,
            options: Map::new(),
        }
    }

    #[test]
    fn the_setting_shape_is_the_contract() {
        let mut book = MediaBook::<Test>::default();
        let mut c = conn("a");
        c.options.insert("size".into(), json!("512x512"));
        book.add(c, false).expect("add");
        let v = book.to_setting();
        assert_eq!(
            v,
            json!({"connections": [{"name": "a", "platform": "beta",
                "baseUrl": "http://127.0.0.1:8080/v1", "model": "m",
                "apiKey": "sk-0123456789abcdef", "options": {"size": "512x512"}}],
                "default": "a"})
        );
        let back = MediaBook::<Test>::from_setting(Some(v)).expect("read back");
        assert_eq!(back, book);
        let bad =
            MediaBook::<Test>::from_setting(Some(json!({"connections": 3}))).expect_err("refused");
        assert_eq!(bad.field(), Some("test.connections"));
    }

    #[test]
    fn keys_never_show_in_views() {
        let mut book = MediaBook::<Test>::default();
        book.add(conn("a"), false).expect("add");
        let v = book.masked();
        assert_eq!(v["connections"][0]["apiKey"], "sk-…cdef");
        assert_eq!(v["connections"][0]["hasKey"], true);
        assert!(!v.to_string().contains("0123456789"));
    }

    #[test]
    fn add_default_remove_pick() {
        let mut b = MediaBook::<Test>::default();
        b.add(conn("a"), false).expect("add");
        assert_eq!(b.default.as_deref(), Some("a"), "the first is the default");
        b.add(conn("b"), true).expect("add");
        assert_eq!(b.default.as_deref(), Some("b"));
        assert_eq!(
            b.add(conn("a"), false),
            Err(MediaBookError::Exists("a".into()))
        );
        b.remove("b").expect("removed");
        let e = b.pick(None).expect_err("no default");
        assert!(e.is_not_found() && e.to_string().contains("tavo test connection default"));
        assert_eq!(b.pick(Some("a")).map(|c| c.name.as_str()), Ok("a"));
        let e = b.get("zz").expect_err("missing");
        assert!(e.is_not_found() && e.to_string().contains("`zz`"), "{e}");
        b.set_default("a").expect("default");
        assert!(b.set_default("zz").is_err());
    }

    #[test]
    fn validation_and_updates_name_the_field_and_change_nothing_on_error() {
        let mut book = MediaBook::<Test>::default();
        book.add(conn("a"), true).expect("add");
        book.add(conn("b"), false).expect("add");
        let before = book.clone();
        let cases: Vec<(&str, MediaPatch<Test>, &str)> = vec![
            (
                "b",
                MediaPatch {
                    name: Some("a".into()),
                    ..MediaPatch::default()
                },
                "name",
            ),
            (
                "b",
                MediaPatch {
                    base_url: Some("ftp://x".into()),
                    ..MediaPatch::default()
                },
                "baseUrl",
            ),
            (
                "b",
                MediaPatch {
                    model: Some(" ".into()),
                    ..MediaPatch::default()
                },
                "model",
            ),
            (
                "b",
                MediaPatch {
                    unset: vec!["quality".into()],
                    ..MediaPatch::default()
                },
                "options.quality",
            ),
        ];
        for (name, patch, field) in cases {
            let e = book.update(name, patch).expect_err("refused");
            assert_eq!(e.field(), Some(field), "{e}");
            assert_eq!(book, before, "{field}: nothing changed");
        }
        let mut options = Map::new();
        options.insert("quality".into(), json!("hd"));
        let c = book
            .update(
                "a",
                MediaPatch {
                    name: Some("main".into()),
                    platform: Some(Test::Alpha),
                    key: Some(KeyChange::Env("IMG_KEY".into())),
                    options,
                    ..MediaPatch::default()
                },
            )
            .expect("updated")
            .clone();
        assert_eq!(c.platform, Test::Alpha);
        assert_eq!(
            (c.api_key, c.api_key_env.as_deref()),
            (None, Some("IMG_KEY"))
        );
        assert_eq!(c.options["quality"], "hd");
        assert_eq!(book.default.as_deref(), Some("main"), "the default follows");
        let names: Vec<_> = book.connections.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["main", "b"], "the order is kept");
        let mut options = Map::new();
        options.insert("quality".into(), Value::Null);
        let c = book
            .update(
                "main",
                MediaPatch {
                    options,
                    ..MediaPatch::default()
                },
            )
            .expect("updated");
        assert!(c.options.is_empty(), "null removes an option");
    }

    #[test]
    fn platforms_parse_by_id_and_new_uses_the_default_base() {
        assert_eq!(Test::parse("Alpha"), Ok(Test::Alpha));
        let e = Test::parse("gamma").expect_err("refused");
        assert_eq!(e.field(), Some("platform"));
        assert!(e.to_string().contains("alpha, beta"), "{e}");
        let c = MediaConnection::new("x", Test::Alpha, "m");
        assert_eq!(c.base_url, "https://alpha.example/v1");
        assert!(c.validate().is_ok());
        let c = MediaConnection::new("x", Test::Beta, "m");
        assert_eq!(c.validate().expect_err("no base").field(), Some("baseUrl"));
    }
}
