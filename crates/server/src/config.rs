//! Server settings: defaults, the TOML config file, environment variables and flags.
//!
//! Precedence, highest first: command-line flags, environment variables (`TAVO_ADDR`,
//! `TAVO_TOKEN`; the CLI reads both through clap), the config file (`<data-dir>/config.toml` or
//! `--config`), the defaults below. [`ServeConfig::validate`] is the one place that decides
//! whether a configuration may start: binding anything but loopback without an access token is
//! refused, because every API route (including the one that reads connection settings and the
//! one that runs tools) would then be open to the network.

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The address `tavo serve` binds when nothing says otherwise.
pub const DEFAULT_ADDR: &str = "127.0.0.1:7860";

/// Name of the config file looked for in the data directory.
pub const CONFIG_FILE: &str = "config.toml";

/// Request body limits, per kind of route (bytes). Every limit is enforced while the body
/// streams in, before it is buffered.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case", default)]
pub struct Limits {
    /// Small JSON bodies: messages, decisions, connections, sessions.
    pub json_body: usize,
    /// The operation door and asset writes (a lorebook or preset can be large).
    pub op_body: usize,
    /// One uploaded file of an import.
    pub upload_file: u64,
    /// All files of one import request together.
    pub upload_total: u64,
    /// Events a client of the global stream may lag behind before it is told to reload (a
    /// reply's stream uses the engine's per-reply buffer and log).
    pub sse_buffer: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            json_body: 256 * 1024,
            op_body: 56 * 1024 * 1024,
            upload_file: 64 * 1024 * 1024,
            upload_total: 256 * 1024 * 1024,
            sse_buffer: 1024,
        }
    }
}

/// What the config file may contain. Every key is optional; unknown keys are an error so a
/// typo (`tokn = …`) does not silently leave the server open.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub struct FileConfig {
    /// `host:port` to bind.
    pub addr: Option<String>,
    /// Access token.
    pub token: Option<String>,
    /// Extra host names the `Host` header may carry (a reverse proxy's public name).
    #[serde(default)]
    pub allowed_hosts: Vec<String>,
    /// Body limits.
    #[serde(default)]
    pub limits: Option<Limits>,
    /// Serve accounts (`tavo user add`) instead of one library behind one token.
    pub accounts: Option<bool>,
    /// With accounts: replies one user may have running at once.
    pub max_replies_per_user: Option<usize>,
    /// With accounts: the most megabytes one user's library may take (0: no limit).
    pub quota_mb_per_user: Option<u64>,
    /// Keep the libraries in PostgreSQL (`postgres://…`) instead of SQLite files.
    pub database: Option<String>,
}

/// The settings `tavo serve` runs with, after every source has been merged.
#[derive(Clone, PartialEq, Eq)]
pub struct ServeConfig {
    /// Where to listen.
    pub addr: SocketAddr,
    /// The access token; `None` leaves a loopback server open to local programs (but still
    /// protected against other web sites by the host check and the CSRF header).
    pub token: Option<String>,
    /// Host names accepted besides `localhost` and IP literals.
    pub allowed_hosts: Vec<String>,
    /// Body limits.
    pub limits: Limits,
    /// The library directory (with accounts: the data folder that holds `accounts.sqlite`,
    /// the first admin's library and `users/`).
    pub data_dir: PathBuf,
    /// Accounts on: every request needs a user's session, and each user has a library of
    /// their own (`tavo serve --accounts`).
    pub accounts: bool,
    /// With accounts: what one user may use of the server.
    pub user_limits: UserLimits,
    /// The PostgreSQL database the libraries live in (`--database`, `TAVO_DATABASE`,
    /// `database` in the config file); `None`: SQLite files in the data folder.
    pub database: Option<String>,
}

/// What one user of a server with accounts may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UserLimits {
    /// Replies running at once (default 4).
    pub max_replies: usize,
    /// Bytes their library may take on disk; `None`: no limit (the default).
    pub quota_bytes: Option<u64>,
}

impl Default for UserLimits {
    fn default() -> Self {
        UserLimits {
            max_replies: 4,
            quota_bytes: None,
        }
    }
}

impl std::fmt::Debug for ServeConfig {
    // Hand-written so that the token never reaches a log line.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServeConfig")
            .field("addr", &self.addr)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("allowed_hosts", &self.allowed_hosts)
            .field("limits", &self.limits)
            .field("data_dir", &self.data_dir)
            .field("accounts", &self.accounts)
            .field("database", &self.database.as_ref().map(|_| "<set>"))
            .finish()
    }
}

/// Why a configuration cannot start.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    /// The config file exists but cannot be read.
    #[error("cannot read the config file {path}: {reason}")]
    Read {
        /// The config file, as shown to the user.
        path: String,
        /// The operating system's error.
        reason: String,
    },
    /// The config file is not valid TOML or has unknown keys.
    #[error("invalid config file {path}: {reason}")]
    Parse {
        /// The config file, as shown to the user.
        path: String,
        /// The TOML parser's message, which names the line and column.
        reason: String,
    },
    /// `addr` is not `host:port`.
    #[error(
        "invalid address {0:?} (from --addr, TAVO_ADDR or `addr` in the config file): \
         use IP:PORT such as 127.0.0.1:7860"
    )]
    Addr(String),
    /// A non-loopback bind without a token.
    #[error(
        "refusing to listen on {0} without an access token: every library, tool and connection \
         route would be open to your network. Set one with --token, TAVO_TOKEN or `token` in the \
         config file, or bind 127.0.0.1"
    )]
    OpenToNetwork(SocketAddr),
    /// A token that is too short to resist guessing.
    #[error("the access token is too short ({0} characters); use at least 16")]
    WeakToken(usize),
    /// Accounts and an access token at once.
    #[error(
        "--accounts replaces the access token (each user logs in with their own password); drop --token / TAVO_TOKEN / `token` from the config file"
    )]
    AccountsWithToken,
}

/// Minimum token length: tokens are compared in constant time, but a short one can be guessed.
pub const MIN_TOKEN_LEN: usize = 16;

/// The inputs of [`ServeConfig::resolve`]: what flags and the environment gave (clap merges the
/// two), and where the config file is.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `--addr` / `TAVO_ADDR`.
    pub addr: Option<String>,
    /// `--token` / `TAVO_TOKEN`.
    pub token: Option<String>,
    /// `--config`; `None` looks for `<data-dir>/config.toml` and accepts its absence.
    pub config: Option<PathBuf>,
    /// `--accounts`.
    pub accounts: bool,
    /// `--database` / `TAVO_DATABASE`.
    pub database: Option<String>,
}

impl ServeConfig {
    /// Merges flags/environment over the config file over the defaults, then validates.
    pub fn resolve(data_dir: &Path, overrides: Overrides) -> Result<Self, ConfigError> {
        let file = match &overrides.config {
            Some(path) => read_file(path, true)?,
            None => read_file(&data_dir.join(CONFIG_FILE), false)?,
        };
        let addr_text = overrides
            .addr
            .or(file.addr)
            .unwrap_or_else(|| DEFAULT_ADDR.to_owned());
        let addr = parse_addr(&addr_text)?;
        let token = overrides
            .token
            .or(file.token)
            .filter(|t| !t.trim().is_empty());
        let config = ServeConfig {
            addr,
            token,
            allowed_hosts: file.allowed_hosts,
            limits: file.limits.unwrap_or_default(),
            data_dir: data_dir.to_path_buf(),
            accounts: overrides.accounts || file.accounts.unwrap_or(false),
            user_limits: UserLimits {
                max_replies: file
                    .max_replies_per_user
                    .unwrap_or(UserLimits::default().max_replies)
                    .max(1),
                quota_bytes: file
                    .quota_mb_per_user
                    .filter(|mb| *mb > 0)
                    .map(|mb| mb.saturating_mul(1024 * 1024)),
            },
            database: overrides
                .database
                .or(file.database)
                .filter(|d| !d.trim().is_empty()),
        };
        config.validate()?;
        Ok(config)
    }

    /// A loopback configuration with defaults (tests and embedding).
    pub fn local(data_dir: impl Into<PathBuf>) -> Self {
        ServeConfig {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            token: None,
            allowed_hosts: Vec::new(),
            limits: Limits::default(),
            data_dir: data_dir.into(),
            accounts: false,
            user_limits: UserLimits::default(),
            database: None,
        }
    }

    /// Refuses configurations that would expose the library.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if let Some(token) = &self.token
            && token.chars().count() < MIN_TOKEN_LEN
        {
            return Err(ConfigError::WeakToken(token.chars().count()));
        }
        if self.accounts && self.token.is_some() {
            return Err(ConfigError::AccountsWithToken);
        }
        // With accounts every request needs a user's session: the network may reach it.
        if !self.addr.ip().is_loopback() && self.token.is_none() && !self.accounts {
            return Err(ConfigError::OpenToNetwork(self.addr));
        }
        Ok(())
    }
}

fn read_file(path: &Path, required: bool) -> Result<FileConfig, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => {
            return Ok(FileConfig::default());
        }
        Err(e) => {
            return Err(ConfigError::Read {
                path: path.display().to_string(),
                reason: e.to_string(),
            });
        }
    };
    toml::from_str(&text).map_err(|e| ConfigError::Parse {
        path: path.display().to_string(),
        reason: e.to_string(),
    })
}

/// `127.0.0.1:7860`, `[::1]:7860`, or `localhost:7860` (which means 127.0.0.1; other names are
/// refused because the bind address must be unambiguous).
fn parse_addr(text: &str) -> Result<SocketAddr, ConfigError> {
    let text = text.trim();
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    if let Some(port) = text.strip_prefix("localhost:")
        && let Ok(port) = port.parse::<u16>()
    {
        return Ok(SocketAddr::new(IpAddr::from([127, 0, 0, 1]), port));
    }
    Err(ConfigError::Addr(text.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(file: Option<&str>, o: Overrides) -> Result<ServeConfig, ConfigError> {
        let dir = tempfile::tempdir().map_err(|e| ConfigError::Read {
            path: "tmp".into(),
            reason: e.to_string(),
        })?;
        if let Some(text) = file {
            std::fs::write(dir.path().join(CONFIG_FILE), text).map_err(|e| ConfigError::Read {
                path: "tmp".into(),
                reason: e.to_string(),
            })?;
        }
        ServeConfig::resolve(dir.path(), o)
    }

    #[test]
    fn defaults_to_loopback_without_a_file() {
        let c = resolve(None, Overrides::default()).expect("defaults are valid");
        assert_eq!(c.addr.to_string(), DEFAULT_ADDR);
        assert_eq!(c.token, None);
        assert_eq!(c.limits, Limits::default());
    }

    #[test]
    fn flags_win_over_the_file() {
        let file = "addr = \"127.0.0.1:9000\"\ntoken = \"file-token-0123456789\"\n";
        let c = resolve(
            Some(file),
            Overrides {
                addr: Some("127.0.0.1:9100".into()),
                ..Overrides::default()
            },
        )
        .expect("valid");
        assert_eq!(c.addr.port(), 9100);
        assert_eq!(c.token.as_deref(), Some("file-token-0123456789"));
    }

    #[test]
    fn non_loopback_without_token_is_refused() {
        let err = resolve(
            None,
            Overrides {
                addr: Some("0.0.0.0:7860".into()),
                ..Overrides::default()
            },
        )
        .expect_err("must refuse");
        assert!(matches!(err, ConfigError::OpenToNetwork(_)));
        assert!(err.to_string().contains("--token"));
        let ok = resolve(
            None,
            Overrides {
                addr: Some("0.0.0.0:7860".into()),
                token: Some("a-long-enough-token".into()),
                ..Overrides::default()
            },
        );
        assert!(ok.is_ok());
    }

    #[test]
    fn short_tokens_and_unknown_keys_are_refused() {
        let short = resolve(
            None,
            Overrides {
                token: Some("abc".into()),
                ..Overrides::default()
            },
        );
        assert_eq!(short, Err(ConfigError::WeakToken(3)));
        let typo = resolve(Some("tokn = \"x\"\n"), Overrides::default());
        assert!(matches!(typo, Err(ConfigError::Parse { .. })));
    }

    #[test]
    fn addresses() {
        assert_eq!(
            parse_addr("localhost:80").map(|a| a.to_string()),
            Ok("127.0.0.1:80".into())
        );
        assert!(parse_addr("[::1]:7860").is_ok_and(|a| a.ip().is_loopback()));
        assert!(parse_addr("example.com:80").is_err());
        assert!(parse_addr("127.0.0.1").is_err());
    }

    #[test]
    fn limits_from_the_file() {
        let c = resolve(Some("[limits]\njson_body = 1024\n"), Overrides::default()).expect("valid");
        assert_eq!(c.limits.json_body, 1024);
        assert_eq!(c.limits.upload_file, Limits::default().upload_file);
    }

    #[test]
    fn debug_never_shows_the_token() {
        let mut c = ServeConfig::local("/tmp/x");
        c.token = Some("secret-token-0123456789".into());
        assert!(!format!("{c:?}").contains("secret"));
    }
}
