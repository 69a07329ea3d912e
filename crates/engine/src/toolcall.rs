//! Running the calls of one model response, in the order the provider returned them.
//!
//! The gates every call goes through are `tavo_tools::dispatch`'s, the same for every door;
//! this module is the reply's door onto them: a confirmation or a question becomes the
//! reply's pending interaction (status `waiting`, the time never counted toward the call's
//! time-out), the reply's cancellation abandons the call, and every call leaves a compact card
//! (message, events) and a full audit record.

use std::sync::Arc;
use std::time::{Duration, Instant};
use tavo_model::{ChatId, MessageId};

use serde_json::Value;
use tavo_llm::Part;
use tavo_store::Store;
use tavo_tools::dispatch::{DoorFuture, PendingCall};
use tavo_tools::registry::complete;
use tavo_tools::{
    CallScope, Confirmation, Dispatcher, Door, ErrorCode, ExposedSet, Gate, Question, Registry,
    Services, ToolCall, ToolError, UserAnswer,
};

use crate::control::{Cancelled, Control};
use crate::event::EventKind;
use crate::interaction::{Interaction, Response};
use crate::limits::Limits;
use crate::summary::{AuditRecord, CallStatus, ToolCallSummary, label_for};

pub use tavo_tools::ExtensionRunner;

/// One call as the model made it.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelCall {
    /// The provider's id for the call; the tool result goes back under it.
    pub id: String,
    /// The tool the model asked for, as it spelled it (checked against the exposed tools).
    pub name: String,
    /// The arguments as the model gave them, parsed from JSON.
    pub arguments: Value,
    /// Set when the provider sent arguments that are not JSON (then `arguments` is the text).
    pub arguments_error: Option<String>,
}

/// What one call produced.
#[derive(Debug, Clone)]
pub struct CallOutcome {
    /// The tool result to send back to the model.
    pub result: Part,
    /// The card for the message and the event stream.
    pub card: ToolCallSummary,
    /// For the audit log.
    pub audit: AuditRecord,
    /// The reply was cancelled during this call.
    pub cancelled: bool,
}

/// Per-reply call state: the dispatcher, and the scope (exposed tools, budget, call count).
pub struct CallRunner {
    dispatcher: Dispatcher,
    /// The reply's chat (the audit record's).
    chat: ChatId,
    scope: CallScope,
    reply_id: String,
}

impl CallRunner {
    /// A runner for one reply on `chat` with the tools of `exposed` callable.
    pub fn new(
        registry: Arc<Registry>,
        services: Arc<Services>,
        store: Store,
        chat: ChatId,
        reply_id: &str,
        limits: Limits,
        exposed: ExposedSet,
    ) -> Self {
        Self::with_gate(
            registry,
            services,
            store,
            Gate::default(),
            chat,
            reply_id,
            limits,
            exposed,
        )
    }

    /// Like [`CallRunner::new`], behind the engine's gate for library tasks.
    #[allow(clippy::too_many_arguments)]
    pub fn with_gate(
        registry: Arc<Registry>,
        services: Arc<Services>,
        store: Store,
        gate: Gate,
        chat: ChatId,
        reply_id: &str,
        limits: Limits,
        exposed: ExposedSet,
    ) -> Self {
        Self {
            dispatcher: Dispatcher::new(store, registry, services, gate),
            chat,
            scope: CallScope::reply(
                chat,
                exposed,
                limits.max_calls,
                (limits.call_timeout, limits.page_call_timeout),
                limits.reply_budget,
            ),
            reply_id: reply_id.to_owned(),
        }
    }

    /// Sets who runs extension tools.
    pub fn with_extensions(mut self, runner: Option<Arc<dyn ExtensionRunner>>) -> Self {
        self.dispatcher = self.dispatcher.with_extensions(runner);
        self
    }

    /// The tools callable now.
    pub fn exposed(&self) -> &ExposedSet {
        static EMPTY: std::sync::OnceLock<ExposedSet> = std::sync::OnceLock::new();
        self.scope
            .exposed
            .as_ref()
            .unwrap_or_else(|| EMPTY.get_or_init(ExposedSet::default))
    }

    /// Whether `name` is a stealth extension tool.
    pub fn is_stealth(&self, name: &str) -> bool {
        self.dispatcher.is_stealth(name)
    }

    /// Runs one call to its end (or to the reply's cancellation).
    pub async fn execute(
        &mut self,
        call: &ModelCall,
        control: &Control,
        message_id: Option<MessageId>,
    ) -> CallOutcome {
        let started = Instant::now();
        let chat = self.chat;
        let mut card = ToolCallSummary {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            status: CallStatus::Running,
            label: label_for(&call.arguments),
            error_code: None,
            truncated: false,
            stealth: self.is_stealth(&call.name),
        };
        // A stealth call is never shown (seed 001), not even while it runs.
        if !card.stealth {
            control
                .hub
                .publish(EventKind::ToolCall { call: card.clone() });
        }
        let door = ReplyDoor {
            control,
            message_id,
            card: card.clone(),
        };
        let request = ToolCall {
            id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
            arguments_error: call.arguments_error.clone(),
        };
        // The reply's cancellation wins over a call that finished at the same moment.
        let dispatched = tokio::select! {
            biased;
            () = control.cancelled() => None,
            done = self.dispatcher.call(&mut self.scope, &request, &door) => Some(done),
        };
        let (completed, waited, cancelled) = match dispatched {
            Some(d) => (d.completed, d.waited, false),
            None => {
                let e = ToolError::new(
                    ErrorCode::Cancelled,
                    "the reply was cancelled before this call finished",
                );
                (
                    complete(Err(e), &mut self.scope.budget),
                    Duration::ZERO,
                    true,
                )
            }
        };
        let ok = completed.error.is_none();
        card.status = if ok {
            CallStatus::Ok
        } else {
            CallStatus::Error
        };
        card.error_code = completed.error.map(|c| c.as_str().to_owned());
        card.truncated = completed.truncated;
        if !card.stealth {
            control
                .hub
                .publish(EventKind::ToolCall { call: card.clone() });
        }
        let run_ms = started.elapsed().saturating_sub(waited).as_millis() as u64;
        let audit = AuditRecord {
            reply_id: self.reply_id.clone(),
            chat_id: chat,
            call_id: call.id.clone(),
            tool: call.name.clone(),
            arguments: call.arguments.clone(),
            envelope: completed.envelope.clone(),
            status: card.status,
            truncated: completed.truncated,
            run_ms,
            waited_ms: waited.as_millis() as u64,
        };
        let result = Part::ToolResult {
            call_id: call.id.clone(),
            name: call.name.clone(),
            content: completed.envelope.to_string(),
            is_error: !ok,
        };
        CallOutcome {
            result,
            card,
            audit,
            cancelled,
        }
    }
}

/// The reply's door: a confirmation or a question becomes the reply's pending interaction,
/// answered through its handle (HTTP, the terminal, the UI).
struct ReplyDoor<'c> {
    control: &'c Control,
    message_id: Option<MessageId>,
    card: ToolCallSummary,
}

impl ReplyDoor<'_> {
    async fn wait(&self, interaction: Interaction) -> Result<Response, Cancelled> {
        let mut card = self.card.clone();
        card.status = CallStatus::Waiting;
        if !card.stealth {
            self.control.hub.publish(EventKind::ToolCall { call: card });
        }
        self.control.wait_for(interaction, self.message_id).await
    }
}

impl Door for ReplyDoor<'_> {
    fn confirm<'a>(
        &'a self,
        call: PendingCall<'a>,
    ) -> DoorFuture<'a, Result<Confirmation, ToolError>> {
        Box::pin(async move {
            let interaction = Interaction::Confirmation {
                call_id: call.call_id.to_owned(),
                tool: call.tool.to_owned(),
                safety: call.safety,
                arguments: call.arguments.clone(),
            };
            match self.wait(interaction).await {
                Ok(Response::Approve { remember }) => Ok(Confirmation::Allow { remember }),
                Ok(Response::Deny { remember }) => Ok(Confirmation::Deny { remember }),
                Ok(Response::Answer { .. }) => Ok(Confirmation::Deny { remember: false }),
                Err(Cancelled) => Err(ToolError::new(
                    ErrorCode::Cancelled,
                    "the reply was cancelled before this call finished",
                )),
            }
        })
    }

    fn ask<'a>(&'a self, call: PendingCall<'a>, question: Question) -> DoorFuture<'a, UserAnswer> {
        Box::pin(async move {
            let interaction = Interaction::Question {
                call_id: call.call_id.to_owned(),
                tool: call.tool.to_owned(),
                question,
            };
            match self.wait(interaction).await {
                Ok(Response::Answer { answer }) => answer,
                Ok(Response::Approve { .. } | Response::Deny { .. }) | Err(Cancelled) => {
                    UserAnswer::Cancelled
                }
            }
        })
    }
}
