//! The operation registry: every business operation written once — name, strict argument
//! schema, handler, write-safety — and the machinery every call goes through at the model
//! door: strict validation with field paths, the `{ok, result}` / `{ok:false, error}` envelope,
//! result budgets, discovery, approval policy and exposure rules.
//!
//! Code map:
//! - [`dispatch`]: [`Dispatcher`], the one call path of every door (JSON → call limit →
//!   target → validation → approval → handler under the time-out → budgets → envelope), and
//!   the [`Door`] trait by which a door confirms and asks. [`gate`]: the bound on library tasks.
//! - [`direct`]: the one entry point of a call with no reply around it (CLI, HTTP ops, MCP):
//!   settings read (failing closed), scope, dispatch, audit. [`call_clock`]: the time-out
//!   that never answers `timeout` for a call that changed something.
//! - [`registry`]: [`Registry`], operations by name, and their declarations.
//! - [`operation`]: [`Operation`], [`OpSpec`], [`Safety`], [`Outcome`].
//! - [`schema`], [`validate`]: strict schemas generated with schemars, validated with jsonschema.
//! - [`error`]: the error codes and the envelope. [`budget`]: 64 KiB / 256 KiB budgets.
//! - [`exposure`]: which tools a request carries; [`ExposedSet`] per reply; the tool-use hint.
//! - [`approval`]: allow / ask / deny per tool, remembered per chat.
//! - [`audit`]: reading and clearing the audit log, for every door.
//! - [`ask`]: `tavo_ask_user` questions and answers. [`discovery`]: the two search tools.
//! - [`extension`]: the seam for page-registered and MCP tools.
//! - [`messages`]: writing messages (append, edit, hide, delete) with the chat's regex rules.
//! - [`assets`]: writing characters, personas, presets, lorebooks and regex groups (CCv3 names,
//!   required fields, defaults) for every door.
//! - [`chats`]: creating a chat (bindings checked in one transaction, the greeting with its
//!   swipes, the card's own lorebook and regex group bound) and rebinding one.
//! - [`greetings`]: the greetings a new chat starts with (every member's in a group chat).
//! - [`group`]: group chats' muted members.
//! - [`reads`]: the library's reads for the doors (listings, one asset, message pages,
//!   avatars, files), so no door opens a transaction of its own.
//! - [`variables`]: chat, global and message variables (scopes resolved and checked once).
//! - [`ops`]: the built-in operations, one module per namespace.
//! - [`web`], [`web_session`]: the web tools per reply, and for a door without a reply (a
//!   fetch cache kept in a file between calls, the saved search APIs).
//! - [`mcp`]: Tavo's MCP tool set and resources (names, search arguments, write safety), thin
//!   doors onto the same operations; the protocol itself is the server's.

pub mod approval;
pub mod ask;
pub mod assets;
pub mod audit;
pub mod avatars;
pub mod backup;
pub mod budget;
pub mod call_clock;
pub mod chats;
pub mod context;
pub mod direct;
pub mod discovery;
pub mod dispatch;
pub mod error;
pub mod exposure;
pub mod extension;
pub mod gate;
pub mod greetings;
pub mod group;
pub mod library;
pub mod mcp;
pub mod memories;
pub mod messages;
pub mod operation;
pub mod ops;
pub mod plugins;
pub mod reads;
pub mod registry;
pub mod schema;
pub mod search_apis;
pub mod shared_library;
pub mod theme_store;
pub mod validate;
pub mod variables;
pub mod web;
pub mod web_session;

use std::sync::Arc;

pub use approval::{Approval, ApprovalPolicy, Decision};
pub use ask::{Question, UserAnswer};
pub use budget::{REPLY_LIMIT, RESULT_LIMIT, ReplyBudget, ToolResult};
pub use context::{ImageGenerator, ImageJob, MemoryExtractor, OpContext, Services};
pub use direct::{DirectTarget, Origin};
pub use dispatch::{
    CallScope, Confirmation, Dispatched, Dispatcher, Door, DoorTool, ExtensionRunner, PendingCall,
    ToolCall, UnattendedDoor,
};
pub use error::{ErrorCode, ToolError};
pub use exposure::{ExposedSet, GenerationKind, ToolSettings};
pub use extension::{ExtensionRegistry, ExtensionSource};
pub use gate::Gate;
pub use operation::{OpSpec, Operation, Outcome, Residency, Safety};
pub use registry::{CallStep, Completed, Registry, ToolDeclaration};

/// The registry with every built-in operation.
pub fn builtin_registry() -> Result<Arc<Registry>, validate::SchemaError> {
    let mut r = Registry::new();
    ops::register_all(&mut r)?;
    Ok(Arc::new(r))
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_builtin_schema_compiles() {
        let registry = match super::builtin_registry() {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        };
        assert!(registry.operations().count() > 50);
        if let Err(e) = registry.compile_all() {
            panic!("{e}");
        }
    }
}
