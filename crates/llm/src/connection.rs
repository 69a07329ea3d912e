//! Connections: a named provider endpoint (source, protocol, base URL, model, key) with its own
//! model parameters, which override the global ones (Tavo §13.3).
//!
//! Persistence is not this crate's business: the whole [`ConnectionBook`] is one JSON value the
//! caller keeps under [`SETTINGS_KEY`] in the store's settings. Keys are kept with the data (as
//! Tavo does) and never shown: every view goes through [`Connection::masked`].

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::protocol::Protocol;
use crate::request::ChatRequest;

/// The settings key under which the connection book is stored.
pub const SETTINGS_KEY: &str = "llm.connections";

/// Model parameters. `None` means "not set here" (fall back to the global value).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Parameters {
    /// Sampling temperature, 0 to 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Nucleus sampling mass, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Top-k sampling; not every protocol takes it (see
    /// [`Sampling`](crate::request::Sampling)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_k: Option<u32>,
    /// Reply length limit in tokens, at least 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// Streaming on/off (Tavo's advice for an empty reply: turn streaming off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    /// Context memory length in tokens: the prompt builder's budget, not sent to the provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_length: Option<u32>,
}

impl Parameters {
    /// These parameters over `global`: every value set here wins.
    pub fn over(&self, global: &Parameters) -> Parameters {
        Parameters {
            temperature: self.temperature.or(global.temperature),
            top_p: self.top_p.or(global.top_p),
            top_k: self.top_k.or(global.top_k),
            max_output_tokens: self.max_output_tokens.or(global.max_output_tokens),
            stream: self.stream.or(global.stream),
            context_length: self.context_length.or(global.context_length),
        }
    }

    /// Writes the sampling parameters and the streaming switch into a request.
    pub fn apply(&self, req: &mut ChatRequest) {
        let s = &mut req.sampling;
        s.temperature = self.temperature.or(s.temperature);
        s.top_p = self.top_p.or(s.top_p);
        s.top_k = self.top_k.or(s.top_k);
        s.max_output_tokens = self.max_output_tokens.or(s.max_output_tokens);
        if let Some(stream) = self.stream {
            req.stream = stream;
        }
    }

    /// Checks ranges; the message names the field.
    pub fn validate(&self) -> Result<(), ConnectionError> {
        if let Some(t) = self.temperature.filter(|t| !(0.0..=2.0).contains(t)) {
            return Err(ConnectionError::Invalid(format!(
                "parameters.temperature must be between 0 and 2, got {t}"
            )));
        }
        if let Some(p) = self.top_p.filter(|p| !(0.0..=1.0).contains(p)) {
            return Err(ConnectionError::Invalid(format!(
                "parameters.topP must be between 0 and 1, got {p}"
            )));
        }
        if self.max_output_tokens == Some(0) {
            return Err(ConnectionError::Invalid(
                "parameters.maxOutputTokens must be at least 1".into(),
            ));
        }
        Ok(())
    }
}

/// One provider connection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Connection {
    /// The user's name for it, unique in the book; commands and chats pick a connection by
    /// it.
    pub name: String,
    /// The catalogue source id (`openai`, `deepseek`, `custom`, ...).
    pub source: String,
    /// The wire protocol to speak, which need not be the source's (an OpenAI-compatible
    /// proxy in front of Claude, say).
    pub protocol: Protocol,
    /// The API base without the endpoint path (`https://api.openai.com/v1`); the transport
    /// adds the path ([`crate::transport::endpoint_url`]).
    pub base_url: String,
    /// The provider's model id, sent as [`ChatRequest::model`].
    pub model: String,
    /// The key itself, stored with the data. Never printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    /// Or the name of an environment variable holding it (read at request time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// This connection's parameters, over the book's [`ConnectionBook::global`] ones.
    #[serde(default)]
    pub parameters: Parameters,
}

/// Problems with connections.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConnectionError {
    /// A value is refused; the message names the field (`parameters.topP must be ...`).
    #[error("{0}")]
    Invalid(String),
    /// No connection has this name.
    #[error("no connection named `{0}` (see `tavo connection list`)")]
    NotFound(String),
    /// Another connection already has this name.
    #[error("a connection named `{0}` already exists; remove it first or pick another name")]
    Exists(String),
    /// No connection was named and the book has no default.
    #[error(
        "no default connection: add one with `tavo connection add ... --default` or set one with `tavo connection default NAME`"
    )]
    NoDefault,
    /// The key is to come from an environment variable that is not set.
    #[error("connection `{name}`: apiKeyEnv names ${var}, which is not set")]
    MissingEnv {
        /// The connection's name.
        name: String,
        /// The variable its `apiKeyEnv` names.
        var: String,
    },
}

/// Shows the first three and last four characters of a key, or only `****` for short keys,
/// so a user can tell keys apart without the key leaking into a terminal or a log.
pub fn mask_key(key: &str) -> String {
    let chars: Vec<char> = key.chars().collect();
    if chars.len() < 12 {
        return "****".into();
    }
    let head: String = chars[..3].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}…{tail}")
}

impl Connection {
    /// Checks the fields a request needs; the message names the field.
    pub fn validate(&self) -> Result<(), ConnectionError> {
        if self.name.trim().is_empty() {
            return Err(ConnectionError::Invalid("name must not be empty".into()));
        }
        if self.model.trim().is_empty() {
            return Err(ConnectionError::Invalid(format!(
                "connection `{}`: model must not be empty",
                self.name
            )));
        }
        match url::Url::parse(&self.base_url) {
            Ok(u) if matches!(u.scheme(), "http" | "https") => {}
            _ => {
                return Err(ConnectionError::Invalid(format!(
                    "connection `{}`: baseUrl `{}` is not an http(s) URL (for an OpenAI-compatible server try http://host:port/v1)",
                    self.name, self.base_url
                )));
            }
        }
        if self
            .base_url
            .trim_end_matches('/')
            .ends_with("/chat/completions")
        {
            return Err(ConnectionError::Invalid(format!(
                "connection `{}`: baseUrl must not end in /chat/completions; give the base (ending in /v1), tavo adds the path",
                self.name
            )));
        }
        self.parameters.validate()
    }

    /// Where requests on this connection go, with the key resolved ([`Self::resolve_key`]).
    pub fn endpoint(&self) -> Result<crate::transport::Endpoint, ConnectionError> {
        Ok(crate::transport::Endpoint {
            protocol: self.protocol,
            base_url: self.base_url.clone(),
            api_key: self.resolve_key()?,
        })
    }

    /// The key to send: the stored one, else the named environment variable.
    pub fn resolve_key(&self) -> Result<Option<String>, ConnectionError> {
        if let Some(k) = &self.api_key {
            return Ok(Some(k.clone()));
        }
        match &self.api_key_env {
            Some(var) => std::env::var(var)
                .map(Some)
                .map_err(|_| ConnectionError::MissingEnv {
                    name: self.name.clone(),
                    var: var.clone(),
                }),
            None => Ok(None),
        }
    }

    /// The connection as JSON with the key masked.
    pub fn masked(&self) -> Value {
        let mut v = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Some(k) = &self.api_key {
            v["apiKey"] = json!(mask_key(k));
        }
        v
    }
}

/// Which key a connection uses after an update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyChange {
    /// Store this key (and stop reading an environment variable).
    Key(String),
    /// Read the key from this environment variable at request time (and forget a stored key).
    Env(String),
    /// No key at all (local servers).
    None,
}

/// The fields of a connection to change; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConnectionPatch {
    /// A new name (the default follows a renamed default connection).
    pub name: Option<String>,
    /// A new catalogue source id.
    pub source: Option<String>,
    /// A new wire protocol.
    pub protocol: Option<Protocol>,
    /// A new base URL (validated like a new connection's).
    pub base_url: Option<String>,
    /// A new model id.
    pub model: Option<String>,
    /// A new key, key variable, or no key; `None` keeps the current one.
    pub key: Option<KeyChange>,
    /// Parameter values to set.
    pub parameters: Parameters,
    /// Parameters to unset (back to the global value), by their JSON names (`temperature`,
    /// `topP`, `topK`, `maxOutputTokens`, `stream`, `contextLength`).
    pub unset: Vec<String>,
    /// Make it the default connection.
    pub make_default: bool,
}

/// The JSON names of [`Parameters`]' fields, as [`ConnectionPatch::unset`] takes them.
pub const PARAMETER_NAMES: [&str; 6] = [
    "temperature",
    "topP",
    "topK",
    "maxOutputTokens",
    "stream",
    "contextLength",
];

impl Parameters {
    /// Unsets one parameter by its JSON name.
    fn unset(&mut self, name: &str) -> Result<(), ConnectionError> {
        match name {
            "temperature" => self.temperature = None,
            "topP" => self.top_p = None,
            "topK" => self.top_k = None,
            "maxOutputTokens" => self.max_output_tokens = None,
            "stream" => self.stream = None,
            "contextLength" => self.context_length = None,
            other => {
                return Err(ConnectionError::Invalid(format!(
                    "parameters.{other}: no such parameter (one of {})",
                    PARAMETER_NAMES.join(", ")
                )));
            }
        }
        Ok(())
    }
}

/// All connections and which one is the default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionBook {
    /// Every connection, in the order they were added.
    #[serde(default)]
    pub connections: Vec<Connection>,
    /// The name of the connection used when none is named ([`ConnectionBook::pick`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Global parameters, under every connection's own.
    #[serde(default)]
    pub global: Parameters,
}

impl ConnectionBook {
    /// Reads the book from its settings value (`None`: no connections yet).
    pub fn from_setting(value: Option<Value>) -> Result<Self, ConnectionError> {
        match value {
            None | Some(Value::Null) => Ok(Self::default()),
            Some(v) => serde_json::from_value(v).map_err(|e| {
                ConnectionError::Invalid(format!(
                    "setting `{SETTINGS_KEY}` is not a connection book: {e}"
                ))
            }),
        }
    }

    /// The value to store under [`SETTINGS_KEY`].
    pub fn to_setting(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Adds a validated connection; the first one becomes the default.
    pub fn add(&mut self, c: Connection, make_default: bool) -> Result<(), ConnectionError> {
        c.validate()?;
        if self.get(&c.name).is_ok() {
            return Err(ConnectionError::Exists(c.name));
        }
        if make_default || self.default.is_none() {
            self.default = Some(c.name.clone());
        }
        self.connections.push(c);
        Ok(())
    }

    /// The connection with this name.
    pub fn get(&self, name: &str) -> Result<&Connection, ConnectionError> {
        self.connections
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| ConnectionError::NotFound(name.to_owned()))
    }

    /// Removes a connection; when it was the default, no connection is default afterwards.
    pub fn remove(&mut self, name: &str) -> Result<Connection, ConnectionError> {
        let pos = self
            .connections
            .iter()
            .position(|c| c.name == name)
            .ok_or_else(|| ConnectionError::NotFound(name.to_owned()))?;
        if self.default.as_deref() == Some(name) {
            self.default = None;
        }
        Ok(self.connections.remove(pos))
    }

    /// Makes `name` the default connection.
    pub fn set_default(&mut self, name: &str) -> Result<(), ConnectionError> {
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
        patch: ConnectionPatch,
    ) -> Result<&Connection, ConnectionError> {
        let pos = self
            .connections
            .iter()
            .position(|c| c.name == name)
            .ok_or_else(|| ConnectionError::NotFound(name.to_owned()))?;
        let mut c = self.connections[pos].clone();
        if let Some(new) = patch.name {
            if new != name && self.get(&new).is_ok() {
                return Err(ConnectionError::Exists(new));
            }
            c.name = new;
        }
        if let Some(source) = patch.source {
            c.source = source;
        }
        if let Some(protocol) = patch.protocol {
            c.protocol = protocol;
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
        for field in &patch.unset {
            c.parameters.unset(field)?;
        }
        c.parameters = patch.parameters.over(&c.parameters);
        c.validate()?;
        if patch.make_default || self.default.as_deref() == Some(name) {
            self.default = Some(c.name.clone());
        }
        self.connections[pos] = c;
        Ok(&self.connections[pos])
    }

    /// The named connection, or the default one when `name` is `None`.
    pub fn pick(&self, name: Option<&str>) -> Result<&Connection, ConnectionError> {
        match name.or(self.default.as_deref()) {
            Some(n) => self.get(n),
            None => Err(ConnectionError::NoDefault),
        }
    }

    /// The parameters in effect for a connection (its own over the global ones).
    pub fn effective_parameters(&self, c: &Connection) -> Parameters {
        c.parameters.over(&self.global)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn(name: &str) -> Connection {
        Connection {
            name: name.into(),
            source: "custom".into(),
            protocol: Protocol::OpenaiChat,
            base_url: "http://127.0.0.1:8080/v1".into(),
            model: "llama3".into(),
            api_key: Some("sk-0123456789abcdef".into()),
            api_key_env: None,
            parameters: Parameters::default(),
        }
    }

    #[test]
    fn an_update_changes_only_the_named_fields_in_place() {
        let mut book = ConnectionBook::default();
        book.add(conn("a"), true).expect("add");
        book.add(
            Connection {
                parameters: Parameters {
                    temperature: Some(0.5),
                    top_k: Some(40),
                    ..Parameters::default()
                },
                ..conn("b")
            },
            false,
        )
        .expect("add");
        let patch = ConnectionPatch {
            model: Some("qwen".into()),
            key: Some(KeyChange::Env("MY_KEY".into())),
            parameters: Parameters {
                top_p: Some(0.9),
                ..Parameters::default()
            },
            unset: vec!["topK".into()],
            ..ConnectionPatch::default()
        };
        let c = book.update("b", patch).expect("updated").clone();
        assert_eq!(c.model, "qwen");
        assert_eq!(
            (c.api_key, c.api_key_env.as_deref()),
            (None, Some("MY_KEY"))
        );
        assert_eq!(
            c.parameters,
            Parameters {
                temperature: Some(0.5),
                top_p: Some(0.9),
                ..Parameters::default()
            }
        );
        assert_eq!(c.base_url, conn("b").base_url);
        let names: Vec<_> = book.connections.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "b"], "the order is kept");
        assert_eq!(book.default.as_deref(), Some("a"));
    }

    #[test]
    fn renaming_the_default_keeps_it_default_and_a_bad_update_changes_nothing() {
        let mut book = ConnectionBook::default();
        book.add(conn("a"), true).expect("add");
        book.add(conn("b"), false).expect("add");
        let rename = |to: &str| ConnectionPatch {
            name: Some(to.into()),
            ..ConnectionPatch::default()
        };
        book.update("a", rename("main")).expect("renamed");
        assert_eq!(book.default.as_deref(), Some("main"));
        let before = book.clone();
        let cases = [
            ("b", rename("main"), "already exists"),
            (
                "nope",
                ConnectionPatch::default(),
                "no connection named `nope`",
            ),
            (
                "b",
                ConnectionPatch {
                    base_url: Some("ftp://x".into()),
                    ..ConnectionPatch::default()
                },
                "baseUrl",
            ),
            (
                "b",
                ConnectionPatch {
                    parameters: Parameters {
                        temperature: Some(3.0),
                        ..Parameters::default()
                    },
                    ..ConnectionPatch::default()
                },
                "parameters.temperature",
            ),
            (
                "b",
                ConnectionPatch {
                    unset: vec!["warmth".into()],
                    ..ConnectionPatch::default()
                },
                "parameters.warmth",
            ),
        ];
        for (name, patch, want) in cases {
            let e = book.update(name, patch).expect_err("refused");
            assert!(e.to_string().contains(want), "{e}");
            assert_eq!(book, before, "{want}: nothing changed");
        }
        let made = ConnectionPatch {
            make_default: true,
            key: Some(KeyChange::None),
            ..ConnectionPatch::default()
        };
        let c = book.update("b", made).expect("updated");
        assert_eq!((c.api_key.clone(), c.api_key_env.clone()), (None, None));
        assert_eq!(book.default.as_deref(), Some("b"));
    }

    #[test]
    fn keys_are_masked() {
        assert_eq!(mask_key("sk-0123456789abcdef"), "sk-…cdef");
        assert_eq!(mask_key("short"), "****");
        let v = conn("a").masked();
        assert_eq!(v["apiKey"], "sk-…cdef");
        assert!(!v.to_string().contains("0123456789"));
    }

    #[test]
    fn book_add_default_remove() {
        let mut b = ConnectionBook::default();
        b.add(conn("a"), false).unwrap_or_else(|e| panic!("{e}"));
        b.add(conn("b"), true).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(b.default.as_deref(), Some("b"));
        assert_eq!(
            b.add(conn("a"), false),
            Err(ConnectionError::Exists("a".into()))
        );
        b.remove("b").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(b.pick(None), Err(ConnectionError::NoDefault));
        assert_eq!(b.pick(Some("a")).map(|c| c.name.as_str()), Ok("a"));
        let back = ConnectionBook::from_setting(Some(b.to_setting())).unwrap_or_default();
        assert_eq!(back, b);
    }

    #[test]
    fn validation_names_the_field() {
        let mut c = conn("x");
        c.base_url = "http://localhost:8080/v1/chat/completions".into();
        assert!(
            c.validate()
                .is_err_and(|e| e.to_string().contains("/chat/completions"))
        );
        let mut c = conn("x");
        c.parameters.temperature = Some(3.0);
        assert!(
            c.validate()
                .is_err_and(|e| e.to_string().contains("parameters.temperature"))
        );
    }

    #[test]
    fn connection_parameters_override_global_ones() {
        let global = Parameters {
            temperature: Some(1.0),
            max_output_tokens: Some(500),
            ..Parameters::default()
        };
        let own = Parameters {
            temperature: Some(0.2),
            ..Parameters::default()
        };
        let eff = own.over(&global);
        assert_eq!(
            (eff.temperature, eff.max_output_tokens),
            (Some(0.2), Some(500))
        );
    }
}
