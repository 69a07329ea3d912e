//! Messages of the reply's chat (seed 002 💬 消息): find, get, count, append, update, delete.
//!
//! Floors start at 0; negative floors count from the end (-1 is the last message). Ranges are
//! inclusive and clipped to the chat. A reply owns its chat: these tools never follow the UI's
//! current chat.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tavo_model::{CharacterId, ChatId, Message, MessageId, Role};
use tavo_store::Store;

use crate::context::{OpContext, store_error};
use crate::error::ToolError;
use crate::messages::{
    MessageChange, MessageDraft, Written, append_message, delete_message, edit_message,
};
use crate::operation::{OpSpec, Outcome, Safety};
use crate::ops::common::{IdArgs, NoArgs};
use crate::ops::require_chat;
use crate::registry::Registry;
use crate::validate::SchemaError;

/// A floor, or an inclusive `[start, end]` / `[start]` / `[]` range.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum IndexRange {
    /// One floor (0 = first, -1 = last).
    Floor(i64),
    /// `[start, end]` inclusive, `[start]` to the end, `[]` everything.
    Range(#[schemars(length(max = 2))] Vec<i64>),
}

/// Role filter values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RoleArg {
    /// System messages.
    System,
    /// Character messages.
    Assistant,
    /// User messages.
    User,
}

impl RoleArg {
    fn role(self) -> Role {
        match self {
            RoleArg::System => Role::System,
            RoleArg::Assistant => Role::Assistant,
            RoleArg::User => Role::User,
        }
    }
}

/// Filter of `find`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageFilter {
    /// Only this role.
    #[serde(default)]
    pub role: Option<RoleArg>,
    /// true: only hidden messages; false: only visible ones; absent: both.
    #[serde(default)]
    pub hidden: Option<bool>,
    /// Only messages spoken by these character ids.
    #[serde(default)]
    pub characters: Option<Vec<i64>>,
}

/// Arguments of `tavo_message_find`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FindArgs {
    /// Floor or range; absent or null means every message.
    #[serde(default)]
    pub index_range: Option<IndexRange>,
    /// Optional filter.
    #[serde(default)]
    pub filter: Option<MessageFilter>,
}

/// Roles a new message may have.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SpeakerRole {
    /// A character speaks (default).
    #[default]
    Assistant,
    /// The user speaks.
    User,
    /// A narrator's line, no speaker (SillyTavern's `/sys`).
    System,
}

/// The new message of `append`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NewMessage {
    /// The text.
    pub content: String,
    /// `assistant` (default) or `user`.
    #[serde(default)]
    pub role: Option<SpeakerRole>,
    /// Speaking character (needed in group chats; inferred in one-character chats).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub character_id: Option<i64>,
    /// Hidden messages stay in the chat but leave the prompt (default false).
    #[serde(default)]
    pub hidden: Option<bool>,
}

/// Arguments of `tavo_message_append`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppendArgs {
    /// The message to add at the end of the chat.
    pub message: NewMessage,
}

/// The change of `update`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageEdit {
    /// Id of the message to change.
    #[schemars(range(min = 1))]
    pub id: i64,
    /// The new content.
    pub content: String,
    /// New reasoning text; "" clears it; absent keeps it.
    #[serde(default)]
    pub reasoning: Option<String>,
    /// Hidden or not (default false).
    #[serde(default)]
    pub hidden: Option<bool>,
}

/// Arguments of `tavo_message_update`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateArgs {
    /// The message fields to write.
    pub message: MessageEdit,
}

/// The seed's message shape (plus `floor`).
pub fn message_json(m: &Message) -> Value {
    let mut v = json!({
        "id": m.id.map(|i| i.0),
        "floor": m.floor,
        "role": m.role.as_str(),
        "content": m.content,
        "hidden": m.hidden,
    });
    if let Some(c) = m.character_id {
        v["characterId"] = json!(c.0);
    }
    if let Some(r) = m.reasoning.as_deref().filter(|r| !r.is_empty()) {
        v["reasoning"] = json!(r);
    }
    v
}

fn resolve(index: i64, count: u64) -> Option<u64> {
    if index >= 0 {
        Some(index as u64)
    } else {
        count.checked_sub(index.unsigned_abs())
    }
}

async fn find(args: FindArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    let chat = ctx.chat_id()?;
    ctx.blocking("reading messages", move |store| {
        require_chat(store, Some(chat))?;
        let id = chat;
        let count = store
            .message_count(id)
            .map_err(|e| store_error("reading messages", e))?;
        let empty = || Outcome::value(Vec::<Value>::new());
        let (start, end) = match args.index_range {
            None => (0, None),
            Some(IndexRange::Floor(i)) => match resolve(i, count) {
                Some(f) => (f, Some(f)),
                None => return empty(),
            },
            Some(IndexRange::Range(r)) => match r.as_slice() {
                [] => (0, None),
                [s] => (resolve(*s, count).unwrap_or(0), None),
                [s, e] => match resolve(*e, count) {
                    Some(e) => (resolve(*s, count).unwrap_or(0), Some(e)),
                    None => return empty(),
                },
                _ => {
                    return Err(ToolError::invalid_at(
                        "indexRange",
                        "a floor or [start, end]",
                        "array",
                    ));
                }
            },
        };
        if end.is_some_and(|e| e < start) {
            return empty();
        }
        let messages = store
            .messages_range(id, start, end)
            .map_err(|e| store_error("reading messages", e))?;
        let filter = args.filter.unwrap_or_default();
        let out: Vec<Value> = messages
            .iter()
            .filter(|m| filter.role.is_none_or(|r| m.role == r.role()))
            .filter(|m| filter.hidden.is_none_or(|h| m.hidden == h))
            .filter(|m| {
                filter
                    .characters
                    .as_ref()
                    .is_none_or(|cs| m.character_id.is_some_and(|c| cs.contains(&c.0)))
            })
            .map(message_json)
            .collect();
        Outcome::value(out)
    })
    .await
}

fn load_message(store: &Store, chat: ChatId, id: MessageId) -> Result<Message, ToolError> {
    crate::messages::message_in_chat(store, chat, id)
}

async fn get(args: IdArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    let chat = ctx.chat_id()?;
    let id = MessageId(args.id.get());
    ctx.blocking("reading the message", move |store| {
        require_chat(store, Some(chat))?;
        Outcome::value(message_json(&load_message(store, chat, id)?))
    })
    .await
}

async fn count(_: NoArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    let chat = ctx.chat_id()?;
    ctx.blocking("counting messages", move |store| {
        require_chat(store, Some(chat))?;
        let n = store
            .message_count(chat)
            .map_err(|e| store_error("counting messages", e))?;
        Outcome::value(json!({"count": n}))
    })
    .await
}

async fn append(args: AppendArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    let chat = ctx.chat_id()?;
    let new = args.message;
    ctx.blocking("appending the message", move |store| {
        require_chat(store, Some(chat))?;
        let role = match new.role.unwrap_or_default() {
            SpeakerRole::User => Role::User,
            SpeakerRole::Assistant => Role::Assistant,
            SpeakerRole::System => Role::System,
        };
        let mut draft = MessageDraft::new(role, new.content);
        draft.character_id = new.character_id.map(CharacterId);
        draft.hidden = new.hidden.unwrap_or(false);
        let written = append_message(store, chat, draft)?;
        Outcome::value(written_json(&written))
    })
    .await
}

/// `{id}`, plus `warnings` naming the regex rules that could not run.
fn written_json(written: &Written) -> Value {
    let mut v = json!({"id": written.message.id.map(|i| i.0)});
    let warnings = written.warnings();
    if !warnings.is_empty() {
        v["warnings"] = json!(warnings);
    }
    v
}

async fn update(args: UpdateArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    let chat = ctx.chat_id()?;
    let edit = args.message;
    ctx.blocking("updating the message", move |store| {
        require_chat(store, Some(chat))?;
        let change = MessageChange {
            content: Some(edit.content),
            reasoning: edit.reasoning,
            hidden: Some(edit.hidden.unwrap_or(false)),
        };
        let written = edit_message(store, chat, MessageId(edit.id), change)?;
        Outcome::value(written_json(&written))
    })
    .await
}

async fn delete(args: IdArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    let chat = ctx.chat_id()?;
    let id = args.id.get();
    ctx.blocking("deleting the message", move |store| {
        require_chat(store, Some(chat))?;
        delete_message(store, chat, MessageId(id))?;
        Outcome::value(json!({"id": id}))
    })
    .await
}

/// Registers the message tools.
pub fn register(r: &mut Registry) -> Result<(), SchemaError> {
    const KW: &[&str] = &[
        "message", "messages", "history", "floor", "chat log", "消息",
    ];
    r.add(
        OpSpec::new(
            "message.find",
            Safety::Read,
            "Find messages of this chat by floor (0 = first, -1 = last) or inclusive range [start, end] / \
             [start] / [] and an optional filter {role, hidden, characters}. Returns an array (empty when \
             nothing matches) of {id, floor, role, characterId?, content, hidden}.",
        )
        .keywords(KW),
        find,
    )?;
    r.add(
        OpSpec::new(
            "message.get",
            Safety::Read,
            "Get one message of this chat by id.",
        )
        .keywords(KW),
        get,
    )?;
    r.add(
        OpSpec::new(
            "message.count",
            Safety::Read,
            "Count the messages of this chat, hidden ones included.",
        )
        .keywords(KW),
        count,
    )?;
    r.add(
        OpSpec::new(
            "message.append",
            Safety::Write,
            "Append a message at the end of this chat: {content, role: assistant (default) | user | system, \
             characterId (required in group chats), hidden}. The chat's receive regex rules rewrite \
             the stored text. Returns {id, warnings?}.",
        )
        .keywords(KW),
        append,
    )?;
    r.add(
        OpSpec::new(
            "message.update",
            Safety::Write,
            "Change a message of this chat: {id, content, reasoning?, hidden?}. The chat's \
             editAndReceive regex rules rewrite the new text. Returns {id, warnings?}.",
        )
        .keywords(KW),
        update,
    )?;
    r.add(
        OpSpec::new(
            "message.delete",
            Safety::Confirm,
            "Delete a message of this chat by id. Returns {id}.",
        )
        .keywords(KW),
        delete,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_floors_count_from_the_end() {
        assert_eq!(resolve(-1, 5), Some(4));
        assert_eq!(resolve(-5, 5), Some(0));
        assert_eq!(resolve(-6, 5), None);
        assert_eq!(resolve(2, 5), Some(2));
    }
}
