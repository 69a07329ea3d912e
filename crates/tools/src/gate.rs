//! The gate in front of the blocking pool: how many library tasks hold an OS thread at once.
//!
//! The library is one SQLite connection, so more than a handful of threads working on it at
//! once only queue on its lock — each holding a thread of tokio's blocking pool while it waits
//! (500 replies starting together once grew the pool to 515 threads and 1 GB). Every store call
//! made from async code goes through a [`Gate`]: the engine's tasks, the server's handlers and
//! every operation handler (through [`crate::OpContext::blocking`]), so no door can slip past it.

use std::sync::Arc;

use tavo_store::Store;
use tokio::sync::{AcquireError, Semaphore, SemaphorePermit};

use crate::call_clock::CallClock;
use crate::error::ToolError;

/// Library tasks that run at once behind one gate.
pub const BLOCKING_CONCURRENCY: usize = 4;

/// A shared bound on library tasks. Cheap to clone; clones share the bound.
#[derive(Clone, Debug)]
pub struct Gate(Arc<Semaphore>);

impl Default for Gate {
    fn default() -> Self {
        Self::new(BLOCKING_CONCURRENCY)
    }
}

impl Gate {
    /// A gate admitting `permits` tasks at a time.
    pub fn new(permits: usize) -> Self {
        Self(Arc::new(Semaphore::new(permits.max(1))))
    }

    /// Waits for a place; the place is given back when the permit drops. A gate is never
    /// closed, so the error only exists to keep the semaphore's signature.
    pub async fn acquire(&self) -> Result<SemaphorePermit<'_>, AcquireError> {
        self.0.acquire().await
    }

    /// Runs `f` against `store` on the blocking pool, behind the gate. A panic in `f` comes
    /// back as `internal_error` naming `what`.
    pub async fn run<T, F>(&self, store: &Store, what: &'static str, f: F) -> Result<T, ToolError>
    where
        T: Send + 'static,
        F: FnOnce(&Store) -> Result<T, ToolError> + Send + 'static,
    {
        // Inside a call, the call's clock learns how long this waits and whether store work
        // runs (see `call_clock`): queued time is not the call's, and a started write is
        // awaited past the deadline rather than left to land after `timeout` was answered.
        let clocks = CallClock::current();
        let permit = {
            let _waiting = Waiting::begin(&clocks);
            self.acquire()
                .await
                .map_err(|_| ToolError::internal(what))?
        };
        CallClock::begin_store_work(&clocks, what)?;
        let _working = StoreWork(&clocks);
        let store = store.clone();
        let result = match tokio::task::spawn_blocking(move || f(&store)).await {
            Ok(result) => result,
            Err(_) => Err(ToolError::internal(what)),
        };
        drop(permit);
        result
    }
}

/// A wait for a gate place, ended when dropped (granted or abandoned).
struct Waiting<'a>(&'a [CallClock]);

impl<'a> Waiting<'a> {
    fn begin(clocks: &'a [CallClock]) -> Self {
        CallClock::begin_wait(clocks);
        Self(clocks)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        CallClock::end_wait(self.0);
    }
}

/// Store work in progress, ended when dropped.
struct StoreWork<'a>(&'a [CallClock]);

impl Drop for StoreWork<'_> {
    fn drop(&mut self) {
        CallClock::end_store_work(self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn at_most_the_permits_run_at_once() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let store = Store::open(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let gate = Gate::new(2);
        let running = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let peak = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let tasks: Vec<_> = (0..8)
            .map(|_| {
                let (gate, store) = (gate.clone(), store.clone());
                let (running, peak) = (running.clone(), peak.clone());
                tokio::spawn(async move {
                    gate.run(&store, "test", move |_| {
                        use std::sync::atomic::Ordering::SeqCst;
                        let now = running.fetch_add(1, SeqCst) + 1;
                        peak.fetch_max(now, SeqCst);
                        std::thread::sleep(std::time::Duration::from_millis(20));
                        running.fetch_sub(1, SeqCst);
                        Ok(())
                    })
                    .await
                })
            })
            .collect();
        for t in tasks {
            assert!(matches!(t.await, Ok(Ok(()))));
        }
        assert_eq!(peak.load(std::sync::atomic::Ordering::SeqCst), 2);
    }
}
