//! Variables. Seed 000's rules: a variable name is a non-empty path, and the model's variable
//! tools work on the chat and the global scope.
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

use crate::context::OpContext;
use crate::error::ToolError;
use crate::operation::{OpSpec, Outcome, Safety};
use crate::registry::Registry;
use crate::validate::SchemaError;
pub use crate::variables::MessageTarget;
use crate::variables::{self, VarTarget};

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

fn scope_of(
    ctx: &OpContext,
    scope: Option<VarScopeArg>,
    message: Option<MessageTarget>,
) -> Result<(VarTarget, &'static str), ToolError> {
    if message.is_some() && scope != Some(VarScopeArg::Message) {
        return Err(ToolError::invalid_at(
            "message",
            "only with scope \"message\"",
            "object",
        ));
    }
    match scope.unwrap_or_default() {
        VarScopeArg::Global => Ok((VarTarget::Global, "global")),
        VarScopeArg::Chat => Ok((VarTarget::Chat(ctx.chat_id()?), "chat")),
        VarScopeArg::Message => Ok((
            VarTarget::Message(ctx.chat_id()?, message.unwrap_or_default()),
            "message",
        )),
    }
}

async fn get(args: VarNameArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    variables::check_name(&args.name)?;
    let (target, label) = scope_of(&ctx, args.scope, args.message)?;
    ctx.blocking("reading the variable", move |store| {
        let value = variables::get(store, target, &args.name)?;
        let exists = value.is_some();
        Outcome::value(json!({"name": args.name, "scope": label, "exists": exists, "value": value.unwrap_or(Value::Null)}))
    })
    .await
}

async fn set(args: VarSetArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    variables::check_name(&args.name)?;
    let (target, label) = scope_of(&ctx, args.scope, args.message)?;
    ctx.blocking("writing the variable", move |store| {
        variables::set(store, target, &args.name, &args.value)?;
        Outcome::value(json!({"name": args.name, "scope": label, "value": args.value}))
    })
    .await
}

async fn update(args: VarUpdateArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    variables::check_name(&args.name)?;
    let (target, label) = scope_of(&ctx, args.scope, args.message)?;
    ctx.blocking("updating the variable", move |store| {
        let value = variables::update(store, target, &args.name, args.value)?;
        Outcome::value(
            json!({"name": args.name, "scope": label, "value": value.unwrap_or(Value::Null)}),
        )
    })
    .await
}

async fn unset(args: VarNameArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    variables::check_name(&args.name)?;
    let (target, label) = scope_of(&ctx, args.scope, args.message)?;
    ctx.blocking("removing the variable", move |store| {
        let removed = variables::unset(store, target, &args.name)?;
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
