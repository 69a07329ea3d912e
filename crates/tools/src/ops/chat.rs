//! The chats (seed 002 🗨️ 聊天): `tavo_chat_current`, `tavo_chat_create` and `tavo_chat_update`.
//!
//! "Current" is the chat that started the reply, not whatever chat the UI shows now.
//! `background` is a per-chat override independent of themes: `null` clears it, absent keeps it.
//! Creating and updating are [`crate::chats::create_chat`] and [`crate::chats::update_chat`],
//! the functions every other door calls too.

use schemars::JsonSchema;
use serde::Deserialize;
use tavo_store::AssetKind;

pub use crate::chats::{BackgroundArg, ChatEdit, NewChat, double_option};
use crate::context::{OpContext, store_error};
use crate::error::ToolError;
use crate::operation::{OpSpec, Outcome, Safety};
use crate::ops::common::{NoArgs, missing};
use crate::registry::Registry;
use crate::validate::SchemaError;

/// Arguments of `tavo_chat_update`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateArgs {
    /// The fields to change.
    pub chat: ChatEdit,
}

/// Arguments of `tavo_chat_create`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateArgs {
    /// The chat to create.
    pub chat: NewChat,
}

async fn current(_: NoArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    let chat = ctx.chat_id()?;
    ctx.blocking("reading the chat", move |store| {
        let v = store
            .asset_json(AssetKind::Chat, chat.get())
            .map_err(|e| store_error("reading the chat", e))?;
        Outcome::value(v.ok_or_else(|| missing("chat", chat))?)
    })
    .await
}

async fn update(args: UpdateArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    let chat_id = ctx.chat_id()?;
    ctx.blocking("updating the chat", move |store| {
        Outcome::value(crate::chats::update_chat(store, chat_id, args.chat)?)
    })
    .await
}

async fn create(args: CreateArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    ctx.blocking("creating the chat", move |store| {
        let created = crate::chats::create_chat(store, args.chat)?;
        let mut chat = created.chat;
        chat["greetingMessageId"] = serde_json::json!(created.greeting.map(|m| m.0));
        Outcome::value(chat)
    })
    .await
}

/// Registers the chat tools.
pub fn register(r: &mut Registry) -> Result<(), SchemaError> {
    const KW: &[&str] = &[
        "chat",
        "conversation",
        "current chat",
        "background",
        "title",
        "new chat",
        "lorebook",
        "preset",
        "聊天",
    ];
    r.add(
        OpSpec::new(
            "chat.current",
            Safety::Read,
            "Get this chat: {id, name, characters, persona, preset, lorebooks, regexes, background}.",
        )
        .keywords(KW),
        current,
    )?;
    r.add(
        OpSpec::new(
            "chat.create",
            Safety::Write,
            "Create a chat: {characters (ids, at least one; several = group chat), name?, persona? (id), \
             preset? (id), lorebooks? (ids), regexes? (ids), background?, cardBindings? (default true: \
             also bind each character's own lorebook and regex group), greeting? (default true: the \
             first character's greeting becomes message 0, other greetings its swipes)}. Every id is \
             checked before anything is written. Returns the chat object and greetingMessageId.",
        )
        .keywords(KW),
        create,
    )?;
    r.add(
        OpSpec::new(
            "chat.update",
            Safety::Write,
            "Update this chat: {name?, characters? (ids, replaces the list), persona? (id or null), \
             preset? (id or null), lorebooks? (ids, replaces the list; [] unbinds all), regexes? (ids, \
             replaces the list), background? ({image, opacity} | {useAvatar: true} | {color}, or null to \
             clear), advancedRendering? (true: messages shown as HTML + CSS)}. All in one transaction: one unknown id changes nothing. The background override \
             never changes the theme. Returns the chat object.",
        )
        .keywords(KW),
        update,
    )
}
