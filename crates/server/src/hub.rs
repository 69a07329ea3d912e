//! The global event stream: reply status of every chat and library changes, for every open
//! page (a chat list's "waiting" badge, a character list that refreshes after an import).
//!
//! Events get a monotonically increasing id. The last [`HISTORY`] events are kept so a page
//! that reconnects with `Last-Event-ID` receives what it missed; older gaps are answered with a
//! `reload` event (the page re-reads what it shows). Publishing never waits for a subscriber:
//! the channel is a bounded broadcast, and a subscriber that falls behind is told to reload.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::Value;
use tokio::sync::broadcast;

/// Events kept for `Last-Event-ID` resumption.
pub const HISTORY: usize = 512;

/// One event of the global stream.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct GlobalEvent {
    /// Sequence number (the SSE `id`).
    pub id: u64,
    /// The SSE event name: `library`, `reply`.
    pub event: &'static str,
    /// The payload.
    pub data: Value,
}

struct Inner {
    next: u64,
    history: VecDeque<Arc<GlobalEvent>>,
}

/// Where a hub sends its events besides its own subscribers: the other replicas on a shared
/// database ([`crate::cluster`]).
pub type Forward = Arc<dyn Fn(&GlobalEvent) + Send + Sync>;

/// Publishes global events and replays recent ones.
#[derive(Clone)]
pub struct Hub {
    inner: Arc<Mutex<Inner>>,
    tx: broadcast::Sender<Arc<GlobalEvent>>,
    forward: Arc<std::sync::OnceLock<Forward>>,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub").finish_non_exhaustive()
    }
}

/// What a reconnecting subscriber gets first.
#[derive(Debug)]
pub enum Replay {
    /// The events after the one it saw last (possibly none).
    Events(Vec<Arc<GlobalEvent>>),
    /// The gap is older than the history: the client must reload.
    Gap,
}

impl Default for Hub {
    fn default() -> Self {
        Self::new(1024)
    }
}

impl Hub {
    /// A hub whose live channel holds `capacity` events per subscriber.
    pub fn new(capacity: usize) -> Self {
        let (tx, _) = broadcast::channel(capacity.max(1));
        Hub {
            inner: Arc::new(Mutex::new(Inner {
                next: 1,
                history: VecDeque::with_capacity(HISTORY),
            })),
            tx,
            forward: Arc::new(std::sync::OnceLock::new()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // Nothing inside can be left half-written by a panic (push then trim), so a poisoned
        // lock is still consistent.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sends every event published from now on to `forward` too (once; later calls are
    /// ignored).
    pub fn forward_to(&self, forward: Forward) {
        let _ = self.forward.set(forward);
    }

    /// Publishes an event; returns its id. It is forwarded to the other replicas, if any.
    pub fn publish(&self, event: &'static str, data: Value) -> u64 {
        let (id, ev) = self.publish_here(event, data);
        if let Some(forward) = self.forward.get() {
            forward(&ev);
        }
        id
    }

    /// Publishes an event to this replica's subscribers only (one forwarded from another).
    pub fn publish_local(&self, event: &'static str, data: Value) -> u64 {
        self.publish_here(event, data).0
    }

    fn publish_here(&self, event: &'static str, data: Value) -> (u64, Arc<GlobalEvent>) {
        let mut inner = self.lock();
        let id = inner.next;
        inner.next += 1;
        let ev = Arc::new(GlobalEvent { id, event, data });
        if inner.history.len() == HISTORY {
            inner.history.pop_front();
        }
        inner.history.push_back(ev.clone());
        // Sent under the lock so that subscribe-then-replay never misses or doubles an event.
        let _ = self.tx.send(ev.clone());
        (id, ev)
    }

    /// Pages following the stream now (what a `tts` event reaches).
    pub fn subscribers(&self) -> usize {
        self.tx.receiver_count()
    }

    /// A library change: `{"kind", "action", "id"}`.
    pub fn library(&self, kind: &str, action: &str, id: Option<i64>) -> u64 {
        self.publish(
            "library",
            serde_json::json!({ "kind": kind, "action": action, "id": id }),
        )
    }

    /// Subscribes, and replays what came after `last_seen` (the `Last-Event-ID`).
    pub fn subscribe(
        &self,
        last_seen: Option<u64>,
    ) -> (Replay, broadcast::Receiver<Arc<GlobalEvent>>) {
        let inner = self.lock();
        let rx = self.tx.subscribe();
        let replay = match last_seen {
            None => Replay::Events(Vec::new()),
            Some(seen) => {
                let oldest = inner.history.front().map_or(inner.next, |e| e.id);
                if seen + 1 < oldest || seen >= inner.next {
                    // Too old, or an id this server never issued (it restarted): reload.
                    if seen + 1 == inner.next {
                        Replay::Events(Vec::new())
                    } else {
                        Replay::Gap
                    }
                } else {
                    Replay::Events(
                        inner
                            .history
                            .iter()
                            .filter(|e| e.id > seen)
                            .cloned()
                            .collect(),
                    )
                }
            }
        };
        (replay, rx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replays_after_last_seen() {
        let hub = Hub::new(8);
        for i in 0..5 {
            hub.publish("library", serde_json::json!(i));
        }
        let (replay, _rx) = hub.subscribe(Some(3));
        let Replay::Events(evs) = replay else {
            panic!("expected events")
        };
        assert_eq!(evs.iter().map(|e| e.id).collect::<Vec<_>>(), vec![4, 5]);
        let (replay, _rx) = hub.subscribe(Some(5));
        assert!(matches!(replay, Replay::Events(v) if v.is_empty()));
    }

    #[test]
    fn gaps_and_foreign_ids_ask_for_reload() {
        let hub = Hub::new(8);
        for i in 0..(HISTORY + 10) {
            hub.publish("library", serde_json::json!(i));
        }
        assert!(matches!(hub.subscribe(Some(1)).0, Replay::Gap));
        assert!(matches!(hub.subscribe(Some(1_000_000)).0, Replay::Gap));
    }

    #[tokio::test]
    async fn live_events_follow_the_replay() {
        let hub = Hub::new(8);
        hub.publish("library", serde_json::json!(1));
        let (_, mut rx) = hub.subscribe(Some(1));
        hub.publish("reply", serde_json::json!(2));
        let ev = rx.recv().await.expect("live event");
        assert_eq!((ev.id, ev.event), (2, "reply"));
    }
}
