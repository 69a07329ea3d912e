//! The body of one reply: prompt → stream → calls → loop, persisting as it goes.
//!
//! `turns.rs` is the reply's life as turns (one per group speaker) and its end; `hooks.rs` the
//! plugin generation hooks of each turn; this file one turn's rounds, streaming and saving.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::Value;
use tavo_llm::{
    ChatRequest, ChatResponse, Endpoint, Message, Parameters, Part, ReplyBuilder, Role,
    StreamEvent, Usage,
};
use tavo_model::{CharacterId, ChatId, MessageId};
use tavo_store::{Store, StoreError};
use tavo_tools::{GenerationKind, Services, ToolSettings};

use crate::EngineError;
use crate::control::{Cancelled, Control};

mod hooks;
mod turns;
use crate::engine::{Inner, START_HOLD};
use crate::event::EventKind;
use crate::group::{Plan, Speakers};
use crate::limits::Limits;
use crate::offload::{PoolError, on_blocking_pool};
use crate::persist::Write;
use crate::prompt::{self, BasePrompt, PromptKnobs};
use crate::status::{ReplyStatus, set_message_status};
use crate::summary::{AuditRecord, MESSAGE_CALLS_KEY, ToolCallSummary};
use crate::tool_history::StoredRounds;
use crate::toolcall::{CallRunner, ModelCall};

/// Partial text is written to the message at least this often while it streams. With the
/// writer's [`crate::persist::BATCH_SPACING`], a crash loses at most about 250 ms of text.
pub const CHECKPOINT_INTERVAL: Duration = Duration::from_millis(200);

/// Which message a reply writes.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    /// A new assistant message (normal, regenerate).
    New,
    /// Appends to this assistant message (continue).
    Continue(tavo_model::Message),
    /// Adds a swipe to this assistant message.
    Swipe(tavo_model::Message),
    /// The chat's input draft (impersonate writes the user's next message, never sends it).
    Draft,
    /// Nothing is stored (quiet).
    Nothing,
}

enum Stop {
    Cancelled,
    Failed(EngineError),
}

impl From<Cancelled> for Stop {
    fn from(_: Cancelled) -> Self {
        Stop::Cancelled
    }
}

pub(crate) struct ReplyTask {
    inner: Arc<Inner>,
    control: Arc<Control>,
    id: String,
    chat: ChatId,
    kind: GenerationKind,
    target: Target,
    endpoint: Endpoint,
    model: String,
    parameters: Parameters,
    settings: ToolSettings,
    limits: Limits,
    /// The message being written, as last stored.
    message: Option<tavo_model::Message>,
    /// Text the message had before this reply (continue).
    base_text: String,
    text: String,
    reasoning: String,
    cards: Vec<ToolCallSummary>,
    usage: Usage,
    dirty: bool,
    last_checkpoint: Instant,
    /// The next text delta starts a new paragraph (a later round's text).
    new_paragraph: bool,
    /// The chat had regex groups bound when the prompt was built: the final text passes its
    /// `receive` rules.
    has_regex: bool,
    /// The reply's place among the starting ones, until its first request is answered (or
    /// [`START_HOLD`] has passed waiting for it).
    start_permit: Option<tokio::sync::OwnedSemaphorePermit>,
    /// Who was asked for and whose message is continued, swiped or regenerated.
    speakers: Speakers,
    /// The turns of this reply (one per speaker in a group chat).
    plan: Plan,
    /// The turn running now (0-based).
    turn: usize,
    /// The visible text of the turns that ended, for the `finished` event.
    said: Vec<(String, String)>,
}

impl ReplyTask {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        inner: Arc<Inner>,
        control: Arc<Control>,
        id: String,
        chat: ChatId,
        kind: GenerationKind,
        target: Target,
        endpoint: Endpoint,
        model: String,
        parameters: Parameters,
        settings: ToolSettings,
        limits: Limits,
        speakers: Speakers,
    ) -> Self {
        Self {
            inner,
            control,
            id,
            chat,
            kind,
            target,
            endpoint,
            model,
            parameters,
            settings,
            limits,
            message: None,
            base_text: String::new(),
            text: String::new(),
            reasoning: String::new(),
            cards: Vec::new(),
            usage: Usage::default(),
            dirty: false,
            last_checkpoint: Instant::now(),
            new_paragraph: false,
            has_regex: false,
            start_permit: None,
            speakers,
            plan: Plan::default(),
            turn: 0,
            said: Vec::new(),
        }
    }

    fn message_id(&self) -> Option<MessageId> {
        self.message.as_ref().and_then(|m| m.id)
    }

    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Store) -> Result<T, EngineError> + Send + 'static,
    ) -> Result<T, EngineError> {
        let _permit = self.inner.gate.acquire().await.map_err(PoolError::from)?;
        on_blocking_pool(&self.inner.store, f).await
    }

    /// One turn of the reply: its start, then model rounds until the model answers without
    /// tools (or only with stealth ones), the recursion limit is reached, or it stops.
    async fn drive(&mut self, speaker: Option<CharacterId>) -> Result<(), Stop> {
        let (base, services) = self.start_turn(speaker).await?;
        let may_call = prompt::may_call(&self.settings, self.kind);
        let exposed = prompt::initial_exposure(
            &self.inner.registry,
            &self.settings,
            self.kind,
            prompt::availability(&services, self.chat),
            &services.extensions,
            self.chat,
        );
        let mut runner = CallRunner::with_gate(
            self.inner.registry.clone(),
            services.clone(),
            self.inner.store.clone(),
            self.inner.gate.clone(),
            self.chat,
            &self.id,
            self.limits,
            exposed,
        )
        .with_extensions(self.inner.extensions.clone());

        let mut rounds: Vec<Message> = Vec::new();
        // Every round before the last one ran tools, so `round` counts the tool rounds.
        for round in 0u32.. {
            if self.control.is_cancelled() {
                return Err(Stop::Cancelled);
            }
            let can_call_now = may_call && round < self.limits.recursion_limit;
            if may_call && round == self.limits.recursion_limit && round > 0 {
                // The reply's status says why the model answers without tools now.
                let n = self.limits.recursion_limit;
                self.control.hub.publish(EventKind::Warning {
                    message: format!(
                        "stopped after {n} tool round{} (tools.recursionLimit): this round answers without running tools",
                        if n == 1 { "" } else { "s" }
                    ),
                });
            }
            let tools = if may_call {
                prompt::declarations(
                    &self.inner.registry,
                    &services.extensions,
                    runner.exposed(),
                    self.chat,
                )
            } else {
                Vec::new()
            };
            let offered: Vec<String> = if can_call_now {
                tools.iter().map(|t| t.name.clone()).collect()
            } else {
                Vec::new()
            };
            let req = prompt::round_request(
                &self.model,
                &base,
                &rounds,
                tools,
                can_call_now,
                self.settings.reasoning_mode,
            );
            self.control.hub.publish(EventKind::Round {
                round,
                tools: offered,
            });
            // Text of a later round starts a new paragraph of the same message.
            self.new_paragraph = round > 0;
            let (response, argument_errors) = self.stream(&req).await?;
            for w in &response.warnings {
                self.control
                    .hub
                    .publish(EventKind::Warning { message: w.clone() });
            }
            self.usage.merge(&response.usage);
            if let Some((_, message)) = &response.error {
                return Err(Stop::Failed(EngineError::Provider(message.clone())));
            }
            let calls = model_calls(&response, &argument_errors);
            if calls.is_empty() || !may_call {
                break;
            }
            if !can_call_now {
                self.control.hub.publish(EventKind::Warning {
                    message: format!(
                        "the model asked for tools after the recursion limit ({} rounds); the calls were not run",
                        self.limits.recursion_limit
                    ),
                });
                break;
            }
            let (results, stealth) = self.run_calls(&mut runner, &calls).await?;
            if stealth.len() == calls.len() {
                // Stealth results stay out of the visible history and trigger no follow-up.
                break;
            }
            // Seed 001: a stealth call's result never goes back to the model, also in a round
            // that mixes it with normal calls: the call and its result leave the history the
            // next round is built from, as SillyTavern keeps only the visible invocations.
            let mut said = response.message.clone();
            said.parts
                .retain(|p| !matches!(p, Part::ToolCall { id, .. } if stealth.contains(id)));
            rounds.push(said);
            rounds.push(Message {
                role: Role::Tool,
                parts: results
                    .into_iter()
                    .filter(|p| {
                        !matches!(p, Part::ToolResult { call_id, .. } if stealth.contains(call_id))
                    })
                    .collect(),
            });
        }
        self.keep_rounds(&rounds).await;
        Ok(())
    }

    /// Stores the turn's tool rounds beside its message, so later prompts send the calls and
    /// results back in the protocol's shape (`crate::tool_history`). A failure costs only that:
    /// the message's card line stands in for them.
    async fn keep_rounds(&self, rounds: &[Message]) {
        let Some(id) = self.message_id() else { return };
        let swipe = self.message.as_ref().and_then(|m| m.swipe_id);
        let Some(stored) = StoredRounds::from_rounds(rounds, swipe, &self.model) else {
            return;
        };
        let value = stored.to_value();
        let kept = self
            .blocking(move |store| store.tool_rounds_set(id, &value).map_err(EngineError::from))
            .await;
        if let Err(e) = kept {
            tracing::warn!(error = %e, reply = %self.id, "cannot keep the reply's tool rounds");
        }
    }

    /// The start of a turn: the start gate, the plugin's prepare hook, one trip to the
    /// library for the prompt, the reply's own message and the services, then the turn's
    /// events (started, speaker, history cut).
    async fn start_turn(
        &mut self,
        speaker: Option<CharacterId>,
    ) -> Result<(BasePrompt, Arc<Services>), Stop> {
        // A closed semaphore only means no gate: the engine never closes it.
        self.start_permit = tokio::select! {
            p = self.inner.starting.clone().acquire_owned() => p.ok(),
            () = self.control.cancelled() => return Err(Stop::Cancelled),
        };
        let mut knobs = PromptKnobs::reply(self.model.clone(), self.parameters.clone());
        knobs.speaker = speaker;
        knobs.user_text = self.prepare_hook().await?;
        let (engine, chat, kind) = (self.inner.prompt.clone(), self.chat, self.kind);
        let new_message = matches!(self.target, Target::New).then(|| self.id.clone());
        // One trip off the executor for everything the reply reads and writes before its first
        // request: the prompt, its own message, the search settings. Each trip is a thread
        // hand-off and wake-up, and hundreds of replies starting together pay each one. Only
        // when images wait to be described (image sending, `crate::describe`) is there a
        // second: they are described first, then the prompt is built with their descriptions.
        let mut look_for_images = self.turn == 0;
        let (base, stored, services) = loop {
            let (engine, knobs, inner) = (engine.clone(), knobs.clone(), self.inner.clone());
            let new_message = new_message.clone();
            let start = self
                .blocking(move |store| {
                    if look_for_images {
                        let pending = crate::describe::pending(store, chat)?;
                        if !pending.is_empty() {
                            return Ok(Err(pending));
                        }
                    }
                    let base = prompt::build(store, &engine, chat, kind, &knobs)?;
                    let stored = match new_message {
                        Some(reply) => Some(new_assistant_message(store, chat, &reply, &base)?),
                        None => None,
                    };
                    Ok(Ok((base, stored, inner.reply_services())))
                })
                .await
                .map_err(Stop::Failed)?;
            match start {
                Ok(ready) => break ready,
                Err(pending) => {
                    self.describe_images(pending).await?;
                    look_for_images = false;
                }
            }
        };
        self.open_message(stored);
        self.has_regex = base.has_regex;
        self.control
            .set_status(ReplyStatus::Running, self.message_id());
        if self.turn == 0 {
            self.control.hub.publish(EventKind::Started {
                chat_id: self.chat,
                message_id: self.message_id(),
                kind: self.kind,
                character_id: base.speaker_id,
            });
        }
        if self.plan.group && speaker.is_some() {
            self.control.hub.publish(EventKind::Speaker {
                character_id: base.speaker_id,
                name: base.speaker_name.clone().unwrap_or_default(),
                message_id: self.message_id(),
                turn: self.turn as u32 + 1,
                turns: self.plan.turns.len() as u32,
            });
        }

        if let Some(cut) = base.history_cut() {
            self.control
                .hub
                .publish(EventKind::Warning { message: cut });
        }
        Ok((base, services))
    }

    /// Image sending: describes the images of these user messages before the reply's first
    /// prompt, one after the other. A failed description is a warning; the reply goes on.
    async fn describe_images(&mut self, messages: Vec<MessageId>) -> Result<(), Stop> {
        for id in messages {
            let described = tokio::select! {
                r = crate::describe::describe(
                    &self.inner.store,
                    &self.inner.client,
                    &self.inner.gate,
                    id,
                    None,
                ) => r,
                () = self.control.cancelled() => return Err(Stop::Cancelled),
            };
            if let Err(e) = described {
                self.control.hub.publish(EventKind::Warning {
                    message: format!("the image of message {id} was not described: {e}"),
                });
            }
        }
        Ok(())
    }

    /// Runs one round's tool calls in order (a cancelled one stops the batch), keeps their
    /// cards, writes the audit and a checkpoint. Returns the results for the model and the ids
    /// of the stealth calls among them.
    async fn run_calls(
        &mut self,
        runner: &mut CallRunner,
        calls: &[ModelCall],
    ) -> Result<(Vec<Part>, Vec<String>), Stop> {
        let mut results = Vec::with_capacity(calls.len());
        let mut audits: Vec<AuditRecord> = Vec::with_capacity(calls.len());
        let mut stealth = Vec::new();
        let mut cancelled = false;
        for call in calls {
            let outcome = runner.execute(call, &self.control, self.message_id()).await;
            if outcome.card.stealth {
                stealth.push(outcome.card.call_id.clone());
            } else {
                self.cards.push(outcome.card);
            }
            results.push(outcome.result);
            audits.push(outcome.audit);
            if outcome.cancelled {
                cancelled = true;
                break;
            }
        }
        self.write_audit(audits).await;
        self.dirty = true;
        self.checkpoint();
        if cancelled {
            return Err(Stop::Cancelled);
        }
        Ok((results, stealth))
    }

    /// Streams one model round: deltas become events and checkpoints; the reply's
    /// cancellation stops it at once.
    async fn stream(
        &mut self,
        req: &ChatRequest,
    ) -> Result<(ChatResponse, HashMap<String, String>), Stop> {
        let control = self.control.clone();
        let client = self.inner.client.clone();
        let mut permit = self.start_permit.take();
        let answered = {
            let send = client.send(&self.endpoint, req);
            tokio::pin!(send);
            let hold = tokio::time::sleep(START_HOLD);
            tokio::pin!(hold);
            loop {
                tokio::select! {
                    r = &mut send => break r,
                    () = &mut hold, if permit.is_some() => permit = None,
                    () = control.cancelled() => return Err(Stop::Cancelled),
                }
            }
        };
        drop(permit);
        let mut stream = answered.map_err(|e| Stop::Failed(EngineError::Provider(e.message)))?;
        let mut builder = ReplyBuilder::new();
        let mut argument_errors = HashMap::new();
        // One cancellation future and one checkpoint timer for the whole round, re-armed only
        // when a checkpoint moves the deadline: made afresh for every event, they were a
        // subscription and a timer-wheel entry in and out per relayed event.
        let cancelled = control.cancelled();
        tokio::pin!(cancelled);
        let next_checkpoint =
            |last: Instant| tokio::time::Instant::from_std(last + CHECKPOINT_INTERVAL);
        let checkpoint_due = tokio::time::sleep_until(next_checkpoint(self.last_checkpoint));
        tokio::pin!(checkpoint_due);
        loop {
            let deadline = next_checkpoint(self.last_checkpoint);
            if checkpoint_due.deadline() != deadline {
                checkpoint_due.as_mut().reset(deadline);
            }
            tokio::select! {
                biased;
                () = &mut cancelled => {
                    self.checkpoint();
                    return Err(Stop::Cancelled);
                }
                event = stream.next() => {
                    let Some(event) = event else { break };
                    match &event {
                        StreamEvent::TextDelta { text } => {
                            let mut text = text.clone();
                            if std::mem::take(&mut self.new_paragraph) && !self.text.is_empty() {
                                text.insert_str(0, "\n\n");
                            }
                            self.text.push_str(&text);
                            self.dirty = true;
                            control.hub.publish(EventKind::TextDelta { text });
                        }
                        StreamEvent::ReasoningDelta { text } => {
                            self.reasoning.push_str(text);
                            self.dirty = true;
                            control.hub.publish(EventKind::ReasoningDelta { text: text.clone() });
                        }
                        StreamEvent::ToolCall { id, arguments_error: Some(e), .. } => {
                            argument_errors.insert(id.clone(), e.clone());
                        }
                        _ => {}
                    }
                    builder.push(&event);
                    if self.dirty && self.last_checkpoint.elapsed() >= CHECKPOINT_INTERVAL {
                        self.checkpoint();
                    }
                }
                () = &mut checkpoint_due, if self.dirty => {
                    self.checkpoint();
                }
            }
        }
        Ok((builder.finish(), argument_errors))
    }

    /// Picks the message this reply writes: `stored`, the new message a normal reply created,
    /// or the one its target names.
    fn open_message(&mut self, stored: Option<tavo_model::Message>) {
        self.message = match self.target.clone() {
            Target::New => stored,
            Target::Continue(m) => {
                self.base_text = m.content.clone();
                self.cards = crate::summary::cards_of(&m.extra);
                Some(m)
            }
            Target::Swipe(mut m) => {
                if m.swipes.is_empty() {
                    m.swipes.push(m.content.clone());
                }
                m.swipes.push(String::new());
                m.swipe_id = Some(m.swipes.len() as u64 - 1);
                m.extra.remove(MESSAGE_CALLS_KEY);
                Some(m)
            }
            Target::Draft | Target::Nothing => None,
        };
    }

    /// Queues the partial reply for its message and goes on at once: the engine's writer
    /// batches it with every other reply's checkpoint, so streaming never waits for the store.
    fn checkpoint(&mut self) {
        if let Some(m) = self.snapshot(ReplyStatus::Running) {
            self.inner.persister.submit(Write::Message(m));
        }
    }

    /// Writes the reply into its message with `status` and waits until it is committed.
    async fn checkpoint_now(&mut self, status: ReplyStatus) {
        if let Some(m) = self.snapshot(status)
            && let Err(e) = self.inner.persister.write(Write::Message(m)).await
        {
            tracing::warn!(error = %e, reply = %self.id, "cannot save the reply");
        }
    }

    /// The message as the reply has written it so far, when something changed since the last
    /// snapshot.
    fn snapshot(&mut self, status: ReplyStatus) -> Option<tavo_model::Message> {
        self.last_checkpoint = Instant::now();
        if !std::mem::take(&mut self.dirty) {
            return None;
        }
        let mut m = self.message.clone()?;
        let content = format!("{}{}", self.base_text, self.text);
        if let (Some(i), Target::Swipe(_)) = (m.swipe_id, &self.target)
            && let Some(slot) = m.swipes.get_mut(i as usize)
        {
            slot.clone_from(&content);
        }
        m.content = content;
        if !self.reasoning.is_empty() {
            m.reasoning = Some(self.reasoning.clone());
        }
        if self.cards.is_empty() {
            m.extra.remove(MESSAGE_CALLS_KEY);
        } else {
            m.extra.insert(
                MESSAGE_CALLS_KEY.into(),
                serde_json::to_value(&self.cards).unwrap_or(Value::Null),
            );
        }
        set_message_status(&mut m.extra, &self.id, status);
        self.message = Some(m.clone());
        Some(m)
    }

    async fn write_audit(&self, audits: Vec<AuditRecord>) {
        if audits.is_empty() {
            return;
        }
        let written = self
            .blocking(move |store| {
                store
                    .write(|tx| {
                        for a in &audits {
                            tx.audit_append(&a.action(), Some(&a.target()), &a.details())?;
                        }
                        Ok(())
                    })
                    .map_err(EngineError::from)
            })
            .await;
        if let Err(e) = written {
            tracing::warn!(error = %e, "cannot write the tool audit");
        }
    }

    /// Runs the chat's `receive` regex rules over what this reply wrote (the new text only: a
    /// continued message's earlier text was received before), so the stored message and the
    /// `finished` event carry the rewritten text. Streamed deltas stay as the model sent them.
    async fn receive_rewrite(&mut self) {
        let stores_message = matches!(
            self.target,
            Target::New | Target::Continue(_) | Target::Swipe(_)
        );
        if !self.has_regex || !stores_message || (self.text.is_empty() && self.reasoning.is_empty())
        {
            return;
        }
        let mut m = tavo_model::Message::new(tavo_model::Role::Assistant, self.text.clone());
        m.reasoning = (!self.reasoning.is_empty()).then(|| self.reasoning.clone());
        if let Some(stored) = &self.message {
            m.character_id = stored.character_id;
            m.name.clone_from(&stored.name);
        }
        let chat = self.chat;
        let rewritten = self
            .blocking(move |store| {
                let chat = store
                    .chat_get(chat)?
                    .ok_or(EngineError::ChatNotFound(chat))?;
                let r = tavo_tools::messages::rewrite_for_write(
                    store,
                    &chat,
                    &m,
                    tavo_prompt::WriteTiming::Receive,
                )?;
                store.write(|tx| r.save_variables(tx))?;
                Ok(r)
            })
            .await;
        match rewritten {
            Ok(r) => {
                for issue in &r.regex_issues {
                    self.control.hub.publish(EventKind::Warning {
                        message: format!("{}: {}", issue.location, issue.error),
                    });
                }
                self.text = r.message.content;
                self.reasoning = r.message.reasoning.unwrap_or_default();
            }
            Err(e) => {
                tracing::warn!(error = %e, reply = %self.id, "cannot apply the chat's receive regex rules")
            }
        }
    }
}

/// Stores the empty assistant message a new reply writes into, spoken by the prompt's speaker
/// and marked running by `reply`.
fn new_assistant_message(
    store: &Store,
    chat: ChatId,
    reply: &str,
    base: &BasePrompt,
) -> Result<tavo_model::Message, StoreError> {
    let mut m = tavo_model::Message::new(tavo_model::Role::Assistant, "");
    m.character_id = base.speaker_id;
    m.name = base.speaker_name.clone();
    m.send_date = Some(tavo_prompt::local_now().to_rfc3339());
    set_message_status(&mut m.extra, reply, ReplyStatus::Running);
    let id = store.message_append(chat, &m)?;
    m.id = Some(id);
    Ok(m)
}

/// The calls of a response, in the order the provider returned them.
fn model_calls(
    response: &ChatResponse,
    argument_errors: &HashMap<String, String>,
) -> Vec<ModelCall> {
    response
        .message
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::ToolCall {
                id,
                name,
                arguments,
                ..
            } => Some(ModelCall {
                id: id.clone(),
                name: name.clone(),
                arguments: arguments.clone(),
                arguments_error: argument_errors.get(id).cloned(),
            }),
            _ => None,
        })
        .collect()
}
