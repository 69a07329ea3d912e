//! The SQLite store: schema, migrations, repositories, variables, chat/global files, audit log.
//!
//! - [`Store::open`] opens (or creates) a library directory: `tavo.db` (SQLite, WAL, foreign
//!   keys, embedded migrations) plus `files/` for the chat and global file storage.
//! - Every operation is a method of [`Tx`]; [`Store::write`] / [`Store::read`] run a closure in
//!   one transaction, and `Store` has a same-named shorthand for each single operation.
//! - Assets (characters, personas, presets, lorebooks, regex groups, chats) are stored as their
//!   canonical model JSON with a `revision` for optimistic concurrency ([`Asset`]); messages
//!   are rows ordered by a dense floor index; variables live in three separate scopes
//!   ([`VarScope`]) addressed by dotted paths ([`varpath`]).
//! - The store is synchronous: async callers use `tokio::task::spawn_blocking` with a clone.

mod assets;
mod audit;
mod avatars;
mod backup;
mod card_files;
mod chats;
pub mod cluster;
mod delegate;
mod error;
pub mod files;
mod import;
mod memory;
mod messages;
mod migrations;
mod plugins;
pub mod postgres;
pub mod registry;
mod requests;
mod settings;
pub mod sql;
mod store;
mod tool_rounds;
mod transfer;
mod variables;
pub mod varpath;

pub use assets::{Asset, AssetKind, AssetSummary};
pub use audit::{AUDIT_CAPACITY, AuditEntry, AuditFilter};
pub use avatars::Avatar;
pub use backup::{Replaced, schema_version};
pub use card_files::check_card_path;
pub use error::{Result, StoreError};
pub use files::{BlobStats, FileEntry, FilePage, FileScope, FileStore, MAX_FILE_BYTES, TreeFile};
pub use import::{CardBindings, CharacterExport, ChatImportResult};
pub use memory::MemoryRow;
pub use messages::MessageFilter;
pub use plugins::{NewPlugin, PluginRow};
pub use postgres::PgPool;
pub use requests::{AnsweredRequest, REQUEST_CAPACITY, REQUEST_RETENTION_HOURS};
pub use sql::Dialect;
pub use store::{DATABASE_FILE, Store, Tx, default_data_dir};
pub use variables::VarScope;

use serde_json::{Map, Value};
use tavo_model::{
    CharacterId, Chat, ChatId, Memory, Message, MessageId, NameMatch, PersonaId, Revision,
};

delegate::store_shorthands! {
    /// The setting stored under `key`.
    read fn setting_get(&self, key: &str) -> Option<Value>;
    /// Stores a setting, replacing any previous value.
    write fn setting_set(&self, key: &str, value: &Value) -> ();
    /// Removes a setting; returns whether it existed.
    write fn setting_delete(&self, key: &str) -> bool;
    /// Every setting whose key starts with `prefix`.
    read fn setting_list(&self, prefix: &str) -> Vec<(String, Value)>;

    /// The variable at a dotted path.
    read fn var_get(&self, scope: VarScope, path: &str) -> Option<Value>;
    /// Writes a variable at a dotted path.
    write fn var_set(&self, scope: VarScope, path: &str, value: &Value) -> ();
    /// Shallow-merges an object into the variable at a dotted path.
    write fn var_update(&self, scope: VarScope, path: &str, patch: &Value) -> ();
    /// Removes the leaf at a dotted path.
    write fn var_unset(&self, scope: VarScope, path: &str) -> bool;
    /// Every variable of a scope.
    read fn var_all(&self, scope: VarScope) -> Map<String, Value>;
    /// Replaces every variable of a scope.
    write fn var_replace_all(&self, scope: VarScope, vars: &Map<String, Value>) -> ();

    /// An asset as TavoJS-shaped JSON.
    read fn asset_json(&self, kind: AssetKind, id: i64) -> Option<Value>;
    /// Summaries of every asset of a kind.
    read fn asset_summaries(&self, kind: AssetKind) -> Vec<AssetSummary>;
    /// Ids of the assets whose name matches.
    read fn asset_find_ids(&self, kind: AssetKind, query: &str, mode: NameMatch) -> Vec<i64>;

    /// Creates a chat.
    write fn chat_create(&self, chat: &Chat) -> ChatId;
    /// A chat.
    read fn chat_get(&self, id: ChatId) -> Option<Chat>;
    /// The library's default persona.
    read fn default_persona(&self) -> Option<tavo_model::Persona>;
    /// The persona a chat speaks as: its own, else the default one.
    read fn chat_persona(&self, chat: &Chat) -> Option<tavo_model::Persona>;
    /// One state slot of a chat.
    read fn chat_state_get(&self, chat: ChatId, key: &str) -> Option<Value>;
    /// Writes one state slot of a chat.
    write fn chat_state_set(&self, chat: ChatId, key: &str, value: &Value) -> ();
    /// Removes one state slot of a chat.
    write fn chat_state_delete(&self, chat: ChatId, key: &str) -> bool;
    /// The chat's memory (created disabled and empty on first use).
    write fn memory_get(&self, chat: ChatId) -> Memory;
    /// The chat's memory as stored, creating nothing (disabled and empty when absent).
    read fn memory_peek(&self, chat: ChatId) -> Memory;
    /// Updates the chat's memory.
    write fn memory_update(&self, chat: ChatId, enabled: Option<bool>, memories: Option<&[String]>) -> Memory;
    /// Appends to the chat's memory.
    write fn memory_append(&self, chat: ChatId, texts: &[String]) -> Memory;
    /// The chat's memory with its row revision.
    read fn memory_row(&self, chat: ChatId) -> MemoryRow;
    /// Replaces the memory texts if the row is still at the expected revision.
    write fn memory_replace_if(&self, chat: ChatId, expected: i64, memories: &[String]) -> MemoryRow;

    /// Number of messages of a chat.
    read fn message_count(&self, chat: ChatId) -> u64;
    /// Appends a message.
    write fn message_append(&self, chat: ChatId, message: &Message) -> MessageId;
    /// Appends many messages.
    write fn messages_append(&self, chat: ChatId, messages: &[Message]) -> Vec<MessageId>;
    /// Inserts a message at a floor.
    write fn message_insert(&self, chat: ChatId, floor: u64, message: &Message) -> MessageId;
    /// A message.
    read fn message_get(&self, id: MessageId) -> Option<Message>;
    /// The chat of a message.
    read fn message_chat(&self, id: MessageId) -> Option<ChatId>;
    /// The revision of a message.
    read fn message_revision(&self, id: MessageId) -> Option<u64>;
    /// Messages by inclusive floor range.
    read fn messages_range(&self, chat: ChatId, start: u64, end: Option<u64>) -> Vec<Message>;
    /// The last `n` messages.
    read fn messages_last(&self, chat: ChatId, n: u64) -> Vec<Message>;
    /// Every message of a chat.
    read fn messages_all(&self, chat: ChatId) -> Vec<Message>;
    /// The messages of a chat that pass a filter.
    read fn messages_filtered(&self, chat: ChatId, filter: &MessageFilter) -> Vec<Message>;
    /// Replaces a message's fields.
    write fn message_update(&self, message: &Message, expected: Option<u64>) -> u64;
    /// Hides or shows a message.
    write fn message_set_hidden(&self, id: MessageId, hidden: bool) -> ();
    /// Deletes a message.
    write fn message_delete(&self, id: MessageId) -> bool;

    /// Stores a character's avatar.
    write fn character_avatar_set(&self, id: CharacterId, avatar: &Avatar) -> ();
    /// A character's avatar.
    read fn character_avatar_get(&self, id: CharacterId) -> Option<Avatar>;
    /// Stores a persona's avatar.
    write fn persona_avatar_set(&self, id: PersonaId, avatar: &Avatar) -> ();
    /// A persona's avatar.
    read fn persona_avatar_get(&self, id: PersonaId) -> Option<Avatar>;

    /// Appends an audit entry.
    write fn audit_append(&self, action: &str, target: Option<&str>, details: &Value) -> i64;
    /// Lists audit entries, newest first.
    read fn audit_list(&self, limit: u32, before: Option<i64>) -> Vec<AuditEntry>;
    /// Lists audit entries matching a filter, newest first.
    read fn audit_find(&self, limit: u32, before: Option<i64>, filter: &AuditFilter) -> Vec<AuditEntry>;
    /// Clears the audit log (and the tool rounds kept for prompts, which hold the same data).
    write fn audit_clear(&self) -> usize;
    /// Stores (replaces) a message's tool rounds.
    write fn tool_rounds_set(&self, message: MessageId, rounds: &Value) -> ();
    /// The tool rounds stored for a chat's messages.
    read fn tool_rounds_of_chat(&self, chat: ChatId) -> Vec<(MessageId, Value)>;

    /// Stores a card with its avatar, lorebook and regex group, linked.
    write fn import_character(
        &self,
        character: &tavo_model::Character,
        avatar: Option<&[u8]>,
        lorebook: Option<&tavo_model::Lorebook>,
        regex: Option<&tavo_model::RegexGroup>,
    ) -> tavo_model::CharacterImportResult;
    /// Stores a preset with its regex group, linked.
    write fn import_preset(
        &self,
        preset: &tavo_model::Preset,
        regex: Option<&tavo_model::RegexGroup>,
    ) -> (tavo_model::PresetId, Option<tavo_model::RegexId>);
    /// Stores a chat and its messages, matched to library characters by name.
    write fn import_chat(
        &self,
        chat: Chat,
        messages: Vec<Message>,
        character_names: &[String],
        user_name: Option<&str>,
    ) -> ChatImportResult;
    /// The lorebook and regex group linked to a character.
    read fn character_links(
        &self,
        id: CharacterId,
    ) -> (Option<tavo_model::LorebookId>, Option<tavo_model::RegexId>);
    /// A character with its avatar, lorebook and regex group.
    read fn character_export_parts(&self, id: CharacterId) -> CharacterExport;
    /// A preset with its regex group.
    read fn preset_export_parts(
        &self,
        id: tavo_model::PresetId,
    ) -> (tavo_model::Preset, Option<tavo_model::RegexGroup>);
    /// A chat with its messages.
    read fn chat_export_parts(&self, id: ChatId) -> (Chat, Vec<Message>);
}

/// Generic asset shorthands, each in its own transaction.
impl Store {
    /// Deletes an asset by kind (use [`Store::chat_delete`] for chats, which also removes
    /// files); a character's card files ([`FileStore::save_card_files`]) are removed after the
    /// row's transaction commits.
    pub fn asset_delete(&self, kind: AssetKind, id: i64) -> Result<bool> {
        let existed = self.write(|tx| tx.asset_delete(kind, id))?;
        if kind == AssetKind::Character {
            self.files().delete_card_files(id)?;
        }
        Ok(existed)
    }

    /// Stores a new asset; returns its id. See [`Tx::create`].
    pub fn create<A: Asset>(&self, asset: &A) -> Result<A::Id> {
        self.write(|tx| tx.create(asset))
    }

    /// The asset, or `None`. See [`Tx::get`].
    pub fn get<A: Asset>(&self, id: A::Id) -> Result<Option<A>> {
        self.read(|tx| tx.get(id))
    }

    /// The asset, or [`StoreError::NotFound`].
    pub fn require<A: Asset>(&self, id: A::Id) -> Result<A> {
        self.read(|tx| tx.require(id))
    }

    /// Every asset of the type.
    pub fn list<A: Asset>(&self) -> Result<Vec<A>> {
        self.read(|tx| tx.list())
    }

    /// Assets by name.
    pub fn find<A: Asset>(&self, name: &str, mode: NameMatch) -> Result<Vec<A>> {
        self.read(|tx| tx.find(name, mode))
    }

    /// Writes an asset over the stored one; returns the new revision. See [`Tx::update`].
    pub fn update<A: Asset>(&self, asset: &A, expected: Option<Revision>) -> Result<Revision> {
        self.write(|tx| tx.update(asset, expected))
    }

    /// Deletes an asset (chats: prefer [`Store::chat_delete`], which also removes files).
    pub fn delete<A: Asset>(&self, id: A::Id) -> Result<bool> {
        self.write(|tx| tx.delete::<A>(id))
    }
}
