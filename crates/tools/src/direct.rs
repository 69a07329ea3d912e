//! The one entry point of a **direct call**: a person, or their program, calling a tool with no
//! reply around it — `tavo tool call`, `POST /api/ops/{name}` (the app and its bubbles), and
//! MCP (`tavo mcp` over stdio, `/mcp` on `tavo serve`).
//!
//! Every direct call, whichever door, takes these steps here and nowhere else:
//! 1. the tool settings are read (`tools.maxCalls`, `tools.callTimeoutSeconds`); settings that
//!    cannot be read refuse the call — never silently the defaults;
//! 2. the scope of a direct call ([`CallScope::direct`]) is built from them;
//! 3. the [`Dispatcher`] runs it: validation against the tool's schema, the approval policy
//!    (which fails closed), the handler under the time-out ([`crate::call_clock`]: a call
//!    answered `timeout` changed nothing), the envelope;
//! 4. a call that writes, and any call the policy refused, is written to the audit log with the
//!    door it came through. Reads are not logged: a bubble reading its chat a hundred times a
//!    minute would push every write out of the bounded log.
//!
//! A door adds only what its protocol asks: how it confirms ([`Door`]), and — for MCP — the
//! write safety around the call (`dryRun`, `expectedRevision`, `clientRequestId`), which wraps
//! this path instead of replacing it.

use std::time::Instant;
use tavo_model::ChatId;

use serde_json::Value;

use crate::audit::DirectCallRecord;
use crate::dispatch::{CallScope, Dispatched, Dispatcher, Door, DoorTool, ToolCall};
use crate::error::{ErrorCode, ToolError};
use crate::exposure::ToolSettings;
use crate::operation::Safety;
use crate::registry::complete;

/// The door a direct call came through, as the audit log names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// `tavo tool call` and the CLI's own commands that call tools.
    Cli,
    /// `POST /api/ops/{name}`: the browser app, its bubbles, any HTTP client.
    Http,
    /// An MCP client, over stdio or `/mcp`.
    Mcp,
}

impl Origin {
    /// The name in the audit log (`door` of an entry's details).
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Cli => "cli",
            Origin::Http => "http",
            Origin::Mcp => "mcp",
        }
    }
}

/// What a direct call runs: a tool of the registry (or an extension tool) by name, or a tool
/// the door defines itself.
pub enum DirectTarget<'a> {
    /// A call by tool or operation name.
    Named(&'a ToolCall),
    /// A door's own tool (MCP's library tools), with its arguments.
    Door {
        /// The caller's id for the call.
        call_id: &'a str,
        /// The tool.
        tool: DoorTool,
        /// Its arguments.
        arguments: &'a Value,
    },
}

impl Dispatcher {
    /// Runs one direct call from `origin` on `chat` through every step of the module, `door`
    /// confirming and asking.
    pub async fn call_direct(
        &self,
        origin: Origin,
        chat: Option<ChatId>,
        target: DirectTarget<'_>,
        door: &dyn Door,
    ) -> Dispatched {
        let started = Instant::now();
        let (call_id, tool, arguments, writes) = match &target {
            DirectTarget::Named(call) => (
                call.id.clone(),
                call.name.clone(),
                call.arguments.clone(),
                self.writes(&call.name),
            ),
            DirectTarget::Door {
                call_id,
                tool,
                arguments,
            } => (
                (*call_id).to_owned(),
                tool.name.clone(),
                (*arguments).clone(),
                tool.safety.writes(),
            ),
        };
        let done = match self.tool_settings(&tool).await {
            Err(e) => Dispatched {
                completed: complete(Err(e), &mut Default::default()),
                waited: Default::default(),
                stealth: false,
            },
            Ok(settings) => {
                let mut scope = CallScope::direct(chat, &settings);
                // A model reads what MCP answers; the CLI and the app's own calls are whole.
                if origin != Origin::Mcp {
                    scope = scope.whole_results();
                }
                match target {
                    DirectTarget::Named(call) => self.call(&mut scope, call, door).await,
                    DirectTarget::Door {
                        call_id,
                        tool,
                        arguments,
                    } => {
                        self.call_door_tool(&mut scope, call_id, tool, arguments, door)
                            .await
                    }
                }
            }
        };
        let refused = done.completed.error == Some(ErrorCode::PermissionDenied);
        if writes || refused {
            let record = DirectCallRecord {
                door: origin.as_str(),
                call_id,
                tool,
                chat,
                arguments,
                envelope: done.completed.envelope.clone(),
                run_ms: started.elapsed().saturating_sub(done.waited).as_millis() as u64,
                waited_ms: done.waited.as_millis() as u64,
            };
            let written = self
                .gate()
                .run(self.store(), "writing the audit log", move |store| {
                    record.append(store)
                })
                .await;
            if let Err(e) = written {
                tracing::warn!(error = %e.message, "cannot write the audit log");
            }
        }
        done
    }

    /// Whether the tool named `name` may write: an operation by its safety; anything else
    /// (a page's or an outside server's tool) may.
    fn writes(&self, name: &str) -> bool {
        self.registry()
            .get(name)
            .is_none_or(|op| op.safety() != Safety::Read)
    }

    /// The tool settings, or the refusal of a call that cannot know its limits.
    pub(crate) async fn tool_settings(&self, tool: &str) -> Result<ToolSettings, ToolError> {
        let tool = tool.to_owned();
        self.gate()
            .run(self.store(), "reading the tool settings", move |store| {
                ToolSettings::load(store).map_err(|e| {
                    ToolError::new(
                        ErrorCode::InternalError,
                        format!(
                            "{tool} was not run: the tool settings cannot be read ({e}); \
                             check the library (tavo settings list) and retry"
                        ),
                    )
                })
            })
            .await
    }
}
