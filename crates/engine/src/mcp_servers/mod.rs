//! Outside MCP servers whose tools join the chat loop ("beyond Tavo": LibreChat and RisuAI let
//! the model use them). Each enabled server in `mcp.servers` ([`config`]) is started (stdio) or
//! reached (streamable HTTP) through the official SDK's client; its tools are registered in the
//! reply's extension registry under a namespaced name (`mcp_<server>_<tool>`, so they never
//! collide with built-ins or with another server's), found through `extension_tool_search`
//! under dynamic loading, and run by [`McpServers`] as the engine's [`ExtensionRunner`].
//!
//! What the dispatcher already gives them, as every tool: schema validation, the approval
//! policy (outside tools ask by default: see `tools::dispatch`), `tools.callTimeoutSeconds`,
//! the 64 KiB / 256 KiB budgets and the envelope. What this module adds is the servers' own
//! faults: a server that fails to start, crashes, answers garbage or goes away becomes a
//! `unavailable` tool error and a status with the last error; the next call after a backoff
//! (1 s doubling to 60 s) starts it again; a `notifications/tools/list_changed` re-lists its
//! tools.

pub mod config;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};
use tavo_model::ChatId;

use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, Tool};
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use rmcp::{ClientHandler, ServiceExt};
use serde::Serialize;
use serde_json::{Value, json};
use tavo_store::Store;
use tavo_tools::extension::{ExtensionRegistry, ExtensionSource, ExtensionTool};
use tavo_tools::operation::BoxFuture;
use tavo_tools::{ErrorCode, ExtensionRunner, ToolError};

pub use config::McpServerConfig;

/// How long a server may take to start and list its tools.
pub const START_TIMEOUT: Duration = Duration::from_secs(20);

/// Why a server did not start; its text is the server's `lastError` in the status.
#[derive(Debug, thiserror::Error)]
enum StartError {
    #[error("cannot start {command}: {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    #[error("the MCP handshake{with} failed: {reason}")]
    Handshake { with: String, reason: String },
    #[error("header {0:?} is not a valid name")]
    HeaderName(String),
    #[error("header {0} has an invalid value")]
    HeaderValue(String),
    #[error("neither a command nor a url is configured")]
    NotConfigured,
    #[error("tools/list failed: {0}")]
    ListTools(String),
    #[error("did not start and list its tools within {0}s")]
    Timeout(u64),
}
/// The longest wait between two restarts of a failing server.
pub const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// The client side of one connection: re-lists the server's tools when it says they changed.
#[derive(Clone)]
struct Watcher {
    server: String,
    manager: Weak<Shared>,
}

impl ClientHandler for Watcher {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if let Some(shared) = self.manager.upgrade() {
            let servers = McpServers { shared };
            let name = self.server.clone();
            tokio::spawn(async move { servers.relist(&name).await });
        }
    }
}

type Client = RunningService<RoleClient, Watcher>;

/// Where one server stands, as `tavo mcp-server list` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerStatus {
    /// The server's name.
    pub name: String,
    /// Whether its tools join the chat loop.
    pub enabled: bool,
    /// `connected`, `failed`, `stopped` (disabled) or `idle` (not started yet).
    pub state: &'static str,
    /// Its tools, by their names in tavo.
    pub tools: Vec<String>,
    /// What went wrong last, if anything did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

struct Connection {
    client: Option<Arc<Client>>,
    /// Namespaced name → the server's own tool name.
    tools: HashMap<String, String>,
    last_error: Option<String>,
    failures: u32,
    retry_at: Option<Instant>,
}

struct Shared {
    store: Store,
    registry: ExtensionRegistry,
    connections: tokio::sync::Mutex<HashMap<String, Connection>>,
    /// Serialises starts of one server (two calls after a crash start it once).
    starting: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

/// The outside servers of one engine. Cheap to clone.
#[derive(Clone)]
pub struct McpServers {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for McpServers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServers").finish_non_exhaustive()
    }
}

/// `mcp_<server>_<tool>`, cut to the 64 characters providers accept, with anything outside
/// `a-z A-Z 0-9 _ -` replaced by `_`.
pub fn tool_name(server: &str, tool: &str) -> String {
    let raw = format!("mcp_{server}_{tool}");
    raw.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect()
}

fn unavailable(message: String) -> ToolError {
    ToolError::new(ErrorCode::Unavailable, message)
        .with_details(json!({"reason": "mcp_server_unavailable"}))
}

fn backoff(failures: u32) -> Duration {
    let secs = 1u64 << failures.saturating_sub(1).min(6);
    Duration::from_secs(secs).min(MAX_BACKOFF)
}

impl McpServers {
    /// The servers of `store`'s configuration, registering their tools in `registry` (the
    /// engine's `Services::extensions`). Nothing starts until [`McpServers::connect_enabled`]
    /// or a call.
    pub fn new(store: Store, registry: ExtensionRegistry) -> Self {
        Self {
            shared: Arc::new(Shared {
                store,
                registry,
                connections: tokio::sync::Mutex::new(HashMap::new()),
                starting: Mutex::new(HashMap::new()),
            }),
        }
    }

    fn configs(&self) -> Vec<McpServerConfig> {
        config::load(&self.shared.store).unwrap_or_else(|e| {
            tracing::warn!(error = %e, "cannot read the MCP server list");
            Vec::new()
        })
    }

    /// Starts every enabled server that is not connected (at most [`START_TIMEOUT`] each, all
    /// at once) and registers their tools. A server that fails is recorded with its error; the
    /// others go on.
    pub async fn connect_enabled(&self) {
        let wanted: Vec<McpServerConfig> =
            self.configs().into_iter().filter(|c| c.enabled).collect();
        let starts = wanted.into_iter().map(|c| async move {
            let connected = {
                let map = self.shared.connections.lock().await;
                map.get(&c.name).is_some_and(|k| k.client.is_some())
            };
            if !connected {
                self.start(&c).await;
            }
        });
        futures_util::future::join_all(starts).await;
    }

    async fn start(&self, config: &McpServerConfig) {
        let gate = {
            let mut starting = self
                .shared
                .starting
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            starting.entry(config.name.clone()).or_default().clone()
        };
        let _one = gate.lock().await;
        let result = tokio::time::timeout(START_TIMEOUT, self.open(config)).await;
        let outcome = match result {
            Ok(Ok(pair)) => Ok(pair),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(StartError::Timeout(START_TIMEOUT.as_secs())),
        };
        let source = ExtensionSource::Mcp {
            server: config.name.clone(),
        };
        let mut map = self.shared.connections.lock().await;
        let entry = map
            .entry(config.name.clone())
            .or_insert_with(|| Connection {
                client: None,
                tools: HashMap::new(),
                last_error: None,
                failures: 0,
                retry_at: None,
            });
        match outcome {
            Ok((client, tools)) => {
                self.shared.registry.unregister_source(&source);
                entry.tools = self.register(&config.name, &tools);
                entry.client = Some(Arc::new(client));
                entry.last_error = None;
                entry.failures = 0;
                entry.retry_at = None;
                tracing::info!(server = %config.name, tools = entry.tools.len(), "MCP server connected");
            }
            Err(e) => {
                entry.client = None;
                entry.failures += 1;
                entry.retry_at = Some(Instant::now() + backoff(entry.failures));
                tracing::warn!(server = %config.name, error = %e, "MCP server failed");
                entry.last_error = Some(e.to_string());
            }
        }
    }

    async fn open(&self, config: &McpServerConfig) -> Result<(Client, Vec<Tool>), StartError> {
        let watcher = Watcher {
            server: config.name.clone(),
            manager: Arc::downgrade(&self.shared),
        };
        let client = if let Some(command) = &config.command {
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(&config.args).envs(&config.env).kill_on_drop(true);
            let (transport, _stderr) = rmcp::transport::TokioChildProcess::builder(cmd)
                .stderr(std::process::Stdio::null())
                .spawn()
                .map_err(|source| StartError::Spawn {
                    command: command.clone(),
                    source,
                })?;
            watcher
                .serve(transport)
                .await
                .map_err(|e| StartError::Handshake {
                    with: String::new(),
                    reason: e.to_string(),
                })?
        } else if let Some(url) = &config.url {
            use rmcp::transport::StreamableHttpClientTransport;
            use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
            let mut headers = HashMap::new();
            for (k, v) in &config.headers {
                let name = http::HeaderName::from_bytes(k.as_bytes())
                    .map_err(|_| StartError::HeaderName(k.clone()))?;
                let value = http::HeaderValue::from_str(v)
                    .map_err(|_| StartError::HeaderValue(k.clone()))?;
                headers.insert(name, value);
            }
            let mut transport_config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
            transport_config.custom_headers = headers;
            let transport = StreamableHttpClientTransport::from_config(transport_config);
            watcher
                .serve(transport)
                .await
                .map_err(|e| StartError::Handshake {
                    with: format!(" with {url}"),
                    reason: e.to_string(),
                })?
        } else {
            return Err(StartError::NotConfigured);
        };
        let tools = client
            .list_all_tools()
            .await
            .map_err(|e| StartError::ListTools(e.to_string()))?;
        Ok((client, tools))
    }

    /// Registers `tools` of `server`; answers namespaced → original names. A tool whose schema
    /// the registry refuses is left out with a warning.
    fn register(&self, server: &str, tools: &[Tool]) -> HashMap<String, String> {
        let mut names = HashMap::new();
        for t in tools {
            let name = tool_name(server, &t.name);
            let description = format!(
                "[MCP server {server}, tool {}] {}",
                t.name,
                t.description.as_deref().unwrap_or("(no description)")
            );
            let schema = Value::Object((*t.input_schema).clone());
            match self.shared.registry.register(
                &name,
                Some(format!("{server}: {}", t.name)),
                &description,
                schema,
                false,
                ExtensionSource::Mcp {
                    server: server.to_owned(),
                },
            ) {
                Ok(()) => {
                    names.insert(name, t.name.to_string());
                }
                Err(e) => tracing::warn!(server, tool = %t.name, error = %e, "MCP tool left out"),
            }
        }
        names
    }

    /// Lists a connected server's tools again (after `notifications/tools/list_changed`).
    pub async fn relist(&self, server: &str) {
        let client = {
            let map = self.shared.connections.lock().await;
            map.get(server).and_then(|c| c.client.clone())
        };
        let Some(client) = client else { return };
        match client.list_all_tools().await {
            Ok(tools) => {
                self.shared
                    .registry
                    .unregister_source(&ExtensionSource::Mcp {
                        server: server.to_owned(),
                    });
                let names = self.register(server, &tools);
                let mut map = self.shared.connections.lock().await;
                if let Some(c) = map.get_mut(server) {
                    c.tools = names;
                }
                tracing::info!(server, tools = tools.len(), "MCP server's tools changed");
            }
            Err(e) => tracing::warn!(server, error = %e, "cannot list the changed tools"),
        }
    }

    /// Disconnects a server and takes its tools out of the registry (it was removed or
    /// disabled).
    pub async fn forget(&self, server: &str) {
        let removed = self.shared.connections.lock().await.remove(server);
        self.shared
            .registry
            .unregister_source(&ExtensionSource::Mcp {
                server: server.to_owned(),
            });
        if let Some(Connection {
            client: Some(client),
            ..
        }) = removed
            && let Ok(client) = Arc::try_unwrap(client)
        {
            let _ = client.cancel().await;
        }
    }

    /// Brings the connections in line with the stored list: servers no longer there or no
    /// longer enabled are disconnected, enabled ones connected. What a replica does when
    /// another one changed the list (`tavo serve` on a shared database).
    pub async fn reconcile(&self) {
        let enabled: std::collections::HashSet<String> = self
            .configs()
            .into_iter()
            .filter(|c| c.enabled)
            .map(|c| c.name)
            .collect();
        let running: Vec<String> = self
            .shared
            .connections
            .lock()
            .await
            .keys()
            .cloned()
            .collect();
        for name in running {
            if !enabled.contains(&name) {
                self.forget(&name).await;
            }
        }
        self.connect_enabled().await;
    }

    /// Every configured server with its state.
    pub async fn status(&self) -> Vec<ServerStatus> {
        let map = self.shared.connections.lock().await;
        self.configs()
            .into_iter()
            .map(|c| {
                let conn = map.get(&c.name);
                let mut tools: Vec<String> = conn
                    .map(|k| k.tools.keys().cloned().collect())
                    .unwrap_or_default();
                tools.sort();
                let state = match conn {
                    _ if !c.enabled => "stopped",
                    Some(k) if k.client.is_some() => "connected",
                    Some(_) => "failed",
                    None => "idle",
                };
                ServerStatus {
                    name: c.name,
                    enabled: c.enabled,
                    state,
                    tools,
                    last_error: conn.and_then(|k| k.last_error.clone()),
                }
            })
            .collect()
    }

    /// The connection for `server`, starting it again when it is down and its backoff is over.
    async fn client_for(
        &self,
        server: &str,
    ) -> Result<(Arc<Client>, HashMap<String, String>), ToolError> {
        {
            let map = self.shared.connections.lock().await;
            if let Some(c) = map.get(server) {
                if let Some(client) = &c.client
                    && !client.is_transport_closed()
                {
                    return Ok((client.clone(), c.tools.clone()));
                }
                if let Some(at) = c.retry_at
                    && Instant::now() < at
                {
                    return Err(unavailable(format!(
                        "MCP server {server} is down ({}); tavo tries it again in {}s — answer without it for now",
                        c.last_error.as_deref().unwrap_or("it stopped"),
                        at.saturating_duration_since(Instant::now())
                            .as_secs()
                            .max(1)
                    )));
                }
            }
        }
        let config = self
            .configs()
            .into_iter()
            .find(|c| c.name == server && c.enabled)
            .ok_or_else(|| {
                unavailable(format!(
                    "MCP server {server} is not configured or is disabled"
                ))
            })?;
        self.start(&config).await;
        let map = self.shared.connections.lock().await;
        match map.get(server) {
            Some(Connection {
                client: Some(client),
                tools,
                ..
            }) => Ok((client.clone(), tools.clone())),
            Some(c) => Err(unavailable(format!(
                "MCP server {server} could not be started: {}",
                c.last_error.as_deref().unwrap_or("unknown error")
            ))),
            None => Err(unavailable(format!(
                "MCP server {server} could not be started"
            ))),
        }
    }

    /// Marks `server` down after a failed call, so the next call restarts it after a backoff.
    async fn mark_down(&self, server: &str, error: String) {
        let mut map = self.shared.connections.lock().await;
        if let Some(c) = map.get_mut(server) {
            c.client = None;
            c.failures += 1;
            c.retry_at = Some(Instant::now() + backoff(c.failures));
            c.last_error = Some(error);
        }
    }
}

/// A tool result as the model sees it: the structured content when there is one, else the
/// text of the content blocks (images and resources named, not inlined).
fn result_value(result: CallToolResult) -> Value {
    if let Some(v) = result.structured_content {
        return v;
    }
    let parts: Vec<String> = result
        .content
        .iter()
        .map(|block: &ContentBlock| match block.as_text() {
            Some(t) => t.text.clone(),
            None => "[non-text content]".to_owned(),
        })
        .collect();
    Value::String(parts.join("\n"))
}

impl ExtensionRunner for McpServers {
    fn run(
        &self,
        tool: &ExtensionTool,
        _chat: ChatId,
        arguments: Value,
        _timeout: std::time::Duration,
    ) -> BoxFuture<Result<Value, ToolError>> {
        let servers = self.clone();
        let tool = tool.clone();
        Box::pin(async move {
            let ExtensionSource::Mcp { server } = &tool.source else {
                return Err(ToolError::internal("running the extension tool"));
            };
            let (client, names) = servers.client_for(server).await?;
            let original = names.get(&tool.name).cloned().ok_or_else(|| {
                ToolError::new(
                    ErrorCode::UnknownTool,
                    format!(
                        "MCP server {server} no longer offers {}; search the tools again",
                        tool.name
                    ),
                )
            })?;
            let args = match arguments {
                Value::Object(m) => m,
                _ => serde_json::Map::new(),
            };
            let params = CallToolRequestParams::new(original.clone()).with_arguments(args);
            match client.call_tool(params).await {
                Ok(result) if result.is_error == Some(true) => {
                    let text = match result_value(result) {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    Err(ToolError::new(
                        ErrorCode::Unavailable,
                        format!("MCP server {server}'s tool {original} failed: {text}"),
                    )
                    .with_details(json!({"reason": "mcp_tool_error"})))
                }
                Ok(result) => Ok(result_value(result)),
                Err(rmcp::ServiceError::McpError(e)) => Err(ToolError::new(
                    ErrorCode::Unavailable,
                    format!(
                        "MCP server {server} refused the call to {original}: {}",
                        e.message
                    ),
                )
                .with_details(json!({"reason": "mcp_error", "mcpCode": e.code.0}))),
                Err(e) => {
                    let message = e.to_string();
                    servers.mark_down(server, message.clone()).await;
                    Err(unavailable(format!(
                        "MCP server {server} stopped during the call to {original} ({message}); it is restarted for the next call"
                    )))
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_namespaced_and_fit_providers() {
        assert_eq!(tool_name("fs", "read_file"), "mcp_fs_read_file");
        assert_eq!(tool_name("my.srv", "get thing"), "mcp_my_srv_get_thing");
        assert_eq!(tool_name("s", &"x".repeat(100)).len(), 64);
    }

    #[test]
    fn backoff_doubles_to_a_minute() {
        assert_eq!(backoff(1), Duration::from_secs(1));
        assert_eq!(backoff(3), Duration::from_secs(4));
        assert_eq!(backoff(20), MAX_BACKOFF);
    }
}
