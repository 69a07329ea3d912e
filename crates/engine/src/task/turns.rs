//! The life of one reply as turns (see [`crate::group`]): the plan first, then one turn per
//! speaker — each builds its prompt, streams and stores its own message — and one final status
//! and `finished` event for the whole reply.

use super::{ReplyTask, Stop, Target};
use crate::EngineError;
use crate::event::EventKind;
use crate::group::{self, PlanStop};
use crate::status::ReplyStatus;
use serde_json::Value;

impl ReplyTask {
    pub(crate) async fn run(mut self) {
        let status = match self.plan_turns().await {
            Err(stop) => self.stopped(Err(stop)),
            Ok(()) => {
                let mut status = ReplyStatus::Finished;
                for turn in 0..self.plan.turns.len() {
                    self.begin_turn(turn);
                    let speaker = self.plan.turns[turn];
                    let outcome = self.drive(speaker).await;
                    let failure = match &outcome {
                        Err(Stop::Failed(e)) => Some(e.to_string()),
                        _ => None,
                    };
                    // A turn that failed or was cancelled before its provider answered gives
                    // its place back now, not after its final status is saved.
                    self.start_permit = None;
                    status = self.stopped(outcome);
                    self.finish_turn(status).await;
                    self.terminal_notice(status, failure);
                    if status != ReplyStatus::Finished {
                        break;
                    }
                }
                status
            }
        };
        self.finish(status).await;
        self.inner.forget(self.chat, &self.id);
        // The reply is saved and announced: a due memory extraction runs after it, never
        // before or during it.
        if status == ReplyStatus::Finished {
            crate::memory::after_reply(&self.inner, self.chat);
        }
    }

    /// The status a turn's outcome means (a failure is announced here).
    pub(super) fn stopped(&self, outcome: Result<(), Stop>) -> ReplyStatus {
        match outcome {
            Ok(()) if self.control.is_cancelled() => ReplyStatus::Cancelled,
            Ok(()) => ReplyStatus::Finished,
            Err(Stop::Cancelled) => ReplyStatus::Cancelled,
            Err(Stop::Failed(e)) => {
                self.control.hub.publish(EventKind::Error {
                    message: e.to_string(),
                });
                ReplyStatus::Failed
            }
        }
    }

    /// Decides the turns (see [`crate::group`]) and says the plan's warnings.
    async fn plan_turns(&mut self) -> Result<(), Stop> {
        let ask = group::Ask {
            chat: self.chat,
            kind: self.kind,
            speaker: self.speakers.chosen,
            keep: self.speakers.kept.or(match &self.target {
                Target::Continue(m) | Target::Swipe(m) => m.character_id,
                _ => None,
            }),
            endpoint: self.endpoint.clone(),
            model: self.model.clone(),
            parameters: self.parameters.clone(),
        };
        let plan =
            group::plan(&self.inner, &self.control, ask)
                .await
                .map_err(|stop| match stop {
                    PlanStop::Cancelled => Stop::Cancelled,
                    PlanStop::Failed(e) => Stop::Failed(e),
                })?;
        for message in &plan.warnings {
            self.control.hub.publish(EventKind::Warning {
                message: message.clone(),
            });
        }
        self.plan = plan;
        Ok(())
    }

    /// Clears what one turn wrote before the next speaker's turn.
    fn begin_turn(&mut self, turn: usize) {
        self.turn = turn;
        if turn > 0 {
            self.target = Target::New;
            self.message = None;
            self.base_text.clear();
            self.text.clear();
            self.reasoning.clear();
            self.cards.clear();
            self.dirty = false;
            self.new_paragraph = false;
            self.has_regex = false;
        }
    }

    /// Ends one turn: the receive rules, the success hook, and the turn's message saved with
    /// `status` (or removed when nothing was said).
    async fn finish_turn(&mut self, status: ReplyStatus) {
        self.receive_rewrite().await;
        if status == ReplyStatus::Finished {
            self.success_hook().await;
        }
        self.dirty = true;
        let empty = self.text.is_empty() && self.cards.is_empty() && self.reasoning.is_empty();
        match (&self.target, self.message_id()) {
            (Target::New, Some(id)) if empty && status != ReplyStatus::Finished => {
                // Nothing was said: leave no empty bubble behind.
                let removed = self
                    .blocking(move |store| store.message_delete(id).map_err(EngineError::from))
                    .await;
                if let Err(e) = removed {
                    tracing::warn!(error = %e, "cannot remove the empty reply message");
                }
                self.message = None;
            }
            _ => self.checkpoint_now(status).await,
        }
        if matches!(self.target, Target::Draft) && status == ReplyStatus::Finished {
            let (chat, text) = (self.chat, self.text.clone());
            let saved = self
                .blocking(move |store| {
                    store
                        .chat_state_set(
                            chat,
                            tavo_tools::ops::input::DRAFT_KEY,
                            &Value::String(text),
                        )
                        .map_err(EngineError::from)
                })
                .await;
            if let Err(e) = saved {
                tracing::warn!(error = %e, "cannot put the impersonation into the input draft");
            }
        }
        self.said.push((self.text.clone(), self.reasoning.clone()));
    }

    /// Ends the reply: its final status saved, then the one `finished` event, whose text is
    /// every turn's (a blank line between speakers).
    async fn finish(&mut self, status: ReplyStatus) {
        self.control
            .set_status_durably(status, self.message_id())
            .await;
        let usage = serde_json::to_value(&self.usage)
            .ok()
            .filter(|v| v.as_object().is_some_and(|o| !o.is_empty()));
        let join = |pick: fn(&(String, String)) -> &String| {
            self.said
                .iter()
                .map(pick)
                .filter(|t| !t.is_empty())
                .cloned()
                .collect::<Vec<_>>()
                .join("\n\n")
        };
        let text = join(|s| &s.0);
        let reasoning = join(|s| &s.1);
        self.control.hub.publish(EventKind::Finished {
            status,
            text,
            reasoning: (!reasoning.is_empty()).then_some(reasoning),
            usage,
        });
    }
}
