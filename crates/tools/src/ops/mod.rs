//! The built-in operations, one module per namespace.

pub mod assets;
pub mod chat;
pub mod common;
pub mod files;
pub mod image;
pub mod input;
pub mod media;
pub mod memory;
pub mod messages;
pub mod resident;
pub mod themes;
pub mod tts;
pub mod variables;

use serde_json::json;
use tavo_model::ChatId;
use tavo_store::Store;

use crate::context::store_error;
use crate::error::{ErrorCode, ToolError};
use crate::registry::Registry;
use crate::validate::SchemaError;

/// Registers every built-in operation, resident tools first (declaration order is the order of
/// the first request's tool list).
pub fn register_all(r: &mut Registry) -> Result<(), SchemaError> {
    crate::discovery::register_tool_search(r)?;
    resident::register(r)?;
    crate::discovery::register_extension_search(r)?;
    files::register(r)?;
    variables::register(r)?;
    messages::register(r)?;
    chat::register(r)?;
    assets::register(r)?;
    themes::register(r)?;
    memory::register(r)?;
    input::register(r)?;
    media::register(r)?;
    Ok(())
}

/// `resource_not_found` unless the chat exists (a no-op for `None`), in the words of the
/// operations themselves, so that every door refuses a missing chat alike (the caller may
/// have named the chat: `--chat`, `?chat=`).
pub fn require_chat(store: &Store, chat: Option<ChatId>) -> Result<(), ToolError> {
    let Some(id) = chat else { return Ok(()) };
    match store.chat_get(id) {
        Ok(Some(_)) => Ok(()),
        Ok(None) => Err(common::missing("chat", id)),
        Err(e) => Err(store_error("reading the chat", e)),
    }
}

/// A model-level validation failure as `invalid_arguments`, paths prefixed by the argument name.
pub fn validation_error(prefix: &str, errors: tavo_model::ValidationErrors) -> ToolError {
    let list: Vec<serde_json::Value> = errors
        .0
        .iter()
        .map(|f| {
            let path = if f.path.is_empty() {
                prefix.to_owned()
            } else {
                format!("{prefix}.{}", f.path)
            };
            json!({"path": path, "expected": f.message, "actualType": "invalid value"})
        })
        .collect();
    let first = list
        .first()
        .cloned()
        .unwrap_or_else(|| json!({"path": prefix}));
    let message = match (first["path"].as_str(), errors.0.first()) {
        (Some(p), Some(f)) => format!("{p}: {}", f.message),
        _ => format!("{prefix} is invalid"),
    };
    let mut details = first;
    if list.len() > 1 {
        details["errors"] = json!(list);
    }
    ToolError::new(ErrorCode::InvalidArguments, message).with_details(details)
}
