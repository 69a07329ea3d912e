//! The engine of every command: one construction, [`tavo_engine::Engine::builder`], so what a
//! command can do (web tools, outside MCP servers, the memory, image and speech services)
//! never depends on which command built it. A command says only whether it reaches tools
//! ([`McpStart::Wait`]: the outside servers connect before it runs, so a preview and the
//! request it previews declare the same tools) or not ([`McpStart::Off`]).

use anyhow::Context as _;
use tavo_engine::{Engine, McpStart};
use tavo_store::Store;

/// The engine, with the outside MCP servers connected as `mcp` says; a server that fails to
/// start is a note on stderr and the command goes on without its tools.
pub(crate) async fn build(store: Store, mcp: McpStart) -> anyhow::Result<Engine> {
    let built = Engine::builder(store, mcp)
        .build()
        .await
        .context("building the engine")?;
    if mcp == McpStart::Wait {
        for s in built.mcp_servers.status().await {
            if let Some(e) = s.last_error {
                eprintln!("note: MCP server {} is unavailable: {e}", s.name);
            }
        }
    }
    Ok(built.engine)
}

/// The engine of a command that runs replies (`tavo reply`, `tavo chat`): tools reached, and
/// the replies a dead process left running or waiting marked cancelled first (never replayed).
pub(crate) async fn for_replies(store: Store) -> anyhow::Result<Engine> {
    let engine = build(store, McpStart::Wait).await?;
    for r in engine.recover().context("recovering interrupted replies")? {
        eprintln!(
            "note: reply {} of chat {} was interrupted earlier and is now cancelled",
            r.id, r.chat_id
        );
    }
    Ok(engine)
}
