//! Long-term memory of the reply's chat (seed 002 🧠 长记忆, seed 000 memory rules), over
//! [`crate::memories`], the write every door shares.
//!
//! `update` takes the object `get` returned or a partial one with only `enabled` and/or
//! `memories`; `append` adds one or more non-empty strings and never switches injection on.
//! Turning memory off only stops injection: the tools stay available.

use crate::context::OpContext;
use crate::error::ToolError;
use crate::memories;
use crate::operation::{OpSpec, Outcome, Safety};
use crate::ops::common::NoArgs;
use crate::ops::require_chat;
use crate::registry::Registry;
use crate::validate::SchemaError;
use schemars::JsonSchema;
use serde::Deserialize;

/// The memory object (as `get` returns it) or a part of it.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryPatch {
    /// The record id as `get` returned it (ignored: the memory is always the reply's chat's).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub id: Option<i64>,
    /// Whether memories are injected into prompts.
    #[serde(default)]
    pub enabled: Option<bool>,
    /// The complete new list of memory texts (replaces the old list).
    #[serde(default)]
    pub memories: Option<Vec<String>>,
}

/// Arguments of `tavo_memory_update`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateArgs {
    /// `{ enabled?, memories? }`, or the whole object from `tavo_memory_get`.
    pub memory: MemoryPatch,
}

/// Arguments of `tavo_memory_append`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppendArgs {
    /// One or more non-empty memory texts to add at the end.
    #[schemars(length(min = 1))]
    pub memories: Vec<NonEmpty>,
}

/// A non-empty string.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct NonEmpty(#[schemars(length(min = 1))] pub String);

async fn get(_: NoArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    let chat = ctx.chat_id()?;
    ctx.blocking("reading memory", move |store| {
        Outcome::value(memories::memory(store, chat)?)
    })
    .await
}

async fn update(args: UpdateArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    let chat = ctx.chat_id()?;
    let m = args.memory;
    ctx.blocking("updating memory", move |store| {
        Outcome::value(memories::update_memory(
            store,
            chat,
            m.enabled,
            m.memories.as_deref(),
        )?)
    })
    .await
}

async fn append(args: AppendArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    let chat = ctx.chat_id()?;
    let texts: Vec<String> = args.memories.into_iter().map(|NonEmpty(t)| t).collect();
    ctx.blocking("appending to memory", move |store| {
        Outcome::value(memories::append_memory(store, chat, &texts)?)
    })
    .await
}

async fn extract(_: NoArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    let chat = ctx.chat_id()?;
    ctx.blocking("reading the chat", move |store| {
        require_chat(store, Some(chat))
    })
    .await?;
    let Some(extractor) = ctx.services.memory.clone() else {
        return Err(ToolError::new(
            crate::error::ErrorCode::ResourceNotFound,
            "memory extraction is not available here (it needs the reply engine and a connection)",
        ));
    };
    Ok(Outcome::json(extractor.extract(chat).await?))
}

/// Registers the memory tools.
pub fn register(r: &mut Registry) -> Result<(), SchemaError> {
    const KW: &[&str] = &["memory", "long-term memory", "remember", "fact", "记忆"];
    r.add(
        OpSpec::new(
            "memory.get",
            Safety::Read,
            "Read this chat's long-term memory: {id, enabled, memories: string[]}.",
        )
        .keywords(KW),
        get,
    )?;
    r.add(
        OpSpec::new(
            "memory.update",
            Safety::Write,
            "Update this chat's long-term memory with the object from tavo_memory_get or a part of it \
             ({enabled} and/or {memories}, which replaces the whole list). enabled only controls whether \
             memories are injected into prompts.",
        )
        .keywords(KW),
        update,
    )?;
    r.add(
        OpSpec::new(
            "memory.append",
            Safety::Write,
            "Append one or more memory texts to this chat's long-term memory without replacing existing ones. \
             Does not switch memory injection on.",
        )
        .keywords(KW),
        append,
    )?;
    r.add(
        OpSpec::new(
            "memory.extract",
            Safety::Write,
            "Extract long-term memories from this chat's recent conversation now (one request to the chat's \
             model with the extraction prompt); new memories are appended, without repeating existing ones. \
             Answers {memory, added, duplicates, messages, mergedWithEdit}. Does not switch injection on.",
        )
        .keywords(&["memory", "extract", "summarize", "remember", "记忆", "提取"]),
        extract,
    )
}
