//! The live control block of one reply: its events, status, pending interaction and
//! cancellation. Shared by the reply's task and every [`crate::ReplyHandle`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tavo_model::MessageId;

use tokio::sync::{oneshot, watch};

use crate::event::EventKind;
use crate::hub::EventHub;
use crate::interaction::{Interaction, RespondError, Response};
use crate::persist::{Persister, Write};
use crate::status::{ReplyRecord, ReplyStatus, leave_live, now};

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
    writer: Arc<Persister>,
    record: Mutex<ReplyRecord>,
}

impl Drop for Recorder {
    /// A reply whose control block goes away (its runtime was dropped mid-reply) no longer
    /// holds its chat's claim for this process.
    fn drop(&mut self) {
        leave_live(&self.record.get_mut().unwrap_or_else(|p| p.into_inner()).id);
    }
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
    /// A control block; with `record`, every status change is written to the store through
    /// the engine's batched writer.
    pub fn new(hub: EventHub, record: Option<(Arc<Persister>, ReplyRecord)>) -> Arc<Self> {
        Arc::new(Self {
            hub,
            pending: Mutex::new(None),
            next_pending: AtomicU64::new(1),
            cancel: watch::channel(false).0,
            status: watch::channel(ReplyStatus::Running).0,
            recorder: record.map(|(writer, record)| Recorder {
                writer,
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

    /// Changes the status and queues its record for the store (never waits for the store:
    /// this runs on the executor, between events).
    pub(crate) fn set_status(&self, status: ReplyStatus, message_id: Option<MessageId>) {
        self.status.send_replace(status);
        if let Some((writer, record)) = self.updated_record(status, message_id) {
            writer.submit(Write::Record(record));
        }
    }

    /// Sets a status whose record must be committed before anyone hears of it (waiting, and
    /// the final status): whoever sees the reply wait or end also finds that in the store.
    /// A final status also gives the chat's claim back, once the record that says so is
    /// written (before, another engine of this process could take the reply for a dead one).
    pub(crate) async fn set_status_durably(
        &self,
        status: ReplyStatus,
        message_id: Option<MessageId>,
    ) {
        if let Some((writer, record)) = self.updated_record(status, message_id) {
            let id = record.id.clone();
            if let Err(e) = writer.write(Write::Record(record)).await {
                tracing::warn!(error = %e, "cannot persist the final reply status");
            }
            if !status.is_live() {
                leave_live(&id);
            }
        }
        self.status.send_replace(status);
    }

    fn updated_record(
        &self,
        status: ReplyStatus,
        message_id: Option<MessageId>,
    ) -> Option<(Arc<Persister>, ReplyRecord)> {
        let r = self.recorder.as_ref()?;
        let mut record = r.record.lock().unwrap_or_else(|p| p.into_inner());
        record.status = status;
        if message_id.is_some() {
            record.message_id = message_id;
        }
        record.updated_at = now();
        Some((r.writer.clone(), record.clone()))
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
        message_id: Option<MessageId>,
    ) -> Result<Response, Cancelled> {
        let id = self.next_pending.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        *self.pending_slot() = Some(Pending {
            id,
            interaction: interaction.clone(),
            tx,
        });
        self.set_status_durably(ReplyStatus::Waiting, message_id)
            .await;
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
