//! The server's side of several replicas on one PostgreSQL database (see
//! `tavo_store::cluster` and `tavo_engine::cluster`): what one replica's pages hear, the
//! others' pages hear too, and a change to the outside MCP servers made on one replica is
//! applied on all.
//!
//! Nothing here runs on SQLite: the engine has no notices there.

use std::sync::Arc;

use serde_json::{Value, json};
use tavo_store::cluster::MAX_NOTICE_BYTES;

use crate::hub::GlobalEvent;
use crate::state::AppState;

/// Notice kind of a global event (`{event, data}`) published on another replica.
const GLOBAL_NOTICE: &str = "global";

/// Notice kind saying the list of outside MCP servers changed.
const MCP_NOTICE: &str = "mcp";

/// The global event names a replica republishes (the hub takes `'static` names).
fn event_name(name: &str) -> Option<&'static str> {
    Some(match name {
        "library" => "library",
        "reply" => "reply",
        "plugin" => "plugin",
        "tts" => "tts",
        _ => return None,
    })
}

/// Connects `state`'s hub and MCP servers to the other replicas. Call once, inside the runtime,
/// after the state is built.
pub(crate) fn attach(state: &AppState) {
    let engine = state.replies.engine().clone();
    let Some(mut notices) = engine.notices() else {
        return;
    };
    let me = engine.replica_id();
    let out = engine.clone();
    state.hub.forward_to(Arc::new(move |ev: &GlobalEvent| {
        let body = json!({"event": ev.event, "data": ev.data}).to_string();
        if body.len() + 200 > MAX_NOTICE_BYTES {
            tracing::debug!(event = ev.event, "a global event too large to forward");
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let engine = out.clone();
        runtime.spawn(async move {
            if let Err(e) = engine.announce(GLOBAL_NOTICE, body).await {
                tracing::warn!(error = %e, "cannot forward an event to the other replicas");
            }
        });
    }));
    let hub = state.hub.clone();
    let servers = state.mcp_servers.clone();
    let shutdown = state.shutdown.clone();
    tokio::spawn(async move {
        loop {
            let notice = tokio::select! {
                () = shutdown.cancelled() => return,
                n = notices.recv() => n,
            };
            let notice = match notice {
                Ok(n) => n,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            };
            if me.as_deref() == Some(notice.from.as_str()) {
                continue;
            }
            match notice.kind.as_str() {
                GLOBAL_NOTICE => {
                    let Ok(v) = serde_json::from_str::<Value>(&notice.body) else {
                        continue;
                    };
                    if let Some(name) = v["event"].as_str().and_then(event_name) {
                        hub.publish_local(name, v["data"].clone());
                    }
                }
                MCP_NOTICE => servers.reconcile().await,
                _ => {}
            }
        }
    });
}

/// Tells the other replicas that the MCP server list changed (after a change through this one).
pub(crate) async fn mcp_changed(state: &AppState) {
    let engine = state.replies.engine();
    if engine.replica_id().is_none() {
        return;
    }
    if let Err(e) = engine.announce(MCP_NOTICE, String::new()).await {
        tracing::warn!(error = %e, "cannot tell the other replicas about the MCP servers");
    }
}
