//! `POST /mcp`: MCP's streamable HTTP transport on `tavo serve`, as Tavo's MCP server answers it
//! (reference §18): JSON-RPC 2.0, plain JSON responses ("direct HTTP JSON-RPC"; rmcp falls back
//! to SSE only when a call sends notifications before its result), no sessions.
//!
//! The route has its own door, in this order:
//! 1. off (`mcp.enabled` false, the default) → 404, as if there were no MCP server;
//! 2. a method other than POST → 405 with `Allow: POST`;
//! 3. the same host rule as the rest of the server (DNS rebinding);
//! 4. `mcp.scope` `loopback` (the default) and a peer that is not this machine → 403;
//! 5. no or a wrong `Authorization: Bearer <mcp.token>` → 401.
//!
//! The server's own token and cookie do not open `/mcp`, and the MCP token opens nothing else:
//! an agent given access to the library gets exactly the MCP tools.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tavo_engine::settings;

use super::TavoMcp;
use crate::error::ApiError;
use crate::state::AppState;

/// The MCP route with its door; merged into the app outside the API's guard.
pub fn router(state: AppState) -> Router {
    let mcp = TavoMcp::new(state.replies.engine().dispatcher()).with_input(Arc::new(
        super::input::ServerInput {
            state: state.clone(),
        },
    ));
    let mut config = StreamableHttpServerConfig::default();
    config.legacy_session_mode = false;
    config.json_response = true;
    // The host rule is checked by our door with the server's own list (IP addresses and
    // `allowed_hosts` from config.toml), so that `mcp.scope network` works by address.
    config.allowed_hosts = Vec::new();
    config.cancellation_token = state.shutdown.child_token();
    let service: StreamableHttpService<TavoMcp, LocalSessionManager> = StreamableHttpService::new(
        move || Ok(mcp.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    Router::new()
        .route_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(state, door))
}

/// What the door read from the settings.
struct Access {
    enabled: bool,
    network: bool,
    token: Option<String>,
}

fn read_access(store: &tavo_store::Store) -> Access {
    let enabled = settings::get(store, settings::MCP_ENABLED).ok() == Some(serde_json::json!(true));
    let network =
        settings::get(store, settings::MCP_SCOPE).ok() == Some(serde_json::json!("network"));
    let token = settings::secret(store, settings::MCP_TOKEN).ok().flatten();
    Access {
        enabled,
        network,
        token,
    }
}

async fn door(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let store = state.store.clone();
    let access = match tokio::task::spawn_blocking(move || read_access(&store)).await {
        Ok(a) => a,
        Err(_) => {
            return ApiError::internal("reading the MCP settings", "the settings task stopped")
                .into_response();
        }
    };
    if !access.enabled {
        return ApiError::new(
            StatusCode::NOT_FOUND,
            "mcp_disabled",
            "the MCP server is off; turn it on with `tavo settings set mcp.enabled true` (or in the app's settings)",
        )
        .into_response();
    }
    if request.method() != Method::POST {
        let mut response = ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            "the MCP endpoint takes POST (JSON-RPC 2.0)",
        )
        .into_response();
        response
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("POST"));
        return response;
    }
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    if !state.guard.host_allowed(&host) {
        return ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden_host",
            "this server answers only requests addressed to localhost or an IP address",
        )
        .into_response();
    }
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip());
    let from_this_machine = peer.is_some_and(|ip| ip.is_loopback());
    if !access.network && !from_this_machine {
        return ApiError::new(
            StatusCode::FORBIDDEN,
            "mcp_scope",
            "the MCP server's scope is loopback: only programs on this machine may use it \
             (set mcp.scope to network to allow other devices)",
        )
        .into_response();
    }
    let sent = crate::security::bearer(request.headers());
    let authorised = match (&access.token, sent) {
        (Some(expected), Some(sent)) => {
            crate::security::constant_time_eq(expected.as_bytes(), sent.as_bytes())
        }
        _ => false,
    };
    if !authorised {
        let mut response = ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "the MCP server needs `Authorization: Bearer <token>`; `tavo mcp info` shows the token",
        )
        .into_response();
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return response;
    }
    next.run(request).await
}
