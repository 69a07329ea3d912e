//! The seam for tools that do not live in this crate: functions registered by pages
//! (SillyTavern's `registerFunctionTool`, seed 001) and, later, tools of MCP servers.
//!
//! The registry only describes and validates them; running one is the job of whoever registered
//! it (the page that runs `action`, the MCP client), which the engine reaches through the
//! [`ExtensionSource`]. `extension_tool_search` searches this registry.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock};

use tavo_model::ChatId;

use serde::Serialize;
use serde_json::Value;

use crate::error::{ErrorCode, ToolError};
use crate::validate::ArgValidator;

/// How long a page tool may run: Tavo 1.0's JavaScript tool time-out, longer than the call
/// time-out of built-in tools because a page tool may fetch, compute or ask its own UI. Time
/// the user spends answering the engine's questions is not counted.
pub const PAGE_TOOL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// Who provides an extension tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ExtensionSource {
    /// A browser page (extension script) identified by its connection id.
    Page {
        /// The page's id, as the server knows it.
        id: String,
    },
    /// A connected MCP server.
    Mcp {
        /// The server's configured name.
        server: String,
    },
}

/// A registered extension tool (seed 001 registration fields).
#[derive(Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionTool {
    /// Unique identifier, also the model-door name.
    pub name: String,
    /// User-facing name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// Sent to the model.
    pub description: String,
    /// JSON Schema of the parameters, as registered (any draft).
    pub parameters: Value,
    /// Results stay out of the visible history and trigger no follow-up generation.
    pub stealth: bool,
    /// Who runs it.
    pub source: ExtensionSource,
    #[serde(skip)]
    validator: Arc<ArgValidator>,
}

impl std::fmt::Debug for ExtensionTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtensionTool")
            .field("name", &self.name)
            .field("source", &self.source)
            .finish()
    }
}

impl ExtensionTool {
    /// Validates arguments against the registered schema (with the same path diagnostics as
    /// built-in tools).
    pub fn validate(&self, args: &Value) -> Result<(), ToolError> {
        self.validator.check(&self.name, args)
    }
}

/// What a registration may get wrong.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RegisterError {
    /// The name is empty, too long, or uses characters providers reject.
    #[error("tool name {0:?} must be 1-64 characters of a-z, A-Z, 0-9, '_' or '-'")]
    BadName(String),
    /// Built-in names are reserved.
    #[error("tool name {0:?} is reserved for built-in tools (tavo_*, extension_tool_search)")]
    Reserved(String),
    /// `description` is empty.
    #[error("tool {0}: description must not be empty")]
    NoDescription(String),
    /// `parameters` is not a valid JSON Schema.
    #[error("tool {name}: parameters is not a valid JSON Schema: {reason}")]
    BadSchema {
        /// Tool name.
        name: String,
        /// Compiler's explanation.
        reason: String,
    },
}

/// Shared, thread-safe registry of extension tools. Clones share the same tools.
///
/// A page's tools belong to the chat the page shows (seed 001: the page registered them for
/// what it has open): a reply in chat A is offered, and may run, only the tools of pages that
/// show A now — never those of chat B's page after the user switched chats, and none when no
/// page shows A. MCP servers' tools belong to no chat.
#[derive(Clone, Default)]
pub struct ExtensionRegistry {
    tools: Arc<RwLock<BTreeMap<String, ExtensionTool>>>,
    /// The chat each attached page shows (`None`: a screen without a chat).
    page_chats: Arc<RwLock<HashMap<String, Option<ChatId>>>>,
}

impl std::fmt::Debug for ExtensionRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtensionRegistry")
            .field("tools", &self.len())
            .finish()
    }
}

fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl ExtensionRegistry {
    /// Registers (or replaces) a tool. The schema's own `$schema` picks the draft (seed 001's
    /// example uses draft-04).
    pub fn register(
        &self,
        name: &str,
        display_name: Option<String>,
        description: &str,
        parameters: Value,
        stealth: bool,
        source: ExtensionSource,
    ) -> Result<(), RegisterError> {
        if !valid_name(name) {
            return Err(RegisterError::BadName(name.to_owned()));
        }
        if name.starts_with("tavo_") || name == "extension_tool_search" {
            return Err(RegisterError::Reserved(name.to_owned()));
        }
        if description.trim().is_empty() {
            return Err(RegisterError::NoDescription(name.to_owned()));
        }
        let validator =
            ArgValidator::auto(name, parameters.clone()).map_err(|e| RegisterError::BadSchema {
                name: name.to_owned(),
                reason: e.reason,
            })?;
        let tool = ExtensionTool {
            name: name.to_owned(),
            display_name,
            description: description.to_owned(),
            parameters,
            stealth,
            source,
            validator: Arc::new(validator),
        };
        self.write().insert(name.to_owned(), tool);
        Ok(())
    }

    /// Removes a tool; returns whether it was registered.
    pub fn unregister(&self, name: &str) -> bool {
        self.write().remove(name).is_some()
    }

    /// Removes every tool of one source (a page closed, an MCP server disconnected).
    pub fn unregister_source(&self, source: &ExtensionSource) -> usize {
        let mut tools = self.write();
        let before = tools.len();
        tools.retain(|_, t| &t.source != source);
        before - tools.len()
    }

    /// A registered tool.
    pub fn get(&self, name: &str) -> Option<ExtensionTool> {
        self.read().get(name).cloned()
    }

    /// Every registered tool, by name.
    pub fn all(&self) -> Vec<ExtensionTool> {
        self.read().values().cloned().collect()
    }

    /// Records the chat page `page` shows now (its tools follow it).
    pub fn set_page_chat(&self, page: &str, chat: Option<ChatId>) {
        self.page_chats
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(page.to_owned(), chat);
    }

    /// Forgets a page that went away (its tools are removed with [`Self::unregister_source`]).
    pub fn forget_page(&self, page: &str) {
        self.page_chats
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .remove(page);
    }

    /// Whether `tool` may be offered to and run by a reply in `chat`: an MCP tool always, a
    /// page tool while its page shows that chat.
    pub fn belongs_to(&self, tool: &ExtensionTool, chat: Option<ChatId>) -> bool {
        match &tool.source {
            ExtensionSource::Mcp { .. } => true,
            ExtensionSource::Page { id } => {
                chat.is_some()
                    && self
                        .page_chats
                        .read()
                        .unwrap_or_else(|p| p.into_inner())
                        .get(id)
                        .is_some_and(|shown| *shown == chat)
            }
        }
    }

    /// The tools a reply in `chat` may use (see [`Self::belongs_to`]), by name.
    pub fn usable_in(&self, chat: Option<ChatId>) -> Vec<ExtensionTool> {
        self.all()
            .into_iter()
            .filter(|t| self.belongs_to(t, chat))
            .collect()
    }

    /// A tool a reply in `chat` may use.
    pub fn get_in(&self, name: &str, chat: Option<ChatId>) -> Option<ExtensionTool> {
        self.get(name).filter(|t| self.belongs_to(t, chat))
    }

    /// Number of registered tools.
    pub fn len(&self) -> usize {
        self.read().len()
    }

    /// Whether none is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Validates a call to an extension tool (unknown name → `unknown_tool`).
    pub fn validate_call(&self, name: &str, args: &Value) -> Result<ExtensionTool, ToolError> {
        let tool = self.get(name).ok_or_else(|| {
            ToolError::new(
                ErrorCode::UnknownTool,
                format!("no extension tool named {name} is registered"),
            )
        })?;
        tool.validate(args)?;
        Ok(tool)
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<String, ExtensionTool>> {
        self.tools.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<String, ExtensionTool>> {
        self.tools.write().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn weather() -> Value {
        json!({
            "$schema": "http://json-schema.org/draft-04/schema#",
            "type": "object",
            "properties": {
                "location": {"type": "string", "description": "The city name"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}
            },
            "required": ["location"]
        })
    }

    #[test]
    fn seed_001_example_registers_and_validates() {
        let reg = ExtensionRegistry::default();
        let page = ExtensionSource::Page { id: "p1".into() };
        assert!(
            reg.register(
                "get_weather",
                Some("Get Weather".into()),
                "Get the weather",
                weather(),
                false,
                page.clone()
            )
            .is_ok()
        );
        assert!(
            reg.validate_call("get_weather", &json!({"location": "London"}))
                .is_ok()
        );
        let e = reg
            .validate_call(
                "get_weather",
                &json!({"location": "London", "unit": "kelvin"}),
            )
            .err();
        assert_eq!(
            e.and_then(|e| e.details).map(|d| d["path"].clone()),
            Some(json!("unit"))
        );
        assert_eq!(
            reg.validate_call("nope", &json!({})).err().map(|e| e.code),
            Some(ErrorCode::UnknownTool)
        );
        assert_eq!(reg.unregister_source(&page), 1);
        assert!(reg.is_empty());
    }

    #[test]
    fn bad_registrations_are_refused() {
        let reg = ExtensionRegistry::default();
        let src = ExtensionSource::Mcp { server: "s".into() };
        assert_eq!(
            reg.register("tavo_x", None, "d", weather(), false, src.clone()),
            Err(RegisterError::Reserved("tavo_x".into()))
        );
        assert!(matches!(
            reg.register("a b", None, "d", weather(), false, src.clone()),
            Err(RegisterError::BadName(_))
        ));
        assert!(matches!(
            reg.register("ok", None, " ", weather(), false, src.clone()),
            Err(RegisterError::NoDescription(_))
        ));
        assert!(matches!(
            reg.register("ok", None, "d", json!({"type": 12}), false, src),
            Err(RegisterError::BadSchema { .. })
        ));
    }
}
