//! The open libraries of a server with accounts: one complete single-user server state (store,
//! engine, hub, pages, MCP servers) per user, opened on the user's first request and kept.
//!
//! Isolation is by construction: a user's requests reach only their own router, whose every
//! route works on their own library, so no query can name another user's rows.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use tavo_accounts::{Accounts, User};
use tavo_store::Store;
use tokio_util::sync::CancellationToken;

use crate::state::AppState;
use crate::{ServeConfig, ServeError};

/// Where a user's library's own URLs live: `/u/<id>` (signed file URLs).
pub const USER_PREFIX: &str = "/u/";

/// One user's open library.
#[derive(Clone)]
pub struct Tenant {
    /// Whose it is.
    pub user: User,
    /// The library's server state.
    pub state: AppState,
    /// Every route of a single-user server, on that state.
    pub router: Router,
}

/// The open libraries, by user id.
pub struct Tenants {
    /// The registry.
    pub accounts: Arc<Accounts>,
    base: ServeConfig,
    client: tavo_llm::Client,
    /// The server's shutdown: each library's own token is a child of it.
    shutdown: CancellationToken,
    open: std::sync::Mutex<HashMap<i64, Tenant>>,
    /// Held while a library opens, so two first requests do not open it twice.
    opening: tokio::sync::Mutex<()>,
    /// With `--database`: the PostgreSQL database every library lives in (one schema each).
    pub database: Option<Arc<tavo_store::PgPool>>,
}

impl Tenants {
    /// No library open yet.
    pub fn new(
        accounts: Arc<Accounts>,
        base: ServeConfig,
        client: tavo_llm::Client,
        shutdown: CancellationToken,
        database: Option<Arc<tavo_store::PgPool>>,
    ) -> Self {
        Tenants {
            accounts,
            base,
            client,
            shutdown,
            open: std::sync::Mutex::default(),
            opening: tokio::sync::Mutex::default(),
            database,
        }
    }

    /// Opens a library folder, or its schema when the libraries live in PostgreSQL.
    pub async fn open_library(
        &self,
        dir: std::path::PathBuf,
        schema: String,
    ) -> Result<Store, ServeError> {
        let pool = self.database.clone();
        let name = schema.clone();
        tokio::task::spawn_blocking(move || match pool {
            None => Store::open(&dir),
            Some(pool) => Store::open_postgres(pool, &name, &dir),
        })
        .await
        .map_err(|e| ServeError::Engine(e.to_string()))?
        .map_err(|e| ServeError::Engine(format!("opening the library {schema}: {e}")))
    }

    /// What one user may use of the server.
    pub fn limits(&self) -> crate::UserLimits {
        self.base.user_limits
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<i64, Tenant>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn cached(&self, user: &User) -> Option<Tenant> {
        self.map().get(&user.id).map(|t| {
            let mut t = t.clone();
            // Admin flags change; the library does not.
            t.user = user.clone();
            t
        })
    }

    /// The user's library, opened on first use.
    pub async fn get(&self, user: &User) -> Result<Tenant, ServeError> {
        if let Some(t) = self.cached(user) {
            return Ok(t);
        }
        let _opening = self.opening.lock().await;
        if let Some(t) = self.cached(user) {
            return Ok(t);
        }
        let dir = self.accounts.library_dir(user);
        let store = self
            .open_library(dir.clone(), self.accounts.library_schema(user))
            .await?;
        let mut config = self.base.clone();
        config.data_dir = dir;
        config.token = None;
        config.accounts = false;
        let mut state = crate::build_state(config, store, self.client.clone()).await?;
        state.url_prefix = format!("{USER_PREFIX}{}", user.id);
        state.shutdown = self.shutdown.child_token();
        let tenant = Tenant {
            user: user.clone(),
            router: crate::app(state.clone()),
            state,
        };
        self.map().insert(user.id, tenant.clone());
        tracing::info!(user = %user.name, "opened a user's library");
        Ok(tenant)
    }

    /// Closes a user's library: their event streams end, and with `stop_replies` their
    /// replies stop too (partial text kept). Their next request opens it again.
    pub fn close(&self, user: i64, stop_replies: bool) {
        let closed = self.map().remove(&user);
        if let Some(t) = closed {
            t.state.shutdown.cancel();
            if stop_replies {
                for reply in t.state.replies.live() {
                    reply.cancel();
                }
            }
        }
    }

    /// Every open library.
    pub fn all(&self) -> Vec<Tenant> {
        self.map().values().cloned().collect()
    }
}
