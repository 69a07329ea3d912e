//! Store work off the executor.
//!
//! The library is one SQLite connection, and a long write (an import) can hold it for
//! seconds. A worker thread waiting for it would relay no event of any reply meanwhile, so
//! every store call of the engine goes through here, onto tokio's blocking pool.

use std::fmt::Display;

use tavo_store::Store;

/// Runs `f` against `store` on the blocking pool; its error, or the pool's (a panic in `f`),
/// comes back as text.
pub(crate) async fn on_blocking_pool<T, E>(
    store: &Store,
    f: impl FnOnce(&Store) -> Result<T, E> + Send + 'static,
) -> Result<T, String>
where
    T: Send + 'static,
    E: Display + Send + 'static,
{
    let store = store.clone();
    match tokio::task::spawn_blocking(move || f(&store)).await {
        Ok(result) => result.map_err(|e| e.to_string()),
        Err(e) => Err(format!("internal task failed: {e}")),
    }
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
