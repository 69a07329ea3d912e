//! Chat, global and message variables for every door: `tavo var`, the bubble bridge's
//! `GET /api/chats/{id}/variables` and the model's `tavo_variable_*` tools.
//!
//! A door names *where* ([`VarTarget`]); [`resolve`] checks it against the library once — the
//! chat must exist, a message must be a message of its chat — and every read and write goes
//! through it, so a name rule or a missing chat answers the same at every door.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tavo_model::{ChatId, MessageId};
use tavo_store::{Store, VarScope};

use crate::context::store_error;
use crate::error::{ErrorCode, ToolError};
use crate::ops::common::missing;
use crate::ops::require_chat;

/// Which message holds message-scope variables: by id, or by floor index.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageTarget {
    /// The message id (stable when messages are deleted).
    #[serde(default)]
    pub id: Option<i64>,
    /// The floor (0 = first, -1 = last); drifts when messages are deleted.
    #[serde(default)]
    pub index: Option<i64>,
}

/// Where a door's variables live, before the library is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarTarget {
    /// Shared by every chat.
    Global,
    /// One chat's (the chat must exist).
    Chat(ChatId),
    /// One message of a chat, by id or floor (neither: the chat's last message).
    Message(ChatId, MessageTarget),
    /// One message by id, whichever chat holds it (`tavo var --message ID`).
    AnyMessage(MessageId),
}

/// The store scope of `target`: the chat must exist, and a message must be a message of that
/// chat (`resource_not_found` naming `message.id` / `message.index`).
pub fn resolve(store: &Store, target: VarTarget) -> Result<VarScope, ToolError> {
    let err = |e| store_error("finding the message", e);
    match target {
        VarTarget::Global => Ok(VarScope::Global),
        VarTarget::Chat(chat) => {
            require_chat(store, Some(chat))?;
            Ok(VarScope::Chat(chat.0))
        }
        VarTarget::AnyMessage(id) => match store.message_chat(id).map_err(err)? {
            Some(_) => Ok(VarScope::Message(id.0)),
            None => Err(missing("message", id.0)),
        },
        VarTarget::Message(chat, at) => {
            require_chat(store, Some(chat))?;
            let not_found = |path: &str, what: String| {
                ToolError::new(
                    ErrorCode::ResourceNotFound,
                    format!("{path}: {what} is not a message of this chat"),
                )
                .with_details(json!({"path": path}))
            };
            match (at.id, at.index) {
                (Some(_), Some(_)) => Err(ToolError::invalid_at(
                    "message",
                    "either id or index, not both",
                    "object",
                )),
                (Some(id), None) => {
                    let owner = store.message_chat(MessageId(id)).map_err(err)?;
                    if owner != Some(chat) {
                        return Err(not_found("message.id", format!("message {id}")));
                    }
                    Ok(VarScope::Message(id))
                }
                (None, index) => {
                    let count = store.message_count(chat).map_err(err)? as i64;
                    let index = index.unwrap_or(-1);
                    let floor = if index < 0 { count + index } else { index };
                    if floor < 0 || floor >= count {
                        return Err(not_found("message.index", format!("floor {index}")));
                    }
                    let rows = store
                        .messages_range(chat, floor as u64, Some(floor as u64))
                        .map_err(err)?;
                    let id = rows
                        .first()
                        .and_then(|m| m.id)
                        .ok_or_else(|| not_found("message.index", format!("floor {index}")))?;
                    Ok(VarScope::Message(id.0))
                }
            }
        }
    }
}

/// A variable name or dotted path (`status.hp`): non-empty, no empty segment.
pub fn check_name(name: &str) -> Result<(), ToolError> {
    if name.trim().is_empty() || name.split('.').any(|s| s.is_empty()) {
        return Err(ToolError::invalid_at(
            "name",
            "a non-empty name or dotted path without empty segments (status.hp)",
            "string",
        ));
    }
    Ok(())
}

/// A variable's value; `None` when it does not exist.
pub fn get(store: &Store, target: VarTarget, name: &str) -> Result<Option<Value>, ToolError> {
    check_name(name)?;
    let scope = resolve(store, target)?;
    store
        .var_get(scope, name)
        .map_err(|e| store_error("reading the variable", e))
}

/// Sets a variable (a dotted path creates the objects on its way).
pub fn set(store: &Store, target: VarTarget, name: &str, value: &Value) -> Result<(), ToolError> {
    check_name(name)?;
    let scope = resolve(store, target)?;
    store
        .var_set(scope, name, value)
        .map_err(|e| store_error("writing the variable", e))
}

/// Merges `patch` into an object variable (given keys replace, others stay); the value after.
pub fn update(
    store: &Store,
    target: VarTarget,
    name: &str,
    patch: Map<String, Value>,
) -> Result<Option<Value>, ToolError> {
    check_name(name)?;
    let scope = resolve(store, target)?;
    let failed = |e| store_error("updating the variable", e);
    store
        .var_update(scope, name, &Value::Object(patch))
        .map_err(failed)?;
    store.var_get(scope, name).map_err(failed)
}

/// Removes a variable (only the leaf of a dotted path); whether it existed.
pub fn unset(store: &Store, target: VarTarget, name: &str) -> Result<bool, ToolError> {
    check_name(name)?;
    let scope = resolve(store, target)?;
    store
        .var_unset(scope, name)
        .map_err(|e| store_error("removing the variable", e))
}

/// Every variable of a scope.
pub fn all(store: &Store, target: VarTarget) -> Result<Map<String, Value>, ToolError> {
    let scope = resolve(store, target)?;
    store
        .var_all(scope)
        .map_err(|e| store_error("reading the variables", e))
}

/// What a bubble script starts with (TavoJS `tavo.get` is synchronous): the chat's and the
/// global variables, and those of `message` when given (a message of `chat`), read in one
/// snapshot so they agree.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Snapshot {
    /// The chat's variables.
    pub chat: Map<String, Value>,
    /// The global variables.
    pub global: Map<String, Value>,
    /// The message's variables; `null` when no message was asked for.
    pub message: Option<Map<String, Value>>,
}

/// The [`Snapshot`] of chat `chat` and, when given, its message `message`.
pub fn snapshot(
    store: &Store,
    chat: ChatId,
    message: Option<MessageId>,
) -> Result<Snapshot, ToolError> {
    let chat_scope = resolve(store, VarTarget::Chat(chat))?;
    let message_scope = message
        .map(|m| {
            let at = MessageTarget {
                id: Some(m.0),
                index: None,
            };
            resolve(store, VarTarget::Message(chat, at))
        })
        .transpose()?;
    store
        .read(|tx| {
            Ok(Snapshot {
                chat: tx.var_all(chat_scope)?,
                global: tx.var_all(VarScope::Global)?,
                message: message_scope.map(|m| tx.var_all(m)).transpose()?,
            })
        })
        .map_err(|e| store_error("reading the variables", e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tavo_model::{Chat, Message, Role};

    #[test]
    fn every_scope_is_checked_before_it_is_read_or_written() {
        let dir = tempfile::tempdir().expect("dir");
        let store = Store::open(dir.path()).expect("store");
        let chat = store.chat_create(&Chat::default()).expect("chat");
        let other = store.chat_create(&Chat::default()).expect("chat");
        let m = store
            .message_append(
                other,
                &Message {
                    role: Role::User,
                    ..Message::default()
                },
            )
            .expect("message");

        set(&store, VarTarget::Chat(chat), "status.hp", &json!(3)).expect("set");
        assert_eq!(
            get(&store, VarTarget::Chat(chat), "status").expect("get"),
            Some(json!({"hp": 3}))
        );
        assert_eq!(
            all(&store, VarTarget::Chat(chat)).expect("all")["status"],
            json!({"hp": 3})
        );
        let e = get(&store, VarTarget::Chat(ChatId(99)), "x").unwrap_err();
        assert_eq!(e.code, ErrorCode::ResourceNotFound);
        let e = set(&store, VarTarget::Global, "a..b", &json!(1)).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArguments);

        // A message of another chat is refused by id, found by id alone, and an empty chat
        // has no last message.
        let by_id = MessageTarget {
            id: Some(m.0),
            index: None,
        };
        let e = resolve(&store, VarTarget::Message(chat, by_id)).unwrap_err();
        assert_eq!(
            e.details.as_ref().map(|d| d["path"].clone()),
            Some(json!("message.id"))
        );
        assert_eq!(
            resolve(&store, VarTarget::Message(other, by_id)).expect("own"),
            VarScope::Message(m.0)
        );
        assert_eq!(
            resolve(&store, VarTarget::AnyMessage(m)).expect("any"),
            VarScope::Message(m.0)
        );
        let e = resolve(&store, VarTarget::Message(chat, MessageTarget::default())).unwrap_err();
        assert_eq!(e.code, ErrorCode::ResourceNotFound);
        assert!(unset(&store, VarTarget::Chat(chat), "status.hp").expect("unset"));
    }
}
