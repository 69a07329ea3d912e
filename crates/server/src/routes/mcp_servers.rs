//! The outside MCP servers whose tools join replies, as `tavo mcp-server` manages them: list
//! with their state, add, remove, enable and disable. Configuration lives in the library
//! (`engine::mcp_servers::config`); header and env values are never shown.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};
use tavo_engine::mcp_servers::McpServerConfig;
use tavo_engine::mcp_servers::config::{self, ChangeError, ConfigError};
use tavo_tools::approval::{Approval, ApprovalPolicy};

use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::state::AppState;

fn change_error(e: ChangeError) -> ApiError {
    match e {
        ChangeError::Config(c @ ConfigError::Unknown(_)) => {
            ApiError::new(StatusCode::NOT_FOUND, "resource_not_found", c.to_string())
        }
        ChangeError::Config(c @ ConfigError::Exists(_)) => {
            ApiError::new(StatusCode::CONFLICT, "conflict", c.to_string())
        }
        ChangeError::Config(c) => ApiError::bad_request(c.to_string()),
        ChangeError::Store(e) => ApiError::internal("changing the MCP servers", e),
    }
}

/// Every configured server with its state: `{servers: [{name, command?, args?, url?, headers
/// (values hidden), env (values hidden), enabled, status: {state, tools, lastError?},
/// approvals}]}`. `state` is `connected`, `failed`, `stopped` (disabled) or `idle` (not started
/// yet); `approvals` holds the standing choices made for its tools everywhere (`tools.approval`;
/// a tool not named asks, the default for every outside tool).
#[utoipa::path(get, path = "/api/mcp-servers", tag = "mcp",
    responses((status = 200, description = "`{servers}`", body = Object)))]
pub async fn list(State(state): State<AppState>) -> ApiResult<Json<Value>> {
    let (configs, policy) = state
        .blocking_api(|s| {
            Ok((
                config::load(s).map_err(|e| ApiError::internal("reading the MCP servers", e))?,
                ApprovalPolicy::load(s)
                    .map_err(|e| ApiError::internal("reading the approval policy", e))?,
            ))
        })
        .await?;
    let statuses = state.mcp_servers.status().await;
    let servers: Vec<Value> = configs
        .iter()
        .map(|c| {
            let mut row = c.redacted();
            let prefix = format!("mcp_{}_", c.name);
            let approvals: serde_json::Map<String, Value> = policy
                .tools
                .iter()
                .filter(|(tool, _)| tool.starts_with(&prefix))
                .map(|(tool, a)| (tool.clone(), serde_json::to_value(a).unwrap_or_default()))
                .collect();
            row["approvals"] = Value::Object(approvals);
            if let Some(s) = statuses.iter().find(|s| s.name == c.name) {
                row["status"] = serde_json::to_value(s).unwrap_or_default();
            }
            row
        })
        .collect();
    Ok(Json(json!({ "servers": servers })))
}

/// Adds a server (`{name, command, args?, env?}` or `{name, url, headers?}`, `enabled` default
/// true) and starts it: `201` with its state.
#[utoipa::path(post, path = "/api/mcp-servers", tag = "mcp",
    responses((status = 201, description = "the server's state", body = Object),
              (status = 400, description = "A bad name or transport", body = ErrorBody),
              (status = 409, description = "The name is taken", body = ErrorBody)))]
pub async fn add(
    State(state): State<AppState>,
    Json(body): Json<Value>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let server: McpServerConfig = serde_json::from_value(body)
        .map_err(|e| ApiError::bad_request(format!("the MCP server: {e}")))?;
    let name = server.name.clone();
    state
        .blocking_api(move |s| config::add(s, server).map_err(change_error))
        .await?;
    state.mcp_servers.connect_enabled().await;
    crate::cluster::mcp_changed(&state).await;
    let status = state
        .mcp_servers
        .status()
        .await
        .into_iter()
        .find(|s| s.name == name);
    Ok((
        StatusCode::CREATED,
        Json(serde_json::to_value(status).unwrap_or_default()),
    ))
}

/// Removes a server; its tools leave the next replies.
#[utoipa::path(delete, path = "/api/mcp-servers/{name}", tag = "mcp",
    responses((status = 200, description = "`{removed}`", body = Object),
              (status = 404, description = "No such server", body = ErrorBody)))]
pub async fn remove(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> ApiResult<Json<Value>> {
    let n = name.clone();
    state
        .blocking_api(move |s| config::remove(s, &n).map_err(change_error))
        .await?;
    state.mcp_servers.forget(&name).await;
    crate::cluster::mcp_changed(&state).await;
    Ok(Json(json!({ "removed": name })))
}

/// `{enabled}`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Enabled {
    /// Whether the server's tools join replies.
    pub enabled: bool,
}

/// Enables (and starts) or disables a server.
#[utoipa::path(put, path = "/api/mcp-servers/{name}/enabled", tag = "mcp",
    request_body = Enabled,
    responses((status = 200, description = "the server's state", body = Object),
              (status = 404, description = "No such server", body = ErrorBody)))]
pub async fn set_enabled(
    State(state): State<AppState>,
    Path(name): Path<String>,
    Json(body): Json<Enabled>,
) -> ApiResult<Json<Value>> {
    let n = name.clone();
    state
        .blocking_api(move |s| config::set_enabled(s, &n, body.enabled).map_err(change_error))
        .await?;
    if body.enabled {
        state.mcp_servers.connect_enabled().await;
    } else {
        state.mcp_servers.forget(&name).await;
    }
    crate::cluster::mcp_changed(&state).await;
    let status = state
        .mcp_servers
        .status()
        .await
        .into_iter()
        .find(|s| s.name == name);
    Ok(Json(serde_json::to_value(status).unwrap_or_default()))
}

/// `{approval}`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolApproval {
    /// `allow` (run without asking), `ask` (the default for outside tools) or `deny`.
    #[schema(value_type = String)]
    pub approval: Approval,
}

/// Sets the standing approval of one of a server's tools in every chat (`tools.approval`; a
/// choice remembered for one chat still wins there). `tool` is its name in tavo,
/// `mcp_<server>_<tool>`. Answers `{tool, approval}`.
#[utoipa::path(put, path = "/api/mcp-servers/{name}/tools/{tool}/approval", tag = "mcp",
    request_body = ToolApproval,
    responses((status = 200, description = "`{tool, approval}`", body = Object),
              (status = 400, description = "Not one of the server's tool names", body = ErrorBody),
              (status = 404, description = "No such server", body = ErrorBody)))]
pub async fn set_tool_approval(
    State(state): State<AppState>,
    Path((name, tool)): Path<(String, String)>,
    Json(body): Json<ToolApproval>,
) -> ApiResult<Json<Value>> {
    let prefix = format!("mcp_{name}_");
    if tool.len() <= prefix.len() || !tool.starts_with(&prefix) {
        return Err(ApiError::bad_request(format!(
            "{tool:?} is not a tool of the MCP server {name}: its tools are named {prefix}<tool>"
        )));
    }
    let (n, t) = (name.clone(), tool.clone());
    state
        .blocking_api(move |s| {
            let configs =
                config::load(s).map_err(|e| ApiError::internal("reading the MCP servers", e))?;
            if !configs.iter().any(|c| c.name == n) {
                return Err(change_error(ChangeError::Config(ConfigError::Unknown(n))));
            }
            super::approvals::remember_everywhere(s, &t, body.approval)
        })
        .await?;
    Ok(Json(json!({ "tool": tool, "approval": body.approval })))
}

/// The connection text of tavo's own MCP server, as Tavo lets users copy it (and `tavo mcp info`
/// prints it): `{enabled, scope, url, token?, text}`. The token is shown to the app's signed-in
/// user only — the one other place besides `tavo mcp info`.
#[utoipa::path(get, path = "/api/mcp/info", tag = "mcp",
    responses((status = 200, description = "`{enabled, scope, url, token?, text}`", body = Object)))]
pub async fn info(State(state): State<AppState>) -> ApiResult<Json<Value>> {
    use tavo_engine::settings;
    let url = format!("http://{}/mcp", state.config.addr);
    let (enabled, scope, token) = state
        .blocking_api(|s| {
            let read = |e| ApiError::internal("reading the MCP settings", e);
            Ok((
                settings::get(s, settings::MCP_ENABLED).map_err(read)? == json!(true),
                settings::get(s, settings::MCP_SCOPE).map_err(read)?,
                settings::secret(s, settings::MCP_TOKEN).map_err(read)?,
            ))
        })
        .await?;
    let text = format!(
        "Tavo MCP Server: {}\nPreferred access: direct HTTP JSON-RPC\nServer URL: {url}\nAuthorization: Bearer {}",
        env!("CARGO_PKG_VERSION"),
        token
            .as_deref()
            .unwrap_or("(enable the server to generate a token)")
    );
    Ok(Json(
        json!({"enabled": enabled, "scope": scope, "url": url, "token": token, "text": text}),
    ))
}
