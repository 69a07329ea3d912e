//! Group chats (Tavo §12), the library side: muting and unmuting members, the reply mode, and
//! the greetings a new group chat starts with. Who answers a reply is the engine's
//! (`tavo_engine::group`); this module only writes what it reads.
//!
//! - **Muted members** are kept as ids in the chat's `mutedCharacterIds` (the key the prompt's
//!   `{{groupNotMuted}}` reads). A muted member never answers unless it is chosen explicitly
//!   (`tavo reply --speaker`, the reply route's `speaker`).
//! - **Greetings.** SillyTavern starts an empty group chat with every member's greeting, in
//!   member order; Tavo's docs only say that `groupOnlyGreetings` are used in group chats. A
//!   new group chat therefore gets one greeting message per member that has one: the member's
//!   group-only greetings first, then its first message and alternate greetings, as swipes of
//!   that member's message ([`crate::chats::greeting_message_with`] per member).

use serde_json::Value;
use tavo_model::{Character, CharacterId, ChatId, Message, Persona};
use tavo_store::{AssetKind, Store, StoreError};

use crate::context::store_error;
use crate::error::{ErrorCode, ToolError};

/// Mutes (`muted: true`) or unmutes a member of `chat`; returns the chat as stored. Muting a
/// muted member (or unmuting an unmuted one) changes nothing and is not an error.
pub fn set_muted(
    store: &Store,
    chat: ChatId,
    character: CharacterId,
    muted: bool,
) -> Result<Value, ToolError> {
    let r = store.write_with(|tx| -> Result<Result<Value, ToolError>, StoreError> {
        let Some(mut c) = tx.chat_get(chat)? else {
            return Ok(Err(ToolError::not_found("chat", chat)));
        };
        if !c.characters.iter().any(|m| m.id == character) {
            return Ok(Err(not_a_member(&c, character)));
        }
        let mut ids: Vec<CharacterId> = c.muted();
        let before = ids.clone();
        ids.retain(|id| *id != character);
        if muted {
            ids.push(character);
        }
        // Members in membership order, so the stored list does not depend on the clicks.
        ids.sort_by_key(|id| c.characters.iter().position(|m| m.id == *id));
        if ids != before {
            c.set_muted(&ids);
            tx.update(&c, None)?;
        }
        Ok(Ok(tx.asset_json(AssetKind::Chat, chat.0)?.ok_or_else(
            || StoreError::NotFound {
                kind: "chat",
                id: chat.to_string(),
            },
        )?))
    });
    r.map_err(|e| store_error("muting the member", e))?
}

/// `invalid_arguments` naming the chat's members, for a character that is not one of them.
pub fn not_a_member(chat: &tavo_model::Chat, character: CharacterId) -> ToolError {
    let members: Vec<String> = chat
        .characters
        .iter()
        .map(|m| format!("{} ({})", m.id, m.name))
        .collect();
    ToolError::new(
        ErrorCode::InvalidArguments,
        format!(
            "character {character} is not a member of chat {}; its members: {}",
            chat.id.map(|i| i.0).unwrap_or_default(),
            members.join(", ")
        ),
    )
    .with_details(serde_json::json!({"path": "character", "character": character.0}))
}

/// The greetings a new chat starts with: the first character's greeting in a 1:1 chat; in a
/// group chat one message per member that has a greeting, in member order, each rendered with
/// that member as `{{char}}`.
pub fn greetings(
    characters: &[Character],
    persona: Option<&Persona>,
    now: chrono::DateTime<chrono::FixedOffset>,
    ejs: bool,
) -> Vec<Message> {
    if characters.len() <= 1 {
        return crate::chats::greeting_message_with(characters, persona, now, ejs)
            .into_iter()
            .collect();
    }
    (0..characters.len())
        .filter_map(|i| {
            // The member first (its greeting, its name as {{char}}), the others after it so
            // that {{group}} still names everyone.
            let mut members = Vec::with_capacity(characters.len());
            members.push(characters[i].clone());
            members.extend(
                characters
                    .iter()
                    .enumerate()
                    .filter(|(k, _)| *k != i)
                    .map(|(_, c)| c.clone()),
            );
            crate::chats::greeting_message_with(&members, persona, now, ejs)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(id: i64, name: &str, first: &str, group: &[&str]) -> Character {
        Character {
            id: Some(CharacterId(id)),
            name: name.into(),
            first_mes: first.into(),
            group_only_greetings: group.iter().map(|s| (*s).to_owned()).collect(),
            ..Character::default()
        }
    }

    fn now() -> chrono::DateTime<chrono::FixedOffset> {
        chrono::DateTime::parse_from_rfc3339("2026-03-05T10:20:30+00:00").unwrap_or_default()
    }

    #[test]
    fn every_member_with_a_greeting_greets_in_member_order() {
        let a = member(1, "Ann", "Hi, I am {{char}}", &[]);
        let b = member(2, "Bo", "", &[]);
        let c = member(3, "Cy", "Hey", &["All of you, {{char}} here"]);
        let g = greetings(&[a, b, c], None, now(), true);
        let texts: Vec<&str> = g.iter().map(|m| m.content.as_str()).collect();
        assert_eq!(texts, ["Hi, I am Ann", "All of you, Cy here"]);
        assert_eq!(g[1].character_id, Some(CharacterId(3)));
        assert_eq!(g[1].swipes, ["All of you, Cy here", "Hey"]);
    }

    #[test]
    fn a_one_to_one_chat_keeps_its_single_greeting() {
        let g = greetings(
            &[member(1, "Ann", "Hi", &["group only"])],
            None,
            now(),
            true,
        );
        assert_eq!(g.len(), 1);
        assert_eq!(g[0].content, "Hi");
    }
}
