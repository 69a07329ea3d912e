//! Running the calls of one model response, in the order the provider returned them.
//!
//! Each call goes through the same gates, in this order: arguments that are not JSON →
//! `invalid_arguments`; the reply's call limit → `limit_exceeded`; exposure (a built-in tool
//! not shown yet, an unknown name) → `unknown_tool`; strict validation; the approval policy
//! (deny → `permission_denied`, ask → the reply waits for a confirmation); then the handler
//! under the per-call time-out, where a pause for the user stops the clock; finally the
//! result budgets and the envelope. Every call leaves a compact card (message, events) and a
//! full audit record.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tavo_llm::Part;
use tavo_store::Store;
use tavo_tools::approval::{Approval, ApprovalPolicy, Decision, declined, refused};
use tavo_tools::extension::ExtensionTool;
use tavo_tools::operation::BoxFuture;
use tavo_tools::registry::complete;
use tavo_tools::{
    CallStep, Completed, ErrorCode, ExposedSet, OpContext, Registry, ReplyBudget, Safety, Services,
    ToolError, ToolResult, UserAnswer,
};

use crate::control::{Cancelled, Control};
use crate::event::EventKind;
use crate::interaction::{Interaction, Response};
use crate::limits::Limits;
use crate::offload::on_blocking_pool;
use crate::summary::{AuditRecord, CallStatus, ToolCallSummary, label_for};

/// Runs extension tools (registered by pages, later MCP servers). The server implements it by
/// forwarding the call to the page that registered the tool.
pub trait ExtensionRunner: Send + Sync {
    /// Runs `tool` with validated `arguments` for `chat`; the result is what the model gets.
    fn run(
        &self,
        tool: &ExtensionTool,
        chat: i64,
        arguments: Value,
    ) -> BoxFuture<Result<Value, ToolError>>;
}

/// One call as the model made it.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelCall {
    pub id: String,
    pub name: String,
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

enum Target {
    Builtin(Safety),
    Extension(ExtensionTool),
}

/// Per-reply call state: what is exposed, the result budget, the call count.
pub struct CallRunner {
    pub(crate) registry: Arc<Registry>,
    pub(crate) services: Arc<Services>,
    pub(crate) store: Store,
    pub(crate) chat: i64,
    pub(crate) reply_id: String,
    pub(crate) limits: Limits,
    pub(crate) exposed: ExposedSet,
    pub(crate) budget: ReplyBudget,
    pub(crate) calls_made: u32,
    pub(crate) extensions: Option<Arc<dyn ExtensionRunner>>,
}

impl CallRunner {
    /// A runner for one reply on `chat` with the tools of `exposed` callable.
    pub fn new(
        registry: Arc<Registry>,
        services: Arc<Services>,
        store: Store,
        chat: i64,
        reply_id: &str,
        limits: Limits,
        exposed: ExposedSet,
    ) -> Self {
        Self {
            registry,
            services,
            store,
            chat,
            reply_id: reply_id.to_owned(),
            limits,
            exposed,
            budget: ReplyBudget::new(limits.reply_budget),
            calls_made: 0,
            extensions: None,
        }
    }

    /// Sets who runs extension tools.
    pub fn with_extensions(mut self, runner: Option<Arc<dyn ExtensionRunner>>) -> Self {
        self.extensions = runner;
        self
    }

    /// The tools callable now.
    pub fn exposed(&self) -> &ExposedSet {
        &self.exposed
    }

    /// Whether `name` is a stealth extension tool.
    pub fn is_stealth(&self, name: &str) -> bool {
        self.registry.get(name).is_none()
            && self
                .services
                .extensions
                .get(name)
                .is_some_and(|t| t.stealth)
    }

    /// Runs one call to its end (or to the reply's cancellation).
    pub async fn execute(
        &mut self,
        call: &ModelCall,
        control: &Control,
        message_id: Option<i64>,
    ) -> CallOutcome {
        let started = Instant::now();
        let mut waited = Duration::ZERO;
        let mut card = ToolCallSummary {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            status: CallStatus::Running,
            label: label_for(&call.arguments),
            error_code: None,
            truncated: false,
            stealth: self.is_stealth(&call.name),
        };
        control
            .hub
            .publish(EventKind::ToolCall { call: card.clone() });
        let (completed, cancelled) = match self
            .run(call, control, message_id, &mut card, &mut waited)
            .await
        {
            Ok(c) => (c, false),
            Err(Cancelled) => {
                let e = ToolError::new(
                    ErrorCode::Cancelled,
                    "the reply was cancelled before this call finished",
                );
                (complete(Err(e), &mut self.budget), true)
            }
        };
        self.exposed.expose(completed.expose.iter().cloned());
        let ok = completed.error.is_none();
        card.status = if ok {
            CallStatus::Ok
        } else {
            CallStatus::Error
        };
        card.error_code = completed.error.map(|c| c.as_str().to_owned());
        card.truncated = completed.truncated;
        control
            .hub
            .publish(EventKind::ToolCall { call: card.clone() });
        let run_ms = started.elapsed().saturating_sub(waited).as_millis() as u64;
        let audit = AuditRecord {
            reply_id: self.reply_id.clone(),
            chat_id: self.chat,
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

    fn fail(&mut self, e: ToolError) -> Completed {
        complete(Err(e), &mut self.budget)
    }

    fn target(&self, name: &str) -> Result<Target, ToolError> {
        if let Some(op) = self.registry.get(name) {
            // Operation names (`file.save`) are not model-door names.
            if op.tool_name() != name {
                return Err(ToolError::new(
                    ErrorCode::UnknownTool,
                    format!(
                        "there is no tool named {name}; did you mean {}?",
                        op.tool_name()
                    ),
                ));
            }
            self.exposed.check_callable(name)?;
            return Ok(Target::Builtin(op.safety()));
        }
        match self.services.extensions.get(name) {
            Some(tool) if self.exposed.contains(name) => Ok(Target::Extension(tool)),
            Some(_) => Err(ToolError::new(
                ErrorCode::UnknownTool,
                format!(
                    "{name} is not available in this step; call extension_tool_search to enable it first"
                ),
            )),
            None => Err(ToolError::new(
                ErrorCode::UnknownTool,
                format!(
                    "there is no tool named {name}; use tavo_tool_search to find the right tool"
                ),
            )),
        }
    }

    async fn run(
        &mut self,
        call: &ModelCall,
        control: &Control,
        message_id: Option<i64>,
        card: &mut ToolCallSummary,
        waited: &mut Duration,
    ) -> Result<Completed, Cancelled> {
        if let Some(reason) = &call.arguments_error {
            return Ok(self.fail(ToolError::new(
                ErrorCode::InvalidArguments,
                format!(
                    "invalid arguments for {}: {reason}; send one JSON object",
                    call.name
                ),
            )));
        }
        if self.calls_made >= self.limits.max_calls {
            return Ok(self.fail(ToolError::new(
                ErrorCode::LimitExceeded,
                format!(
                    "this reply already made {} tool calls, its limit; answer the user with what you have",
                    self.limits.max_calls
                ),
            )));
        }
        self.calls_made += 1;
        let target = match self.target(&call.name) {
            Ok(t) => t,
            Err(e) => return Ok(self.fail(e)),
        };
        let arguments = if call.arguments.is_null() {
            Value::Object(Default::default())
        } else {
            call.arguments.clone()
        };
        let (safety, validated) = match &target {
            Target::Builtin(safety) => (
                *safety,
                self.registry
                    .get(&call.name)
                    .map_or(Ok(()), |op| op.validate(&arguments)),
            ),
            // Extension tools run code the user installed to be called; they are allowed
            // unless the user's policy says otherwise.
            Target::Extension(tool) => (Safety::Read, tool.validate(&arguments)),
        };
        if let Err(e) = validated {
            return Ok(self.fail(e));
        }
        let chat = Some(self.chat);
        let policy = self.approval_policy().await;
        match policy.decide(chat, &call.name, safety) {
            Decision::Run => {}
            Decision::Refuse => return Ok(self.fail(refused(&call.name))),
            Decision::Confirm => {
                card.status = CallStatus::Waiting;
                control
                    .hub
                    .publish(EventKind::ToolCall { call: card.clone() });
                let asked = Instant::now();
                let interaction = Interaction::Confirmation {
                    call_id: call.id.clone(),
                    tool: call.name.clone(),
                    safety,
                    arguments: arguments.clone(),
                };
                let response = control.wait_for(interaction, message_id).await;
                *waited += asked.elapsed();
                card.status = CallStatus::Running;
                match response? {
                    Response::Approve { remember } => {
                        if remember {
                            self.remember(&call.name, Approval::Allow).await;
                        }
                    }
                    Response::Deny { remember } => {
                        if remember {
                            self.remember(&call.name, Approval::Deny).await;
                        }
                        return Ok(self.fail(declined(&call.name)));
                    }
                    Response::Answer { .. } => return Ok(self.fail(declined(&call.name))),
                }
            }
        }
        match target {
            Target::Extension(tool) => {
                let Some(runner) = self.extensions.clone() else {
                    return Ok(self.fail(ToolError::new(
                        ErrorCode::ResourceNotFound,
                        format!("{} has no page or server connected to run it right now; answer without it", call.name),
                    )));
                };
                let future = runner.run(&tool, self.chat, arguments);
                let outcome = self.timed(&call.name, control, future).await?;
                Ok(complete(
                    outcome.map(|v| (ToolResult::Value(v), Vec::new())),
                    &mut self.budget,
                ))
            }
            Target::Builtin(_) => {
                let ctx = OpContext {
                    store: self.store.clone(),
                    chat,
                    services: self.services.clone(),
                    registry: self.registry.clone(),
                    shown: self.exposed.snapshot(),
                };
                let registry = self.registry.clone();
                let limit = self.limits.call_timeout;
                let mut step = run_timed(
                    limit,
                    &call.name,
                    control,
                    registry.call(&call.name, arguments, ctx, &mut self.budget),
                )
                .await?;
                loop {
                    match step {
                        Ok(CallStep::Finished(done)) => return Ok(done),
                        Err(e) => return Ok(self.fail(e)),
                        Ok(CallStep::Paused { question, resume }) => {
                            card.status = CallStatus::Waiting;
                            control
                                .hub
                                .publish(EventKind::ToolCall { call: card.clone() });
                            let asked = Instant::now();
                            let interaction = Interaction::Question {
                                call_id: call.id.clone(),
                                tool: call.name.clone(),
                                question,
                            };
                            let response = control.wait_for(interaction, message_id).await;
                            *waited += asked.elapsed();
                            card.status = CallStatus::Running;
                            let answer = match response? {
                                Response::Answer { answer } => answer,
                                Response::Approve { .. } | Response::Deny { .. } => {
                                    UserAnswer::Cancelled
                                }
                            };
                            step = run_timed(
                                limit,
                                &call.name,
                                control,
                                Registry::resume(resume, answer, &mut self.budget),
                            )
                            .await?;
                        }
                    }
                }
            }
        }
    }

    async fn timed<T>(
        &self,
        tool: &str,
        control: &Control,
        future: impl std::future::Future<Output = Result<T, ToolError>>,
    ) -> Result<Result<T, ToolError>, Cancelled> {
        Ok(run_timed(self.limits.call_timeout, tool, control, future)
            .await?
            .and_then(|r| r))
    }

    /// The user's approval policy (read off the executor). A policy that cannot be read is the
    /// default one (confirm writes).
    async fn approval_policy(&self) -> ApprovalPolicy {
        on_blocking_pool(&self.store, ApprovalPolicy::load)
            .await
            .unwrap_or_else(|e| {
                tracing::warn!(error = %e, "cannot read the approval policy; using the default");
                ApprovalPolicy::default()
            })
    }

    /// Remembers the user's choice for `tool` in this chat (off the executor).
    async fn remember(&self, tool: &str, approval: Approval) {
        let (chat, tool) = (self.chat, tool.to_owned());
        let saved = on_blocking_pool(&self.store, move |store| {
            let mut policy = ApprovalPolicy::load(store).unwrap_or_default();
            policy.remember(Some(chat), &tool, approval);
            policy.save(store)
        })
        .await;
        if let Err(e) = saved {
            tracing::warn!(error = %e, "cannot remember the approval choice");
        }
    }
}

/// Runs `future` under the per-call time-out; the reply's cancellation wins over both.
async fn run_timed<T>(
    limit: Duration,
    tool: &str,
    control: &Control,
    future: impl std::future::Future<Output = T>,
) -> Result<Result<T, ToolError>, Cancelled> {
    tokio::select! {
        r = tokio::time::timeout(limit, future) => Ok(r.map_err(|_| ToolError::new(
            ErrorCode::Timeout,
            format!("{tool} did not finish within {}s and was stopped; try a smaller request or answer without it", limit.as_secs()),
        ))),
        () = control.cancelled() => Err(Cancelled),
    }
}
