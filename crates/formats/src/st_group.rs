//! SillyTavern group definitions (`data/<user>/groups/<id>.json`): `name`, `members` (the
//! members' avatar file names, `Seraphina.png`), `disabled_members` (muted), `activation_strategy`
//! (0 natural, 1 list, 2 manual, 3 pooled), `chats` (the names of its chat files, kept in
//! `group chats/<name>.jsonl`) and `chat_id` (the open one).
//!
//! A group becomes Tavo group chats: one per chat file given with it (see
//! [`ImportedGroup::with_chat`]), else one empty chat named after the group. Members are named
//! by their avatar file name without the extension (SillyTavern names a card's file after the
//! character), matched against the library by the store like a chat's speakers. Reply modes:
//! natural → `natural`, list → `all` (every member answers, in order), manual → `designated`
//! (a member speaks only when asked), pooled → `natural` with a warning (Tavo has no pooled
//! order). The whole definition is kept in `chat.extra.sillyTavernGroup`.

use crate::chat::ImportedChat;
use crate::error::{FormatError, Result};
use crate::value::{Ctx, type_name};
use serde_json::Value;
use tavo_model::{Chat, ReplyMode};

/// Key of the kept group definition in `Chat::extra`.
pub const GROUP_KEY: &str = "sillyTavernGroup";

/// A group definition read from its file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ImportedGroup {
    /// The group's chat as the definition describes it: name, reply mode, the kept
    /// definition; `character_names` are the members (avatar file names without extension).
    pub chat: ImportedChat,
    /// The members as the file names them (`Seraphina.png`), in order.
    pub members: Vec<String>,
    /// The muted members' names (from `disabled_members`, without extension).
    pub muted: Vec<String>,
    /// The group's chat file names without `.jsonl` (`chats`, else `chat_id`).
    pub chat_files: Vec<String>,
}

impl ImportedGroup {
    /// One of the group's chats: the messages of `file` (its `.jsonl`, already read) with the
    /// group's members first, then any other speaker, the group's reply mode and definition,
    /// and the chat file's own name and header.
    pub fn with_chat(&self, mut file: ImportedChat) -> ImportedChat {
        let mut names = self.chat.character_names.clone();
        for n in file.character_names.drain(..) {
            if !names.contains(&n) {
                names.push(n);
            }
        }
        file.character_names = names;
        file.chat.reply_mode = self.chat.chat.reply_mode;
        if let Some(g) = self.chat.chat.extra.get(GROUP_KEY) {
            file.chat.extra.insert(GROUP_KEY.into(), g.clone());
        }
        file
    }
}

/// Whether a parsed JSON value is a SillyTavern group definition.
pub fn looks_like_group(v: &Value) -> bool {
    v.get("members").is_some()
        && (v.get("activation_strategy").is_some()
            || v.get("disabled_members").is_some()
            || v.get("chats").is_some()
            || v.get("chat_id").is_some())
        && v.get("mes").is_none()
}

/// The chat file names of a group definition (`chats`, else `chat_id`), without `.jsonl`;
/// `None` when the bytes are not a group definition. For doors that look for the chat files.
pub fn chat_file_names(bytes: &[u8]) -> Option<Vec<String>> {
    let v: Value = serde_json::from_slice(crate::text::strip_bom(bytes)).ok()?;
    looks_like_group(&v).then(|| chat_names(&v))
}

fn chat_names(v: &Value) -> Vec<String> {
    let mut out: Vec<String> = v
        .get("chats")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    if out.is_empty()
        && let Some(id) = v.get("chat_id").and_then(Value::as_str)
    {
        out.push(id.to_owned());
    }
    out.iter_mut().for_each(|n| {
        if let Some(s) = n.strip_suffix(".jsonl") {
            *n = s.to_owned();
        }
    });
    out
}

fn member_list(ctx: &mut Ctx, v: &Value, key: &str) -> Result<Vec<String>> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => {
            let mut out = Vec::new();
            for (i, m) in a.iter().enumerate() {
                match m.as_str().filter(|s| !s.trim().is_empty()) {
                    Some(s) => out.push(s.to_owned()),
                    None => ctx.warn(
                        "group.member",
                        &format!("{key}[{i}]"),
                        format!(
                            "expected an avatar file name, found {}; skipped",
                            type_name(m)
                        ),
                    ),
                }
            }
            Ok(out)
        }
        Some(other) => Err(FormatError::at(
            key,
            format!(
                "expected an array of avatar file names, found {}",
                type_name(other)
            ),
        )),
    }
}

/// Reads a group definition; `default_name` names a group without `name`.
pub fn from_st_group(ctx: &mut Ctx, v: &Value, default_name: &str) -> Result<ImportedGroup> {
    let members = member_list(ctx, v, "members")?;
    let disabled = member_list(ctx, v, "disabled_members")?;
    let reply_mode = match v.get("activation_strategy") {
        None | Some(Value::Null) => ReplyMode::Natural,
        Some(s) => match s.as_u64() {
            Some(0) => ReplyMode::Natural,
            Some(1) => ReplyMode::All,
            Some(2) => ReplyMode::Designated,
            Some(3) => {
                ctx.warn(
                    "group.pooled",
                    "activation_strategy",
                    "SillyTavern's pooled order (each member once until the user speaks) has no Tavo reply mode; natural was used",
                );
                ReplyMode::Natural
            }
            _ => {
                ctx.warn(
                    "group.activation",
                    "activation_strategy",
                    format!("unknown activation strategy {s}; natural was used"),
                );
                ReplyMode::Natural
            }
        },
    };
    for m in &disabled {
        if !members.contains(m) {
            ctx.warn(
                "group.muted",
                "disabled_members",
                format!("{m:?} is muted but not a member; ignored"),
            );
        }
    }
    let name = v
        .get("name")
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .unwrap_or(default_name)
        .to_owned();
    let mut chat = Chat {
        name,
        reply_mode,
        ..Default::default()
    };
    chat.extra.insert(GROUP_KEY.into(), v.clone());
    let stem = |m: &String| crate::text::file_stem(m);
    Ok(ImportedGroup {
        chat: ImportedChat {
            chat,
            messages: Vec::new(),
            character_names: members.iter().map(stem).collect(),
            user_name: None,
        },
        muted: disabled
            .iter()
            .filter(|m| members.contains(m))
            .map(stem)
            .collect(),
        members,
        chat_files: chat_names(v),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn members_mode_and_mutes() {
        let v = json!({"id": "1", "name": "Pub", "members": ["Ann.png", "Bo Bo.webp", 3],
            "disabled_members": ["Bo Bo.webp", "Zed.png"], "activation_strategy": 1,
            "chats": ["2024-7-19@22h51m00s"], "chat_id": "2024-7-19@22h51m00s"});
        assert!(looks_like_group(&v));
        let mut ctx = Ctx::default();
        let g = from_st_group(&mut ctx, &v, "g").unwrap();
        assert_eq!(g.chat.chat.name, "Pub");
        assert_eq!(g.chat.chat.reply_mode, ReplyMode::All);
        assert_eq!(g.chat.character_names, ["Ann", "Bo Bo"]);
        assert_eq!(g.muted, ["Bo Bo"]);
        assert_eq!(g.chat_files, ["2024-7-19@22h51m00s"]);
        let codes: Vec<&str> = ctx.warnings.iter().map(|w| w.code.as_str()).collect();
        assert_eq!(codes, ["group.member", "group.muted"]);
        for (s, mode) in [
            (0, ReplyMode::Natural),
            (2, ReplyMode::Designated),
            (3, ReplyMode::Natural),
        ] {
            let g = from_st_group(
                &mut Ctx::default(),
                &json!({"members": [], "activation_strategy": s}),
                "g",
            )
            .unwrap();
            assert_eq!(g.chat.chat.reply_mode, mode);
        }
        let e = from_st_group(
            &mut Ctx::default(),
            &json!({"members": "x", "chats": []}),
            "g",
        )
        .unwrap_err();
        assert_eq!(e.path, "members");
    }

    #[test]
    fn a_chat_file_gets_the_group() {
        let g = from_st_group(
            &mut Ctx::default(),
            &json!({"members": ["A.png"], "activation_strategy": 2, "chats": ["c"]}),
            "g",
        )
        .unwrap();
        let file = ImportedChat {
            chat: Chat {
                name: "c".into(),
                ..Default::default()
            },
            character_names: vec!["B".into(), "A".into()],
            ..Default::default()
        };
        let c = g.with_chat(file);
        assert_eq!(c.character_names, ["A", "B"]);
        assert_eq!(c.chat.reply_mode, ReplyMode::Designated);
        assert_eq!(c.chat.name, "c");
        assert!(c.chat.extra.contains_key(GROUP_KEY));
        assert_eq!(
            chat_file_names(br#"{"members":[],"chat_id":"x.jsonl"}"#),
            Some(vec!["x".to_owned()])
        );
        assert_eq!(chat_file_names(b"{}"), None);
    }
}
