//! SillyTavern chat files (`.jsonl`: a header line, then one message per line) ↔ Tavo chats.
//!
//! Tolerated: header-less (old group) chats, zero-byte and header-only files, CRLF, blank lines,
//! a missing trailing newline, `is_system` as `true`/`false`/`""`/missing, humanized dates
//! (kept verbatim). The header is kept whole in `chat.extra["sillyTavernHeader"]`.

use crate::error::{FormatError, Result};
use crate::fields::{self, shelter};
use crate::value::{Ctx, append_extra, child, type_name, without};
use serde_json::{Map, Value, json};
use tavo_model::{Chat, Message, Role};

/// Key of the kept SillyTavern header in `Chat::extra`.
pub const HEADER_KEY: &str = "sillyTavernHeader";

/// A chat read from a file: the chat, its messages in order, and the names to match
/// characters and persona by (the file has no ids).
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportedChat {
    /// Chat fields (name, kept header …).
    pub chat: Chat,
    /// Messages in file order.
    pub messages: Vec<Message>,
    /// Character names to match by name: the header's `character_name` (unless `unused`),
    /// then every other distinct speaker of assistant messages, in order of appearance.
    pub character_names: Vec<String>,
    /// The user's name (header `user_name` unless `unused`, else the first user speaker).
    pub user_name: Option<String>,
}

fn is_header(v: &Value) -> bool {
    v.as_object().is_some_and(|o| {
        !o.contains_key("mes")
            && (o.contains_key("chat_metadata")
                || o.contains_key("user_name")
                || o.contains_key("character_name"))
    })
}

/// Reads one message line. Takes the parsed value by value so that text moves into the message
/// instead of being copied (a 100,000-message chat is mostly `mes` text).
fn message_from_st(ctx: &mut Ctx, v: Value, path: &str) -> Result<Message> {
    let mut extra = match v {
        Value::Object(o) => o,
        other => {
            return Err(FormatError::at(
                path,
                format!("expected an object, found {}", type_name(&other)),
            ));
        }
    };
    let is_user = ctx.bool_or(
        extra.shift_remove("is_user").as_ref(),
        &child(path, "is_user"),
        false,
    )?;
    let hidden = match extra.shift_remove("is_system") {
        Some(Value::Bool(b)) => b,
        None => false,
        Some(other) => {
            // `""` and other non-booleans: keep the raw value so it is written back as found.
            extra.insert("is_system".into(), other);
            false
        }
    };
    let name = match extra.shift_remove("name") {
        Some(Value::String(s)) => Some(s),
        other => ctx.opt_string(other.as_ref(), &child(path, "name"))?,
    };
    let content = match extra.shift_remove("mes") {
        Some(Value::String(s)) => s,
        other => ctx.string(other.as_ref(), &child(path, "mes"))?,
    };
    let send_date = match extra.shift_remove("send_date") {
        Some(Value::String(s)) => Some(s),
        None => None,
        Some(other) => {
            extra.insert("send_date".into(), other);
            None
        }
    };
    let swipes = match extra.shift_remove("swipes") {
        Some(list @ Value::Array(_)) => ctx.strings(Some(&list), &child(path, "swipes"))?,
        None => Vec::new(),
        Some(other) => {
            extra.insert("swipes".into(), other);
            Vec::new()
        }
    };
    let swipe_id = match extra.shift_remove("swipe_id") {
        Some(Value::Number(n)) if n.as_u64().is_some() => n.as_u64(),
        None => None,
        Some(other) => {
            extra.insert("swipe_id".into(), other);
            None
        }
    };
    let mut reasoning = None;
    let mut narrator = false;
    if let Some(Value::Object(x)) = extra.get_mut("extra") {
        narrator = x.get("type").and_then(Value::as_str) == Some("narrator");
        if let Some(r) = x.shift_remove("reasoning") {
            match r {
                Value::String(s) => reasoning = Some(s),
                Value::Null => {
                    x.insert("reasoning".into(), Value::Null);
                }
                other => {
                    return Err(FormatError::at(
                        child(path, "extra.reasoning"),
                        format!("expected a string, found {}", type_name(&other)),
                    ));
                }
            }
        }
    }
    // An `extra` that held only the reasoning is rebuilt on export.
    if reasoning.is_some()
        && extra
            .get("extra")
            .and_then(Value::as_object)
            .is_some_and(Map::is_empty)
    {
        extra.shift_remove("extra");
    }
    let role = if is_user {
        Role::User
    } else if narrator {
        Role::System
    } else {
        Role::Assistant
    };
    Ok(Message {
        role,
        name,
        content,
        reasoning,
        hidden,
        send_date,
        swipes,
        swipe_id,
        extra: shelter(extra, fields::MESSAGE),
        ..Default::default()
    })
}

/// Reads a SillyTavern `.jsonl` chat.
pub fn from_jsonl(ctx: &mut Ctx, text: &str, default_name: &str) -> Result<ImportedChat> {
    let mut header: Option<Map<String, Value>> = None;
    let mut messages = Vec::new();
    let mut first = true;
    for (n, raw) in text.split('\n').enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if line.trim().is_empty() {
            continue;
        }
        let path = format!("line {}", n + 1);
        let v: Value = serde_json::from_str(line)
            .map_err(|e| FormatError::at(&path, format!("not valid JSON: {e}")))?;
        if first && is_header(&v) {
            header = v.as_object().cloned();
        } else {
            messages.push(message_from_st(ctx, v, &path)?);
        }
        first = false;
    }
    if text.trim().is_empty() {
        ctx.warn(
            "chat.empty",
            "",
            "the chat file is empty; an empty chat was created",
        );
    } else if header.is_none() {
        ctx.warn(
            "chat.no-header",
            "line 1",
            "the chat has no header line (an old group chat); names come from the messages",
        );
    }
    let known = |s: Option<&str>| {
        s.filter(|s| !s.trim().is_empty() && *s != "unused")
            .map(str::to_owned)
    };
    let header_user = known(
        header
            .as_ref()
            .and_then(|h| h.get("user_name"))
            .and_then(Value::as_str),
    );
    let header_char = known(
        header
            .as_ref()
            .and_then(|h| h.get("character_name"))
            .and_then(Value::as_str),
    );
    let mut character_names: Vec<String> = header_char.into_iter().collect();
    for m in messages.iter().filter(|m| m.role == Role::Assistant) {
        if let Some(name) = m.name.as_deref().filter(|s| !s.trim().is_empty())
            && !character_names.iter().any(|c| c == name)
        {
            character_names.push(name.to_owned());
        }
    }
    let user_name = header_user.or_else(|| {
        messages
            .iter()
            .find(|m| m.role == Role::User)
            .and_then(|m| m.name.clone())
    });
    let mut chat = Chat {
        name: default_name.to_owned(),
        ..Default::default()
    };
    if let Some(h) = header {
        chat.creation_date = h
            .get("create_date")
            .and_then(Value::as_str)
            .and_then(crate::dates::parse_st_date);
        chat.extra.insert(HEADER_KEY.into(), Value::Object(h));
    }
    for (i, m) in messages.iter_mut().enumerate() {
        m.floor = Some(i as u64);
    }
    Ok(ImportedChat {
        chat,
        messages,
        character_names,
        user_name,
    })
}

pub(crate) fn speaker_name(chat: &Chat, m: &Message) -> String {
    if let Some(n) = &m.name {
        return n.clone();
    }
    match m.role {
        Role::User => chat
            .persona
            .as_ref()
            .map(|p| p.name.clone())
            .unwrap_or_else(|| "You".into()),
        Role::System => "System".into(),
        Role::Assistant => m
            .character_id
            .and_then(|id| chat.characters.iter().find(|c| c.id == id))
            .or_else(|| chat.characters.first())
            .map(|c| c.name.clone())
            .unwrap_or_else(|| "Assistant".into()),
    }
}

fn message_to_st(chat: &Chat, m: &Message) -> Map<String, Value> {
    let mut o = Map::new();
    o.insert("name".into(), json!(speaker_name(chat, m)));
    o.insert("is_user".into(), json!(m.role == Role::User));
    match m.extra.get("is_system") {
        Some(raw) if !m.hidden => o.insert("is_system".into(), raw.clone()),
        _ => o.insert("is_system".into(), json!(m.hidden)),
    };
    if let Some(d) = &m.send_date {
        o.insert("send_date".into(), json!(d));
    }
    o.insert("mes".into(), json!(m.content));
    if !m.swipes.is_empty() {
        o.insert("swipes".into(), json!(m.swipes));
    }
    if let Some(id) = m.swipe_id {
        o.insert("swipe_id".into(), json!(id));
    }
    let mut extra = without(&m.extra, &["is_system"]);
    let mut x = match extra.shift_remove("extra") {
        Some(Value::Object(x)) => x,
        _ => Map::new(),
    };
    if let Some(r) = &m.reasoning {
        x.insert("reasoning".into(), json!(r));
    }
    if m.role == Role::System && x.get("type").and_then(Value::as_str) != Some("narrator") {
        x.insert("type".into(), json!("narrator"));
    }
    if !x.is_empty() || m.extra.contains_key("extra") {
        extra.insert("extra".into(), Value::Object(x));
    }
    append_extra(&mut o, &extra);
    o
}

/// Writes a chat as SillyTavern `.jsonl` (header line, then messages, `\n` separated).
pub fn to_jsonl(chat: &Chat, messages: &[Message]) -> Result<Vec<u8>> {
    let header = match chat.extra.get(HEADER_KEY) {
        Some(Value::Object(h)) => Value::Object(h.clone()),
        _ => json!({
            "user_name": chat.persona.as_ref().map(|p| p.name.clone()).unwrap_or_else(|| "unused".into()),
            "character_name": chat.characters.first().map(|c| c.name.clone()).unwrap_or_else(|| "unused".into()),
            "create_date": chat.creation_date.map(|d| d.format("%Y-%-m-%-d@%Hh%Mm%Ss").to_string()),
            "chat_metadata": {}
        }),
    };
    let mut out =
        Vec::with_capacity(64 + messages.iter().map(|m| m.content.len() + 96).sum::<usize>());
    serde_json::to_writer(&mut out, &header).map_err(|e| FormatError::whole(e.to_string()))?;
    for m in messages {
        out.push(b'\n');
        let obj = message_to_st(chat, m);
        serde_json::to_writer(&mut out, &Value::Object(obj))
            .map_err(|e| FormatError::whole(e.to_string()))?;
    }
    out.push(b'\n');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_messages_reasoning_hidden() {
        let text = "{\"user_name\":\"unused\",\"character_name\":\"unused\",\"chat_metadata\":{\"integrity\":\"x\"}}\r\n\
            {\"name\":\"Bob\",\"is_user\":true,\"is_system\":false,\"send_date\":\"June 14, 2024 8:43am\",\"mes\":\"hi\"}\r\n\
            {\"name\":\"Seraphina\",\"is_user\":false,\"is_system\":true,\"mes\":\"yo\",\"swipes\":[\"yo\",\"hey\"],\"swipe_id\":0,\"extra\":{\"reasoning\":\"think\",\"api\":\"openai\"}}\r\n\
            {\"name\":\"Seraphina\",\"is_user\":false,\"is_system\":\"\",\"mes\":\"x\"}";
        let mut ctx = Ctx::default();
        let c = from_jsonl(&mut ctx, text, "chat").unwrap();
        assert_eq!(c.messages.len(), 3);
        assert_eq!(c.user_name.as_deref(), Some("Bob"));
        assert_eq!(c.character_names, vec!["Seraphina"]);
        assert_eq!(c.messages[1].reasoning.as_deref(), Some("think"));
        assert!(c.messages[1].hidden);
        assert_eq!(c.messages[1].swipes.len(), 2);
        assert!(!c.messages[2].hidden);
        let out = to_jsonl(&c.chat, &c.messages).unwrap();
        let again = from_jsonl(
            &mut Ctx::default(),
            std::str::from_utf8(&out).unwrap(),
            "chat",
        )
        .unwrap();
        assert_eq!(again.messages, c.messages);
        assert_eq!(to_jsonl(&again.chat, &again.messages).unwrap(), out);
        let line3: Value =
            serde_json::from_str(std::str::from_utf8(&out).unwrap().lines().nth(3).unwrap())
                .unwrap();
        assert_eq!(line3["is_system"], json!(""));
    }

    #[test]
    fn empty_and_headerless() {
        let mut ctx = Ctx::default();
        let c = from_jsonl(&mut ctx, "", "e").unwrap();
        assert!(c.messages.is_empty());
        assert_eq!(ctx.warnings[0].code, "chat.empty");
        let c = from_jsonl(
            &mut ctx,
            "{\"name\":\"A\",\"is_user\":false,\"mes\":\"m\"}",
            "g",
        )
        .unwrap();
        assert_eq!(c.messages.len(), 1);
        assert_eq!(c.character_names, vec!["A"]);
        let e = from_jsonl(&mut ctx, "{}\n{bad", "g").unwrap_err();
        assert_eq!(e.path, "line 2");
    }
}
