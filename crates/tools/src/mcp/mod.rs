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
//! `(uri, text)`. Chat-scoped tools (messages, memory, composer) run the model door's own
//! operation through the [`Dispatcher`] with the chat the agent names in `chatId`.

mod assets;
mod chats;
mod plugins;
pub mod resources;
mod safety;
mod search;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value, json};
use tavo_store::Store;

use crate::dispatch::{CallScope, Dispatcher, ToolCall, UnattendedDoor};
use crate::error::{ErrorCode, ToolError};
use crate::exposure::ToolSettings;
use crate::operation::BoxFuture;

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
    fn send(&self, chat: i64, text: Option<String>) -> BoxFuture<Result<Value, ToolError>>;
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

    /// Runs a model-door operation for `chat` as a direct call: the same validation, handler,
    /// time-out and envelope as `tavo tool call --chat ID --yes`. Consent is the agent's token:
    /// Tavo's MCP server asks nobody, so nothing here waits for a person.
    pub async fn run_operation(
        &self,
        tool: &str,
        chat: Option<i64>,
        arguments: Value,
    ) -> Result<Value, ToolError> {
        let settings = {
            let store = self.store().clone();
            self.blocking("reading the tool settings", move |_| {
                Ok(ToolSettings::load(&store).unwrap_or_default())
            })
            .await?
        };
        let mut scope = CallScope::direct(chat, &settings);
        let door = UnattendedDoor {
            confirmed: true,
            refusal: |_| ToolError::internal("confirming"),
        };
        let done = self
            .dispatcher
            .call(&mut scope, &ToolCall::new("mcp", tool, arguments), &door)
            .await;
        let envelope = done.completed.envelope;
        if envelope["ok"] == json!(true) {
            Ok(envelope.get("result").cloned().unwrap_or(Value::Null))
        } else {
            Err(ToolError::from_envelope(&envelope["error"]))
        }
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
                input_schema,
                writes,
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

    /// Runs `name` with `arguments`; a write goes through [`safety`] first.
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
            match (tool.handler)(cx.clone(), args).await? {
                Step::Answer(v) => Ok(v),
                Step::Write(_) => Err(ToolError::internal("reading")),
            }
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
