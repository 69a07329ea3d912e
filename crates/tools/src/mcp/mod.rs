//! Tavo's MCP tool set: the names and argument shapes external agents use
//! (`tavo_character_search`, `tavo_lorebook_entry_upsert`, …, reference §18 and §6.9–§11.6),
//! each a thin door onto the operations every other door uses.
//!
//! What this module adds to those operations is only what MCP's contract asks of a door:
//! - search with `query`, `match` (exact / prefix / suffix / contains), `limit` and `cursor`;
//! - reads that show the asset's `revision`;
//! - **write safety** on every write ([`safety`]): `dryRun` answers the `diff` and saves nothing,
//!   `expectedRevision` refuses a stale write with `conflict`, `clientRequestId` makes a retried
//!   write happen once (the answer is kept in the store, so it survives a restart).
//!
//! The protocol itself (JSON-RPC, transports, auth) is the server's: this module knows no MCP
//! wire format, only tools as `(name, description, input schema, handler)` and resources as
//! `(uri, text)`. Every tool call, read or write, takes the one direct-call path of every door
//! ([`crate::direct`]: its schema, the approval policy, the time-out, the audit log of writes);
//! chat-scoped tools (messages, memory, composer) run the model door's own operation inside
//! it, with the chat the agent names in `chatId`.

mod assets;
mod chats;
mod plugins;
pub mod resources;
mod safety;
mod search;

use std::collections::BTreeMap;
use std::sync::Arc;
use tavo_model::ChatId;

use serde_json::{Map, Value, json};
use tavo_store::Store;

use crate::direct::{DirectTarget, Origin};
use crate::dispatch::{CallScope, Dispatcher, DoorTool, ToolCall, UnattendedDoor};
use crate::error::{ErrorCode, ToolError};
use crate::operation::{BoxFuture, Safety};
use crate::validate::ArgValidator;

pub use assets::ACTIVE_PRESET;
pub use chats::{CURRENT_CHAT, current_chat};
pub use safety::{WRITE_SAFETY_FIELDS, diff};

/// The version of Tavo's agent API this tool set follows (`apiVersion` in `tavo_status`).
pub const API_VERSION: u32 = 1;

/// What a tool handler is given.
#[derive(Clone)]
pub struct McpContext {
    /// The one call path (chat-scoped tools go through it).
    pub dispatcher: Dispatcher,
    /// Sends a chat's composer as the user would (`tavo_input_send`); only a door that runs
    /// replies has one (`tavo serve`'s `/mcp`).
    pub input: Option<Arc<dyn InputSend>>,
}

/// What `tavo_input_send` needs from the door: send `text` (the chat's draft when `None`) as
/// the user's message and start the reply — through the page that has the chat open when
/// there is one, so its plugins' `input:beforeSend` hooks run with `source: "mcp"`.
pub trait InputSend: Send + Sync {
    /// Answers `{ok: true, messageId, replyId, via}` or, when a plugin cancelled the send,
    /// `{ok: false, reason: "cancelled", cancelledBy, message}`.
    fn send(&self, chat: ChatId, text: Option<String>) -> BoxFuture<Result<Value, ToolError>>;
}

impl McpContext {
    /// A context without a composer door.
    pub fn new(dispatcher: Dispatcher) -> Self {
        Self {
            dispatcher,
            input: None,
        }
    }
}

impl McpContext {
    /// The library.
    pub fn store(&self) -> &Store {
        self.dispatcher.store()
    }

    /// Runs blocking store work behind the gate.
    pub async fn blocking<T, F>(&self, what: &'static str, f: F) -> Result<T, ToolError>
    where
        T: Send + 'static,
        F: FnOnce(&Store) -> Result<T, ToolError> + Send + 'static,
    {
        self.dispatcher.gate().run(self.store(), what, f).await
    }

    /// Runs a model-door operation for `chat` inside an MCP tool's call (its commit, or a
    /// chat-scoped tool that is the operation itself): the same validation, approval policy,
    /// handler, time-out and envelope as `tavo tool call --chat ID --yes`. Consent is the
    /// agent's token: Tavo's MCP server asks nobody, so nothing here waits for a person; the
    /// policy's `deny` still refuses. The MCP tool around it is the one audited.
    pub async fn run_operation(
        &self,
        tool: &str,
        chat: Option<ChatId>,
        arguments: Value,
    ) -> Result<Value, ToolError> {
        let settings = self.dispatcher.tool_settings(tool).await?;
        let mut scope = CallScope::direct(chat, &settings);
        let done = self
            .dispatcher
            .call(&mut scope, &ToolCall::new("mcp", tool, arguments), &AGENT)
            .await;
        answer(done.completed.envelope)
    }

    /// Runs the MCP tool `tool` through the one direct-call path ([`crate::direct`]): its
    /// schema, the approval policy, the time-out and the audit log; `run` is what the tool
    /// does with its arguments.
    async fn run_tool<F>(
        &self,
        tool: &McpTool,
        arguments: Map<String, Value>,
        run: F,
    ) -> Result<Value, ToolError>
    where
        F: FnOnce(Map<String, Value>) -> BoxFuture<Result<Value, ToolError>> + Send + 'static,
    {
        let chat = arguments.get("chatId").and_then(Value::as_i64).map(ChatId);
        let door_tool = DoorTool {
            name: tool.name.clone(),
            safety: tool.safety,
            validator: tool.validator.clone(),
            run: Box::new(move |arguments| match arguments {
                Value::Object(m) => run(m),
                _ => run(Map::new()),
            }),
        };
        let arguments = Value::Object(arguments);
        let target = DirectTarget::Door {
            call_id: "mcp",
            tool: door_tool,
            arguments: &arguments,
        };
        let done = self
            .dispatcher
            .call_direct(Origin::Mcp, chat, target, &AGENT)
            .await;
        answer(done.completed.envelope)
    }
}

/// The MCP door: the agent's token is its consent to calls that ask, and nobody is there to
/// answer a question.
const AGENT: UnattendedDoor = UnattendedDoor {
    confirmed: true,
    refusal: |_| ToolError::internal("confirming"),
};

/// A call's envelope as MCP answers it: the result, or the error.
fn answer(envelope: Value) -> Result<Value, ToolError> {
    if envelope["ok"] == json!(true) {
        Ok(envelope.get("result").cloned().unwrap_or(Value::Null))
    } else {
        Err(ToolError::from_envelope(&envelope["error"]))
    }
}

/// What a handler answers: a read's value, or the plan of a write for [`safety`] to check,
/// preview or carry out.
pub enum Step {
    /// A read's answer.
    Answer(Value),
    /// A write, not yet made.
    Write(WritePlan),
}

/// A write that has been read and checked but not made.
pub struct WritePlan {
    /// The revision of the object the write changes, for `expectedRevision` (`None` for a
    /// create).
    pub revision: Option<u64>,
    /// The object as it is (`None` for a create).
    pub before: Option<Value>,
    /// The object as the write would leave it (`None` for a delete).
    pub after: Option<Value>,
    /// Makes the write; answers what the tool returns.
    pub commit: Box<dyn FnOnce(McpContext) -> BoxFuture<Result<Value, ToolError>> + Send>,
}

type Handler =
    Arc<dyn Fn(McpContext, Map<String, Value>) -> BoxFuture<Result<Step, ToolError>> + Send + Sync>;

/// A handler from an async function of the context and the arguments.
fn handler<F, Fut>(f: F) -> Handler
where
    F: Fn(McpContext, Map<String, Value>) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Step, ToolError>> + Send + 'static,
{
    Arc::new(move |cx, args| Box::pin(f(cx, args)))
}

/// One tool as an MCP client sees it.
#[derive(Clone)]
pub struct McpTool {
    /// `tavo_character_search`.
    pub name: String,
    /// What it does, for the agent.
    pub description: String,
    /// JSON Schema of the arguments.
    pub input_schema: Value,
    /// Whether it writes (then it takes `dryRun`, `expectedRevision`, `clientRequestId`).
    pub writes: bool,
    /// Its write-safety for the approval policy: the operation's of the same name where there
    /// is one, else `write` for writes and `read` for reads.
    pub safety: Safety,
    validator: Arc<ArgValidator>,
    handler: Handler,
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool")
            .field("name", &self.name)
            .field("writes", &self.writes)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for McpTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTools")
            .field("tools", &self.order.len())
            .finish()
    }
}

/// The tool set, by name.
#[derive(Clone, Default)]
pub struct McpTools {
    tools: BTreeMap<String, McpTool>,
    order: Vec<String>,
}

impl McpTools {
    /// Every tool of Tavo's MCP server that tavo has; the chat-scoped ones take their schemas
    /// from `registry`'s operations of the same name.
    pub fn new(registry: &crate::Registry) -> Self {
        let mut set = Self::default();
        set.add_status();
        assets::register(&mut set);
        chats::register(&mut set, registry);
        plugins::register(&mut set);
        for tool in set.tools.values_mut() {
            if let Some(op) = registry.get(&tool.name) {
                tool.safety = op.safety();
            }
        }
        set
    }

    fn add(
        &mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        mut input_schema: Value,
        writes: bool,
        handler: Handler,
    ) {
        let name = name.into();
        if writes {
            safety::add_fields(&mut input_schema);
        }
        self.order.push(name.clone());
        self.tools.insert(
            name.clone(),
            McpTool {
                name,
                description: description.into(),
                validator: Arc::new(ArgValidator::new(input_schema.clone())),
                input_schema,
                writes,
                safety: if writes { Safety::Write } else { Safety::Read },
                handler,
            },
        );
    }

    /// The tools, in declaration order.
    pub fn list(&self) -> impl Iterator<Item = &McpTool> {
        self.order.iter().filter_map(|n| self.tools.get(n))
    }

    /// The tool named `name`.
    pub fn get(&self, name: &str) -> Option<&McpTool> {
        self.tools.get(name)
    }

    /// Runs `name` with `arguments` through the one direct-call path (schema, approval
    /// policy, time-out, audit); a write is wrapped in [`safety`]'s `dryRun`,
    /// `expectedRevision` and `clientRequestId`.
    pub async fn call(
        &self,
        cx: &McpContext,
        name: &str,
        arguments: Value,
    ) -> Result<Value, ToolError> {
        let tool = self.get(name).ok_or_else(|| {
            ToolError::new(
                ErrorCode::UnknownTool,
                format!("there is no tool named {name}; tools/list names every tool"),
            )
        })?;
        let args = match arguments {
            Value::Object(m) => m,
            Value::Null => Map::new(),
            other => {
                return Err(ToolError::invalid_at(
                    "arguments",
                    "object",
                    crate::error::json_type_name(&other),
                ));
            }
        };
        if tool.writes {
            safety::run_write(cx, tool, args).await
        } else {
            let (handler, inner) = (tool.handler.clone(), cx.clone());
            cx.run_tool(tool, args, move |args| {
                Box::pin(async move {
                    match handler(inner, args).await? {
                        Step::Answer(v) => Ok(v),
                        Step::Write(_) => Err(ToolError::internal("reading")),
                    }
                })
            })
            .await
        }
    }

    fn add_status(&mut self) {
        self.add(
            "tavo_status",
            "The server's name, version, API version and what the library holds (counts per kind). \
             Read tavo://docs/overview next.",
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
            false,
            Arc::new(|cx: McpContext, _| {
                Box::pin(async move {
                    cx.blocking("reading the library", |store| {
                        let mut counts = Map::new();
                        for kind in tavo_model::AssetKind::ALL {
                            let n = store
                                .asset_summaries(kind)
                                .map_err(|e| crate::context::store_error("counting", e))?
                                .len();
                            counts.insert(format!("{}s", kind.as_str()), json!(n));
                        }
                        Ok(Step::Answer(json!({
                            "server": "tavo",
                            "version": env!("CARGO_PKG_VERSION"),
                            "apiVersion": API_VERSION,
                            "counts": counts,
                            "writeSafety": WRITE_SAFETY_FIELDS,
                        })))
                    })
                    .await
                })
            }),
        );
    }
}

/// The argument `field` as an object (required).
fn object_field(
    args: &mut Map<String, Value>,
    field: &str,
) -> Result<Map<String, Value>, ToolError> {
    match args.shift_remove(field) {
        Some(Value::Object(m)) => Ok(m),
        Some(other) => Err(ToolError::invalid_at(
            field,
            "object",
            crate::error::json_type_name(&other),
        )),
        None => Err(ToolError::invalid_at(field, "object (required)", "missing")),
    }
}

/// The argument `field` as a positive id (required).
fn id_field(args: &Map<String, Value>, field: &str) -> Result<i64, ToolError> {
    match args.get(field) {
        Some(v) => v.as_i64().filter(|i| *i > 0).ok_or_else(|| {
            ToolError::invalid_at(field, "positive integer", crate::error::json_type_name(v))
        }),
        None => Err(ToolError::invalid_at(
            field,
            "positive integer (required)",
            "missing",
        )),
    }
}

/// The argument `field` as a string (required).
fn string_field(args: &Map<String, Value>, field: &str) -> Result<String, ToolError> {
    match args.get(field) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(v) => Err(ToolError::invalid_at(
            field,
            "string",
            crate::error::json_type_name(v),
        )),
        None => Err(ToolError::invalid_at(field, "string (required)", "missing")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every MCP call is validated against the schema `tools/list` shows: each must compile,
    /// and each required field must be one the schema allows.
    #[test]
    fn every_tool_schema_compiles_and_allows_what_it_requires() {
        let registry = crate::builtin_registry().unwrap_or_else(|e| panic!("{e}"));
        let tools = McpTools::new(&registry);
        assert!(tools.list().count() > 60);
        for tool in tools.list() {
            tool.validator
                .compile(&tool.name)
                .unwrap_or_else(|e| panic!("{e}"));
            let props = tool.input_schema["properties"].as_object();
            for field in tool.input_schema["required"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                assert!(
                    props.is_some_and(|p| p.contains_key(field)),
                    "{} requires {field} but does not list it",
                    tool.name
                );
            }
        }
    }

    #[test]
    fn writes_take_the_operations_safety_or_write() {
        let registry = crate::builtin_registry().unwrap_or_else(|e| panic!("{e}"));
        let tools = McpTools::new(&registry);
        let safety = |n: &str| tools.get(n).map(|t| t.safety);
        assert_eq!(safety("tavo_character_delete"), Some(Safety::Confirm));
        assert_eq!(safety("tavo_chat_delete"), Some(Safety::Write));
        assert_eq!(safety("tavo_chat_get"), Some(Safety::Read));
    }
}
