//! The chat tools of Tavo's MCP server: chats (`search`, `get`, `create`, `update`, `delete`,
//! `copy`, `reset`, the current chat), messages, memory and the composer draft.
//!
//! An agent names the chat in `chatId`; messages are targeted by stable `id` or 0-based
//! `index` (the id wins). Everything but search and the current chat runs the model door's own
//! operation (`tavo_chat_update`, `tavo_message_append`, …) for that chat through the
//! dispatcher, so the rules (regex on write, bindings checked in one transaction, greetings)
//! are the ones every door has.

use serde_json::{Map, Value, json};
use tavo_model::{ChatId, MessageId};
use tavo_store::Store;

use super::search::{self, Search};
use super::{McpContext, McpTools, Step, WritePlan, handler, id_field};
use crate::context::store_error;
use crate::error::{ErrorCode, ToolError};

/// The setting that remembers the chat an agent (or the app) made current.
pub const CURRENT_CHAT: &str = "app.currentChat";

pub(super) fn register(set: &mut McpTools, registry: &crate::Registry) {
    register_chat_reads(set);
    register_chat_writes(set);
    register_current_chat(set);
    register_messages(set);
    register_chat_scoped(set, registry);
}

fn chat_json(store: &Store, id: i64) -> Result<Value, ToolError> {
    store
        .asset_json(tavo_model::AssetKind::Chat, id)
        .map_err(|e| store_error("reading the chat", e))?
        .ok_or_else(|| ToolError::not_found("chat", id))
}

/// MCP's binding names (`characterIds`, `presetId`, …) as the chat operations take them.
fn chat_fields(mut args: Map<String, Value>) -> Map<String, Value> {
    const NAMES: [(&str, &str); 5] = [
        ("characterIds", "characters"),
        ("personaId", "persona"),
        ("presetId", "preset"),
        ("lorebookIds", "lorebooks"),
        ("regexIds", "regexes"),
    ];
    for (mcp, ours) in NAMES {
        if let Some(v) = args.shift_remove(mcp) {
            args.insert(ours.to_owned(), v);
        }
    }
    args
}

const CHAT_FIELDS: &str = "`name`, `characterIds` (several = a group chat), `personaId`, `presetId`, `lorebookIds`, `regexIds`, `background`, `advancedRendering` (Tavo's names `characters`, `persona`, `preset`, `lorebooks`, `regexes` work too)";

fn chat_schema(required_id: bool) -> Value {
    let ids = json!({"type": "array", "items": {"type": "integer", "minimum": 1}});
    let id = json!({"type": ["integer", "null"], "minimum": 1});
    let mut s = json!({"type": "object", "properties": {
        "name": {"type": "string"}, "characterIds": ids, "personaId": id, "presetId": id,
        "lorebookIds": ids, "regexIds": ids, "background": {},
    }, "additionalProperties": true});
    if required_id {
        s["properties"]["id"] = json!({"type": "integer", "minimum": 1});
        s["required"] = json!(["id"]);
    } else {
        s["required"] = json!(["characterIds"]);
    }
    s
}

/// Search and read.
fn register_chat_reads(set: &mut McpTools) {
    set.add(
        "tavo_chat_search",
        "Find chats by title: `query`, `match`, `limit`, `cursor`. Answers `{items: [{id, name, revision, updatedAt}], total, nextCursor}`, newest first.",
        search::schema(json!({})),
        false,
        handler(|cx: McpContext, args| async move {
            cx.blocking("searching the chats", move |store| {
                let s = Search::from_args(&args)?;
                let mut list = store
                    .asset_summaries(tavo_model::AssetKind::Chat)
                    .map_err(|e| store_error("listing the chats", e))?;
                list.sort_by(|a, b| b.updated_at.cmp(&a.updated_at));
                let hits = list
                    .into_iter()
                    .filter(|c| s.matches([c.name.as_str()]))
                    .map(|c| json!({"id": c.id, "name": c.name, "revision": c.revision, "updatedAt": c.updated_at}))
                    .collect();
                Ok(Step::Answer(s.page(hits)))
            })
            .await
        }),
    );
    set.add(
        "tavo_chat_get",
        "Read a chat (`id`) with its bindings and `revision`; `includeMessages: true` adds its messages (`messageLimit`, default 100, the newest).",
        json!({"type": "object", "properties": {
            "id": {"type": "integer", "minimum": 1}, "includeMessages": {"type": "boolean"},
            "messageLimit": {"type": "integer", "minimum": 1, "maximum": 1000}
        }, "required": ["id"], "additionalProperties": false}),
        false,
        handler(|cx: McpContext, args| async move {
            cx.blocking("reading the chat", move |store| {
                let id = id_field(&args, "id")?;
                let mut chat = chat_json(store, id)?;
                if args.get("includeMessages").and_then(Value::as_bool) == Some(true) {
                    let limit = args.get("messageLimit").and_then(Value::as_u64).unwrap_or(100);
                    let messages = store
                        .messages_last(ChatId(id), limit)
                        .map_err(|e| store_error("reading the messages", e))?;
                    chat["messages"] = json!(messages);
                    chat["messageCount"] = json!(store.message_count(ChatId(id)).map_err(|e| store_error("counting", e))?);
                }
                Ok(Step::Answer(chat))
            })
            .await
        }),
    );
}

/// Create, change, delete, copy and restart: each a write plan the approval policy sees.
fn register_chat_writes(set: &mut McpTools) {
    set.add(
        "tavo_chat_create",
        format!("Create a chat: {CHAT_FIELDS}. Every id is checked before anything is written; the first character's greeting becomes message 0."),
        chat_schema(false),
        true,
        handler(|_cx: McpContext, args| async move {
            let fields = chat_fields(args);
            Ok(Step::Write(WritePlan {
                revision: None,
                before: None,
                after: Some(Value::Object(fields.clone())),
                commit: Box::new(move |cx: McpContext| {
                    Box::pin(async move {
                        cx.run_operation("tavo_chat_create", None, json!({"chat": fields})).await
                    })
                }),
            }))
        }),
    );
    set.add(
        "tavo_chat_update",
        format!("Change a chat (`id`): {CHAT_FIELDS}; lists replace the old ones."),
        chat_schema(true),
        true,
        handler(|cx: McpContext, args| async move {
            let id = id_field(&args, "id")?;
            let before = cx
                .blocking("reading the chat", move |store| chat_json(store, id))
                .await?;
            let mut fields = chat_fields(args);
            fields.shift_remove("id");
            let mut after = before.clone();
            if let Value::Object(a) = &mut after {
                a.extend(fields.clone());
            }
            Ok(Step::Write(WritePlan {
                revision: before["revision"].as_u64(),
                before: Some(before),
                after: Some(after),
                commit: Box::new(move |cx: McpContext| {
                    Box::pin(async move {
                        cx.run_operation(
                            "tavo_chat_update",
                            Some(ChatId(id)),
                            json!({"chat": fields}),
                        )
                        .await
                    })
                }),
            }))
        }),
    );
    set.add(
        "tavo_chat_delete",
        "Delete a chat (`id`) with its messages, variables and files.",
        json!({"type": "object", "properties": {"id": {"type": "integer", "minimum": 1}}, "required": ["id"], "additionalProperties": false}),
        true,
        handler(|cx: McpContext, args| async move {
            let id = id_field(&args, "id")?;
            let before = cx.blocking("reading the chat", move |store| chat_json(store, id)).await?;
            Ok(Step::Write(WritePlan {
                revision: before["revision"].as_u64(),
                before: Some(before),
                after: None,
                commit: Box::new(move |cx: McpContext| {
                    Box::pin(async move {
                        cx.blocking("deleting the chat", move |store| {
                            let deleted = store
                                .chat_delete(ChatId(id))
                                .map_err(|e| store_error("deleting the chat", e))?;
                            Ok(json!({"deleted": deleted, "id": id}))
                        })
                        .await
                    })
                }),
            }))
        }),
    );
    set.add(
        "tavo_chat_copy",
        "Copy a chat (`id`, optional new `name`): history, variables and files, as an independent branch.",
        json!({"type": "object", "properties": {"id": {"type": "integer", "minimum": 1}, "name": {"type": "string"}}, "required": ["id"], "additionalProperties": false}),
        true,
        handler(|cx: McpContext, args| async move {
            let id = id_field(&args, "id")?;
            let before = cx.blocking("reading the chat", move |store| chat_json(store, id)).await?;
            let name = args.get("name").and_then(Value::as_str).map(str::to_owned);
            Ok(Step::Write(WritePlan {
                revision: None,
                before: None,
                after: Some(json!({"copyOf": id, "name": name.clone().unwrap_or_else(|| before["name"].as_str().unwrap_or_default().to_owned())})),
                commit: Box::new(move |cx: McpContext| {
                    Box::pin(async move {
                        cx.blocking("copying the chat", move |store| {
                            let copy = crate::chats::clone_chat(store, ChatId(id), name)?;
                            chat_json(store, copy.0)
                        })
                        .await
                    })
                }),
            }))
        }),
    );
    set.add(
        "tavo_chat_reset",
        "Restart a chat (`id`): every message is deleted and the greeting starts it again; the characters, bindings and variables stay.",
        json!({"type": "object", "properties": {"id": {"type": "integer", "minimum": 1}}, "required": ["id"], "additionalProperties": false}),
        true,
        handler(|cx: McpContext, args| async move {
            let id = id_field(&args, "id")?;
            let count = cx
                .blocking("reading the chat", move |store| {
                    chat_json(store, id)?;
                    store.message_count(ChatId(id)).map_err(|e| store_error("counting", e))
                })
                .await?;
            Ok(Step::Write(WritePlan {
                revision: None,
                before: Some(json!({"messages": count})),
                after: Some(json!({"messages": "the greeting only"})),
                commit: Box::new(move |cx: McpContext| {
                    Box::pin(async move {
                        cx.blocking("restarting the chat", move |store| {
                            let greeting = crate::chats::reset_chat(store, ChatId(id))?;
                            Ok(json!({"id": id, "deletedMessages": count, "greetingMessageId": greeting.map(|m| m.0)}))
                        })
                        .await
                    })
                }),
            }))
        }),
    );
}

/// The chat an agent (or the app) made current.
fn register_current_chat(set: &mut McpTools) {
    set.add(
        "tavo_current_chat_get",
        "The current chat: the one last made current (by `tavo_current_chat_set` or the app), else the most recently written.",
        json!({"type": "object", "properties": {}, "additionalProperties": false}),
        false,
        handler(|cx: McpContext, _| async move {
            cx.blocking("reading the current chat", |store| {
                Ok(Step::Answer(match current_chat(store)? {
                    Some(id) => chat_json(store, id)?,
                    None => Value::Null,
                }))
            })
            .await
        }),
    );
    set.add(
        "tavo_current_chat_set",
        "Make a chat (`id`) the current one.",
        json!({"type": "object", "properties": {"id": {"type": "integer", "minimum": 1}}, "required": ["id"], "additionalProperties": false}),
        true,
        handler(|cx: McpContext, args| async move {
            let id = id_field(&args, "id")?;
            let was = cx
                .blocking("reading the chat", move |store| {
                    chat_json(store, id)?;
                    current_chat(store)
                })
                .await?;
            Ok(Step::Write(WritePlan {
                revision: None,
                before: Some(json!({"currentChat": was})),
                after: Some(json!({"currentChat": id})),
                commit: Box::new(move |cx: McpContext| {
                    Box::pin(async move {
                        cx.blocking("saving the current chat", move |store| {
                            store
                                .setting_set(CURRENT_CHAT, &json!(id))
                                .map_err(|e| store_error("saving the setting", e))?;
                            chat_json(store, id)
                        })
                        .await
                    })
                }),
            }))
        }),
    );
}

/// The current chat: the remembered one if it still exists, else the most recently written.
pub fn current_chat(store: &Store) -> Result<Option<i64>, ToolError> {
    if let Some(id) = store
        .setting_get(CURRENT_CHAT)
        .map_err(|e| store_error("reading the settings", e))?
        .and_then(|v| v.as_i64())
        && store
            .chat_get(ChatId(id))
            .map_err(|e| store_error("reading the chat", e))?
            .is_some()
    {
        return Ok(Some(id));
    }
    let list = store
        .asset_summaries(tavo_model::AssetKind::Chat)
        .map_err(|e| store_error("listing the chats", e))?;
    Ok(list
        .into_iter()
        .max_by(|a, b| a.updated_at.cmp(&b.updated_at))
        .map(|c| c.id))
}

/// The message an argument set targets: `id` (stable) or `index` (0-based floor; negative from
/// the end); the id wins.
fn target_message(
    store: &Store,
    chat: ChatId,
    args: &Map<String, Value>,
) -> Result<i64, ToolError> {
    if let Some(v) = args.get("id").filter(|v| !v.is_null()) {
        return v.as_i64().filter(|i| *i > 0).ok_or_else(|| {
            ToolError::invalid_at("id", "positive integer", crate::error::json_type_name(v))
        });
    }
    let Some(v) = args.get("index").filter(|v| !v.is_null()) else {
        return Err(ToolError::invalid_at(
            "id",
            "a message id or an index",
            "missing",
        ));
    };
    let index = v.as_i64().ok_or_else(|| {
        ToolError::invalid_at("index", "integer", crate::error::json_type_name(v))
    })?;
    let count = store
        .message_count(chat)
        .map_err(|e| store_error("counting", e))? as i64;
    let floor = if index < 0 { count + index } else { index };
    if floor < 0 || floor >= count {
        return Err(ToolError::new(
            ErrorCode::ResourceNotFound,
            format!("chat {chat} has no message at index {index} (it has {count})"),
        ));
    }
    let found = store
        .messages_range(chat, floor as u64, Some(floor as u64))
        .map_err(|e| store_error("reading the messages", e))?;
    found
        .first()
        .and_then(|m| m.id)
        .map(|m| m.0)
        .ok_or_else(|| ToolError::internal("reading the message"))
}

fn chat_id(args: &Map<String, Value>) -> Result<ChatId, ToolError> {
    id_field(args, "chatId").map(ChatId)
}

fn with_chat(mut schema: Value) -> Value {
    // An operation without arguments may have no `properties` at all: `chatId` still needs one,
    // or the schema would require a field its `additionalProperties: false` forbids.
    if let Some(props) = schema.as_object_mut().and_then(|s| {
        s.entry("properties")
            .or_insert_with(|| json!({}))
            .as_object_mut()
    }) {
        props.insert(
            "chatId".into(),
            json!({"type": "integer", "minimum": 1, "description": "The chat."}),
        );
    }
    let mut required: Vec<Value> = schema
        .get("required")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    required.insert(0, json!("chatId"));
    schema["required"] = Value::Array(required);
    schema
}

fn message_target_schema(extra: Value) -> Value {
    let mut props = json!({
        "id": {"type": "integer", "minimum": 1, "description": "The message's stable id (wins over index)."},
        "index": {"type": "integer", "description": "0-based position; negative counts from the end."},
    });
    if let (Some(p), Value::Object(e)) = (props.as_object_mut(), extra) {
        p.extend(e);
    }
    with_chat(json!({"type": "object", "properties": props, "additionalProperties": false}))
}

fn register_messages(set: &mut McpTools) {
    set.add(
        "tavo_message_get",
        "Read one message of a chat by `id` or `index`.",
        message_target_schema(json!({})),
        false,
        handler(|cx: McpContext, args| async move {
            let chat = chat_id(&args)?;
            let id = cx
                .blocking("finding the message", move |store| {
                    target_message(store, chat, &args)
                })
                .await?;
            Ok(Step::Answer(
                cx.run_operation("tavo_message_get", Some(chat), json!({"id": id}))
                    .await?,
            ))
        }),
    );
    set.add(
        "tavo_message_update",
        "Change one message (`id` or `index`): `content`, and optionally `reasoning` and `hidden`. The chat's edit regex rules apply, as in the app.",
        message_target_schema(json!({"content": {"type": "string"}, "reasoning": {"type": ["string", "null"]}, "hidden": {"type": ["boolean", "null"]}})),
        true,
        handler(|cx: McpContext, args| async move {
            let chat = chat_id(&args)?;
            let Some(Value::String(content)) = args.get("content").cloned() else {
                return Err(ToolError::invalid_at("content", "string (required)", "missing"));
            };
            let (id, before, args) = cx
                .blocking("finding the message", move |store| {
                    let id = target_message(store, chat, &args)?;
                    let before = store.message_get(MessageId(id)).map_err(|e| store_error("reading", e))?;
                    Ok((id, before, args))
                })
                .await?;
            let before = before.map(|m| json!(m));
            let mut message = json!({"id": id, "content": content});
            for k in ["reasoning", "hidden"] {
                if let Some(v) = args.get(k).filter(|v| !v.is_null()) {
                    message[k] = v.clone();
                }
            }
            let mut after = before.clone().unwrap_or(json!({}));
            if let (Value::Object(a), Value::Object(m)) = (&mut after, &message) {
                a.extend(m.clone());
            }
            Ok(Step::Write(WritePlan {
                revision: before.as_ref().and_then(|b| b["revision"].as_u64()),
                before,
                after: Some(after),
                commit: Box::new(move |cx: McpContext| {
                    Box::pin(async move {
                        cx.run_operation("tavo_message_update", Some(chat), json!({"message": message})).await
                    })
                }),
            }))
        }),
    );
    set.add(
        "tavo_message_delete",
        "Delete one message (`id` or `index`); the later ones move up.",
        message_target_schema(json!({})),
        true,
        handler(|cx: McpContext, args| async move {
            let chat = chat_id(&args)?;
            let (id, before) = cx
                .blocking("finding the message", move |store| {
                    let id = target_message(store, chat, &args)?;
                    let m = store
                        .message_get(MessageId(id))
                        .map_err(|e| store_error("reading", e))?;
                    Ok((id, m.map(|m| json!(m))))
                })
                .await?;
            Ok(Step::Write(WritePlan {
                revision: None,
                before,
                after: None,
                commit: Box::new(move |cx: McpContext| {
                    Box::pin(async move {
                        cx.run_operation("tavo_message_delete", Some(chat), json!({"id": id}))
                            .await
                    })
                }),
            }))
        }),
    );
}

/// Tools that are the model door's operation of the same name run for `chatId`.
fn register_chat_scoped(set: &mut McpTools, registry: &crate::Registry) {
    let same: [(&str, &str); 10] = [
        (
            "tavo_message_find",
            "Find messages of a chat (`chatId`) by floor range and filter, as `tavo.message.find`.",
        ),
        (
            "tavo_message_count",
            "How many messages a chat (`chatId`) has.",
        ),
        (
            "tavo_message_append",
            "Add a message at the end of a chat (`chatId`): `message: {content, role?, characterId?, …}`. The chat's receive regex rules apply.",
        ),
        (
            "tavo_memory_get",
            "A chat's (`chatId`) long-term memory: `{id, enabled, memories}`.",
        ),
        (
            "tavo_memory_update",
            "Change a chat's (`chatId`) long-term memory: `memory: {enabled?, memories?}` (the list replaces the old one).",
        ),
        (
            "tavo_memory_append",
            "Add memories to a chat's (`chatId`) long-term memory: `memories: [text, …]`.",
        ),
        ("tavo_input_get", "The composer draft of a chat (`chatId`)."),
        (
            "tavo_input_set",
            "Replace the composer draft of a chat (`chatId`): `text`.",
        ),
        (
            "tavo_input_append",
            "Append `text` to the composer draft of a chat (`chatId`).",
        ),
        (
            "tavo_input_clear",
            "Empty the composer draft of a chat (`chatId`).",
        ),
    ];
    for (name, description) in same {
        let Some(op) = registry.get(name) else {
            continue;
        };
        let writes = op.safety().writes();
        let schema = with_chat(op.schema().clone());
        let tool = name.to_owned();
        set.add(
            name,
            description,
            schema,
            writes,
            handler(move |cx: McpContext, mut args| {
                let tool = tool.clone();
                async move {
                    let chat = chat_id(&args)?;
                    args.shift_remove("chatId");
                    let exists = cx
                        .blocking("reading the chat", move |store| {
                            chat_json(store, chat.get())
                        })
                        .await?;
                    if !writes {
                        let v = cx
                            .run_operation(&tool, Some(chat), Value::Object(args))
                            .await?;
                        return Ok(Step::Answer(v));
                    }
                    Ok(Step::Write(WritePlan {
                        revision: None,
                        before: None,
                        after: Some(json!({"chat": exists["id"], "call": tool, "arguments": args})),
                        commit: Box::new(move |cx: McpContext| {
                            Box::pin(async move {
                                cx.run_operation(&tool, Some(chat), Value::Object(args))
                                    .await
                            })
                        }),
                    }))
                }
            }),
        );
    }
    set.add(
        "tavo_input_send",
        "Send a chat's composer (`chatId`) as the user would press Send: `text`, or the saved draft when absent. \
         With the chat open in the app, its plugins' input:beforeSend hooks run first (source \"mcp\") and may rewrite or cancel it. \
         `/imagine <prompt>` makes an image into the chat instead of a reply. \
         Answers {ok: true, messageId, replyId, via}, for /imagine {ok: true, messageId, image, via}, or {ok: false, reason: \"cancelled\", cancelledBy, message}.",
        json!({"type": "object", "properties": {
            "chatId": {"type": "integer", "minimum": 1},
            "text": {"type": "string", "description": "What to send (default: the composer draft)."}
        }, "required": ["chatId"], "additionalProperties": false}),
        true,
        handler(|cx: McpContext, args| async move {
            let chat = chat_id(&args)?;
            let text = args.get("text").and_then(Value::as_str).map(str::to_owned);
            let draft = cx
                .blocking("reading the chat", move |store| {
                    chat_json(store, chat.get())?;
                    store
                        .chat_state_get(chat, crate::ops::input::DRAFT_KEY)
                        .map(|v| v.and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default())
                        .map_err(|e| store_error("reading the draft", e))
                })
                .await?;
            // The send's own check, so a dry run is refused exactly as the send would be.
            let (sent, _) = crate::ops::input::outgoing_text(text.clone(), false, || Ok(draft.clone()))?;
            Ok(Step::Write(WritePlan {
                revision: None,
                before: Some(json!({"draft": draft})),
                after: Some(json!({"send": sent, "chat": chat})),
                commit: Box::new(move |cx: McpContext| {
                    Box::pin(async move {
                        let input = cx.input.clone().ok_or_else(|| {
                            ToolError::new(
                                ErrorCode::Unavailable,
                                "tavo_input_send needs a running reply engine: connect to `tavo serve`'s /mcp, or use tavo_message_append over stdio",
                            )
                        })?;
                        input.send(chat, text).await
                    })
                }),
            }))
        }),
    );
}
