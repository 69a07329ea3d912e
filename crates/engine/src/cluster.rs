//! The engine's side of several replicas on one PostgreSQL database ([`tavo_store::cluster`]):
//! a live reply's events go to the database for the others, a reply running on another replica
//! can be followed, stopped and answered from this one, and a replica that died has its replies
//! marked interrupted here.
//!
//! Everything here is off on SQLite (the store has no replica id there): one process owns a
//! SQLite library, and the CLI beside it is told apart by pid as before.

use std::collections::VecDeque;
use std::sync::{Arc, Weak};
use std::time::Duration;

use futures_util::Stream;
use serde::{Deserialize, Serialize};
use tavo_store::Store;
use tavo_store::cluster::{Notice, ORPHANED, StoredEvent};
use tokio::sync::broadcast;

use crate::engine::Inner;
use crate::hub::Subscription;
use crate::interaction::Response;
use crate::offload::on_blocking_pool;
use crate::persist::{EVENTS_NOTICE, Persister, Write};
use crate::status::{ReplyRecord, stored_record};

/// Notice kind asking the replica that runs a reply to cancel it; the body is the reply id.
pub const CANCEL_NOTICE: &str = "cancel";

/// Notice kind carrying an answer to a reply's pending interaction ([`Answer`] as JSON).
pub const RESPOND_NOTICE: &str = "respond";

/// Events read from the database per query while following a reply.
const FOLLOW_PAGE: u32 = 512;

/// How often a follower looks at the reply's record when no notice comes (a notice can be
/// missed while the listening connection reconnects; the record says when the reply ended).
const FOLLOW_RECHECK: Duration = Duration::from_secs(1);

/// An answer to a pending interaction, sent to the replica that runs the reply.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    /// The reply.
    pub reply_id: String,
    /// The interaction's id, from its `waiting` event.
    pub pending_id: u64,
    /// The answer.
    pub response: Response,
}

/// Copies a live reply's events into the database as they go out, through the engine's batched
/// writer (with its checkpoints, in the same transactions); ends after the final event.
pub(crate) async fn ship_events(
    persister: Arc<Persister>,
    mut events: Subscription,
    reply: Arc<str>,
) {
    while let Some(next) = events.next_shared().await {
        let event = match next {
            Ok(e) => e,
            Err(gap) => {
                // The writer fell 4,096 events behind: a follower elsewhere sees the hole as a
                // gap in the sequence numbers and reloads.
                tracing::warn!(reply = %reply, %gap, "events not copied to the database");
                continue;
            }
        };
        let data = match serde_json::to_string(&*event) {
            Ok(d) => d,
            Err(e) => {
                tracing::warn!(error = %e, "cannot serialise a reply event");
                continue;
            }
        };
        let write = Write::Events {
            reply: reply.clone(),
            events: vec![StoredEvent {
                seq: event.seq,
                name: event.kind.name().to_owned(),
                data,
            }],
        };
        if event.is_final() {
            // Awaited, so it does not wait for the batch spacing: followers end promptly.
            if let Err(e) = persister.write(write).await {
                tracing::warn!(error = %e, "cannot store a reply's final event");
            }
            return;
        }
        persister.submit(write);
    }
}

/// Handles the notices sent to this engine's library: replies of a dead replica are marked
/// interrupted, and cancels and answers for replies running here are delivered. Ends when the
/// engine is dropped.
pub(crate) async fn watch(engine: Weak<Inner>, mut notices: broadcast::Receiver<Arc<Notice>>) {
    loop {
        let notice = match notices.recv().await {
            Ok(n) => n,
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                tracing::warn!(missed, "cluster notices missed");
                continue;
            }
            Err(broadcast::error::RecvError::Closed) => return,
        };
        let Some(inner) = engine.upgrade() else {
            return;
        };
        match notice.kind.as_str() {
            ORPHANED => {
                let store = inner.store.clone();
                drop(inner);
                match on_blocking_pool(&store, |s| {
                    crate::status::recover_interrupted(s).map_err(FollowError::from)
                })
                .await
                {
                    Ok(cancelled) => {
                        for r in cancelled {
                            tracing::info!(reply = %r.id, chat = %r.chat_id, replica = %notice.from,
                                "marked a reply of a dead replica interrupted");
                        }
                    }
                    Err(e) => tracing::warn!(error = %e, "cannot recover a dead replica's replies"),
                }
            }
            CANCEL_NOTICE => {
                if let Some(h) = inner.live_reply(&notice.body) {
                    h.cancel();
                }
            }
            RESPOND_NOTICE => {
                let Ok(answer) = serde_json::from_str::<Answer>(&notice.body) else {
                    continue;
                };
                if let Some(h) = inner.live_reply(&answer.reply_id)
                    && let Err(e) = h.respond(answer.pending_id, answer.response)
                {
                    tracing::info!(reply = %answer.reply_id, error = %e,
                        "an answer relayed from another replica was refused");
                }
            }
            _ => {}
        }
    }
}

/// Where a reply that is not live in this process stands, for a door that was asked about it.
#[derive(Debug, Clone)]
pub enum Elsewhere {
    /// Running or waiting on another replica, which is alive.
    Live(ReplyRecord),
    /// Ended (or never ran here): the stored record.
    Ended(ReplyRecord),
}

/// The stored record of reply `id` and whether another replica runs it now; `None` when no
/// record has that id. Blocking.
pub fn locate(store: &Store, id: &str) -> Result<Option<Elsewhere>, tavo_store::StoreError> {
    let Some(record) = stored_record(store, id)? else {
        return Ok(None);
    };
    let live = record.status.is_live()
        && record.replica.is_some()
        && crate::status::owner_alive(store, None, &record)?;
    Ok(Some(if live {
        Elsewhere::Live(record)
    } else {
        Elsewhere::Ended(record)
    }))
}

/// Follows reply `id` through the database from event `after` on: the stored events first,
/// then each batch as its notice arrives, until the final event — or until the reply's record
/// says it ended without one (its replica died: the stream just ends, and the caller answers
/// what the record says).
pub fn follow(store: Store, id: String, after: u64) -> impl Stream<Item = StoredEvent> + Send {
    struct Follower {
        store: Store,
        id: String,
        last: u64,
        buffer: VecDeque<StoredEvent>,
        notices: Option<broadcast::Receiver<Arc<Notice>>>,
        done: bool,
        /// Every stored event was relayed and the reply still ran at the last look: wait for
        /// notices (which carry the next events) instead of reading the database.
        caught_up: bool,
    }
    // Subscribed before the first read, so no batch falls between the read and the wait.
    let notices = store.subscribe_notices();
    let state = Follower {
        store,
        id,
        last: after,
        buffer: VecDeque::new(),
        notices,
        done: false,
        caught_up: false,
    };
    futures_util::stream::unfold(state, |mut f| async move {
        loop {
            if let Some(e) = f.buffer.pop_front() {
                f.last = e.seq;
                if e.name == "finished" {
                    f.done = true;
                    f.buffer.clear();
                }
                return Some((e, f));
            }
            if f.done {
                return None;
            }
            if !f.caught_up {
                let (id, last) = (f.id.clone(), f.last);
                let page = on_blocking_pool(&f.store, move |s| {
                    s.read(|tx| tx.reply_events_after(&id, last, FOLLOW_PAGE))
                        .map_err(FollowError::from)
                })
                .await;
                match page {
                    Ok(events) if !events.is_empty() => {
                        f.buffer.extend(events);
                        continue;
                    }
                    Ok(_) => {}
                    Err(e) => {
                        tracing::warn!(error = %e, "cannot read a followed reply's events");
                        return None;
                    }
                }
                let id = f.id.clone();
                let located =
                    on_blocking_pool(&f.store, move |s| locate(s, &id).map_err(FollowError::from))
                        .await;
                if !matches!(located, Ok(Some(Elsewhere::Live(_)))) {
                    // Ended: one last read for events stored just before the end.
                    let (id, last) = (f.id.clone(), f.last);
                    let tail = on_blocking_pool(&f.store, move |s| {
                        s.read(|tx| tx.reply_events_after(&id, last, FOLLOW_PAGE))
                            .map_err(FollowError::from)
                    })
                    .await
                    .unwrap_or_default();
                    f.buffer.extend(tail);
                    f.done = true;
                    continue;
                }
                // Everything stored is relayed: from now on the notices carry the events.
                f.caught_up = true;
            }
            match wait_for_events(&mut f.notices, &f.id, f.last).await {
                Woken::Events(events) => f.buffer.extend(events),
                // A notice without its events (too large, or a hole), or silence: read the
                // database, and check the reply still runs.
                Woken::Stored | Woken::Timeout => f.caught_up = false,
            }
        }
    })
}

/// What ended a follower's wait.
enum Woken {
    /// A notice carried the next events, in order from the one after the last relayed.
    Events(Vec<StoredEvent>),
    /// New events are stored (read them from the database).
    Stored,
    /// [`FOLLOW_RECHECK`] passed without a notice.
    Timeout,
}

/// The events a notice body carries after `last`, if they follow it without a hole.
fn carried(body: &str, last: u64) -> Option<Vec<StoredEvent>> {
    let json = body.splitn(3, '\t').nth(2)?;
    let rows: Vec<(u64, String, String)> = serde_json::from_str(json).ok()?;
    let events: Vec<StoredEvent> = rows
        .into_iter()
        .filter(|(seq, _, _)| *seq > last)
        .map(|(seq, name, data)| StoredEvent { seq, name, data })
        .collect();
    let contiguous = events
        .iter()
        .enumerate()
        .all(|(i, e)| e.seq == last + 1 + i as u64);
    contiguous.then_some(events)
}

/// Waits for a notice of new events of `reply`, or [`FOLLOW_RECHECK`].
async fn wait_for_events(
    notices: &mut Option<broadcast::Receiver<Arc<Notice>>>,
    reply: &str,
    last: u64,
) -> Woken {
    let Some(rx) = notices else {
        tokio::time::sleep(FOLLOW_RECHECK).await;
        return Woken::Timeout;
    };
    let wait = async {
        loop {
            match rx.recv().await {
                Ok(n) if n.kind == EVENTS_NOTICE && n.body.split('\t').next() == Some(reply) => {
                    return match carried(&n.body, last) {
                        // Nothing new in it (already read from the database): keep waiting.
                        Some(events) if events.is_empty() => continue,
                        Some(events) => Woken::Events(events),
                        None => Woken::Stored,
                    };
                }
                Ok(_) => {}
                Err(broadcast::error::RecvError::Lagged(_)) => return Woken::Stored,
                Err(broadcast::error::RecvError::Closed) => {
                    std::future::pending::<()>().await;
                }
            }
        }
    };
    tokio::time::timeout(FOLLOW_RECHECK, wait)
        .await
        .unwrap_or(Woken::Timeout)
}

/// Why following stopped.
#[derive(Debug, thiserror::Error)]
enum FollowError {
    #[error(transparent)]
    Store(#[from] tavo_store::StoreError),
    #[error(transparent)]
    Pool(#[from] crate::offload::PoolError),
}

/// Sends `kind`/`body` to this library's listeners on every replica. Blocking.
pub(crate) fn send(store: &Store, kind: &str, body: &str) -> Result<(), tavo_store::StoreError> {
    store.notify(kind, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notice_carries_the_events_that_follow_without_a_hole() {
        let body = r#"rpl_1	4	[[3,"text_delta","{}"],[4,"text_delta","{\"t\":1}"]]"#;
        let got = carried(body, 2).unwrap_or_default();
        assert_eq!(got.iter().map(|e| e.seq).collect::<Vec<_>>(), [3, 4]);
        assert_eq!(got[1].data, r#"{"t":1}"#);
        // Already relayed up to 3: only 4 is new.
        assert_eq!(carried(body, 3).map(|e| e.len()), Some(1));
        // A hole (the follower is at 1, the notice starts at 3): read the database.
        assert!(carried(body, 1).is_none());
        // A notice without events.
        assert!(carried("rpl_1\t4", 2).is_none());
        // Nothing new.
        assert_eq!(carried(body, 4).map(|e| e.len()), Some(0));
    }
}
