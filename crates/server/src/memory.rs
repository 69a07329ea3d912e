//! Giving memory back to the operating system once a burst of work is over.
//!
//! Why: glibc's allocator keeps what a burst freed — hundreds of replies streaming at once, a
//! 100,000-message import — in its arenas for reuse, so the server's RSS stayed at its peak
//! long after the work ended. Rust's allocations are freed on time (each reply's event log
//! with its last handle, bounded by [`crate::replies::RECENT_CAPACITY`]); the [`Trimmer`] asks
//! the allocator to hand the free pages back a moment after the server becomes idle.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

mod startup_code;

pub use startup_code::release_startup_code;

/// How long the server must stay quiet before memory is trimmed; a new burst within this
/// delay postpones the trim (trimming costs a few milliseconds on a large heap).
pub const TRIM_DELAY: Duration = Duration::from_millis(500);

/// Returns free heap pages to the operating system; `true` when some were returned. Only
/// glibc keeps freed memory this way; elsewhere this does nothing.
#[allow(unsafe_code)] // FFI: the one unsafe call of the server (see Cargo.toml's lints).
pub fn release_free_memory() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: malloc_trim only walks the allocator's own free lists, under its locks; it
        // takes no pointer from us and is safe to call from any thread at any time.
        unsafe { libc::malloc_trim(0) != 0 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

/// What start-up alone needed, given back once the server is up: the heap it freed (a
/// [`Trimmer`] trim) and the executable's pages it mapped ([`release_startup_code`]).
pub fn after_start(trimmer: &Trimmer) {
    trimmer.schedule();
    tokio::spawn(async {
        tokio::time::sleep(TRIM_DELAY).await;
        if let Ok(kb) = tokio::task::spawn_blocking(release_startup_code).await {
            tracing::debug!(kb, "released the executable's start-up pages");
        }
    });
}

/// A debounced trim: [`Trimmer::schedule`] trims [`TRIM_DELAY`] after its last call.
#[derive(Debug, Clone, Default)]
pub struct Trimmer {
    generation: Arc<AtomicU64>,
    trims: Arc<AtomicU64>,
}

impl Trimmer {
    /// Trims after [`TRIM_DELAY`] unless another schedule comes first. Must be called inside
    /// the tokio runtime.
    pub fn schedule(&self) {
        let mine = self.generation.fetch_add(1, Ordering::Relaxed) + 1;
        let (generation, trims) = (self.generation.clone(), self.trims.clone());
        tokio::spawn(async move {
            tokio::time::sleep(TRIM_DELAY).await;
            if generation.load(Ordering::Relaxed) == mine {
                trims.fetch_add(1, Ordering::Relaxed);
                // A trim walks the whole heap: off the executor.
                let _ = tokio::task::spawn_blocking(release_free_memory).await;
            }
        });
    }

    /// How many trims ran.
    pub fn trims(&self) -> u64 {
        self.trims.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_burst_of_schedules_trims_once_after_the_last() {
        let t = Trimmer::default();
        for _ in 0..10 {
            t.schedule();
            tokio::time::sleep(TRIM_DELAY / 4).await;
        }
        assert_eq!(t.trims(), 0, "no trim while the burst goes on");
        tokio::time::sleep(TRIM_DELAY * 2).await;
        assert_eq!(t.trims(), 1);
        t.schedule();
        tokio::time::sleep(TRIM_DELAY * 2).await;
        assert_eq!(t.trims(), 2);
    }
}
