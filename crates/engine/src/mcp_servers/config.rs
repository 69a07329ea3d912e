//! The MCP servers whose tools join the chat loop, as the user configured them (setting
//! `mcp.servers`, written by `tavo mcp-server add|remove|enable|disable` and the HTTP API).
//!
//! A server is a child process speaking MCP on stdio (`command` + `args` + `env`) or a
//! streamable-HTTP endpoint (`url` + `headers`). Header values and env values may hold API keys:
//! [`McpServerConfig::redacted`] is what every door shows.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tavo_store::{Store, StoreError};

/// The setting that holds the servers.
pub const SERVERS_SETTING: &str = "mcp.servers";

/// How tavo reaches one server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServerConfig {
    /// The user's name for it: 1-32 of `a-z A-Z 0-9 _ -`, the prefix of its tools' names.
    pub name: String,
    /// The program to start (stdio transport).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Extra environment variables for it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// The endpoint (streamable HTTP transport).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Headers sent with every request (an `Authorization` header, for example).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Whether its tools join the chat loop.
    #[serde(default = "yes")]
    pub enabled: bool,
}

fn yes() -> bool {
    true
}

/// Why a configuration is refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    /// The name is empty, longer than 32 characters, or holds other characters than
    /// `a-z A-Z 0-9 _ -`. It becomes part of every tool name (`mcp_<server>_<tool>`), and
    /// providers accept only such names, so the user picks another.
    #[error("server name {0:?} must be 1-32 characters of a-z, A-Z, 0-9, '_' or '-'")]
    BadName(String),
    #[error(
        "server {0}: give either --command (a program speaking MCP on stdio) or --url (a streamable-HTTP endpoint), not both and not neither"
    )]
    /// The server (named) has both a command and a URL, or neither (or an empty command).
    /// tavo must know whether to start a program or call an endpoint, so the user gives exactly
    /// one.
    Transport(String),
    /// A streamable-HTTP server's URL is not an `http://` or `https://` address.
    #[error("server {name}: url {url:?} must start with http:// or https://")]
    BadUrl {
        /// The server.
        name: String,
        /// The URL as given.
        url: String,
    },
    /// Adding a server under a name another server has. Names must be unique because they
    /// prefix the tools' names.
    #[error("a server named {0} exists already; remove it first or pick another name")]
    Exists(String),
    /// Removing, enabling or disabling a server that is not configured (a typo, or removed
    /// already).
    #[error("there is no MCP server named {0}; `tavo mcp-server list` shows them")]
    Unknown(String),
}

impl McpServerConfig {
    /// Checks the name and the transport.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let name_ok = (1..=32).contains(&self.name.len())
            && self
                .name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !name_ok {
            return Err(ConfigError::BadName(self.name.clone()));
        }
        match (&self.command, &self.url) {
            (Some(c), None) if !c.trim().is_empty() => Ok(()),
            (None, Some(u)) if u.starts_with("http://") || u.starts_with("https://") => Ok(()),
            (None, Some(u)) => Err(ConfigError::BadUrl {
                name: self.name.clone(),
                url: u.clone(),
            }),
            _ => Err(ConfigError::Transport(self.name.clone())),
        }
    }

    /// The configuration as every door shows it: header and env values hidden.
    pub fn redacted(&self) -> Value {
        let mut v = serde_json::to_value(self).unwrap_or(Value::Null);
        for field in ["headers", "env"] {
            if let Some(Value::Object(m)) = v.get_mut(field) {
                for value in m.values_mut() {
                    *value = Value::from("(hidden)");
                }
            }
        }
        v
    }
}

/// Every configured server, in the order they were added.
pub fn load(store: &Store) -> Result<Vec<McpServerConfig>, StoreError> {
    Ok(store
        .setting_get(SERVERS_SETTING)?
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default())
}

fn save(store: &Store, servers: &[McpServerConfig]) -> Result<(), StoreError> {
    store.setting_set(
        SERVERS_SETTING,
        &serde_json::to_value(servers).unwrap_or(Value::Array(Vec::new())),
    )
}

/// Why a change to the server list failed.
#[derive(Debug, thiserror::Error)]
pub enum ChangeError {
    /// The change was refused: an invalid configuration, a taken name, or an unknown server.
    /// Nothing was saved.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The library could not read or write the `mcp.servers` setting.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Adds a server (refused when the name is taken or the configuration is invalid).
pub fn add(store: &Store, server: McpServerConfig) -> Result<(), ChangeError> {
    server.validate()?;
    let mut all = load(store)?;
    if all.iter().any(|s| s.name == server.name) {
        return Err(ConfigError::Exists(server.name).into());
    }
    all.push(server);
    Ok(save(store, &all)?)
}

/// Removes a server.
pub fn remove(store: &Store, name: &str) -> Result<(), ChangeError> {
    let mut all = load(store)?;
    let before = all.len();
    all.retain(|s| s.name != name);
    if all.len() == before {
        return Err(ConfigError::Unknown(name.to_owned()).into());
    }
    Ok(save(store, &all)?)
}

/// Turns a server's tools on or off.
pub fn set_enabled(store: &Store, name: &str, enabled: bool) -> Result<(), ChangeError> {
    let mut all = load(store)?;
    let server = all
        .iter_mut()
        .find(|s| s.name == name)
        .ok_or_else(|| ConfigError::Unknown(name.to_owned()))?;
    server.enabled = enabled;
    Ok(save(store, &all)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio(name: &str) -> McpServerConfig {
        McpServerConfig {
            name: name.into(),
            command: Some("node".into()),
            args: vec!["server.js".into()],
            env: BTreeMap::from([("API_KEY".into(), "sk-secret".into())]),
            url: None,
            headers: BTreeMap::new(),
            enabled: true,
        }
    }

    #[test]
    fn names_and_transports_are_checked_and_secrets_never_shown() {
        assert!(stdio("files").validate().is_ok());
        assert_eq!(
            stdio("bad name").validate(),
            Err(ConfigError::BadName("bad name".into()))
        );
        let mut both = stdio("x");
        both.url = Some("http://127.0.0.1:1/mcp".into());
        assert!(matches!(both.validate(), Err(ConfigError::Transport(_))));
        let mut ftp = stdio("y");
        ftp.command = None;
        ftp.url = Some("ftp://x".into());
        assert!(matches!(ftp.validate(), Err(ConfigError::BadUrl { .. })));
        assert!(!stdio("files").redacted().to_string().contains("sk-secret"));
    }

    #[test]
    fn the_list_is_kept_in_the_settings() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let store = Store::open(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        add(&store, stdio("a")).unwrap_or_else(|e| panic!("{e}"));
        assert!(add(&store, stdio("a")).is_err(), "a taken name is refused");
        set_enabled(&store, "a", false).unwrap_or_else(|e| panic!("{e}"));
        assert!(!load(&store).unwrap_or_default()[0].enabled);
        assert!(remove(&store, "b").is_err());
        remove(&store, "a").unwrap_or_else(|e| panic!("{e}"));
        assert!(load(&store).unwrap_or_default().is_empty());
    }
}
