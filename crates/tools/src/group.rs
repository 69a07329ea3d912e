//! Group chats (Tavo §12), the library side: muting and unmuting members (the reply mode is a
//! chat field, set through [`crate::chats`]). Who answers a reply is the engine's
//! (`tavo_engine::group`); this module only writes what it reads.
//!
//! - **Muted members** are kept as ids in the chat's `mutedCharacterIds` (the key the prompt's
//!   `{{groupNotMuted}}` reads). A muted member never answers unless it is chosen explicitly
//!   (`tavo reply --speaker`, the reply route's `speaker`).
//! - **Greetings** of a new group chat (every member's) are [`crate::greetings`]' business.

use serde_json::Value;
use tavo_model::{CharacterId, ChatId};
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
