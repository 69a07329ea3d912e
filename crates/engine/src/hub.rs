//! The event stream of one reply: one bounded, numbered log that every reader reads from.
//!
//! There is no per-reader buffer: publishing appends to the log (dropping its oldest event
//! when full) and bumps a `watch` counter; each [`Subscription`] only remembers the last
//! sequence number it returned and copies the next event out of the log. So a reply costs one
//! log however many pages watch it, publishing is O(1) and never waits for a reader, and a
//! reader that falls further behind than the log is long is told about the gap ([`Gap`])
//! instead of holding memory for it. Relays replay from any sequence number the log still
//! holds (SSE `Last-Event-ID`).
//!
//! Events are kept as `Arc`s: a relay that only serialises them ([`Subscription::next_shared`])
//! never copies their text.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use crate::event::{EventKind, ReplyEvent};

/// Events kept per reply for replay and for readers that fall behind.
pub const LOG_CAPACITY: usize = 4096;

/// The log: consecutive sequence numbers, the oldest first.
struct Log {
    next_seq: u64,
    events: VecDeque<Arc<ReplyEvent>>,
    capacity: usize,
    /// The sequence number of the final event, once published.
    final_seq: Option<u64>,
}

impl Log {
    /// The sequence number of the oldest event still held (`next_seq` when empty).
    fn first_seq(&self) -> u64 {
        self.next_seq - self.events.len() as u64
    }

    /// The event numbered `seq`, if the log still holds it.
    fn get(&self, seq: u64) -> Option<&Arc<ReplyEvent>> {
        let first = self.first_seq();
        if seq < first {
            return None;
        }
        self.events.get(usize::try_from(seq - first).ok()?)
    }

    fn after(&self, after: u64) -> impl Iterator<Item = &Arc<ReplyEvent>> {
        let skip = after.saturating_add(1).saturating_sub(self.first_seq());
        self.events
            .iter()
            .skip(usize::try_from(skip).unwrap_or(usize::MAX))
    }
}

struct Shared {
    reply_id: Arc<str>,
    log: Mutex<Log>,
    /// The last published sequence number; readers wait on its changes.
    published: watch::Sender<u64>,
    /// The last published event that is not a text or reasoning delta: what status watchers
    /// wait on, so they are not woken for every delta.
    milestones: watch::Sender<u64>,
}

/// The event hub of one reply. Cheap to clone; clones share the stream.
#[derive(Clone)]
pub struct EventHub {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for EventHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventHub")
            .field("reply_id", &self.shared.reply_id)
            .finish_non_exhaustive()
    }
}

/// Events were dropped from the log before a subscriber read them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{missed} events of this reply are no longer available (first available: {first})")]
pub struct Gap {
    /// How many events the reader lost for good.
    pub missed: u64,
    /// The sequence number of the oldest event still held; the reader goes on from there.
    pub first: u64,
}

impl EventHub {
    /// A hub keeping the default [`LOG_CAPACITY`] events.
    pub fn new(reply_id: &str) -> Self {
        Self::with_capacity(reply_id, LOG_CAPACITY)
    }

    /// A hub keeping the last `log` events.
    pub fn with_capacity(reply_id: &str, log: usize) -> Self {
        Self {
            shared: Arc::new(Shared {
                reply_id: Arc::from(reply_id),
                log: Mutex::new(Log {
                    next_seq: 1,
                    events: VecDeque::new(),
                    capacity: log.max(1),
                    final_seq: None,
                }),
                published: watch::channel(0).0,
                milestones: watch::channel(0).0,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Log> {
        // Every change under the lock is a push and a pop that cannot panic half-way, so a
        // poisoned lock still guards a consistent log.
        self.shared.log.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Numbers and logs one event, then wakes the readers; returns its sequence number.
    /// Never waits for a reader.
    pub fn publish(&self, kind: EventKind) -> u64 {
        let milestone = !kind.is_delta();
        let seq = {
            let mut log = self.lock();
            let seq = log.next_seq;
            let event = Arc::new(ReplyEvent {
                seq,
                reply_id: self.shared.reply_id.to_string(),
                kind,
            });
            if event.is_final() {
                log.final_seq = Some(seq);
            }
            if log.events.len() >= log.capacity {
                log.events.pop_front();
            }
            log.events.push_back(event);
            log.next_seq += 1;
            seq
        };
        // After the lock: a reader that saw the old value re-checks the log after `changed`.
        self.shared.published.send_replace(seq);
        if milestone {
            self.shared.milestones.send_replace(seq);
        }
        seq
    }

    /// Events with a sequence number above `after` that the log still holds.
    pub fn since(&self, after: u64) -> Vec<ReplyEvent> {
        self.lock()
            .after(after)
            .map(|e| ReplyEvent::clone(e))
            .collect()
    }

    /// The last sequence number published (0 before the first event).
    pub fn last_seq(&self) -> u64 {
        self.lock().next_seq - 1
    }

    /// How many events the log holds now (memory accounting, tests).
    pub fn logged(&self) -> usize {
        self.lock().events.len()
    }

    /// Subscribes to events after `after` (0 = from the start): what the log still holds
    /// first, then live events, with no duplicates and no holes (a hole the log can no longer
    /// fill is reported once as a [`Gap`]).
    pub fn subscribe(&self, after: u64) -> Subscription {
        Subscription {
            published: self.shared.published.subscribe(),
            hub: self.clone(),
            last: after,
            done: false,
            skip_deltas: false,
        }
    }

    /// Like [`EventHub::subscribe`], without text and reasoning deltas, and woken only by the
    /// other events: for watchers of a reply's status, which would otherwise wake for every
    /// delta of every reply.
    pub fn subscribe_milestones(&self, after: u64) -> Subscription {
        Subscription {
            published: self.shared.milestones.subscribe(),
            hub: self.clone(),
            last: after,
            done: false,
            skip_deltas: true,
        }
    }
}

/// A reader of one reply's events: a position in the hub's log.
pub struct Subscription {
    hub: EventHub,
    published: watch::Receiver<u64>,
    last: u64,
    done: bool,
    skip_deltas: bool,
}

/// What the log holds for a reader at `last`.
enum Step {
    Event(Arc<ReplyEvent>),
    Gap(Gap),
    Ended,
    Wait,
}

impl Subscription {
    /// The next event, in order. `Err(Gap)` reports events lost for good (the reader was
    /// slower than the log is long); reading continues after it. `None` once the reply has
    /// ended and every event was read.
    pub async fn next(&mut self) -> Option<Result<ReplyEvent, Gap>> {
        Some(self.next_shared().await?.map(Arc::unwrap_or_clone))
    }

    /// [`Subscription::next`] without copying the event.
    pub async fn next_shared(&mut self) -> Option<Result<Arc<ReplyEvent>, Gap>> {
        loop {
            // Marked seen before the log is read: a publish after this point wakes `changed`.
            self.published.borrow_and_update();
            match self.step() {
                Step::Event(e) => return Some(Ok(e)),
                Step::Gap(g) => return Some(Err(g)),
                Step::Ended => return None,
                Step::Wait => {
                    if self.published.changed().await.is_err() {
                        // The hub is gone, so nothing more will be published.
                        return None;
                    }
                }
            }
        }
    }

    fn step(&mut self) -> Step {
        if self.done {
            return Step::Ended;
        }
        let log = self.hub.lock();
        if log.final_seq.is_some_and(|f| self.last >= f) {
            self.done = true;
            return Step::Ended;
        }
        loop {
            let wanted = self.last + 1;
            let Some(e) = log.get(wanted) else { break };
            self.last = wanted;
            if !(self.skip_deltas && e.kind.is_delta()) {
                return Step::Event(e.clone());
            }
        }
        let wanted = self.last + 1;
        let first = log.first_seq();
        if wanted < first {
            let gap = Gap {
                missed: first - wanted,
                first,
            };
            self.last = first - 1;
            return Step::Gap(gap);
        }
        Step::Wait
    }

    /// The sequence number of the last event returned.
    pub fn last_seq(&self) -> u64 {
        self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::ReplyStatus;

    fn text(t: &str) -> EventKind {
        EventKind::TextDelta { text: t.into() }
    }

    fn finished() -> EventKind {
        EventKind::Finished {
            status: ReplyStatus::Finished,
            text: String::new(),
            reasoning: None,
            usage: None,
        }
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
        assert_eq!(hub.since(0).len(), 3);
        assert!(hub.since(3).is_empty());
    }

    #[tokio::test]
    async fn a_waiting_reader_wakes_on_publish() {
        let hub = EventHub::new("r");
        let mut sub = hub.subscribe(0);
        let reader = tokio::spawn(async move { sub.next().await.and_then(Result::ok) });
        tokio::task::yield_now().await;
        hub.publish(text("late"));
        let got = reader.await.ok().flatten().map(|e| e.seq);
        assert_eq!(got, Some(1));
    }

    #[tokio::test]
    async fn a_slow_reader_reads_everything_the_log_still_holds() {
        let hub = EventHub::with_capacity("r", 100);
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
        let hub = EventHub::with_capacity("r", 10);
        let mut sub = hub.subscribe(0);
        for i in 0..30 {
            hub.publish(text(&i.to_string()));
        }
        assert_eq!(hub.logged(), 10);
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
        let mut late = hub.subscribe(3);
        assert_eq!(
            late.next().await.and_then(Result::err),
            Some(Gap {
                missed: 17,
                first: 21
            })
        );
    }

    #[tokio::test]
    async fn the_stream_ends_after_the_final_event() {
        let hub = EventHub::new("r");
        hub.publish(text("a"));
        hub.publish(finished());
        let mut sub = hub.subscribe(0);
        assert_eq!(
            sub.next().await.and_then(Result::ok).map(|e| e.seq),
            Some(1)
        );
        let last = sub.next().await.and_then(Result::ok);
        assert!(last.is_some_and(|e| e.is_final()));
        assert!(sub.next().await.is_none());
        // A reader that already has the final event ends at once.
        assert!(hub.subscribe(2).next().await.is_none());
    }

    #[tokio::test]
    async fn milestone_readers_skip_deltas() {
        let hub = EventHub::new("r");
        let mut sub = hub.subscribe_milestones(0);
        hub.publish(text("a"));
        hub.publish(EventKind::Warning {
            message: "w".into(),
        });
        hub.publish(text("b"));
        hub.publish(finished());
        let mut seqs = Vec::new();
        while let Some(e) = sub.next().await {
            seqs.push(e.map(|e| e.seq).unwrap_or(0));
        }
        assert_eq!(seqs, vec![2, 4]);
    }

    #[tokio::test]
    async fn many_readers_share_one_log() {
        let hub = EventHub::new("r");
        let mut readers: Vec<Subscription> = (0..100).map(|_| hub.subscribe(0)).collect();
        for i in 0..20 {
            hub.publish(text(&i.to_string()));
        }
        hub.publish(finished());
        assert_eq!(hub.logged(), 21);
        for sub in &mut readers {
            let mut n = 0;
            while let Some(e) = sub.next_shared().await {
                assert!(e.is_ok());
                n += 1;
            }
            assert_eq!(n, 21);
        }
    }
}
