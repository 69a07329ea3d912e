//! What every handler shares: the library, the operation registry, the settings, the global
//! event hub, the replies and the shutdown signal.

use std::path::PathBuf;
use std::sync::Arc;

use tavo_store::{Store, StoreError};
use tavo_tools::Registry;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::config::ServeConfig;
use crate::error::{ApiError, ApiResult};
use crate::hub::Hub;
use crate::replies::Replies;
use crate::security::Guard;

/// The shared state of the router. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    /// The library.
    pub store: Store,
    /// Every operation, the same registry the model uses.
    pub registry: Arc<Registry>,
    /// The settings the server runs with.
    pub config: Arc<ServeConfig>,
    /// Authentication and CSRF rules.
    pub guard: Arc<Guard>,
    /// The global event stream.
    pub hub: Hub,
    /// Replies running in the engine.
    pub replies: Replies,
    /// Cancelled when the server shuts down; long-lived streams end on it.
    pub shutdown: CancellationToken,
    /// Where uploads are spooled while they stream in (`<data>/tmp/uploads`).
    pub upload_dir: PathBuf,
    /// Admits [`BLOCKING_CONCURRENCY`] library tasks at a time onto the blocking pool.
    pub gate: Arc<Semaphore>,
    /// Returns memory to the system after bursts (the last reply ended, an import).
    pub trimmer: crate::memory::Trimmer,
    /// The outside MCP servers whose tools replies get (`/api/mcp-servers`).
    pub mcp_servers: tavo_engine::mcp_servers::McpServers,
    /// Browser pages attached for their function tools (`/api/pages`).
    pub pages: tavo_engine::pages::Pages,
    /// Where this library's URLs live on the server: empty on a single-user server, `/u/<id>`
    /// for a user's library on a server with accounts (signed file URLs, which a sandboxed
    /// frame fetches without the session cookie, name their library this way).
    pub url_prefix: String,
}

/// Library tasks of requests that run at once. The library is one SQLite connection, so more
/// would only wait for its lock — each on an OS thread of its own: 500 replies started at once
/// used to grow the blocking pool to 512 threads and the server to 1 GB. Requests beyond this
/// wait as cheap futures instead.
pub const BLOCKING_CONCURRENCY: usize = 4;

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl AppState {
    /// Runs synchronous work on the blocking pool, so a slow query never stalls the executor
    /// that relays event streams; at most [`BLOCKING_CONCURRENCY`] at a time.
    pub async fn off_executor<T, F>(&self, f: F) -> ApiResult<T>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        let _permit = self
            .gate
            .acquire()
            .await
            .map_err(|e| ApiError::internal("a library task", e))?;
        tokio::task::spawn_blocking(f)
            .await
            .map_err(|e| ApiError::internal("a library task", e))
    }

    /// Runs synchronous store work off the executor (see [`AppState::off_executor`]).
    pub async fn blocking<T, F>(&self, f: F) -> ApiResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
    {
        let store = self.store.clone();
        self.off_executor(move || f(&store))
            .await?
            .map_err(ApiError::from)
    }

    /// Like [`AppState::blocking`], for work whose errors are already API errors.
    pub async fn blocking_api<T, F>(&self, f: F) -> ApiResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Store) -> ApiResult<T> + Send + 'static,
    {
        let store = self.store.clone();
        self.off_executor(move || f(&store)).await?
    }
}
