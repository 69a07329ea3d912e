//! The one path every tool call takes, whichever door it came through: a model's call inside a
//! reply, `tavo tool call`, `POST /api/ops/{name}`, and later MCP and TavoJS.
//!
//! The gates, in order:
//! 1. arguments that are not JSON → `invalid_arguments`;
//! 2. the scope's call limit → `limit_exceeded` (the call does not run);
//! 3. the target: a built-in operation or an extension tool; under a reply, only tools the
//!    model was shown (and only by their model-door name) → `unknown_tool`;
//! 4. strict validation of the arguments, once;
//! 5. the approval policy: `deny` → `permission_denied`; `ask` → the [`Door`] confirms;
//! 6. the handler under the per-call time-out (`tools.callTimeoutSeconds`); a pause for the
//!    user stops the clock and the [`Door`] asks;
//! 7. the result budgets and the envelope.
//!
//! Doors differ only in how they confirm and ask ([`Door`]) and in the [`CallScope`] they call
//! in; nothing here knows which door it is.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tavo_model::ChatId;

use serde_json::Value;
use tavo_store::Store;

use crate::approval::{Approval, ApprovalPolicy, Decision, declined, refused, unreadable};
use crate::ask::{Question, UserAnswer};
use crate::budget::{ReplyBudget, ToolResult};
use crate::call_clock::timed;
use crate::context::{OpContext, Services};
use crate::error::{ErrorCode, ToolError};
use crate::exposure::{ExposedSet, ToolSettings};
use crate::extension::ExtensionTool;
use crate::gate::Gate;
use crate::operation::{BoxFuture, Outcome, Safety};
use crate::registry::{Completed, Registry, complete};
use crate::validate::ArgValidator;

/// A future borrowed from its door.
pub type DoorFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A call the door is asked about.
#[derive(Debug, Clone, Copy)]
pub struct PendingCall<'a> {
    /// The provider's call id (a door that has none makes one up).
    pub call_id: &'a str,
    /// The tool name the call used.
    pub tool: &'a str,
    /// The tool's write-safety.
    pub safety: Safety,
    /// The validated arguments, to show the user what they allow.
    pub arguments: &'a Value,
    /// The chat the call works on.
    pub chat: Option<ChatId>,
}

/// The user's choice about a call the policy wants confirmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confirmation {
    /// Run it; `remember` keeps "allow" for this tool in this chat.
    Allow {
        /// Remember the choice.
        remember: bool,
    },
    /// Refuse it (`permission_denied`); `remember` keeps "deny" for this tool in this chat.
    Deny {
        /// Remember the choice.
        remember: bool,
    },
}

/// How one door reaches its user: the only thing doors do differently.
pub trait Door: Send + Sync {
    /// The approval policy wants `call` confirmed. An `Err` fails the call with that error (a
    /// door that cannot ask says what the caller must do instead). Time spent here never
    /// counts toward the call's time-out.
    fn confirm<'a>(
        &'a self,
        call: PendingCall<'a>,
    ) -> DoorFuture<'a, Result<Confirmation, ToolError>>;

    /// A running call asks the user `question` (`tavo_ask_user`, overwrite-or-copy). A door
    /// with nobody to ask answers [`UserAnswer::Cancelled`]. Not counted toward the time-out.
    fn ask<'a>(&'a self, call: PendingCall<'a>, question: Question) -> DoorFuture<'a, UserAnswer>;
}

/// Runs extension tools (registered by pages, MCP servers): whoever registered a tool runs it.
pub trait ExtensionRunner: Send + Sync {
    /// Runs `tool` with validated `arguments` for `chat`; the result is what the caller gets.
    /// `timeout` is how long the dispatcher waits (it stops waiting itself); a runner that
    /// guards its own side, such as a page's timer over an untrusted frame, uses it.
    fn run(
        &self,
        tool: &ExtensionTool,
        chat: ChatId,
        arguments: Value,
        timeout: Duration,
    ) -> BoxFuture<Result<Value, ToolError>>;
}

/// One call, as the caller made it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The caller's id for the call.
    pub id: String,
    /// Tool name (`tavo_file_save`), or an operation name (`file.save`) at a door that allows it.
    pub name: String,
    /// The arguments (`null` means none).
    pub arguments: Value,
    /// Set when the caller sent arguments that are not JSON (then `arguments` is the text).
    pub arguments_error: Option<String>,
}

impl ToolCall {
    /// A call with JSON arguments.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments,
            arguments_error: None,
        }
    }
}

/// What bounds a run of calls: one reply, or one request at a user's door.
#[derive(Debug, Clone)]
pub struct CallScope {
    /// The chat chat-scoped operations work on.
    pub chat: Option<ChatId>,
    /// The tools the model was shown. `None` when the user calls directly: any tool, by its
    /// tool name or its operation name.
    pub exposed: Option<ExposedSet>,
    /// Bytes the results may still take.
    pub budget: ReplyBudget,
    /// Calls made so far.
    pub calls_made: u32,
    /// Calls allowed (`tools.maxCalls`).
    pub max_calls: u32,
    /// Time one call may run (`tools.callTimeoutSeconds`), waiting for the user excluded.
    pub call_timeout: Duration,
    /// Time one page tool may run ([`crate::extension::PAGE_TOOL_TIMEOUT`] in replies, the
    /// settings' time-out at a direct door).
    pub page_call_timeout: Duration,
}

impl CallScope {
    /// A scope for a user's direct call (CLI, HTTP, MCP): every tool callable, the limits of
    /// the settings, results cut to the model's budget (see [`CallScope::whole_results`]).
    pub fn direct(chat: Option<ChatId>, settings: &ToolSettings) -> Self {
        Self {
            chat,
            exposed: None,
            budget: ReplyBudget::default(),
            calls_made: 0,
            max_calls: settings.max_calls.max(1),
            call_timeout: timeout_of(settings),
            // A person calling directly chose the settings' time-out for every tool.
            page_call_timeout: timeout_of(settings),
        }
    }

    /// The same scope answering whole results: the caller is a person's own program (the app,
    /// a bubble's script, `tavo tool call`), not a model whose context the budgets protect.
    pub fn whole_results(mut self) -> Self {
        self.budget = ReplyBudget::whole();
        self
    }

    /// A scope for one reply of `chat`: only `exposed` callable. `call_timeout` bounds each
    /// call, `page_call_timeout` a page tool's.
    pub fn reply(
        chat: ChatId,
        exposed: ExposedSet,
        max_calls: u32,
        (call_timeout, page_call_timeout): (Duration, Duration),
        reply_budget: usize,
    ) -> Self {
        Self {
            chat: Some(chat),
            exposed: Some(exposed),
            budget: ReplyBudget::new(reply_budget),
            calls_made: 0,
            max_calls,
            call_timeout,
            page_call_timeout,
        }
    }
}

/// The per-call time-out of the settings.
pub fn timeout_of(settings: &ToolSettings) -> Duration {
    Duration::from_secs(u64::from(settings.call_timeout_seconds.max(1)))
}

/// A finished call.
#[derive(Debug, Clone)]
pub struct Dispatched {
    /// The envelope and what the caller records.
    pub completed: Completed,
    /// Time spent waiting for the user (confirmations, questions).
    pub waited: Duration,
    /// The target was a stealth extension tool.
    pub stealth: bool,
}

/// Runs calls. Cheap to clone.
#[derive(Clone)]
pub struct Dispatcher {
    registry: Arc<Registry>,
    services: Arc<Services>,
    store: Store,
    gate: Gate,
    extensions: Option<Arc<dyn ExtensionRunner>>,
}

impl std::fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dispatcher")
            .field("services", &self.services)
            .finish_non_exhaustive()
    }
}

enum Target {
    Builtin(Safety),
    Extension(ExtensionTool),
    Door(DoorTool),
}

/// A tool a door defines itself rather than an operation of the registry (MCP's library
/// tools: search, get, create, update, delete with write safety). It takes every gate an
/// operation takes ([`Dispatcher::call_door_tool`]), so no door has a path around the policy.
pub struct DoorTool {
    /// The tool's name, as the approval policy and the audit log know it.
    pub name: String,
    /// Its write-safety: the policy's default (`Confirm` asks, the others run).
    pub safety: Safety,
    /// Its arguments' schema, checked before the policy.
    pub validator: Arc<ArgValidator>,
    /// Runs the validated arguments; the answer goes to the caller as it is.
    pub run: Box<dyn FnOnce(Value) -> BoxFuture<Result<Value, ToolError>> + Send>,
}

impl std::fmt::Debug for DoorTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DoorTool")
            .field("name", &self.name)
            .field("safety", &self.safety)
            .finish_non_exhaustive()
    }
}

impl Dispatcher {
    /// A dispatcher over `store` with `registry` and `services`, behind `gate`.
    pub fn new(store: Store, registry: Arc<Registry>, services: Arc<Services>, gate: Gate) -> Self {
        Self {
            registry,
            services,
            store,
            gate,
            extensions: None,
        }
    }

    /// Sets who runs extension tools.
    pub fn with_extensions(mut self, runner: Option<Arc<dyn ExtensionRunner>>) -> Self {
        self.extensions = runner;
        self
    }

    /// The same dispatcher with other services (a reply's own web adapter).
    pub fn with_services(mut self, services: Arc<Services>) -> Self {
        self.services = services;
        self
    }

    /// The registry.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The services calls get.
    pub fn services(&self) -> &Arc<Services> {
        &self.services
    }

    /// The library calls work on.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The gate in front of the blocking pool.
    pub fn gate(&self) -> &Gate {
        &self.gate
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

    /// Runs one call through every gate to its end. Dropping the future abandons the call
    /// (a reply's cancellation does so).
    pub async fn call(
        &self,
        scope: &mut CallScope,
        call: &ToolCall,
        door: &dyn Door,
    ) -> Dispatched {
        let mut waited = Duration::ZERO;
        let stealth = self.is_stealth(&call.name);
        let result = self.run(scope, call, door, &mut waited).await;
        let completed = match result {
            Ok(done) => done,
            Err(e) => complete(Err(e), &mut scope.budget),
        };
        if let Some(exposed) = scope.exposed.as_mut() {
            exposed.expose(completed.expose.iter().cloned());
        }
        Dispatched {
            completed,
            waited,
            stealth,
        }
    }

    async fn run(
        &self,
        scope: &mut CallScope,
        call: &ToolCall,
        door: &dyn Door,
        waited: &mut Duration,
    ) -> Result<Completed, ToolError> {
        if let Some(reason) = &call.arguments_error {
            return Err(ToolError::new(
                ErrorCode::InvalidArguments,
                format!(
                    "invalid arguments for {}: {reason}; send one JSON object",
                    call.name
                ),
            ));
        }
        count_call(scope)?;
        let (tool, target) = self.target(scope, &call.name)?;
        self.run_target(
            scope,
            &call.id,
            &tool,
            target,
            &call.arguments,
            door,
            waited,
        )
        .await
    }

    /// Runs a tool a door defines itself (MCP's library tools) through the same gates as an
    /// operation: call limit, validation against its schema, the approval policy, the
    /// time-out. Its answer is the door's own and is not cut to the model's result budget.
    pub async fn call_door_tool(
        &self,
        scope: &mut CallScope,
        call_id: &str,
        tool: DoorTool,
        arguments: &Value,
        door: &dyn Door,
    ) -> Dispatched {
        let mut waited = Duration::ZERO;
        let name = tool.name.clone();
        let result = match count_call(scope) {
            Ok(()) => {
                self.run_target(
                    scope,
                    call_id,
                    &name,
                    Target::Door(tool),
                    arguments,
                    door,
                    &mut waited,
                )
                .await
            }
            Err(e) => Err(e),
        };
        let completed = match result {
            Ok(done) => done,
            Err(e) => complete(Err(e), &mut scope.budget),
        };
        Dispatched {
            completed,
            waited,
            stealth: false,
        }
    }

    /// Validation, the approval policy and the handler under the time-out, for a resolved
    /// target.
    #[allow(clippy::too_many_arguments)]
    async fn run_target(
        &self,
        scope: &mut CallScope,
        call_id: &str,
        tool: &str,
        target: Target,
        arguments: &Value,
        door: &dyn Door,
        waited: &mut Duration,
    ) -> Result<Completed, ToolError> {
        let arguments = if arguments.is_null() {
            Value::Object(Default::default())
        } else {
            arguments.clone()
        };
        let safety = match &target {
            Target::Builtin(safety) => {
                if let Some(op) = self.registry.get(tool) {
                    op.validate(&arguments)?;
                }
                *safety
            }
            // Page tools run code the user installed to be called: allowed unless the user's
            // policy says otherwise. An outside MCP server's tool can do anything its server
            // can, so it asks (the dialog names the server in the tool's name) until the user
            // allows it for the chat or everywhere.
            Target::Extension(ext) => {
                ext.validate(&arguments)?;
                match ext.source {
                    crate::extension::ExtensionSource::Mcp { .. } => Safety::Confirm,
                    crate::extension::ExtensionSource::Page { .. } => Safety::Read,
                }
            }
            Target::Door(door_tool) => {
                door_tool.validator.check(tool, &arguments)?;
                door_tool.safety
            }
        };
        let pending = PendingCall {
            call_id,
            tool,
            safety,
            arguments: &arguments,
            chat: scope.chat,
        };
        self.admit(pending, door, waited).await?;
        let limit = scope.call_timeout;
        match target {
            Target::Extension(ext) => {
                let runner = self.extensions.clone().ok_or_else(|| {
                    ToolError::new(
                        ErrorCode::ResourceNotFound,
                        format!("{tool} has no page or server connected to run it right now; answer without it"),
                    )
                })?;
                let chat = scope.chat.ok_or_else(no_chat)?;
                let limit = match ext.source {
                    crate::extension::ExtensionSource::Page { .. } => scope.page_call_timeout,
                    crate::extension::ExtensionSource::Mcp { .. } => limit,
                };
                let value = timed(limit, tool, runner.run(&ext, chat, arguments, limit)).await??;
                Ok(complete(
                    Ok((ToolResult::Value(value), Vec::new())),
                    &mut scope.budget,
                ))
            }
            Target::Door(door_tool) => {
                let value = timed(limit, tool, (door_tool.run)(arguments)).await??;
                Ok(Completed {
                    envelope: serde_json::json!({ "ok": true, "result": value }),
                    truncated: false,
                    expose: Vec::new(),
                    error: None,
                })
            }
            Target::Builtin(_) => {
                let op = self.registry.get(tool).ok_or_else(|| unknown(tool))?;
                let ctx = OpContext {
                    store: self.store.clone(),
                    chat: scope.chat,
                    services: self.services.clone(),
                    registry: self.registry.clone(),
                    shown: scope
                        .exposed
                        .as_ref()
                        .map(ExposedSet::snapshot)
                        .unwrap_or_default(),
                    gate: self.gate.clone(),
                };
                let mut outcome = timed(limit, tool, op.run(arguments.clone(), ctx)).await?;
                loop {
                    match outcome {
                        Err(e) => return Err(e),
                        Ok(Outcome::Done { result, expose }) => {
                            return Ok(complete(Ok((result, expose)), &mut scope.budget));
                        }
                        Ok(Outcome::NeedsUser { question, resume }) => {
                            let asked = Instant::now();
                            let answer = door.ask(pending, question).await;
                            *waited += asked.elapsed();
                            outcome = timed(limit, tool, resume(answer)).await?;
                        }
                    }
                }
            }
        }
    }

    /// The approval policy's gate: run, refuse, or ask the door. A policy that cannot be read
    /// refuses the call (fails closed).
    async fn admit(
        &self,
        pending: PendingCall<'_>,
        door: &dyn Door,
        waited: &mut Duration,
    ) -> Result<(), ToolError> {
        let tool = pending.tool;
        let policy = self.approval_policy(tool).await?;
        match policy.decide(pending.chat, tool, pending.safety) {
            Decision::Run => Ok(()),
            Decision::Refuse => Err(refused(tool)),
            Decision::Confirm => {
                let asked = Instant::now();
                let choice = door.confirm(pending).await;
                *waited += asked.elapsed();
                match choice? {
                    Confirmation::Allow { remember } => {
                        if remember {
                            self.remember(pending.chat, tool, Approval::Allow).await;
                        }
                        Ok(())
                    }
                    Confirmation::Deny { remember } => {
                        if remember {
                            self.remember(pending.chat, tool, Approval::Deny).await;
                        }
                        Err(declined(tool))
                    }
                }
            }
        }
    }

    /// The tool a call names. Under a reply only exposed tools, by their model-door name.
    fn target(&self, scope: &CallScope, name: &str) -> Result<(String, Target), ToolError> {
        if let Some(op) = self.registry.get(name) {
            if let Some(exposed) = &scope.exposed {
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
                exposed.check_callable(name)?;
            }
            return Ok((op.tool_name().to_owned(), Target::Builtin(op.safety())));
        }
        let extensions = &self.services.extensions;
        match extensions.get(name) {
            // Seed 001: a page's tool belongs to the chat its page shows; after the user
            // switched that page to another chat, a call from this one cannot reach it.
            Some(tool) if !extensions.belongs_to(&tool, scope.chat) => Err(ToolError::new(
                ErrorCode::Unavailable,
                format!(
                    "{name} belongs to a page that does not show this chat now; answer without it"
                ),
            )),
            Some(tool) if scope.exposed.as_ref().is_none_or(|e| e.contains(name)) => {
                Ok((name.to_owned(), Target::Extension(tool)))
            }
            Some(_) => Err(ToolError::new(
                ErrorCode::UnknownTool,
                format!(
                    "{name} is not available in this step; call extension_tool_search to enable it first"
                ),
            )),
            None => Err(unknown(name)),
        }
    }

    /// The user's approval policy, for a call of `tool`. A policy that cannot be read refuses
    /// the call: running it under the defaults could run what the user denied.
    async fn approval_policy(&self, tool: &str) -> Result<ApprovalPolicy, ToolError> {
        let read = self
            .gate
            .run(&self.store, "reading the approval policy", |store| {
                Ok(ApprovalPolicy::load(store))
            })
            .await?;
        read.map_err(|e| {
            tracing::warn!(error = %e, tool, "cannot read the approval policy; the call is refused");
            unreadable(tool, &e)
        })
    }

    /// Remembers the user's choice for `tool` in `chat` (everywhere when there is no chat).
    /// A policy that cannot be read is left as it is: saving over it would lose the user's
    /// other choices. The call itself goes on either way (the user just answered it).
    async fn remember(&self, chat: Option<ChatId>, tool: &str, approval: Approval) {
        let tool = tool.to_owned();
        let saved = self
            .gate
            .run(&self.store, "saving the approval choice", move |store| {
                let mut policy = ApprovalPolicy::load(store).map_err(|e| unreadable(&tool, &e))?;
                policy.remember(chat, &tool, approval);
                policy
                    .save(store)
                    .map_err(|e| crate::context::store_error("saving the approval choice", e))
            })
            .await;
        if let Err(e) = saved {
            tracing::warn!(error = %e.message, "cannot remember the approval choice");
        }
    }
}

/// Counts a call against the scope's limit (`tools.maxCalls`).
fn count_call(scope: &mut CallScope) -> Result<(), ToolError> {
    if scope.calls_made >= scope.max_calls {
        return Err(ToolError::new(
            ErrorCode::LimitExceeded,
            format!(
                "{} tool calls were made already, the limit (tools.maxCalls); answer with what you have",
                scope.max_calls
            ),
        ));
    }
    scope.calls_made += 1;
    Ok(())
}

fn unknown(name: &str) -> ToolError {
    ToolError::new(
        ErrorCode::UnknownTool,
        format!("there is no tool named {name}; use tavo_tool_search to find the right tool"),
    )
}

fn no_chat() -> ToolError {
    ToolError::new(
        ErrorCode::ResourceNotFound,
        "there is no chat for this call; extension tools run in the chat of a reply",
    )
}

/// A door with nobody to ask: confirmations follow `confirmed` (the caller's up-front consent,
/// such as `--yes` or `?confirm=true`), questions are cancelled. `refusal` is the error a
/// call that needed consent gets without it.
pub struct UnattendedDoor {
    /// The caller consented up front to calls that ask for confirmation.
    pub confirmed: bool,
    /// What a call that needs confirmation fails with when `confirmed` is false.
    pub refusal: fn(&str) -> ToolError,
}

impl Door for UnattendedDoor {
    fn confirm<'a>(
        &'a self,
        call: PendingCall<'a>,
    ) -> DoorFuture<'a, Result<Confirmation, ToolError>> {
        let result = if self.confirmed {
            Ok(Confirmation::Allow { remember: false })
        } else {
            Err((self.refusal)(call.tool))
        };
        Box::pin(std::future::ready(result))
    }

    fn ask<'a>(
        &'a self,
        _call: PendingCall<'a>,
        _question: Question,
    ) -> DoorFuture<'a, UserAnswer> {
        Box::pin(std::future::ready(UserAnswer::Cancelled))
    }
}
