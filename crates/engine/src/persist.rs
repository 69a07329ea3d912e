//! What live replies write while they run — checkpoints of the partial message and status
//! records — batched into one transaction and kept off the path that relays events.
//!
//! Why: the library is one SQLite connection behind a mutex. With hundreds of replies
//! streaming, one transaction per checkpoint (four per reply per second) queued hundreds of
//! blocking threads on that mutex, and a reply that awaited its own checkpoint stopped reading
//! its provider meanwhile — events waited in the socket for hundreds of milliseconds. Now a
//! reply hands its latest snapshot to the [`Persister`] and goes on streaming; one writer
//! drains everything queued so far in a single transaction, then the next batch. Per key the
//! latest snapshot wins (an older one not yet written is simply replaced), and one writer means
//! writes of the same key land in the order they were queued.
//!
//! Batches of checkpoints nobody awaits begin at most every [`BATCH_SPACING`]: written as soon
//! as they were queued, 500 streaming replies made about 1,300 transactions a second of one or
//! two rows each, and every one of them was a round trip to a blocking thread that woke the
//! executor's parked workers — half of the server's futex calls. A write someone awaits (a
//! final status, `waiting`) is never held back. Durability is unchanged in kind: a checkpoint
//! is on disk within [`BATCH_SPACING`] plus one batch of being queued (with the reply's
//! checkpoint interval, that bounds what a crash loses), and a reply's final write is awaited
//! before its `finished` event goes out.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tavo_model::{ChatId, Message, MessageId};
use tavo_store::cluster::StoredEvent;
use tavo_store::{Store, StoreError};
use tokio::sync::{Notify, oneshot};
use tokio::time::Instant;

use crate::offload::{PoolError, on_blocking_pool};
use crate::status::ReplyRecord;

/// What is written: the reply's message, its chat's reply record, or its events for the
/// other replicas.
#[derive(Debug, Clone)]
pub enum Write {
    /// The message as the reply has written it so far.
    Message(Message),
    /// The reply's status record.
    Record(ReplyRecord),
    /// Events of a reply, for replicas that follow it (PostgreSQL only; see
    /// [`tavo_store::cluster`]). Queued events of the same reply are appended to, not replaced.
    Events {
        /// The reply.
        reply: Arc<str>,
        /// Its events in order, as they go out.
        events: Vec<StoredEvent>,
    },
}

/// Which row a write replaces: later writes of the same key supersede queued ones (events
/// are appended instead).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    Message(MessageId),
    Record(ChatId),
    Events(Arc<str>),
}

/// The notice kind announcing stored events; its body is `<replyId>\t<last seq>`, then — when
/// they fit in a notice — `\t` and the events themselves as JSON (`[[seq, name, data], …]`), so
/// a follower on another replica need not read them back from the database.
pub const EVENTS_NOTICE: &str = "events";

/// Room kept in a notice for its library, replica and kind.
const NOTICE_HEADROOM: usize = 200;

/// The body of an [`EVENTS_NOTICE`] for `events` of `reply`.
fn events_notice(reply: &str, last: u64, events: &[StoredEvent]) -> String {
    let head = format!("{reply}\t{last}");
    let rows: Vec<(u64, &str, &str)> = events
        .iter()
        .map(|e| (e.seq, e.name.as_str(), e.data.as_str()))
        .collect();
    match serde_json::to_string(&rows) {
        Ok(json)
            if head.len() + json.len() + 1 + NOTICE_HEADROOM
                <= tavo_store::cluster::MAX_NOTICE_BYTES =>
        {
            format!("{head}\t{json}")
        }
        // Too large (a long tool result): the follower reads them from the database.
        _ => head,
    }
}

impl Write {
    fn key(&self) -> Option<Key> {
        match self {
            Write::Message(m) => m.id.map(Key::Message),
            Write::Record(r) => Some(Key::Record(r.chat_id)),
            Write::Events { reply, .. } => Some(Key::Events(reply.clone())),
        }
    }

    /// Folds a newer write of the same key into this queued one.
    fn supersede(&mut self, newer: Write) {
        match (self, newer) {
            (Write::Events { events, .. }, Write::Events { events: more, .. }) => {
                events.extend(more);
            }
            (this, newer) => *this = newer,
        }
    }

    fn apply(&self, tx: &tavo_store::Tx<'_>) -> Result<(), StoreError> {
        match self {
            Write::Message(m) => tx.message_update(m, None).map(drop),
            Write::Record(r) => crate::status::put_record(tx, r),
            Write::Events { reply, events } => {
                let Some(last) = events.last() else {
                    return Ok(());
                };
                tx.reply_events_append(reply, events)?;
                tx.notify(EVENTS_NOTICE, &events_notice(reply, last.seq, events))
            }
        }
    }
}

/// Why a write the caller waited for is not on disk.
#[derive(Debug, Clone, thiserror::Error)]
pub enum WriteError {
    /// The message was never stored, so it has no row to update.
    #[error("the message has no id yet")]
    Unsaved,
    /// The writer task ended (its runtime shut down) before it wrote this.
    #[error("the reply writer stopped before this write")]
    WriterStopped,
    /// The store refused the write (its message was deleted meanwhile, the disk is full).
    #[error(transparent)]
    Store(Arc<StoreError>),
    /// The batch's work failed on the blocking pool.
    #[error(transparent)]
    Pool(#[from] PoolError),
}

type Ack = oneshot::Sender<Result<(), WriteError>>;

struct Queued {
    write: Write,
    /// Callers waiting for this key's write to be on disk.
    acks: Vec<Ack>,
    /// Queue order, so a batch is written in the order its keys were first queued.
    order: u64,
}

/// The least time between the starts of two batches that nobody awaits.
pub const BATCH_SPACING: Duration = Duration::from_millis(50);

#[derive(Default)]
struct Queue {
    pending: HashMap<Key, Queued>,
    next_order: u64,
    /// A writer task is draining the queue.
    writing: bool,
    /// When the last batch began.
    last_batch: Option<Instant>,
}

impl Queue {
    /// Whether someone waits for a queued write: then the next batch does not wait for
    /// [`BATCH_SPACING`].
    fn awaited(&self) -> bool {
        self.pending.values().any(|q| !q.acks.is_empty())
    }
}

/// The batched writer of live replies. One per engine; cheap to share.
pub struct Persister {
    store: Store,
    queue: Mutex<Queue>,
    /// Wakes a writer that is spacing its batches when an awaited write arrives.
    awaited: Notify,
    /// Batches begun so far.
    batches: AtomicU64,
}

impl std::fmt::Debug for Persister {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Persister")
            .field("queued", &self.lock().pending.len())
            .field("batches", &self.batches())
            .finish_non_exhaustive()
    }
}

impl Persister {
    /// A writer into `store`.
    pub fn new(store: Store) -> Arc<Self> {
        Arc::new(Self {
            store,
            queue: Mutex::new(Queue::default()),
            awaited: Notify::new(),
            batches: AtomicU64::new(0),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        // Queue changes are inserts and takes that cannot stop half-way.
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How many batches have begun (each is one transaction).
    pub fn batches(&self) -> u64 {
        self.batches.load(Ordering::Relaxed)
    }

    /// Queues `write` and returns at once (it replaces a queued write of the same row).
    /// Must be called inside a tokio runtime.
    pub fn submit(self: &Arc<Self>, write: Write) {
        self.enqueue(write, None);
    }

    /// Queues `write` and waits until it is committed.
    pub async fn write(self: &Arc<Self>, write: Write) -> Result<(), WriteError> {
        let (tx, rx) = oneshot::channel();
        self.enqueue(write, Some(tx));
        rx.await.unwrap_or(Err(WriteError::WriterStopped))
    }

    fn enqueue(self: &Arc<Self>, write: Write, ack: Option<Ack>) {
        let Some(key) = write.key() else {
            // A message without an id has no row to update.
            if let Some(ack) = ack {
                let _ = ack.send(Err(WriteError::Unsaved));
            }
            return;
        };
        let awaited = ack.is_some();
        let start = {
            let mut q = self.lock();
            let order = q.next_order;
            q.next_order += 1;
            match q.pending.entry(key) {
                std::collections::hash_map::Entry::Occupied(mut queued) => {
                    let queued = queued.get_mut();
                    queued.write.supersede(write);
                    queued.acks.extend(ack);
                }
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(Queued {
                        write,
                        acks: ack.into_iter().collect(),
                        order,
                    });
                }
            }
            !std::mem::replace(&mut q.writing, true)
        };
        if start {
            tokio::spawn(self.clone().drain());
        } else if awaited {
            // A writer spacing its batches writes this one now (a permit is kept if it is
            // busy writing, which at worst ends one later spacing early).
            self.awaited.notify_one();
        }
    }

    /// Waits until the next batch may begin: [`BATCH_SPACING`] after the last one began,
    /// or at once when a queued write is awaited.
    async fn spacing(&self) {
        let due = {
            let q = self.lock();
            match q.last_batch {
                Some(last) if !q.awaited() => last + BATCH_SPACING,
                _ => return,
            }
        };
        tokio::select! {
            () = tokio::time::sleep_until(due) => {}
            () = self.awaited.notified() => {}
        }
    }

    /// Writes batches until the queue is empty.
    async fn drain(self: Arc<Self>) {
        let mut flag = WritingFlag {
            persister: &self,
            armed: true,
        };
        loop {
            self.spacing().await;
            let mut batch: Vec<Queued> = {
                let mut q = self.lock();
                if q.pending.is_empty() {
                    // Cleared under the lock that an enqueue checks, so exactly one writer runs.
                    q.writing = false;
                    flag.armed = false;
                    return;
                }
                q.last_batch = Some(Instant::now());
                self.batches.fetch_add(1, Ordering::Relaxed);
                q.pending.drain().map(|(_, v)| v).collect()
            };
            batch.sort_by_key(|b| b.order);
            // The writes move to the blocking pool whole (a message's text is not copied);
            // their acks stay here, in the same order.
            let (writes, acks): (Vec<Write>, Vec<Vec<Ack>>) =
                batch.into_iter().map(|b| (b.write, b.acks)).unzip();
            let outcome =
                on_blocking_pool(&self.store, move |store| write_batch(store, &writes)).await;
            match outcome {
                Ok(results) => {
                    for (acks, result) in acks.into_iter().zip(results) {
                        if let Err(e) = &result
                            && acks.is_empty()
                        {
                            tracing::warn!(error = %e, "cannot checkpoint a reply");
                        }
                        for ack in acks {
                            let _ = ack.send(result.clone());
                        }
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "cannot write the replies' checkpoints");
                    for ack in acks.into_iter().flatten() {
                        let _ = ack.send(Err(e.clone()));
                    }
                }
            }
        }
    }
}

/// Clears `writing` if the writer task is dropped mid-way (its runtime shut down), so the next
/// submission starts a new writer instead of queueing forever. Disarmed on a normal exit, which
/// clears the flag itself under the queue's lock — clearing it again here could let a second
/// writer start beside one that an enqueue started meanwhile.
struct WritingFlag<'a> {
    persister: &'a Persister,
    armed: bool,
}

impl Drop for WritingFlag<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.persister.lock().writing = false;
        }
    }
}

/// One transaction for the whole batch; a write that fails (its message was deleted
/// meanwhile) fails alone.
fn write_batch(store: &Store, writes: &[Write]) -> Result<Vec<Result<(), WriteError>>, WriteError> {
    store
        .write(|tx| {
            Ok(writes
                .iter()
                .map(|w| w.apply(tx).map_err(|e| WriteError::Store(Arc::new(e))))
                .collect())
        })
        .map_err(|e| WriteError::Store(Arc::new(e)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::ReplyStatus;
    use tavo_model::{Chat, Role};

    fn store_with_message() -> (tempfile::TempDir, Store, Message) {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path()).expect("open");
        let chat = store
            .write(|tx| {
                tx.chat_create(&Chat {
                    name: "c".into(),
                    ..Chat::default()
                })
            })
            .expect("chat");
        let mut m = Message::new(Role::Assistant, "");
        let id = store.message_append(chat, &m).expect("append");
        m.id = Some(id);
        (dir, store, m)
    }

    #[tokio::test]
    async fn the_latest_snapshot_of_a_message_wins() {
        let (_dir, store, mut m) = store_with_message();
        let p = Persister::new(store.clone());
        for text in ["a", "ab", "abc"] {
            m.content = text.into();
            p.submit(Write::Message(m.clone()));
        }
        m.content = "abcd".into();
        p.write(Write::Message(m.clone())).await.expect("written");
        let id = m.id.expect("id");
        let stored = store.message_get(id).expect("read").expect("message");
        assert_eq!(stored.content, "abcd");
    }

    #[tokio::test]
    async fn records_and_messages_share_a_batch_and_failures_stay_alone() {
        let (_dir, store, mut m) = store_with_message();
        let p = Persister::new(store.clone());
        let record = ReplyRecord {
            id: "rpl_x".into(),
            chat_id: ChatId(1),
            message_id: m.id,
            status: ReplyStatus::Finished,
            pid: 1,
            process_start: None,
            boot_id: None,
            replica: None,
            started_at: "t".into(),
            updated_at: "t".into(),
        };
        let mut gone = m.clone();
        gone.id = Some(tavo_model::MessageId(999_999));
        let missing = p.write(Write::Message(gone));
        m.content = "kept".into();
        let (missing, kept, rec) = tokio::join!(
            missing,
            p.write(Write::Message(m.clone())),
            p.write(Write::Record(record.clone()))
        );
        assert!(missing.is_err());
        assert!(kept.is_ok(), "{kept:?}");
        assert!(rec.is_ok(), "{rec:?}");
        assert_eq!(
            ReplyRecord::load(&store, ChatId(1)).expect("load"),
            Some(record)
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_writer_keeps_the_order_of_many_replies_writes() {
        let (_dir, store, m) = store_with_message();
        let p = Persister::new(store.clone());
        // Many rounds of submissions from concurrent tasks, each round ended by an awaited write:
        // whatever batches form, the row ends with the last write queued.
        for round in 0..20 {
            let tasks: Vec<_> = (0..8)
                .map(|i| {
                    let (p, mut m) = (p.clone(), m.clone());
                    tokio::spawn(async move {
                        m.content = format!("{round}-{i}");
                        p.submit(Write::Message(m));
                    })
                })
                .collect();
            for t in tasks {
                t.await.expect("task");
            }
            let mut last = m.clone();
            last.content = format!("round {round}");
            p.write(Write::Message(last)).await.expect("written");
            let id = m.id.expect("id");
            let stored = store.message_get(id).expect("read").expect("message");
            assert_eq!(stored.content, format!("round {round}"));
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn checkpoints_nobody_awaits_are_gathered_into_spaced_batches() {
        let (_dir, store, m) = store_with_message();
        let p = Persister::new(store.clone());
        // A checkpoint every 5 ms: written as they came, each would be a batch of its own.
        let started = Instant::now();
        for i in 0..20 {
            let mut m = m.clone();
            m.content = format!("checkpoint {i}");
            p.submit(Write::Message(m));
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let mut last = m.clone();
        last.content = "final".into();
        p.write(Write::Message(last)).await.expect("written");
        // One batch may begin per spacing, plus the first and the awaited one.
        let allowed = started.elapsed().as_millis() / BATCH_SPACING.as_millis() + 2;
        assert!(
            u128::from(p.batches()) <= allowed,
            "{} batches in {:?}",
            p.batches(),
            started.elapsed()
        );
        let id = m.id.expect("id");
        let stored = store.message_get(id).expect("read").expect("message");
        assert_eq!(stored.content, "final");
    }

    #[tokio::test]
    async fn a_message_without_an_id_is_refused() {
        let (_dir, store, mut m) = store_with_message();
        m.id = None;
        let p = Persister::new(store);
        assert!(p.write(Write::Message(m)).await.is_err());
    }
}
