//! The clock of one call's time-out (`tools.callTimeoutSeconds`), and the rule that makes a
//! time-out honest: **a call answered `timeout` changed nothing.**
//!
//! A plain `tokio::time::timeout` around a call breaks that rule twice. Store work runs on the
//! blocking pool, so dropping the call's future does not stop a write that has begun: it lands
//! after the caller was told `timeout`, and a retry makes it twice. And a call queued behind
//! the [`crate::Gate`] (the library's few threads busy with other work) would be charged for
//! time it never ran.
//!
//! So [`timed`] runs the call inside a [`CallClock`], and the gate reports to the clock of the
//! call it serves:
//! - time spent waiting for a place at the gate moves the deadline back by as much;
//! - when the deadline passes while store work is running, the clock *expires* instead of
//!   dropping the call: the work is awaited and its outcome is the call's answer; store work
//!   that has not started by then is refused with `timeout` ([`CallClock::begin_store_work`]);
//! - when the deadline passes with no store work running, the call is dropped and answers
//!   `timeout`: nothing it did had reached the library.
//!
//! Clocks nest (an MCP write runs an operation inside its own call): the gate reports to every
//! clock of the chain, so an outer deadline never drops an inner write half-way either.

use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::time::Instant;

use crate::error::{ErrorCode, ToolError};

tokio::task_local! {
    /// The clocks of the calls the current task is running, innermost last.
    static CLOCKS: Vec<CallClock>;
}

/// What one call's clock knows.
#[derive(Debug, Default)]
struct ClockState {
    /// Finished waits for a gate place.
    queued: Duration,
    /// Waits going on now (an operation may run two store tasks at once) and since when.
    waiting: u32,
    waiting_since: Option<Instant>,
    /// Store tasks running now.
    in_store: u32,
    /// The deadline passed: no new store work may start.
    expired: bool,
}

impl ClockState {
    fn queued_until(&self, now: Instant) -> Duration {
        self.queued
            + self
                .waiting_since
                .map_or(Duration::ZERO, |since| now.saturating_duration_since(since))
    }
}

/// One call's clock, shared by its deadline and the gate. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct CallClock(Arc<Mutex<ClockState>>);

/// What [`CallClock::expire`] found when the deadline came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expiry {
    /// Queued time moved the deadline: wait until the new one.
    NotYet(Instant),
    /// Nothing of the call is in the store: drop it.
    Expired,
    /// Store work is running: await it; nothing new starts.
    Finishing,
}

impl CallClock {
    fn state(&self) -> MutexGuard<'_, ClockState> {
        // A panic while the lock was held left plain counters behind: still usable.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn deadline(&self, started: Instant, limit: Duration) -> Instant {
        let now = Instant::now();
        started + limit + self.state().queued_until(now)
    }

    fn expire(&self, started: Instant, limit: Duration) -> Expiry {
        let now = Instant::now();
        let mut s = self.state();
        let deadline = started + limit + s.queued_until(now);
        if deadline > now {
            return Expiry::NotYet(deadline);
        }
        s.expired = true;
        if s.in_store > 0 {
            Expiry::Finishing
        } else {
            Expiry::Expired
        }
    }

    /// The clocks of the calls the current task runs (empty outside a call).
    pub(crate) fn current() -> Vec<CallClock> {
        CLOCKS.try_with(Clone::clone).unwrap_or_default()
    }

    /// A wait for a gate place begins (the deadline stops moving toward now).
    pub(crate) fn begin_wait(clocks: &[CallClock]) {
        let now = Instant::now();
        for c in clocks {
            let mut s = c.state();
            if s.waiting == 0 {
                s.waiting_since = Some(now);
            }
            s.waiting += 1;
        }
    }

    /// A wait for a gate place ends (granted, or abandoned).
    pub(crate) fn end_wait(clocks: &[CallClock]) {
        let now = Instant::now();
        for c in clocks {
            let mut s = c.state();
            s.waiting = s.waiting.saturating_sub(1);
            if s.waiting == 0
                && let Some(since) = s.waiting_since.take()
            {
                s.queued += now.saturating_duration_since(since);
            }
        }
    }

    /// Store work is about to start. Refused when a deadline of the chain has passed: the
    /// caller was (or is about to be) told `timeout`, so nothing may change any more.
    pub(crate) fn begin_store_work(clocks: &[CallClock], tool: &str) -> Result<(), ToolError> {
        let mut guards: Vec<MutexGuard<'_, ClockState>> =
            clocks.iter().map(CallClock::state).collect();
        if guards.iter().any(|s| s.expired) {
            return Err(ToolError::new(
                ErrorCode::Timeout,
                format!(
                    "{tool} ran out of time before it reached the library; nothing was changed"
                ),
            ));
        }
        for s in &mut guards {
            s.in_store += 1;
        }
        Ok(())
    }

    /// Store work has ended.
    pub(crate) fn end_store_work(clocks: &[CallClock]) {
        for c in clocks {
            let mut s = c.state();
            s.in_store = s.in_store.saturating_sub(1);
        }
    }
}

/// Runs `future` (one call named `tool`) under the time-out `limit`, by the rules of the
/// module: queued time does not count, a started write is awaited, a timed-out call changed
/// nothing.
pub async fn timed<T>(
    limit: Duration,
    tool: &str,
    future: impl Future<Output = T>,
) -> Result<T, ToolError> {
    let clock = CallClock::default();
    let mut chain = CallClock::current();
    chain.push(clock.clone());
    let started = Instant::now();
    let future = CLOCKS.scope(chain, future);
    tokio::pin!(future);
    loop {
        let deadline = clock.deadline(started, limit);
        tokio::select! {
            out = &mut future => return Ok(out),
            () = tokio::time::sleep_until(deadline) => match clock.expire(started, limit) {
                Expiry::NotYet(_) => continue,
                Expiry::Finishing => return Ok(future.await),
                Expiry::Expired => return Err(timed_out(tool, limit)),
            },
        }
    }
}

/// The error of a call stopped at its deadline.
pub fn timed_out(tool: &str, limit: Duration) -> ToolError {
    ToolError::new(
        ErrorCode::Timeout,
        format!(
            "{tool} did not finish within {}s and was stopped before it changed anything; \
             try a smaller request or answer without it",
            limit.as_secs()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Gate;
    use std::sync::atomic::{AtomicBool, Ordering};

    fn store() -> (tempfile::TempDir, tavo_store::Store) {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let store = tavo_store::Store::open(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        (dir, store)
    }

    /// Blocks the store task until the call's (outermost) deadline has passed, so the tests
    /// do not depend on how fast this machine is.
    fn until_expired(clocks: &[CallClock]) {
        let give_up = std::time::Instant::now() + Duration::from_secs(20);
        while !clocks.first().is_some_and(|c| c.state().expired) {
            assert!(
                std::time::Instant::now() < give_up,
                "the deadline never came"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    #[tokio::test]
    async fn a_call_without_store_work_is_stopped_at_its_deadline() {
        let out = timed(Duration::from_millis(30), "t", async {
            tokio::time::sleep(Duration::from_secs(30)).await;
        })
        .await;
        assert_eq!(out.map_err(|e| e.code), Err(ErrorCode::Timeout));
    }

    #[tokio::test]
    async fn a_write_that_has_started_is_awaited_and_its_outcome_answered() {
        let (_dir, store) = store();
        let gate = Gate::new(1);
        let landed = Arc::new(AtomicBool::new(false));
        let seen = landed.clone();
        let out = timed(Duration::from_millis(20), "t", async move {
            let clocks = CallClock::current();
            gate.run(&store, "writing", move |_| {
                until_expired(&clocks);
                seen.store(true, Ordering::SeqCst);
                Ok(7)
            })
            .await
        })
        .await;
        // The write outlived the deadline: its outcome is the answer, not `timeout`.
        assert!(matches!(out, Ok(Ok(7))));
        assert!(landed.load(Ordering::SeqCst));
    }

    #[tokio::test]
    async fn after_the_deadline_no_new_store_work_starts() {
        let (_dir, store) = store();
        let gate = Gate::new(2);
        let second = Arc::new(AtomicBool::new(false));
        let ran = second.clone();
        let out = timed(Duration::from_millis(20), "t", async move {
            let clocks = CallClock::current();
            // The first task outlives the deadline; the second would start after it.
            gate.run(&store, "first", move |_| {
                until_expired(&clocks);
                Ok(())
            })
            .await?;
            gate.run(&store, "second", move |_| {
                ran.store(true, Ordering::SeqCst);
                Ok(())
            })
            .await
        })
        .await;
        assert_eq!(
            out.ok().and_then(Result::err).map(|e| e.code),
            Some(ErrorCode::Timeout)
        );
        assert!(
            !second.load(Ordering::SeqCst),
            "nothing starts after a time-out"
        );
    }

    #[tokio::test]
    async fn time_queued_at_the_gate_does_not_count() {
        let (_dir, store) = store();
        let gate = Gate::new(1);
        // Someone else holds the only place for three times the call's limit.
        let held = gate.clone();
        let other_store = store.clone();
        let (taken_tx, taken_rx) = tokio::sync::oneshot::channel();
        let other = tokio::spawn(async move {
            held.run(&other_store, "other", move |_| {
                let _ = taken_tx.send(());
                std::thread::sleep(Duration::from_millis(600));
                Ok(())
            })
            .await
        });
        let _ = taken_rx.await;
        let out = timed(Duration::from_millis(200), "t", async move {
            gate.run(&store, "mine", |_| Ok(1)).await
        })
        .await;
        assert!(
            matches!(out, Ok(Ok(1))),
            "queued 600 ms against a 200 ms limit: {out:?}"
        );
        assert!(matches!(other.await, Ok(Ok(()))));
    }

    #[tokio::test]
    async fn an_outer_deadline_awaits_an_inner_calls_write() {
        let (_dir, store) = store();
        let gate = Gate::new(1);
        let out = timed(Duration::from_millis(20), "outer", async move {
            timed(Duration::from_secs(60), "inner", async move {
                let clocks = CallClock::current();
                gate.run(&store, "w", move |_| {
                    until_expired(&clocks);
                    Ok(3)
                })
                .await
            })
            .await
        })
        .await;
        assert!(matches!(out, Ok(Ok(Ok(3)))));
    }
}
