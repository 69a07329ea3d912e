//! A server with accounts (`tavo serve --accounts`): a front door with sessions in front of
//! one single-user server state per user.
//!
//! - [`tenants`]: each user's library opened as a complete single-user state and router.
//! - [`door`]: health, login/logout, MCP and signed-URL hand-over, everything else to the
//!   session's user.
//! - [`admin`]: managing users in the app.
//! - [`shared`]: the shared library admins publish to, read-only for users.

mod admin;
mod door;
mod shared;
mod tenants;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use tavo_accounts::Accounts;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub use door::ACCOUNT_COOKIE;

use crate::{ServeConfig, ServeError};

/// A bound server with accounts, ready to run.
pub struct AccountsServer {
    listener: TcpListener,
    router: Router,
    door: Arc<door::Door>,
    shutdown: CancellationToken,
}

impl std::fmt::Debug for AccountsServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccountsServer").finish_non_exhaustive()
    }
}

impl AccountsServer {
    /// Binds a server whose users are those of `accounts` (at least one must exist).
    pub async fn bind(
        config: ServeConfig,
        accounts: Arc<Accounts>,
        client: tavo_llm::Client,
    ) -> Result<Self, ServeError> {
        config.validate()?;
        let users = accounts
            .list()
            .map_err(|e| ServeError::Engine(e.to_string()))?;
        if users.is_empty() {
            return Err(ServeError::NoUsers);
        }
        let shutdown = CancellationToken::new();
        let guard = Arc::new(crate::security::Guard::new(&config));
        let listener = crate::listen(config.addr).await?;
        let database = match (&config.database, accounts.database_pool()) {
            (None, _) => None,
            // The registry's pool: one replica per process.
            (Some(_), Some(pool)) => Some(pool),
            (Some(url), None) => {
                let url = url.clone();
                Some(
                    tokio::task::spawn_blocking(move || tavo_store::PgPool::connect(&url))
                        .await
                        .map_err(|e| ServeError::Engine(e.to_string()))?
                        .map_err(|e| ServeError::Engine(format!("the database: {e}")))?,
                )
            }
        };
        let door = Arc::new(door::Door {
            tenants: tenants::Tenants::new(accounts, config, client, shutdown.clone(), database),
            guard,
            usage: std::sync::Mutex::default(),
            shared: shared::SharedLibrary::default(),
        });
        Ok(AccountsServer {
            listener,
            router: door::router(door.clone()),
            door,
            shutdown,
        })
    }

    /// The address actually bound.
    pub fn local_addr(&self) -> Result<SocketAddr, ServeError> {
        Ok(self.listener.local_addr()?)
    }

    /// Serves until `signal`; then every user's replies end as a single-user server's do.
    pub async fn run(
        self,
        signal: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServeError> {
        // A user disabled or removed from the command line (`tavo user disable`) loses their
        // open event streams and replies within a few seconds, as one disabled in the app does
        // at once.
        let sweep = tokio::spawn(sweep(self.door.clone(), self.shutdown.clone()));
        let door = self.door.clone();
        let served = crate::serve(
            self.listener,
            self.router,
            self.shutdown,
            signal,
            move || {
                door.tenants
                    .all()
                    .iter()
                    .flat_map(|t| t.state.replies.live())
                    .collect()
            },
        )
        .await;
        sweep.abort();
        served
    }
}

/// How often open libraries are checked against the registry.
const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(3);

async fn sweep(door: Arc<door::Door>, shutdown: CancellationToken) {
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(SWEEP_EVERY) => {}
        }
        let accounts = door.tenants.accounts.clone();
        let Ok(Ok(users)) = tokio::task::spawn_blocking(move || accounts.list()).await else {
            continue;
        };
        for t in door.tenants.all() {
            let live = users.iter().any(|u| u.id == t.user.id && !u.disabled);
            if !live {
                tracing::info!(user = %t.user.name, "closing the library of a disabled or removed user");
                door.tenants.close(t.user.id, true);
            }
        }
    }
}
