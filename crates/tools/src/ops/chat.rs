//! The reply's chat (seed 002 🗨️ 聊天): `tavo_chat_current` and `tavo_chat_update`.
//!
//! "Current" is the chat that started the reply, not whatever chat the UI shows now.
//! `background` is a per-chat override independent of themes: `null` clears it, absent keeps it.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::json;
use tavo_model::character::CharacterSummary;
use tavo_model::{Character, CharacterId, ChatBackground, ChatId, Persona, PersonaId, Summary};
use tavo_store::AssetKind;

use crate::context::{OpContext, store_error};
use crate::error::ToolError;
use crate::operation::{OpSpec, Outcome, Safety};
use crate::ops::common::{NoArgs, PositiveId, missing};
use crate::ops::{require_chat, validation_error};
use crate::registry::Registry;
use crate::validate::SchemaError;

/// Distinguishes an absent field (`None`) from an explicit `null` (`Some(None)`).
pub fn double_option<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// Background override: exactly the seed's fields.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
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

/// The fields `update` may change.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChatEdit {
    /// Chat title.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub name: Option<String>,
    /// Character ids; replaces the chat's character list.
    #[serde(default)]
    pub characters: Option<Vec<PositiveId>>,
    /// Persona id (null removes the persona).
    #[serde(default, deserialize_with = "double_option")]
    #[schemars(range(min = 1))]
    pub persona: Option<Option<i64>>,
    /// Per-chat background override; null clears it.
    #[serde(default, deserialize_with = "double_option")]
    pub background: Option<Option<BackgroundArg>>,
}

/// Arguments of `tavo_chat_update`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateArgs {
    /// The fields to change.
    pub chat: ChatEdit,
}

async fn current(_: NoArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    let chat = ctx.chat_id()?;
    ctx.blocking("reading the chat", move |store| {
        let v = store
            .asset_json(AssetKind::Chat, chat)
            .map_err(|e| store_error("reading the chat", e))?;
        Outcome::value(v.ok_or_else(|| missing("chat", chat))?)
    })
    .await
}

async fn update(args: UpdateArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    let chat_id = ctx.chat_id()?;
    let edit = args.chat;
    ctx.blocking("updating the chat", move |store| {
        require_chat(store, Some(chat_id))?;
        let err = |e| store_error("updating the chat", e);
        let mut chat = store
            .chat_get(ChatId(chat_id))
            .map_err(err)?
            .ok_or_else(|| missing("chat", chat_id))?;
        if let Some(name) = edit.name {
            chat.name = name;
        }
        if let Some(ids) = edit.characters {
            let mut members = Vec::with_capacity(ids.len());
            for (i, PositiveId(id)) in ids.into_iter().enumerate() {
                let c: Character = store.get(CharacterId(id)).map_err(err)?.ok_or_else(|| {
                    missing("character", id)
                        .with_details(json!({"path": format!("chat.characters[{i}]")}))
                })?;
                members.push(CharacterSummary {
                    id: CharacterId(id),
                    name: c.name,
                    avatar: c.avatar,
                });
            }
            chat.characters = members;
        }
        match edit.persona {
            None => {}
            Some(None) => chat.persona = None,
            Some(Some(id)) => {
                let p: Persona = store.get(PersonaId(id)).map_err(err)?.ok_or_else(|| {
                    missing("persona", id).with_details(json!({"path": "chat.persona"}))
                })?;
                chat.persona = Some(Summary {
                    id: PersonaId(id),
                    name: p.name,
                });
            }
        }
        match edit.background {
            None => {}
            Some(None) => chat.background = None,
            Some(Some(b)) => {
                let bg = ChatBackground {
                    image: b.image,
                    use_avatar: b.use_avatar,
                    color: b.color,
                    opacity: b.opacity,
                };
                bg.validate().map_err(|e| validation_error("chat", e))?;
                chat.background = Some(bg);
            }
        }
        store.update(&chat, None).map_err(err)?;
        let v = store.asset_json(AssetKind::Chat, chat_id).map_err(err)?;
        Outcome::value(v.ok_or_else(|| missing("chat", chat_id))?)
    })
    .await
}

/// Registers the chat tools.
pub fn register(r: &mut Registry) -> Result<(), SchemaError> {
    const KW: &[&str] = &[
        "chat",
        "conversation",
        "current chat",
        "background",
        "title",
        "聊天",
    ];
    r.add(
        OpSpec::new(
            "chat.current",
            Safety::Read,
            "Get this chat: {id, name, characters, persona, preset, lorebooks, regexes, background}.",
        )
        .keywords(KW),
        current,
    )?;
    r.add(
        OpSpec::new(
            "chat.update",
            Safety::Write,
            "Update this chat: {name?, characters? (ids, replaces the list), persona? (id or null), \
             background? ({image, opacity} | {useAvatar: true} | {color}, or null to clear)}. The background \
             override never changes the theme.",
        )
        .keywords(KW),
        update,
    )
}
