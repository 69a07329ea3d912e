//! The event stream of one reply: a bounded in-memory log plus a bounded broadcast.
//!
//! Publishing never waits for a consumer: the broadcast channel drops the oldest events for a
//! receiver that falls behind, and [`Subscription::next`] then refills from the log, so a slow
//! consumer loses nothing as long as the log still holds what it missed (and is told about the
//! gap otherwise). Relays replay from any sequence number the log still holds (SSE
//! `Last-Event-ID`).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::sync::broadcast;

use crate::event::{EventKind, ReplyEvent};

/// Events kept per reply for replay.
pub const LOG_CAPACITY: usize = 4096;
/// Events buffered per live receiver before it starts to lag.
pub const CHANNEL_CAPACITY: usize = 1024;

struct Log {
    next_seq: u64,
    events: VecDeque<ReplyEvent>,
    capacity: usize,
}

/// The event hub of one reply. Cheap to clone; clones share the stream.
#[derive(Clone)]
pub struct EventHub {
    reply_id: Arc<str>,
    log: Arc<Mutex<Log>>,
    tx: broadcast::Sender<ReplyEvent>,
}

impl std::fmt::Debug for EventHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventHub")
            .field("reply_id", &self.reply_id)
            .finish_non_exhaustive()
    }
}

/// Events were dropped from the log before a subscriber read them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{missed} events of this reply are no longer available (first available: {first})")]
pub struct Gap {
    pub missed: u64,
    pub first: u64,
}

impl EventHub {
    /// A hub with the default capacities.
    pub fn new(reply_id: &str) -> Self {
        Self::with_capacity(reply_id, LOG_CAPACITY, CHANNEL_CAPACITY)
    }

    /// A hub keeping `log` events and buffering `channel` per receiver.
    pub fn with_capacity(reply_id: &str, log: usize, channel: usize) -> Self {
        let (tx, _) = broadcast::channel(channel.max(1));
        Self {
            reply_id: Arc::from(reply_id),
            log: Arc::new(Mutex::new(Log {
                next_seq: 1,
                events: VecDeque::new(),
                capacity: log.max(1),
            })),
            tx,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Log> {
        self.log.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Numbers, logs and broadcasts one event; returns its sequence number. Never blocks on
    /// consumers.
    pub fn publish(&self, kind: EventKind) -> u64 {
        let mut log = self.lock();
        let seq = log.next_seq;
        log.next_seq += 1;
        let event = ReplyEvent {
            seq,
            reply_id: self.reply_id.to_string(),
            kind,
        };
        if log.events.len() == log.capacity {
            log.events.pop_front();
        }
        log.events.push_back(event.clone());
        // Sent under the lock so that a subscriber's backlog and its live receiver meet
        // exactly; an error only means nobody listens right now.
        let _ = self.tx.send(event);
        seq
    }

    /// Events with a sequence number above `after` that the log still holds.
    pub fn since(&self, after: u64) -> Vec<ReplyEvent> {
        self.lock()
            .events
            .iter()
            .filter(|e| e.seq > after)
            .cloned()
            .collect()
    }

    /// The last sequence number published (0 before the first event).
    pub fn last_seq(&self) -> u64 {
        self.lock().next_seq - 1
    }

    /// Subscribes to events after `after` (0 = from the start): the log's backlog first, then
    /// live events, with no duplicates and no holes.
    pub fn subscribe(&self, after: u64) -> Subscription {
        let log = self.lock();
        let rx = self.tx.subscribe();
        let backlog: VecDeque<ReplyEvent> = log
            .events
            .iter()
            .filter(|e| e.seq > after)
            .cloned()
            .collect();
        let first_available = log.events.front().map_or(log.next_seq, |e| e.seq);
        drop(log);
        Subscription {
            hub: self.clone(),
            rx,
            backlog,
            last: after,
            pending_gap: gap(after, first_available),
        }
    }
}

fn gap(after: u64, first_available: u64) -> Option<Gap> {
    (first_available > after + 1).then(|| Gap {
        missed: first_available - after - 1,
        first: first_available,
    })
}

/// A reader of one reply's events.
pub struct Subscription {
    hub: EventHub,
    rx: broadcast::Receiver<ReplyEvent>,
    backlog: VecDeque<ReplyEvent>,
    last: u64,
    pending_gap: Option<Gap>,
}

impl Subscription {
    /// The next event, in order. `Err(Gap)` reports events lost for good (the reader was
    /// slower than the log is long); reading continues after it. `None` once the reply has
    /// ended and every event was read.
    pub async fn next(&mut self) -> Option<Result<ReplyEvent, Gap>> {
        loop {
            if let Some(g) = self.pending_gap.take() {
                return Some(Err(g));
            }
            if let Some(e) = self.backlog.pop_front() {
                if e.seq <= self.last {
                    continue;
                }
                self.last = e.seq;
                return Some(Ok(e));
            }
            match self.rx.recv().await {
                Ok(e) if e.seq <= self.last => continue,
                Ok(e) => {
                    self.last = e.seq;
                    return Some(Ok(e));
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    let log = self.hub.lock();
                    self.backlog = log
                        .events
                        .iter()
                        .filter(|e| e.seq > self.last)
                        .cloned()
                        .collect();
                    let first = log.events.front().map_or(log.next_seq, |e| e.seq);
                    drop(log);
                    self.pending_gap = gap(self.last, first);
                    if let Some(g) = self.pending_gap {
                        self.last = g.first - 1;
                    }
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }

    /// The sequence number of the last event returned.
    pub fn last_seq(&self) -> u64 {
        self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str) -> EventKind {
        EventKind::TextDelta { text: t.into() }
    }

    #[tokio::test]
    async fn subscribers_get_backlog_then_live_events_in_order() {
        let hub = EventHub::new("r1");
        hub.publish(text("a"));
        hub.publish(text("b"));
        let mut sub = hub.subscribe(1);
        hub.publish(text("c"));
        let seqs: Vec<u64> = [sub.next().await, sub.next().await]
            .into_iter()
            .map(|e| e.and_then(Result::ok).map_or(0, |e| e.seq))
            .collect();
        assert_eq!(seqs, vec![2, 3]);
        assert_eq!(hub.last_seq(), 3);
        assert_eq!(hub.since(2).len(), 1);
    }

    #[tokio::test]
    async fn a_slow_reader_refills_from_the_log_and_never_blocks_the_writer() {
        let hub = EventHub::with_capacity("r", 100, 4);
        let mut sub = hub.subscribe(0);
        for i in 0..50 {
            hub.publish(text(&i.to_string()));
        }
        let mut got = Vec::new();
        while got.len() < 50 {
            match sub.next().await {
                Some(Ok(e)) => got.push(e.seq),
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(got, (1..=50).collect::<Vec<_>>());
    }

    #[tokio::test]
    async fn events_gone_from_the_log_are_reported_as_a_gap() {
        let hub = EventHub::with_capacity("r", 10, 2);
        let mut sub = hub.subscribe(0);
        for i in 0..30 {
            hub.publish(text(&i.to_string()));
        }
        match sub.next().await {
            Some(Err(g)) => assert_eq!(
                g,
                Gap {
                    missed: 20,
                    first: 21
                }
            ),
            other => panic!("expected a gap, got {other:?}"),
        }
        assert_eq!(
            sub.next().await.and_then(Result::ok).map(|e| e.seq),
            Some(21)
        );
        let late = hub.subscribe(3);
        assert_eq!(
            late.pending_gap,
            Some(Gap {
                missed: 17,
                first: 21
            })
        );
    }
}
