//! Chat creation and rebinding, written once for every door (seed 002 §🗨️ 聊天).
//!
//! [`create_chat`] is what `tavo chat create`, `POST /api/library/chat` and the model's
//! `tavo_chat_create` call; [`update_chat`] is what `tavo chat update` and `tavo_chat_update`
//! call. Both resolve every binding — characters, persona, preset, lorebooks, regex groups,
//! background — in the same write transaction that stores the chat, so a chat never points at
//! an asset that did not exist when it was written, and a refused binding changes nothing. An
//! error names the argument path (`chat.lorebooks[1]`).
//!
//! Two SillyTavern expectations are built in:
//! - **The card's own lore.** A card's `character_book` and `extensions.regex_scripts` become a
//!   lorebook and a regex group at import, linked to the character (`character_links`).
//!   SillyTavern applies them as "character lore" whenever the character speaks; Tavo binds
//!   lorebooks and regex groups per chat, so a new chat binds each member's own lorebook and
//!   regex group by default (before the ones the caller names, without duplicates). The caller
//!   can opt out (`cardBindings: false`) and unbind them later like any other binding.
//! - **The greeting.** Message 0 is the first character's greeting, macro-expanded; the other
//!   greetings become its swipes as SillyTavern stores them (`swipes[0]` is the greeting shown,
//!   `swipeId: 0`). In a group chat the first group-only greeting leads, then the other
//!   group-only greetings, then `firstMes` and the alternate greetings — and every member
//!   greets in turn, as SillyTavern starts a group chat ([`crate::greetings`]).

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Value, json};
use tavo_model::character::CharacterSummary;
use tavo_model::{
    Character, CharacterId, Chat, ChatBackground, ChatId, Lorebook, MessageId, Persona, PersonaId,
    Preset, PresetId, RegexGroup, ReplyMode, Summary,
};
use tavo_store::{AssetKind, Store, StoreError, Tx};

use crate::context::store_error;
use crate::error::{ErrorCode, ToolError};
use crate::greetings::ejs_enabled;
pub use crate::greetings::{greeting_message, greeting_message_with};
use crate::ops::validation_error;

/// Distinguishes an absent field (`None`) from an explicit `null` (`Some(None)`).
pub fn double_option<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// An asset named by its id, or by an object carrying it (a summary such as `{id, name}`
/// from `get` or a chat object; only `id` is read, the rest is derived again).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum AssetRef {
    /// `12` (a positive integer).
    Id(i64),
    /// `{ "id": 12 }`.
    Object(RefObject),
}

/// `{ "id": 12 }`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
pub struct RefObject {
    /// The id (a positive integer).
    pub id: i64,
}

impl AssetRef {
    /// The raw id (not yet checked to be positive).
    pub fn get(self) -> i64 {
        match self {
            AssetRef::Id(id) | AssetRef::Object(RefObject { id }) => id,
        }
    }
}

impl From<i64> for AssetRef {
    fn from(id: i64) -> Self {
        AssetRef::Id(id)
    }
}

/// Background override: exactly the seed's fields.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BackgroundArg {
    /// http(s) URL or a relative virtual path such as files/chat/bg.png (never absolute).
    #[serde(default)]
    pub image: Option<String>,
    /// Use the chat character's avatar (wins over image and color).
    #[serde(default)]
    pub use_avatar: Option<bool>,
    /// '#RRGGBB' or '#AARRGGBB'.
    #[serde(default)]
    #[schemars(regex(pattern = r"^#([0-9a-fA-F]{6}|[0-9a-fA-F]{8})$"))]
    pub color: Option<String>,
    /// Image opacity 0-1.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub opacity: Option<f64>,
}

impl From<BackgroundArg> for ChatBackground {
    fn from(b: BackgroundArg) -> Self {
        ChatBackground {
            image: b.image,
            use_avatar: b.use_avatar,
            color: b.color,
            opacity: b.opacity,
            extra: tavo_model::Extra::default(),
        }
    }
}

/// A chat to create (`tavo_chat_create`'s `chat`, the body of `POST /api/library/chat`, the
/// flags of `tavo chat create`). Ids must name existing assets; the check is one transaction.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NewChat {
    /// Chat title (default: the characters' names, comma-separated).
    #[serde(default)]
    pub name: Option<String>,
    /// Character ids in membership order; at least one (several = a group chat).
    pub characters: Vec<AssetRef>,
    /// Persona id; absent or null: the chat follows the active (default) persona.
    #[serde(default)]
    pub persona: Option<AssetRef>,
    /// Preset id; absent or null: the built-in default preset.
    #[serde(default)]
    pub preset: Option<AssetRef>,
    /// Lorebook ids to bind, in order (the characters' own lorebooks are bound as well, first).
    #[serde(default)]
    pub lorebooks: Vec<AssetRef>,
    /// Regex group ids to bind, in order (the characters' own regex groups are bound as well, first).
    #[serde(default)]
    pub regexes: Vec<AssetRef>,
    /// Per-chat background override ({image, opacity} | {useAvatar: true} | {color}).
    #[serde(default)]
    pub background: Option<BackgroundArg>,
    /// Bind each character's own lorebook and regex group (those its card came with). Default true.
    #[serde(default)]
    pub card_bindings: Option<bool>,
    /// Add the first character's greeting as message 0, other greetings as its swipes. Default true.
    #[serde(default)]
    pub greeting: Option<bool>,
    /// Advanced rendering: the browser app shows messages as HTML + CSS (default true).
    #[serde(default)]
    pub advanced_rendering: Option<bool>,
    /// Group reply mode: natural (default), all, designated or contextual.
    #[serde(default)]
    pub reply_mode: Option<ReplyMode>,
}

/// The fields an update may change; absent fields are kept.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChatEdit {
    /// Chat title.
    #[serde(default)]
    pub name: Option<String>,
    /// Character ids; replaces the chat's character list (at least one).
    #[serde(default)]
    pub characters: Option<Vec<AssetRef>>,
    /// Persona id (null removes the persona: the chat follows the active persona).
    #[serde(default, deserialize_with = "double_option")]
    pub persona: Option<Option<AssetRef>>,
    /// Preset id (null unbinds it: the built-in default preset).
    #[serde(default, deserialize_with = "double_option")]
    pub preset: Option<Option<AssetRef>>,
    /// Lorebook ids; replaces the bound list ([] unbinds every lorebook, the card's own included).
    #[serde(default)]
    pub lorebooks: Option<Vec<AssetRef>>,
    /// Regex group ids; replaces the bound list ([] unbinds every regex group).
    #[serde(default)]
    pub regexes: Option<Vec<AssetRef>>,
    /// Per-chat background override; null clears it.
    #[serde(default, deserialize_with = "double_option")]
    pub background: Option<Option<BackgroundArg>>,
    /// Advanced rendering: messages shown as HTML + CSS in the browser app (true), or as
    /// Markdown only (false).
    #[serde(default, rename = "advancedRendering")]
    pub advanced_rendering: Option<bool>,
    /// Group reply mode: natural, all, designated or contextual.
    #[serde(default, rename = "replyMode")]
    pub reply_mode: Option<ReplyMode>,
}

/// What [`create_chat`] stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatCreated {
    /// The new chat's id.
    pub id: ChatId,
    /// The greeting message (floor 0), when one was added.
    pub greeting: Option<MessageId>,
    /// The chat as stored (TavoJS shape).
    pub chat: Value,
}

/// An operation's failure inside a transaction: a refusal with its path, or the store's own.
enum Fail {
    Tool(ToolError),
    Store(StoreError),
}

impl From<StoreError> for Fail {
    fn from(e: StoreError) -> Self {
        Fail::Store(e)
    }
}

impl From<ToolError> for Fail {
    fn from(e: ToolError) -> Self {
        Fail::Tool(e)
    }
}

fn finish<T>(what: &str, r: Result<T, Fail>) -> Result<T, ToolError> {
    r.map_err(|f| match f {
        Fail::Tool(e) => e,
        Fail::Store(e) => store_error(what, e),
    })
}

/// `resource_not_found` for a binding, naming the argument path.
fn missing_at(kind: &str, id: i64, path: &str) -> ToolError {
    ToolError::new(
        ErrorCode::ResourceNotFound,
        format!(
            "{path}: {kind} {id} does not exist; call the matching all or find tool (or `tavo list {kind}`) to get a valid id"
        ),
    )
    .with_details(json!({"path": path, "kind": kind, "id": id}))
}

fn positive(r: AssetRef, path: &str) -> Result<i64, ToolError> {
    let id = r.get();
    if id > 0 {
        Ok(id)
    } else {
        Err(ToolError::invalid_at(
            path,
            "a positive integer id",
            "non-positive integer",
        ))
    }
}

fn character_summary(
    tx: &Tx<'_>,
    c: &Character,
    id: CharacterId,
) -> Result<CharacterSummary, StoreError> {
    Ok(CharacterSummary {
        id,
        name: c.name.clone(),
        avatar: match &c.avatar {
            Some(a) => Some(a.clone()),
            None => tx.character_avatar_ref(id)?,
        },
    })
}

fn resolve_characters(
    tx: &Tx<'_>,
    refs: &[AssetRef],
    path: &str,
) -> Result<(Vec<CharacterSummary>, Vec<Character>), Fail> {
    if refs.is_empty() {
        return Err(ToolError::invalid_at(
            path,
            "at least one character id (see tavo_character_all or `tavo list characters`)",
            "empty array",
        )
        .into());
    }
    let mut summaries = Vec::with_capacity(refs.len());
    let mut characters = Vec::with_capacity(refs.len());
    for (i, r) in refs.iter().enumerate() {
        let at = format!("{path}[{i}]");
        let id = positive(*r, &at)?;
        if summaries.iter().any(|s: &CharacterSummary| s.id.0 == id) {
            return Err(ToolError::invalid_at(&at, "each character once", "a duplicate id").into());
        }
        let c: Character = tx
            .get(CharacterId(id))?
            .ok_or_else(|| missing_at("character", id, &at))?;
        summaries.push(character_summary(tx, &c, CharacterId(id))?);
        characters.push(c);
    }
    Ok((summaries, characters))
}

fn resolve_one<A: tavo_store::Asset>(
    tx: &Tx<'_>,
    r: AssetRef,
    path: &str,
    make: impl Fn(A::Id, String) -> Summary<A::Id>,
) -> Result<Summary<A::Id>, Fail> {
    let id = positive(r, path)?;
    let asset: A = tx
        .get(A::typed_id(id))?
        .ok_or_else(|| missing_at(A::KIND.as_str(), id, path))?;
    Ok(make(A::typed_id(id), asset.name().to_owned()))
}

fn resolve_list<A: tavo_store::Asset>(
    tx: &Tx<'_>,
    refs: &[AssetRef],
    path: &str,
) -> Result<Vec<Summary<A::Id>>, Fail>
where
    A::Id: PartialEq,
{
    let mut out: Vec<Summary<A::Id>> = Vec::with_capacity(refs.len());
    for (i, r) in refs.iter().enumerate() {
        let s = resolve_one::<A>(tx, *r, &format!("{path}[{i}]"), |id, name| Summary {
            id,
            name,
        })?;
        if !out.iter().any(|o| o.id == s.id) {
            out.push(s);
        }
    }
    Ok(out)
}

fn background(b: BackgroundArg) -> Result<ChatBackground, ToolError> {
    let bg = ChatBackground::from(b);
    bg.validate().map_err(|e| validation_error("chat", e))?;
    Ok(bg)
}

fn non_blank_name(name: String, path: &str) -> Result<String, ToolError> {
    if name.trim().is_empty() {
        return Err(ToolError::invalid_at(
            path,
            "a non-empty name",
            "empty string",
        ));
    }
    Ok(name)
}

fn merged<Id: PartialEq + Copy>(
    first: Vec<Summary<Id>>,
    then: Vec<Summary<Id>>,
) -> Vec<Summary<Id>> {
    let mut out = first;
    for s in then {
        if !out.iter().any(|o| o.id == s.id) {
            out.push(s);
        }
    }
    out
}

/// The library's active preset (`preset.active`, set by `tavo_preset_set_active`), which a
/// chat created without a preset binds; none when unset or deleted since.
fn active_preset(tx: &Tx<'_>) -> Result<Option<Summary<PresetId>>, StoreError> {
    let Some(id) = tx
        .setting_get(crate::mcp::ACTIVE_PRESET)?
        .and_then(|v| v.as_i64())
    else {
        return Ok(None);
    };
    Ok(tx.get::<Preset>(PresetId(id))?.map(|p| Summary {
        id: PresetId(id),
        name: p.name,
    }))
}

/// Creates a chat with its bindings and greeting in one transaction.
pub fn create_chat(store: &Store, new: NewChat) -> Result<ChatCreated, ToolError> {
    let now = tavo_prompt::local_now();
    let r = store.write_with(|tx| -> Result<ChatCreated, Fail> {
        let (members, characters) = resolve_characters(tx, &new.characters, "chat.characters")?;
        let mut chat = Chat {
            name: match new.name.clone() {
                Some(n) => non_blank_name(n, "chat.name")?,
                None => characters
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            },
            ..Chat::default()
        };
        chat.persona = new
            .persona
            .map(|r| {
                resolve_one::<Persona>(tx, r, "chat.persona", |id: PersonaId, name| Summary {
                    id,
                    name,
                })
            })
            .transpose()?;
        chat.preset = new
            .preset
            .map(|r| {
                resolve_one::<Preset>(tx, r, "chat.preset", |id: PresetId, name| Summary {
                    id,
                    name,
                })
            })
            .transpose()?;
        if chat.preset.is_none() {
            chat.preset = active_preset(tx)?;
        }
        let lorebooks = resolve_list::<Lorebook>(tx, &new.lorebooks, "chat.lorebooks")?;
        let regexes = resolve_list::<RegexGroup>(tx, &new.regexes, "chat.regexes")?;
        if let Some(b) = new.background.clone() {
            chat.background = Some(background(b)?);
        }
        let own = if new.card_bindings.unwrap_or(true) {
            let ids: Vec<CharacterId> = members.iter().map(|m| m.id).collect();
            tx.card_bindings(&ids)?
        } else {
            tavo_store::CardBindings::default()
        };
        chat.lorebooks = merged(own.lorebooks, lorebooks);
        chat.regexes = merged(own.regexes, regexes);
        chat.characters = members;
        chat.advanced_rendering = new.advanced_rendering.unwrap_or(true);
        chat.reply_mode = new.reply_mode.unwrap_or_default();
        chat.creation_date = Some(chrono::Utc::now());
        let persona = tx.chat_persona(&chat)?;
        let id = tx.chat_create(&chat)?;
        let mut greeting = None;
        if new.greeting.unwrap_or(true) {
            let ejs = ejs_enabled(tx)?;
            for m in crate::greetings::greetings(&characters, persona.as_ref(), now, ejs) {
                let written = tx.message_append(id, &m)?;
                greeting.get_or_insert(written);
            }
        }
        let chat = tx
            .asset_json(AssetKind::Chat, id.0)?
            .ok_or_else(|| StoreError::NotFound {
                kind: "chat",
                id: id.to_string(),
            })?;
        Ok(ChatCreated { id, greeting, chat })
    });
    finish("creating the chat", r)
}

/// Applies an edit to a stored chat in one transaction; returns the chat as stored.
pub fn update_chat(store: &Store, id: ChatId, edit: ChatEdit) -> Result<Value, ToolError> {
    let r = store.write_with(|tx| -> Result<Value, Fail> {
        let mut chat = tx
            .chat_get(id)?
            .ok_or_else(|| ToolError::not_found("chat", id))?;
        if let Some(name) = edit.name.clone() {
            chat.name = non_blank_name(name, "chat.name")?;
        }
        if let Some(refs) = &edit.characters {
            chat.characters = resolve_characters(tx, refs, "chat.characters")?.0;
            // A member who left is no longer muted.
            let kept: Vec<CharacterId> = chat
                .muted()
                .into_iter()
                .filter(|id| chat.characters.iter().any(|m| m.id == *id))
                .collect();
            chat.set_muted(&kept);
        }
        if let Some(mode) = edit.reply_mode {
            chat.reply_mode = mode;
        }
        match edit.persona {
            None => {}
            Some(None) => chat.persona = None,
            Some(Some(r)) => {
                chat.persona = Some(resolve_one::<Persona>(
                    tx,
                    r,
                    "chat.persona",
                    |id, name| Summary { id, name },
                )?);
            }
        }
        match edit.preset {
            None => {}
            Some(None) => chat.preset = None,
            Some(Some(r)) => {
                chat.preset = Some(resolve_one::<Preset>(tx, r, "chat.preset", |id, name| {
                    Summary { id, name }
                })?);
            }
        }
        if let Some(refs) = &edit.lorebooks {
            chat.lorebooks = resolve_list::<Lorebook>(tx, refs, "chat.lorebooks")?;
        }
        if let Some(refs) = &edit.regexes {
            chat.regexes = resolve_list::<RegexGroup>(tx, refs, "chat.regexes")?;
        }
        match edit.background.clone() {
            None => {}
            Some(None) => chat.background = None,
            Some(Some(b)) => chat.background = Some(background(b)?),
        }
        if let Some(on) = edit.advanced_rendering {
            chat.advanced_rendering = on;
        }
        tx.update(&chat, None)?;
        Ok(tx
            .asset_json(AssetKind::Chat, id.0)?
            .ok_or_else(|| StoreError::NotFound {
                kind: "chat",
                id: id.to_string(),
            })?)
    });
    finish("updating the chat", r)
}

/// Copies a chat with its messages, variables, state, memory and files (SillyTavern's
/// "branch"/"save as"); the copy is named `name`, else "<name> (copy)". Returns the new id.
pub fn clone_chat(store: &Store, id: ChatId, name: Option<String>) -> Result<ChatId, ToolError> {
    let err = |e| store_error("cloning the chat", e);
    let name = match name {
        Some(n) => non_blank_name(n, "name")?,
        None => {
            let chat = store
                .chat_get(id)
                .map_err(err)?
                .ok_or_else(|| ToolError::not_found("chat", id))?;
            format!("{} (copy)", chat.name)
        }
    };
    store.chat_clone(id, &name).map_err(|e| match e {
        StoreError::NotFound { .. } => ToolError::not_found("chat", id),
        other => err(other),
    })
}

/// Restarts a chat (Tavo's "重启聊天"): every message is deleted and the greeting starts it
/// again (in a group chat every member's, see [`crate::greetings`]), in one
/// transaction; the characters, bindings, variables and files stay. Returns the first
/// greeting's id (none when no card has a greeting).
pub fn reset_chat(store: &Store, id: ChatId) -> Result<Option<MessageId>, ToolError> {
    let now = tavo_prompt::local_now();
    let r = store.write_with(|tx| -> Result<Option<MessageId>, Fail> {
        let chat = tx.chat_get(id)?.ok_or_else(|| StoreError::NotFound {
            kind: "chat",
            id: id.to_string(),
        })?;
        for message in tx.messages_all(id)? {
            if let Some(m) = message.id {
                tx.message_delete(m)?;
            }
        }
        let mut characters = Vec::new();
        for member in &chat.characters {
            if let Some(c) = tx.get::<Character>(member.id)? {
                characters.push(c);
            }
        }
        let persona = tx.chat_persona(&chat)?;
        let mut first = None;
        let ejs = ejs_enabled(tx)?;
        for m in crate::greetings::greetings(&characters, persona.as_ref(), now, ejs) {
            let written = tx.message_append(id, &m)?;
            first.get_or_insert(written);
        }
        Ok(first)
    });
    finish("restarting the chat", r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_accept_ids_and_summaries() {
        let v: Vec<AssetRef> =
            serde_json::from_value(json!([3, {"id": 4, "name": "B", "avatar": "x"}]))
                .unwrap_or_default();
        assert_eq!(v.iter().map(|r| r.get()).collect::<Vec<_>>(), [3, 4]);
    }
}
