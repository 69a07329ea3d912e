//! Store work off the executor.
//!
//! The library is one SQLite connection, and a long write (an import) can hold it for
//! seconds. A worker thread waiting for it would relay no event of any reply meanwhile, so
//! every store call of the engine goes through here, onto tokio's blocking pool.

use tavo_store::Store;

/// The blocking pool or the library gate failed a piece of store work: its closure panicked,
/// or the runtime is shutting down. Cloneable, so one failure can answer every waiter of a
/// batch.
#[derive(Debug, Clone, thiserror::Error)]
#[error("internal task failed: {0}")]
pub struct PoolError(String);

impl From<tokio::task::JoinError> for PoolError {
    fn from(e: tokio::task::JoinError) -> Self {
        Self(e.to_string())
    }
}

impl From<tokio::sync::AcquireError> for PoolError {
    fn from(e: tokio::sync::AcquireError) -> Self {
        Self(e.to_string())
    }
}

/// Runs `f` against `store` on the blocking pool; its error comes back as it is, the pool's (a
/// panic in `f`) as `E` made from a [`PoolError`].
pub(crate) async fn on_blocking_pool<T, E>(
    store: &Store,
    f: impl FnOnce(&Store) -> Result<T, E> + Send + 'static,
) -> Result<T, E>
where
    T: Send + 'static,
    E: From<PoolError> + Send + 'static,
{
    let store = store.clone();
    tokio::task::spawn_blocking(move || f(&store))
        .await
        .map_err(|e| E::from(PoolError::from(e)))?
}

/// Runs `f` against `store` on the blocking pool behind the engine's library `gate`, keeping
/// `f`'s own error type: a closed gate or a panic in `f` becomes `internal(message)`. The
/// one-request features (memory extraction, translation) run their store work through it.
pub(crate) async fn gated<T, E>(
    store: &Store,
    gate: &tavo_tools::Gate,
    internal: fn(String) -> E,
    f: impl FnOnce(&Store) -> Result<T, E> + Send + 'static,
) -> Result<T, E>
where
    T: Send + 'static,
    E: Send + 'static,
{
    let _permit = gate
        .acquire()
        .await
        .map_err(|e| internal(format!("internal task failed: {e}")))?;
    let store = store.clone();
    tokio::task::spawn_blocking(move || f(&store))
        .await
        .map_err(|e| internal(format!("internal task failed: {e}")))?
}
