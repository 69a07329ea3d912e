//! The live control block of one reply: its events, status, pending interaction and
//! cancellation. Shared by the reply's task and every [`crate::ReplyHandle`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tavo_store::Store;
use tokio::sync::{oneshot, watch};

use crate::event::EventKind;
use crate::hub::EventHub;
use crate::interaction::{Interaction, RespondError, Response};
use crate::status::{ReplyRecord, ReplyStatus, now};

/// The reply was cancelled while something waited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the reply was cancelled")]
pub struct Cancelled;

struct Pending {
    id: u64,
    interaction: Interaction,
    tx: oneshot::Sender<Response>,
}

/// Persists status changes of a reply (absent in benches and unit tests of the loop).
struct Recorder {
    store: Store,
    record: Mutex<ReplyRecord>,
}

/// The control block.
pub struct Control {
    pub(crate) hub: EventHub,
    pending: Mutex<Option<Pending>>,
    next_pending: AtomicU64,
    cancel: watch::Sender<bool>,
    status: watch::Sender<ReplyStatus>,
    recorder: Option<Recorder>,
}

impl std::fmt::Debug for Control {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Control")
            .field("hub", &self.hub)
            .field("status", &*self.status.borrow())
            .finish_non_exhaustive()
    }
}

impl Control {
    /// A control block; with `record`, every status change is written to the store.
    pub fn new(hub: EventHub, record: Option<(Store, ReplyRecord)>) -> Arc<Self> {
        Arc::new(Self {
            hub,
            pending: Mutex::new(None),
            next_pending: AtomicU64::new(1),
            cancel: watch::channel(false).0,
            status: watch::channel(ReplyStatus::Running).0,
            recorder: record.map(|(store, record)| Recorder {
                store,
                record: Mutex::new(record),
            }),
        })
    }

    fn pending_slot(&self) -> std::sync::MutexGuard<'_, Option<Pending>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The current status.
    pub fn status(&self) -> ReplyStatus {
        *self.status.borrow()
    }

    /// Changes the status and persists it.
    pub(crate) fn set_status(&self, status: ReplyStatus, message_id: Option<i64>) {
        self.status.send_replace(status);
        if let Some(r) = &self.recorder {
            let mut record = r.record.lock().unwrap_or_else(|p| p.into_inner());
            record.status = status;
            if message_id.is_some() {
                record.message_id = message_id;
            }
            record.updated_at = now();
            if let Err(e) = record.save(&r.store) {
                tracing::warn!(error = %e, reply = %record.id, "cannot persist the reply status");
            }
        }
    }

    /// Waits until the reply has ended; returns the final status.
    pub async fn ended(&self) -> ReplyStatus {
        let mut rx = self.status.subscribe();
        loop {
            let s = *rx.borrow_and_update();
            if !s.is_live() {
                return s;
            }
            if rx.changed().await.is_err() {
                return *rx.borrow();
            }
        }
    }

    /// Asks the reply to stop: streaming stops, a running call is abandoned, a pending
    /// interaction is dropped. Idempotent.
    pub fn cancel(&self) {
        self.cancel.send_replace(true);
    }

    /// Whether cancellation was asked for.
    pub fn is_cancelled(&self) -> bool {
        *self.cancel.borrow()
    }

    /// Resolves when cancellation is asked for.
    pub async fn cancelled(&self) {
        let mut rx = self.cancel.subscribe();
        loop {
            if *rx.borrow_and_update() {
                return;
            }
            if rx.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }

    /// The interaction the reply waits for, with its id.
    pub fn pending(&self) -> Option<(u64, Interaction)> {
        self.pending_slot()
            .as_ref()
            .map(|p| (p.id, p.interaction.clone()))
    }

    /// Pauses the reply until the user answers `interaction` (status `waiting`), or the reply
    /// is cancelled.
    pub(crate) async fn wait_for(
        &self,
        interaction: Interaction,
        message_id: Option<i64>,
    ) -> Result<Response, Cancelled> {
        let id = self.next_pending.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        *self.pending_slot() = Some(Pending {
            id,
            interaction: interaction.clone(),
            tx,
        });
        self.set_status(ReplyStatus::Waiting, message_id);
        self.hub.publish(EventKind::Waiting {
            pending_id: id,
            interaction,
        });
        let outcome = tokio::select! {
            answer = rx => answer.map_err(|_| Cancelled),
            () = self.cancelled() => Err(Cancelled),
        };
        self.pending_slot().take();
        if outcome.is_ok() {
            self.set_status(ReplyStatus::Running, message_id);
            self.hub.publish(EventKind::Resumed { pending_id: id });
        }
        outcome
    }

    /// Delivers the user's answer to the pending interaction `id`. A question's answer is
    /// checked first (an option that does not exist, custom text where only options are
    /// allowed): the reply keeps waiting and the error says what is allowed.
    pub fn respond(&self, id: u64, response: Response) -> Result<(), RespondError> {
        if !self.status().is_live() {
            return Err(RespondError::Ended);
        }
        let mut slot = self.pending_slot();
        let Some(pending) = slot.as_ref().filter(|p| p.id == id) else {
            return Err(RespondError::NotPending(id));
        };
        match (&pending.interaction, &response) {
            (Interaction::Question { question, .. }, Response::Answer { answer }) => {
                question
                    .resolve(answer.clone())
                    .map_err(|e| RespondError::Invalid(e.message))?;
            }
            (Interaction::Question { .. }, _) => {
                return Err(RespondError::WrongKind(id, "question", "an answer"));
            }
            (Interaction::Confirmation { .. }, Response::Answer { .. }) => {
                return Err(RespondError::WrongKind(
                    id,
                    "confirmation",
                    "approve or deny",
                ));
            }
            (Interaction::Confirmation { .. }, _) => {}
        }
        let Some(pending) = slot.take() else {
            return Err(RespondError::NotPending(id));
        };
        pending.tx.send(response).map_err(|_| RespondError::Ended)
    }
}
