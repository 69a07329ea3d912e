//! Variables (seed 000: "变量名必须是非空路径，原生模型变量工具支持聊天和全局作用域").
//!
//! `tavo_variable_get|set|update|unset` over the chat scope (bound to the reply's chat) and
//! the global scope, with dotted paths (`status.hp`). Values keep their JSON types. Large data
//! (base64 images, audio) belongs in files; variables should hold their virtual paths.

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

/// `chat` (default) or `global`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum VarScopeArg {
    /// Variables of the reply's chat.
    #[default]
    Chat,
    /// Variables shared by every chat.
    Global,
}

/// Arguments of get and unset.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VarNameArgs {
    /// Variable name or dotted path into an object value (`status.hp`). Non-empty.
    #[schemars(length(min = 1))]
    pub name: String,
    /// `chat` (default) or `global`.
    #[serde(default)]
    pub scope: Option<VarScopeArg>,
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
    /// `chat` (default) or `global`.
    #[serde(default)]
    pub scope: Option<VarScopeArg>,
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
    /// `chat` (default) or `global`.
    #[serde(default)]
    pub scope: Option<VarScopeArg>,
}

fn scope_of(
    ctx: &OpContext,
    scope: Option<VarScopeArg>,
) -> Result<(VarScope, &'static str), ToolError> {
    match scope.unwrap_or_default() {
        VarScopeArg::Global => Ok((VarScope::Global, "global")),
        VarScopeArg::Chat => Ok((VarScope::Chat(ctx.chat_id()?), "chat")),
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
    let (scope, label) = scope_of(&ctx, args.scope)?;
    ctx.blocking("reading the variable", move |store| {
        require_chat(store, scope_chat(scope))?;
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
    let (scope, label) = scope_of(&ctx, args.scope)?;
    ctx.blocking("writing the variable", move |store| {
        require_chat(store, scope_chat(scope))?;
        store
            .var_set(scope, &args.name, &args.value)
            .map_err(|e| store_error("writing the variable", e))?;
        Outcome::value(json!({"name": args.name, "scope": label, "value": args.value}))
    })
    .await
}

async fn update(args: VarUpdateArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    check_path(&args.name)?;
    let (scope, label) = scope_of(&ctx, args.scope)?;
    ctx.blocking("updating the variable", move |store| {
        require_chat(store, scope_chat(scope))?;
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
    let (scope, label) = scope_of(&ctx, args.scope)?;
    ctx.blocking("removing the variable", move |store| {
        require_chat(store, scope_chat(scope))?;
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
