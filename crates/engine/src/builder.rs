//! The one way a door builds the engine: every CLI command, `tavo serve`, `tavo mcp`.
//!
//! What a command can do must not depend on which copy of the construction it took (before
//! this, `tavo prompt` built an engine without the outside MCP servers that `tavo reply` had,
//! so its preview lacked tools the request then carried). So everything is the same
//! everywhere — the built-in registry, the web tools, the outside MCP servers as extension
//! tools, browser pages (their tools and plugin hooks; with no page attached they add
//! nothing), the memory, image and speech services — and a door decides only:
//!
//! - [`McpStart`]: when the outside MCP servers connect — before the command runs (a CLI
//!   command whose first request must declare their tools), in the background (the server,
//!   which must not wait on a slow one), or not at all (a command that reaches no tool).
//! - the provider client ([`EngineBuilder::client`]), which tests shorten the retries of.
//!
//! Start-up recovery ([`crate::Engine::recover`]) stays the door's call: it is about owning
//! replies, not about what the engine can do, and a preview must write nothing.

use std::sync::Arc;

use tavo_llm::Client;
use tavo_store::Store;
use tavo_tools::extension::ExtensionRegistry;

use crate::Engine;
use crate::error::EngineError;
use crate::mcp_servers::McpServers;
use crate::pages::{Extensions, Pages};

/// When the outside MCP servers (`tavo mcp-server`) connect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpStart {
    /// Before [`EngineBuilder::build`] returns: the command's first request, its prompt
    /// preview and its direct tool calls see their tools (every CLI command that reaches tools).
    Wait,
    /// In the background: a slow or broken server never delays the door (`tavo serve`); its
    /// tools join as it connects.
    Background,
    /// Never: the command reaches no tool (a translation, a speech synthesis, an image, a
    /// memory extraction), so starting outside servers' processes would be wasted work.
    Off,
}

/// Builds an [`Engine`]; see the module docs for what a door decides and what it does not.
pub struct EngineBuilder {
    store: Store,
    mcp: McpStart,
    client: Option<Client>,
}

impl std::fmt::Debug for EngineBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineBuilder")
            .field("mcp", &self.mcp)
            .field("client", &self.client.is_some())
            .finish_non_exhaustive()
    }
}

/// What [`EngineBuilder::build`] gives the door: the engine and the handles on its
/// extension sources, for the doors that show or change them.
#[derive(Debug)]
pub struct BuiltEngine {
    /// The engine.
    pub engine: Engine,
    /// The outside MCP servers (status, reconnects; `/api/mcp-servers`).
    pub mcp_servers: McpServers,
    /// Browser pages attached for their tools and hooks (`/api/pages/*`).
    pub pages: Pages,
}

impl Engine {
    /// The builder every door builds its engine with: `mcp` says when the outside MCP servers
    /// connect; everything else is the same for every door.
    pub fn builder(store: Store, mcp: McpStart) -> EngineBuilder {
        EngineBuilder {
            store,
            mcp,
            client: None,
        }
    }
}

impl EngineBuilder {
    /// Replies use `client` (its retry policy and time-outs) instead of the default one.
    pub fn client(mut self, client: Client) -> Self {
        self.client = Some(client);
        self
    }

    /// The engine, with the MCP servers connected as [`McpStart`] says. With
    /// [`McpStart::Background`] it must run inside a tokio runtime; a server that fails to
    /// start is a status (`mcp_servers.status()`), never an error here.
    pub async fn build(self) -> Result<BuiltEngine, EngineError> {
        let client = match self.client {
            Some(c) => c,
            None => Client::new().map_err(|e| EngineError::Internal(e.message))?,
        };
        let registry =
            tavo_tools::builtin_registry().map_err(|e| EngineError::Registry(e.to_string()))?;
        let extensions = ExtensionRegistry::default();
        let mcp_servers = McpServers::new(self.store.clone(), extensions.clone());
        let pages = Pages::new(extensions.clone());
        let services = Arc::new(tavo_tools::Services {
            extensions,
            ..Default::default()
        });
        let runner = Extensions {
            pages: pages.clone(),
            servers: mcp_servers.clone(),
        };
        let engine = Engine::with_client(
            self.store,
            registry,
            services,
            client,
            Some(Arc::new(runner)),
        )
        .with_hooks(Arc::new(pages.clone()))
        .with_web();
        if let Some(notices) = engine.notices() {
            tokio::spawn(crate::cluster::watch(engine.downgrade(), notices));
        }
        match self.mcp {
            McpStart::Wait => mcp_servers.connect_enabled().await,
            McpStart::Background => {
                let servers = mcp_servers.clone();
                tokio::spawn(async move { servers.connect_enabled().await });
            }
            McpStart::Off => {}
        }
        Ok(BuiltEngine {
            engine,
            mcp_servers,
            pages,
        })
    }
}
