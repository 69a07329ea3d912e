//! Variables (seed 000: "变量名必须是非空路径，原生模型变量工具支持聊天和全局作用域").
//!
//! `tavo_variable_get|set|update|unset` over the chat scope (bound to the reply's chat) and
//! the global scope, with dotted paths (`status.hp`). Values keep their JSON types. Large data
//! (base64 images, audio) belongs in files; variables should hold their virtual paths.
//!
//! Beyond the seed's two scopes, `scope: "message"` reaches one message's variables (TavoJS
//! `{scope: 'message', id | index}`, seed 002), so a bubble script's `tavo.set(…, 'message')`
//! takes this same path: `message.id` (stable) or `message.index` (floor, negative from the
//! end); neither means the chat's last message. The message must belong to the call's chat.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tavo_store::VarScope;

use crate::context::{OpContext, store_error};
use crate::error::ToolError;
use crate::operation::{OpSpec, Outcome, Safety};
use crate::ops::require_chat;
use crate::registry::Registry;
use crate::validate::SchemaError;

/// `chat` (default), `global`, or `message`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum VarScopeArg {
    /// Variables of the reply's chat.
    #[default]
    Chat,
    /// Variables shared by every chat.
    Global,
    /// Variables of one message of the chat (see `message`; default its last message).
    Message,
}

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

/// Arguments of get and unset.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VarNameArgs {
    /// Variable name or dotted path into an object value (`status.hp`). Non-empty.
    #[schemars(length(min = 1))]
    pub name: String,
    /// `chat` (default), `global`, or `message`.
    #[serde(default)]
    pub scope: Option<VarScopeArg>,
    /// With scope `message`: {id} or {index}; absent = the chat's last message.
    #[serde(default)]
    pub message: Option<MessageTarget>,
}

/// Arguments of set.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VarSetArgs {
    /// Variable name or dotted path. Non-empty.
    #[schemars(length(min = 1))]
    pub name: String,
    /// Any JSON value (string, number, boolean, null, array, object).
    pub value: Value,
    /// `chat` (default), `global`, or `message`.
    #[serde(default)]
    pub scope: Option<VarScopeArg>,
    /// With scope `message`: {id} or {index}; absent = the chat's last message.
    #[serde(default)]
    pub message: Option<MessageTarget>,
}

/// Arguments of update.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VarUpdateArgs {
    /// Variable name or dotted path of an object value. Non-empty.
    #[schemars(length(min = 1))]
    pub name: String,
    /// Fields to merge into the object (shallow merge: given keys replace, others stay).
    pub value: Map<String, Value>,
    /// `chat` (default), `global`, or `message`.
    #[serde(default)]
    pub scope: Option<VarScopeArg>,
    /// With scope `message`: {id} or {index}; absent = the chat's last message.
    #[serde(default)]
    pub message: Option<MessageTarget>,
}

/// Where a call's variables live; a message scope is resolved against the store later
/// ([`resolve`]), since the message must be looked up in the call's chat.
#[derive(Debug, Clone, Copy)]
enum Target {
    Scope(VarScope),
    Message(i64, MessageTarget),
}

fn scope_of(
    ctx: &OpContext,
    scope: Option<VarScopeArg>,
    message: Option<MessageTarget>,
) -> Result<(Target, &'static str), ToolError> {
    if message.is_some() && scope != Some(VarScopeArg::Message) {
        return Err(ToolError::invalid_at(
            "message",
            "only with scope \"message\"",
            "object",
        ));
    }
    match scope.unwrap_or_default() {
        VarScopeArg::Global => Ok((Target::Scope(VarScope::Global), "global")),
        VarScopeArg::Chat => Ok((Target::Scope(VarScope::Chat(ctx.chat_id()?)), "chat")),
        VarScopeArg::Message => Ok((
            Target::Message(ctx.chat_id()?, message.unwrap_or_default()),
            "message",
        )),
    }
}

/// The store scope of a target: the chat must exist, and a message target must name a
/// message of that chat (`resource_not_found` naming `message.id` / `message.index`).
fn resolve(store: &tavo_store::Store, target: Target) -> Result<VarScope, ToolError> {
    let err = |e| store_error("finding the message", e);
    match target {
        Target::Scope(scope) => {
            require_chat(store, scope_chat(scope))?;
            Ok(scope)
        }
        Target::Message(chat, at) => {
            require_chat(store, Some(chat))?;
            let chat_id = tavo_model::ChatId(chat);
            let not_found = |path: &str, what: String| {
                ToolError::new(
                    crate::error::ErrorCode::ResourceNotFound,
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
                    let owner = store.message_chat(tavo_model::MessageId(id)).map_err(err)?;
                    if owner != Some(chat_id) {
                        return Err(not_found("message.id", format!("message {id}")));
                    }
                    Ok(VarScope::Message(id))
                }
                (None, index) => {
                    let count = store.message_count(chat_id).map_err(err)? as i64;
                    let index = index.unwrap_or(-1);
                    let floor = if index < 0 { count + index } else { index };
                    if floor < 0 || floor >= count {
                        return Err(not_found("message.index", format!("floor {index}")));
                    }
                    let rows = store
                        .messages_range(chat_id, floor as u64, Some(floor as u64))
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

fn check_path(name: &str) -> Result<(), ToolError> {
    if name.trim().is_empty() || name.split('.').any(|s| s.is_empty()) {
        return Err(ToolError::invalid_at(
            "name",
            "a non-empty name or dotted path without empty segments (status.hp)",
            "string",
        ));
    }
    Ok(())
}

async fn get(args: VarNameArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    check_path(&args.name)?;
    let (target, label) = scope_of(&ctx, args.scope, args.message)?;
    ctx.blocking("reading the variable", move |store| {
        let scope = resolve(store, target)?;
        let value = store.var_get(scope, &args.name).map_err(|e| store_error("reading the variable", e))?;
        let exists = value.is_some();
        Outcome::value(json!({"name": args.name, "scope": label, "exists": exists, "value": value.unwrap_or(Value::Null)}))
    })
    .await
}

fn scope_chat(scope: VarScope) -> Option<i64> {
    match scope {
        VarScope::Chat(id) => Some(id),
        _ => None,
    }
}

async fn set(args: VarSetArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    check_path(&args.name)?;
    let (target, label) = scope_of(&ctx, args.scope, args.message)?;
    ctx.blocking("writing the variable", move |store| {
        let scope = resolve(store, target)?;
        store
            .var_set(scope, &args.name, &args.value)
            .map_err(|e| store_error("writing the variable", e))?;
        Outcome::value(json!({"name": args.name, "scope": label, "value": args.value}))
    })
    .await
}

async fn update(args: VarUpdateArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    check_path(&args.name)?;
    let (target, label) = scope_of(&ctx, args.scope, args.message)?;
    ctx.blocking("updating the variable", move |store| {
        let scope = resolve(store, target)?;
        let patch = Value::Object(args.value);
        store
            .var_update(scope, &args.name, &patch)
            .map_err(|e| store_error("updating the variable", e))?;
        let value = store
            .var_get(scope, &args.name)
            .map_err(|e| store_error("updating the variable", e))?;
        Outcome::value(
            json!({"name": args.name, "scope": label, "value": value.unwrap_or(Value::Null)}),
        )
    })
    .await
}

async fn unset(args: VarNameArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    check_path(&args.name)?;
    let (target, label) = scope_of(&ctx, args.scope, args.message)?;
    ctx.blocking("removing the variable", move |store| {
        let scope = resolve(store, target)?;
        let removed = store
            .var_unset(scope, &args.name)
            .map_err(|e| store_error("removing the variable", e))?;
        Outcome::value(json!({"name": args.name, "scope": label, "removed": removed}))
    })
    .await
}

/// Registers the variable tools.
pub fn register(r: &mut Registry) -> Result<(), SchemaError> {
    const KW: &[&str] = &[
        "variable",
        "var",
        "state",
        "remember value",
        "getvar",
        "setvar",
        "变量",
    ];
    r.add(
        OpSpec::new(
            "variable.get",
            Safety::Read,
            "Read a variable of the chat (default) or global scope by name or dotted path (status.hp). \
             Returns exists and value (null when missing).",
        )
        .keywords(KW),
        get,
    )?;
    r.add(
        OpSpec::new(
            "variable.set",
            Safety::Write,
            "Set a variable (any JSON value) in the chat (default) or global scope; a dotted path writes \
             inside an object. Keep values small: store large content with tavo_file_save and keep only its path.",
        )
        .keywords(KW),
        set,
    )?;
    r.add(
        OpSpec::new(
            "variable.update",
            Safety::Write,
            "Shallow-merge fields into an object variable ({hp: 70} into {hp: 100, mp: 32} gives {hp: 70, mp: 32}).",
        )
        .keywords(KW),
        update,
    )?;
    r.add(
        OpSpec::new(
            "variable.unset",
            Safety::Write,
            "Remove a variable, or only the leaf of a dotted path.",
        )
        .keywords(KW),
        unset,
    )
}
