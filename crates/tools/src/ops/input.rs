//! The input draft (seed 002 ⌨️ 输入框; seed 000: strings only, edits the draft, never sends).
//!
//! A draft is per-chat state kept in the chat's state slot [`DRAFT_KEY`], so the page, the CLI
//! and a reply all see the same draft. Unexpected failures are a detail-free `internal_error`.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tavo_model::ChatId;
use tavo_store::Store;

use crate::context::OpContext;
use crate::error::ToolError;
use crate::operation::{OpSpec, Outcome, Safety};
use crate::ops::common::NoArgs;
use crate::ops::require_chat;
use crate::registry::Registry;
use crate::validate::SchemaError;

/// Chat state slot holding the draft text.
pub const DRAFT_KEY: &str = "input.draft";

/// Arguments of set and append.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TextArgs {
    /// The text.
    pub text: String,
}

fn internal(e: tavo_store::StoreError) -> ToolError {
    tracing::warn!(error = %e, "input draft access failed");
    ToolError::internal("editing the input box")
}

/// The chat's current draft ("" when none).
pub fn read_draft(store: &Store, chat: ChatId) -> Result<String, ToolError> {
    Ok(store
        .chat_state_get(chat, DRAFT_KEY)
        .map_err(internal)?
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default())
}

/// Replaces the chat's draft (`""` clears it).
pub fn write_draft(store: &Store, chat: ChatId, text: &str) -> Result<(), ToolError> {
    store
        .chat_state_set(chat, DRAFT_KEY, &Value::String(text.to_owned()))
        .map_err(internal)
}

/// The refusal of a send that carries nothing: no text (after trimming; the draft, when the
/// text came from it, was empty too) and no image. Every composer door — `tavo chat`, `tavo
/// reply --message`, `POST /api/chats/{id}/messages`, `tavo_input_send` — answers this one
/// error, whatever its own field is called.
pub fn nothing_to_send() -> ToolError {
    ToolError::new(
        crate::error::ErrorCode::InvalidArguments,
        "nothing to send: the message has no text (and the draft is empty) and no image",
    )
    .with_details(json!({"reason": "empty_message"}))
}

/// What a send carries as text: `text` when given, else the chat's draft (read by `draft`
/// only then), trimmed; and whether it came from the draft (which the send then clears).
/// Refuses with [`nothing_to_send`] when the text is empty and there is no image.
pub fn outgoing_text(
    text: Option<String>,
    has_image: bool,
    draft: impl FnOnce() -> Result<String, ToolError>,
) -> Result<(String, bool), ToolError> {
    let (text, from_draft) = match text {
        Some(t) => (t, false),
        None => (draft()?, true),
    };
    let text = text.trim().to_owned();
    if text.is_empty() && !has_image {
        return Err(nothing_to_send());
    }
    Ok((text, from_draft))
}

async fn get(_: NoArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    let chat = ctx.chat_id()?;
    ctx.blocking("reading the input box", move |store| {
        require_chat(store, Some(chat))?;
        Outcome::value(json!({"text": read_draft(store, chat)?}))
    })
    .await
}

async fn set(args: TextArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    let chat = ctx.chat_id()?;
    ctx.blocking("editing the input box", move |store| {
        require_chat(store, Some(chat))?;
        write_draft(store, chat, &args.text)?;
        Outcome::value(json!({"text": args.text}))
    })
    .await
}

async fn append(args: TextArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    let chat = ctx.chat_id()?;
    ctx.blocking("editing the input box", move |store| {
        require_chat(store, Some(chat))?;
        let mut text = read_draft(store, chat)?;
        text.push_str(&args.text);
        write_draft(store, chat, &text)?;
        Outcome::value(json!({"text": text}))
    })
    .await
}

async fn clear(_: NoArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    let chat = ctx.chat_id()?;
    ctx.blocking("editing the input box", move |store| {
        require_chat(store, Some(chat))?;
        write_draft(store, chat, "")?;
        Outcome::value(json!({"text": ""}))
    })
    .await
}

/// Registers the input-box tools.
pub fn register(r: &mut Registry) -> Result<(), SchemaError> {
    const KW: &[&str] = &["input", "draft", "composer", "text box", "type", "输入框"];
    r.add(
        OpSpec::new(
            "input.get",
            Safety::Read,
            "Read the text currently in the user's input box.",
        )
        .keywords(KW),
        get,
    )?;
    r.add(
        OpSpec::new(
            "input.set",
            Safety::Write,
            "Replace the text in the user's input box (a draft for the user to edit and send; never sends).",
        )
        .keywords(KW),
        set,
    )?;
    r.add(
        OpSpec::new(
            "input.append",
            Safety::Write,
            "Append text to the user's input box draft (never sends).",
        )
        .keywords(KW),
        append,
    )?;
    r.add(
        OpSpec::new(
            "input.clear",
            Safety::Write,
            "Clear the user's input box draft.",
        )
        .keywords(KW),
        clear,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_or_the_draft_and_nothing_is_refused() {
        let no_draft = || -> Result<String, ToolError> { panic!("the draft is not read") };
        assert_eq!(
            outgoing_text(Some(" hi ".into()), false, no_draft).ok(),
            Some(("hi".to_owned(), false))
        );
        assert_eq!(
            outgoing_text(None, false, || Ok("draft".into())).ok(),
            Some(("draft".to_owned(), true))
        );
        assert_eq!(
            outgoing_text(Some("  ".into()), true, no_draft).ok(),
            Some((String::new(), false))
        );
        let refused = outgoing_text(None, false, || Ok(" ".into())).err();
        assert_eq!(refused, Some(nothing_to_send()));
    }
}
