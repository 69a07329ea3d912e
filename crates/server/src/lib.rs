//! `tavo serve`: the HTTP API, the event streams, authentication.
//!
//! The server holds no business logic (ARCHITECTURE.md, "Dependency rules"): every route is a
//! door onto an operation of the tools registry, onto `tavo-tools`' library functions, or onto
//! the reply engine; it opens the store and passes it on, and calls none of its methods. What it
//! adds is HTTP: authentication and the browser protections, body limits, streamed uploads,
//! event streams with resumption, and the OpenAPI document.
//!
//! Code map:
//! - [`config`]: settings from flags, environment and `config.toml`; refuses an open bind.
//! - [`security`]: the guard every request passes (host check, token or cookie, CSRF).
//! - [`error`]: the JSON error shape and status mapping.
//! - [`hub`]: the global event stream with its replay history.
//! - [`upload`]: multipart parts spooled to disk under limits.
//! - [`library`]: import/export glue between `tavo-formats` and `tavo-store`.
//! - [`replies`]: replies started in the engine, their status on the global stream.
//! - [`routes`]: one module per group of routes, and the router with its OpenAPI document.
//! - [`static_app`]: the browser app (`web/`, embedded at build time) at `/`.
//! - [`mcp`]: Tavo's MCP server: `POST /mcp` (own switch, scope and token) and stdio.
//! - [`accounts`]: `--accounts`: sessions in front of one library per user.
//! - [`Server`]: binding, serving, graceful shutdown.

mod accounts;
mod cluster;
mod config;
mod error;
mod hub;
mod library;
mod mcp;
mod memory;
mod replies;
mod routes;
mod security;
#[cfg(test)]
mod slim;
mod sse;
mod state;
mod static_app;
mod upload;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::serve::ListenerExt;
use tavo_store::Store;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub use accounts::{ACCOUNT_COOKIE, AccountsServer};
pub use config::{ConfigError, Limits, Overrides, ServeConfig, UserLimits};
pub use error::ApiError;
pub use hub::Hub;
pub use mcp::{McpServeError, TavoMcp, serve_stdio};
pub use state::AppState;

/// How long shutdown waits for requests in flight after the signal.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// Why the server cannot start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The configuration is refused.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The address cannot be bound.
    #[error(
        "cannot listen on {addr}: {source} (is another tavo or program using that port? pick another with --addr)"
    )]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The operation registry could not be built.
    #[error("cannot build the operation registry: {0}")]
    Registry(String),
    /// The reply engine could not start (or recover interrupted replies).
    #[error("cannot start the reply engine: {0}")]
    Engine(String),
    /// Serving failed.
    #[error("the server stopped: {0}")]
    Io(#[from] std::io::Error),
    /// Accounts are on but nobody can log in.
    #[error(
        "accounts are on but there are no users yet: add the first admin with `tavo user add NAME --admin`"
    )]
    NoUsers,
}

/// A bound server, ready to run.
pub struct Server {
    listener: TcpListener,
    router: Router,
    state: AppState,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Validates the configuration, builds the state and binds the listener (port 0 picks a
    /// free port; see [`Server::local_addr`]).
    pub async fn bind(config: ServeConfig, store: Store) -> Result<Self, ServeError> {
        let client = tavo_llm::Client::new().map_err(|e| ServeError::Engine(e.message))?;
        Self::bind_with_client(config, store, client).await
    }

    /// Like [`Server::bind`], with the provider client replies use (its retry policy and
    /// time-outs; tests shorten them).
    pub async fn bind_with_client(
        config: ServeConfig,
        store: Store,
        client: tavo_llm::Client,
    ) -> Result<Self, ServeError> {
        config.validate()?;
        let state = build_state(config, store, client).await?;
        let listener = listen(state.config.addr).await?;
        let router = app(state.clone());
        Ok(Server {
            listener,
            router,
            state,
        })
    }

    /// The address actually bound.
    pub fn local_addr(&self) -> Result<SocketAddr, ServeError> {
        Ok(self.listener.local_addr()?)
    }

    /// The shared state (tests publish events through its hub).
    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// Serves until `signal` completes, then stops accepting, ends the event streams and waits
    /// up to [`DRAIN_TIMEOUT`] for requests in flight.
    pub async fn run(
        self,
        signal: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServeError> {
        let replies = self.state.replies.clone();
        serve(
            self.listener,
            self.router,
            self.state.shutdown.clone(),
            signal,
            move || replies.live(),
        )
        .await
    }
}

/// Binds the listening socket.
pub(crate) async fn listen(addr: SocketAddr) -> Result<TcpListener, ServeError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError::Bind { addr, source })
}

/// One library's state: its engine (web tools, attached pages, the enabled outside MCP
/// servers, connected in the background so a slow server never delays the start), the
/// recovery of replies a previous process left, the hub.
pub(crate) async fn build_state(
    config: ServeConfig,
    store: Store,
    client: tavo_llm::Client,
) -> Result<AppState, ServeError> {
    let tavo_engine::BuiltEngine {
        engine,
        mcp_servers: servers,
        pages,
    } = tavo_engine::Engine::builder(store.clone(), tavo_engine::McpStart::Background)
        .client(client)
        .build()
        .await
        .map_err(|e| match e {
            tavo_engine::EngineError::Registry(e) => ServeError::Registry(e),
            e => ServeError::Engine(e.to_string()),
        })?;
    let registry = engine.registry();
    // The tokenizer's pattern compiles in the background (a few ms of CPU, once), off every
    // reply's path; its tables are in the executable.
    engine.warm_tokenizers();
    // Seed: a reply a previous process left running or waiting is cancelled, never replayed.
    let recovered = tokio::task::spawn_blocking({
        let engine = engine.clone();
        move || engine.recover()
    })
    .await
    .map_err(|e| ServeError::Engine(e.to_string()))?
    .map_err(|e| ServeError::Engine(e.to_string()))?;
    if !recovered.is_empty() {
        tracing::info!(
            count = recovered.len(),
            "cancelled replies interrupted by the last shutdown"
        );
    }
    let hub = Hub::new(config.limits.sse_buffer);
    let trimmer = memory::Trimmer::default();
    // Start-up frees what it only needed once (migrations, the recovery, the tokenizer
    // pattern's compilation): ≈ 3.3 MB of heap that glibc would otherwise keep while the
    // server sits idle, and the executable's pages only start-up ran (issue 29; figures in
    // BENCHMARKS.md).
    memory::after_start(&trimmer);
    let state = AppState {
        mcp_servers: servers,
        pages,
        replies: replies::Replies::new(engine, hub.clone(), trimmer.clone()),
        trimmer,
        upload_dir: config.data_dir.join("tmp").join("uploads"),
        guard: Arc::new(security::Guard::new(&config)),
        config: Arc::new(config),
        store,
        registry,
        hub,
        shutdown: CancellationToken::new(),
        gate: Arc::new(tokio::sync::Semaphore::new(state::BLOCKING_CONCURRENCY)),
        url_prefix: String::new(),
    };
    // `tts` playback events reach the open app on the global event stream.
    routes::tts::attach(&state);
    // On a shared database: events and MCP changes reach the other replicas.
    cluster::attach(&state);
    // Spool files of uploads a killed process left behind.
    if let Err(e) = std::fs::remove_dir_all(&state.upload_dir)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!(error = %e, "cannot clear the upload spool folder");
    }
    Ok(state)
}

/// Serves `router` until `signal` completes, then stops accepting, ends the event streams
/// (`shutdown`), cancels the replies `live` lists (their partial text saved) and waits up to
/// [`DRAIN_TIMEOUT`] for requests in flight.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    shutdown: CancellationToken,
    signal: impl Future<Output = ()> + Send + 'static,
    live: impl FnOnce() -> Vec<tavo_engine::ReplyHandle>,
) -> Result<(), ServeError> {
    let stop = shutdown.clone();
    // Routes resolved once, then shared by every connection: `serve(listener, router)`
    // would copy the whole route table for each connection.
    let router = router
        .with_state::<()>(())
        // The peer's address decides `mcp.scope loopback`.
        .into_make_service_with_connect_info::<SocketAddr>();
    // Event streams are many small writes, each of which should leave at once: with
    // Nagle's algorithm on, a small write waits while an earlier one is unacknowledged,
    // and a delayed ACK can hold it for tens of milliseconds. hyper already writes each
    // response or event in whole frames, so this costs nothing in packet count.
    let listener = listener.tap_io(|stream| {
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, "cannot set TCP_NODELAY on a connection");
        }
    });
    let serve = axum::serve(listener, router).with_graceful_shutdown(async move {
        signal.await;
        tracing::info!("shutting down: finishing requests in flight");
        stop.cancel();
    });
    let serve = tokio::spawn(serve.into_future());
    tokio::pin!(serve);
    tokio::select! {
        result = &mut serve => return flatten(result),
        () = shutdown.cancelled() => {}
    }
    // Replies end as `cancelled` with their partial text saved, rather than being found
    // `running` at the next start.
    let live = live();
    for reply in &live {
        reply.cancel();
    }
    let ended = futures_util::future::join_all(live.iter().map(|r| r.wait()));
    if tokio::time::timeout(Duration::from_secs(3), ended)
        .await
        .is_err()
    {
        tracing::warn!("some replies did not end within 3 s; the next start cancels them");
    }
    match tokio::time::timeout(DRAIN_TIMEOUT, &mut serve).await {
        Ok(result) => flatten(result),
        Err(_) => {
            tracing::warn!("requests still in flight after {DRAIN_TIMEOUT:?}; stopping anyway");
            Ok(())
        }
    }
}

fn flatten(result: Result<std::io::Result<()>, tokio::task::JoinError>) -> Result<(), ServeError> {
    match result {
        Ok(r) => Ok(r?),
        Err(e) => Err(ServeError::Io(std::io::Error::other(e.to_string()))),
    }
}

/// The complete application: routes, the guard, JSON errors.
pub fn app(state: AppState) -> Router {
    let guard = state.guard.clone();
    let mcp = mcp::http::router(state.clone());
    let (router, _api) = routes::router(state);
    router
        .layer(axum::middleware::from_fn_with_state(guard, security::guard))
        .layer(axum::middleware::map_response(routes::json_errors))
        // Outside the API's guard: /mcp has its own switch, scope and token.
        .merge(mcp)
}

/// The OpenAPI document (for `docs/api.md` and tests) without binding anything.
pub fn openapi(state: AppState) -> utoipa::openapi::OpenApi {
    routes::router(state).1
}

/// Completes on SIGINT (Ctrl-C) or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::warn!(error = %e, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
}
