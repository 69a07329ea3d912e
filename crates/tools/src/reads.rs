//! The library's reads, one function per thing a door shows: a kind's listing, one asset, a
//! chat and its messages, the chat listing with member and message counts, a card's bound
//! lorebook and regex group, avatars and stored files.
//!
//! The doors (`tavo list|show|message list|chat`, the HTTP routes) call these instead of
//! opening transactions of their own, so what a read returns — and what "absent" means — is
//! decided once. An absent thing is `Ok(None)`, not an error: each door words its own
//! "not found" (the CLI points to `tavo list`, HTTP answers 404), while a failing store is
//! `internal_error` everywhere.

use serde_json::Value;
use tavo_model::{Character, CharacterId, Chat, ChatId, Message, MessageId, PersonaId};
use tavo_store::{AssetKind, AssetSummary, Avatar, CardBindings, FileScope, Store};

use crate::context::store_error;
use crate::error::ToolError;

/// Every asset of `kind`, newest id last: id, name, revision, dates, and for characters their
/// avatar, for lorebooks their entry count — without parsing each asset.
pub fn summaries(store: &Store, kind: AssetKind) -> Result<Vec<AssetSummary>, ToolError> {
    store
        .asset_summaries(kind)
        .map_err(|e| store_error("listing the library", e))
}

/// One asset as TavoJS-shaped JSON with its `id` and `revision`; `None` when there is none.
pub fn asset(store: &Store, kind: AssetKind, id: i64) -> Result<Option<Value>, ToolError> {
    store
        .asset_json(kind, id)
        .map_err(|e| store_error("reading the asset", e))
}

/// One chat; `None` when there is none.
pub fn chat(store: &Store, id: ChatId) -> Result<Option<Chat>, ToolError> {
    store
        .chat_get(id)
        .map_err(|e| store_error("reading the chat", e))
}

/// The id of the chat created last, if any (`tavo chat` without an id).
pub fn latest_chat(store: &Store) -> Result<Option<ChatId>, ToolError> {
    Ok(summaries(store, AssetKind::Chat)?
        .iter()
        .map(|c| ChatId(c.id))
        .max_by_key(|c| c.0))
}

/// One row of the chat listing.
#[derive(Debug, Clone)]
pub struct ChatListing {
    /// The chat's row (id, name, revision, dates).
    pub summary: AssetSummary,
    /// The chat itself (its members).
    pub chat: Chat,
    /// How many messages it holds.
    pub messages: u64,
}

/// Every chat, most recently updated first (then the newest id), with its members and
/// message count; only those with `member` among their characters when given. One
/// transaction, so the counts and the rows agree.
pub fn chats(store: &Store, member: Option<CharacterId>) -> Result<Vec<ChatListing>, ToolError> {
    let mut rows = store
        .read(|tx| {
            let mut rows = Vec::new();
            for summary in tx.asset_summaries(AssetKind::Chat)? {
                let id = ChatId(summary.id);
                let Some(chat) = tx.get::<Chat>(id)? else {
                    continue;
                };
                if member.is_some_and(|c| !chat.characters.iter().any(|m| m.id == c)) {
                    continue;
                }
                let messages = tx.message_count(id)?;
                rows.push(ChatListing {
                    summary,
                    chat,
                    messages,
                });
            }
            Ok(rows)
        })
        .map_err(|e| store_error("listing the chats", e))?;
    rows.sort_by(|a, b| {
        b.summary
            .updated_at
            .cmp(&a.summary.updated_at)
            .then(b.summary.id.cmp(&a.summary.id))
    });
    Ok(rows)
}

/// A page of a chat's messages.
#[derive(Debug, Clone, PartialEq)]
pub struct MessagePage {
    /// The messages, oldest first.
    pub messages: Vec<Message>,
    /// Messages in the chat.
    pub total: u64,
    /// The floor of the page's first message (older messages exist when it is above 0).
    pub start: u64,
}

/// The `limit` messages before floor `before` (the latest when `None`) of chat `chat`, read
/// in one transaction with `with` — what the page is shown with (the app's view reads the
/// chat's display rules here, so page and rules are one snapshot). `None` when the chat does
/// not exist.
pub fn message_page_with<T>(
    store: &Store,
    chat: ChatId,
    before: Option<u64>,
    limit: u64,
    with: impl FnOnce(&tavo_store::Tx<'_>) -> tavo_store::Result<T>,
) -> Result<Option<(MessagePage, T)>, ToolError> {
    store
        .read(|tx| {
            if tx.chat_get(chat)?.is_none() {
                return Ok(None);
            }
            let extra = with(tx)?;
            let total = tx.message_count(chat)?;
            let end = before.map_or(total, |b| b.min(total));
            let start = end.saturating_sub(limit);
            let messages = if end == 0 {
                Vec::new()
            } else {
                tx.messages_range(chat, start, Some(end - 1))?
            };
            Ok(Some((
                MessagePage {
                    messages,
                    total,
                    start,
                },
                extra,
            )))
        })
        .map_err(|e| store_error("reading the messages", e))
}

/// The `limit` messages before floor `before` (the latest when `None`); `None` when the chat
/// does not exist.
pub fn message_page(
    store: &Store,
    chat: ChatId,
    before: Option<u64>,
    limit: u64,
) -> Result<Option<MessagePage>, ToolError> {
    Ok(message_page_with(store, chat, before, limit, |_| Ok(()))?.map(|(page, ())| page))
}

/// Every message of a chat, oldest first; `None` when the chat does not exist.
pub fn all_messages(store: &Store, chat: ChatId) -> Result<Option<Vec<Message>>, ToolError> {
    store
        .read(|tx| {
            if tx.chat_get(chat)?.is_none() {
                return Ok(None);
            }
            tx.messages_all(chat).map(Some)
        })
        .map_err(|e| store_error("reading the messages", e))
}

/// The last `n` messages of a chat, oldest first (empty for a chat that does not exist).
pub fn last_messages(store: &Store, chat: ChatId, n: u64) -> Result<Vec<Message>, ToolError> {
    store
        .messages_last(chat, n)
        .map_err(|e| store_error("reading the messages", e))
}

/// One message by id, whichever chat holds it; `None` when there is none.
pub fn message(store: &Store, id: MessageId) -> Result<Option<Message>, ToolError> {
    store
        .message_get(id)
        .map_err(|e| store_error("reading the message", e))
}

/// The lorebook and regex group a character's card brought (what a new chat of it binds by
/// default); `None` when the character does not exist.
pub fn card_bindings(store: &Store, id: CharacterId) -> Result<Option<CardBindings>, ToolError> {
    store
        .read(|tx| {
            if tx.get::<Character>(id)?.is_none() {
                return Ok(None);
            }
            tx.card_bindings(&[id]).map(Some)
        })
        .map_err(|e| store_error("reading the card's bindings", e))
}

/// A character's avatar; `None` when it has none (or does not exist).
pub fn character_avatar(store: &Store, id: CharacterId) -> Result<Option<Avatar>, ToolError> {
    store
        .character_avatar_get(id)
        .map_err(|e| store_error("reading the avatar", e))
}

/// A persona's avatar; `None` when it has none (or does not exist).
pub fn persona_avatar(store: &Store, id: PersonaId) -> Result<Option<Avatar>, ToolError> {
    store
        .persona_avatar_get(id)
        .map_err(|e| store_error("reading the avatar", e))
}

/// A stored file's bytes (`tavo.file.url`); `None` when there is none. A name that breaks
/// the file-name rules is `invalid_arguments`.
pub fn file(store: &Store, scope: FileScope, name: &str) -> Result<Option<Vec<u8>>, ToolError> {
    store
        .files()
        .load(scope, name)
        .map_err(|e| store_error("reading the file", e))
}

/// What `/api/health` says of the library's database: `{kind: "sqlite"|"postgres", ok,
/// latencyMs, error?}` — a replica behind a load balancer whose database does not answer
/// reports it, so it can be taken out.
pub fn database_health(store: &Store) -> serde_json::Value {
    let kind = match store.dialect() {
        tavo_store::Dialect::Sqlite => "sqlite",
        tavo_store::Dialect::Postgres => "postgres",
    };
    match store.ping() {
        Ok(took) => serde_json::json!({
            "kind": kind,
            "ok": true,
            "latencyMs": (took.as_secs_f64() * 1000.0 * 100.0).round() / 100.0,
        }),
        Err(e) => {
            tracing::warn!("the database did not answer the health check: {e}");
            serde_json::json!({"kind": kind, "ok": false, "error": "the database did not answer; see the server log"})
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tavo_model::{CharacterSummary, Role};

    fn store_with_chat(messages: usize) -> (tempfile::TempDir, Store, ChatId) {
        let dir = tempfile::tempdir().expect("dir");
        let store = Store::open(dir.path()).expect("store");
        let mut c = Chat {
            name: "c".into(),
            ..Chat::default()
        };
        c.characters.push(CharacterSummary {
            id: CharacterId(7),
            name: "Ann".into(),
            avatar: None,
        });
        let chat = store.chat_create(&c).expect("chat");
        for i in 0..messages {
            let m = Message {
                role: Role::User,
                content: format!("m{i}"),
                ..Message::default()
            };
            store.message_append(chat, &m).expect("message");
        }
        (dir, store, chat)
    }

    #[test]
    fn a_page_is_the_latest_messages_or_those_before_a_floor() {
        let (_dir, store, chat) = store_with_chat(5);
        let page = message_page(&store, chat, None, 2)
            .expect("read")
            .expect("chat");
        let texts: Vec<_> = page.messages.iter().map(|m| m.content.as_str()).collect();
        assert_eq!((texts, page.total, page.start), (vec!["m3", "m4"], 5, 3));
        let page = message_page(&store, chat, Some(1), 2)
            .expect("read")
            .expect("chat");
        assert_eq!(page.messages.len(), 1);
        assert_eq!(page.start, 0);
        assert_eq!(
            message_page(&store, ChatId(99), None, 2).expect("read"),
            None
        );
    }

    #[test]
    fn the_chat_listing_filters_by_member_and_counts_messages() {
        let (_dir, store, chat) = store_with_chat(3);
        let all = chats(&store, None).expect("list");
        assert_eq!(all.len(), 1);
        assert_eq!((all[0].summary.id, all[0].messages), (chat.0, 3));
        assert!(
            chats(&store, Some(CharacterId(8)))
                .expect("list")
                .is_empty()
        );
        assert_eq!(latest_chat(&store).expect("latest"), Some(chat));
        assert_eq!(all_messages(&store, ChatId(99)).expect("read"), None);
    }
}
