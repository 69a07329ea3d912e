//! `mcp.scope`: with `loopback` (the default) only programs on this machine reach `/mcp`, and a
//! peer from the network gets `403 mcp_scope` even with the right token; with `network` the
//! same peer gets through to the token check. Tests may not open sockets to other machines, so
//! the router is driven in-process with the peer address a real connection would carry
//! (`ConnectInfo`, which `tavo serve` attaches to every request).

use std::net::SocketAddr;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tavo_engine::settings;
use tavo_server::{ServeConfig, Server};
use tavo_store::Store;
use tower::ServiceExt;

const MCP_TOKEN: &str = "mcp-scope-token-0123456789";

struct Library {
    _dir: tempfile::TempDir,
    store: Store,
    server: Server,
}

async fn library() -> Library {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(dir.path()).expect("open store");
    let server = Server::bind(ServeConfig::local(dir.path()), store.clone())
        .await
        .expect("bind");
    settings::set(&store, settings::MCP_ENABLED, "true").expect("enable");
    settings::set(&store, settings::MCP_TOKEN, MCP_TOKEN).expect("token");
    Library {
        _dir: dir,
        store,
        server,
    }
}

/// `initialize` from `peer`, with or without the MCP token; the status and the JSON body.
async fn initialize_from(lib: &Library, peer: &str, token: Option<&str>) -> (StatusCode, Value) {
    let peer: SocketAddr = peer.parse().expect("peer address");
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "scope-test", "version": "1"}}});
    let mut request = Request::post("/mcp")
        .header("host", "127.0.0.1:7860")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18");
    if let Some(t) = token {
        request = request.header("authorization", format!("Bearer {t}"));
    }
    let mut request = request.body(Body::from(body.to_string())).expect("request");
    request.extensions_mut().insert(ConnectInfo(peer));
    let app = tavo_server::app(lib.server.state().clone());
    let response = app.oneshot(request).await.expect("infallible router");
    let status = response.status();
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    let text = String::from_utf8_lossy(&bytes);
    // Plain JSON, or the last `data:` line should the transport choose SSE.
    let value = serde_json::from_str(&text).unwrap_or_else(|_| {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .next_back()
            .unwrap_or(Value::Null)
    });
    (status, value)
}

#[tokio::test]
async fn loopback_scope_refuses_a_network_peer_even_with_the_token() {
    let lib = library().await;
    for peer in ["192.168.1.20:50000", "[2001:db8::7]:50000", "10.0.0.3:1"] {
        let (status, body) = initialize_from(&lib, peer, Some(MCP_TOKEN)).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{peer}: {body}");
        assert_eq!(body["error"]["code"], "mcp_scope", "{peer}: {body}");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("mcp.scope"),
            "says what to change: {message}"
        );
    }
    // The same request from this machine (IPv4 or IPv6 loopback) is served.
    for peer in ["127.0.0.1:50000", "[::1]:50000"] {
        let (status, body) = initialize_from(&lib, peer, Some(MCP_TOKEN)).await;
        assert_eq!(status, StatusCode::OK, "{peer}: {body}");
        assert_eq!(body["result"]["serverInfo"]["name"], "tavo");
    }
}

#[tokio::test]
async fn network_scope_lets_a_network_peer_reach_the_token_check() {
    let lib = library().await;
    settings::set(&lib.store, settings::MCP_SCOPE, "network").expect("scope");
    let peer = "192.168.1.20:50000";
    let (status, body) = initialize_from(&lib, peer, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "no token: {body}");
    let (status, body) = initialize_from(&lib, peer, Some("wrong-token-0123456789")).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "wrong token: {body}");
    let (status, body) = initialize_from(&lib, peer, Some(MCP_TOKEN)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["result"]["protocolVersion"], "2025-06-18");
    // Back to loopback: refused again, without a restart.
    settings::set(&lib.store, settings::MCP_SCOPE, "loopback").expect("scope");
    let (status, _) = initialize_from(&lib, peer, Some(MCP_TOKEN)).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}
