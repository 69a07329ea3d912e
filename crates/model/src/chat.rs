//! Chats (seed 002 §🗨️ 聊天: the chat object and its `background` override).

use crate::character::CharacterSummary;
use crate::common::{Extra, Summary, is_zero};
use crate::ids::{CharacterId, ChatId, LorebookId, PersonaId, PresetId, RegexId, Revision};
use crate::validation::ValidationErrors;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// A chat (seed: 聊天对象字段).
///
/// `extra` keeps what other programs store per chat (SillyTavern's `chat_metadata`,
/// `user_name`, `character_name`, `create_date` of the header line …).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct Chat {
    /// Unique id; `None` until stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<ChatId>,
    /// Optimistic-concurrency revision.
    #[serde(skip_serializing_if = "is_zero")]
    pub revision: Revision,
    /// Title.
    pub name: String,
    /// Characters in the chat (summaries).
    pub characters: Vec<CharacterSummary>,
    /// Current persona, if any.
    pub persona: Option<Summary<PersonaId>>,
    /// Bound preset, if any.
    pub preset: Option<Summary<PresetId>>,
    /// Bound lorebooks.
    pub lorebooks: Vec<Summary<LorebookId>>,
    /// Enabled regex groups.
    pub regexes: Vec<Summary<RegexId>>,
    /// Chat-level background override; `null` = use the theme.
    pub background: Option<ChatBackground>,
    /// Advanced rendering (Tavo's 高级前端渲染, per chat, on by default): the browser app shows
    /// a message's display copy as HTML + CSS (scripts then follow the global
    /// `rendering.javascript` setting); off, it shows Markdown only. A chat stored before the
    /// flag existed reads as on. The stored messages never change either way.
    pub advanced_rendering: bool,
    /// Who answers a user's message in a group chat (Tavo's 回复模式); a 1:1 chat ignores it.
    /// A chat stored before the field existed reads as `natural`.
    pub reply_mode: ReplyMode,
    /// Creation time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub creation_date: Option<DateTime<Utc>>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Extra,
}

impl Default for Chat {
    fn default() -> Self {
        Chat {
            id: None,
            revision: Revision::default(),
            name: String::new(),
            characters: Vec::new(),
            persona: None,
            preset: None,
            lorebooks: Vec::new(),
            regexes: Vec::new(),
            background: None,
            advanced_rendering: true,
            reply_mode: ReplyMode::default(),
            creation_date: None,
            extra: Extra::default(),
        }
    }
}

/// A group chat's reply mode (Tavo §12 回复模式).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub enum ReplyMode {
    /// 自然聊天: the members the user's message mentions answer, in mention order; when it
    /// mentions nobody, one member picked at random.
    #[default]
    Natural,
    /// 全员回复: every unmuted member answers, in member order.
    All,
    /// 指定发言: only the members addressed as `@name` answer; nobody otherwise.
    Designated,
    /// 情境发言: a speaker-selection request asks the model who answers.
    Contextual,
}

impl ReplyMode {
    /// The four modes in the order Tavo lists them.
    pub const ALL: [ReplyMode; 4] = [
        ReplyMode::Natural,
        ReplyMode::All,
        ReplyMode::Designated,
        ReplyMode::Contextual,
    ];

    /// The serialized name (`natural`, `all`, `designated`, `contextual`).
    pub fn as_str(self) -> &'static str {
        match self {
            ReplyMode::Natural => "natural",
            ReplyMode::All => "all",
            ReplyMode::Designated => "designated",
            ReplyMode::Contextual => "contextual",
        }
    }

    /// Parses a serialized name.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == s)
    }
}

/// Where a chat keeps its muted group members (the ids, in `extra`; the prompt's
/// `{{groupNotMuted}}` reads the same key).
pub const MUTED_KEY: &str = "mutedCharacterIds";

/// Chat-level background override (seed: `background: { image | useAvatar | color, opacity }`).
///
/// The three sources are exclusive with precedence `useAvatar > image > color`; see
/// [`ChatBackground::resolve`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct ChatBackground {
    /// `http(s)://` URL or a path relative to the chat's documents (e.g. `files/chat/bg.png`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// Use the current character's avatar.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub use_avatar: Option<bool>,
    /// `#RRGGBB` or `#AARRGGBB`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
    /// Image opacity 0–1 (images only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opacity: Option<f64>,
    /// Unknown fields (what a newer Tavo or another program keeps here), written back.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The background that actually applies after the precedence rule.
#[derive(Debug, Clone, PartialEq)]
pub enum BackgroundSource<'a> {
    /// The current character's avatar.
    Avatar,
    /// An image with its opacity (default 1).
    Image {
        /// URL or relative path.
        image: &'a str,
        /// 0–1.
        opacity: f64,
    },
    /// A solid colour.
    Color(&'a str),
}

impl ChatBackground {
    /// Applies the seed's precedence `useAvatar > image > color`; `None` when nothing is set
    /// (the theme's background applies).
    pub fn resolve(&self) -> Option<BackgroundSource<'_>> {
        if self.use_avatar == Some(true) {
            return Some(BackgroundSource::Avatar);
        }
        if let Some(image) = self.image.as_deref().filter(|s| !s.is_empty()) {
            return Some(BackgroundSource::Image {
                image,
                opacity: self.opacity.unwrap_or(1.0).clamp(0.0, 1.0),
            });
        }
        self.color
            .as_deref()
            .filter(|s| !s.is_empty())
            .map(BackgroundSource::Color)
    }

    /// Checks colour syntax, opacity range and that `image` is not an absolute local path.
    pub fn validate(&self) -> Result<(), ValidationErrors> {
        let mut e = ValidationErrors::default();
        if let Some(c) = &self.color {
            let hex = c.strip_prefix('#').unwrap_or("");
            if !(c.starts_with('#')
                && (hex.len() == 6 || hex.len() == 8)
                && hex.chars().all(|ch| ch.is_ascii_hexdigit()))
            {
                e.push(
                    "background.color",
                    format!("must be '#RRGGBB' or '#AARRGGBB', found '{c}'"),
                );
            }
        }
        if let Some(o) = self.opacity
            && !(0.0..=1.0).contains(&o)
        {
            e.push(
                "background.opacity",
                format!("must be between 0 and 1, found {o}"),
            );
        }
        if let Some(img) = &self.image {
            let remote = img.starts_with("http://") || img.starts_with("https://");
            let absolute = img.starts_with('/')
                || img.starts_with('\\')
                || img.get(1..3) == Some(":\\")
                || img.get(1..3) == Some(":/");
            if !remote && (absolute || img.split(['/', '\\']).any(|seg| seg == "..")) {
                e.push(
                    "background.image",
                    "must be an http(s) URL or a relative path without '..'",
                );
            }
        }
        e.into_result()
    }
}

impl Chat {
    /// Whether this is a group chat (more than one character).
    pub fn is_group(&self) -> bool {
        self.characters.len() > 1
    }

    /// The muted members' ids ([`MUTED_KEY`]).
    pub fn muted(&self) -> Vec<CharacterId> {
        self.extra
            .get(MUTED_KEY)
            .and_then(serde_json::Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(serde_json::Value::as_i64)
                    .map(CharacterId)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether `id` is muted.
    pub fn is_muted(&self, id: CharacterId) -> bool {
        self.muted().contains(&id)
    }

    /// Replaces the muted list (an empty list removes the key).
    pub fn set_muted(&mut self, ids: &[CharacterId]) {
        if ids.is_empty() {
            self.extra.remove(MUTED_KEY);
        } else {
            let ids: Vec<i64> = ids.iter().map(|id| id.0).collect();
            self.extra.insert(MUTED_KEY.into(), serde_json::json!(ids));
        }
    }

    /// Validates the background override, if any.
    pub fn validate(&self) -> Result<(), ValidationErrors> {
        match &self.background {
            Some(b) => b.validate(),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advanced_rendering_is_on_unless_stored_off() {
        let old: Chat = serde_json::from_value(serde_json::json!({"name": "before the flag"}))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            old.advanced_rendering,
            "a chat without the field reads as on"
        );
        let off: Chat = serde_json::from_value(serde_json::json!({"advancedRendering": false}))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(!off.advanced_rendering);
        let v = serde_json::to_value(&off).unwrap_or_default();
        assert_eq!(v["advancedRendering"], serde_json::json!(false));
        assert!(Chat::default().advanced_rendering);
    }

    #[test]
    fn reply_mode_defaults_to_natural_and_mutes_live_in_extra() {
        let old: Chat = serde_json::from_value(serde_json::json!({"name": "old"}))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(old.reply_mode, ReplyMode::Natural);
        let mut c: Chat = serde_json::from_value(serde_json::json!({"replyMode": "designated"}))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.reply_mode, ReplyMode::Designated);
        c.set_muted(&[CharacterId(4)]);
        assert!(c.is_muted(CharacterId(4)) && !c.is_muted(CharacterId(5)));
        let v = serde_json::to_value(&c).unwrap_or_default();
        assert_eq!(v["replyMode"], "designated");
        assert_eq!(v[MUTED_KEY], serde_json::json!([4]));
        c.set_muted(&[]);
        assert!(!c.extra.contains_key(MUTED_KEY));
        assert_eq!(ReplyMode::parse("all"), Some(ReplyMode::All));
        assert_eq!(ReplyMode::parse("list"), None);
    }

    #[test]
    fn background_precedence_is_avatar_image_color() {
        let all = ChatBackground {
            image: Some("files/chat/bg.png".into()),
            use_avatar: Some(true),
            color: Some("#222222".into()),
            opacity: Some(0.85),
            ..Default::default()
        };
        assert_eq!(all.resolve(), Some(BackgroundSource::Avatar));
        let no_avatar = ChatBackground {
            use_avatar: Some(false),
            ..all.clone()
        };
        assert_eq!(
            no_avatar.resolve(),
            Some(BackgroundSource::Image {
                image: "files/chat/bg.png",
                opacity: 0.85
            })
        );
        let color = ChatBackground {
            color: Some("#222222".into()),
            ..Default::default()
        };
        assert_eq!(color.resolve(), Some(BackgroundSource::Color("#222222")));
        assert_eq!(ChatBackground::default().resolve(), None);
    }

    #[test]
    fn background_validation_names_fields() {
        let bad = ChatBackground {
            color: Some("red".into()),
            opacity: Some(2.0),
            image: Some("/etc/x.png".into()),
            ..Default::default()
        };
        let err = bad.validate().unwrap_err();
        let paths: Vec<_> = err.0.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            ["background.color", "background.opacity", "background.image"]
        );
        let ok = ChatBackground {
            color: Some("#AA222222".into()),
            ..Default::default()
        };
        assert!(ok.validate().is_ok());
    }

    #[test]
    fn chat_serializes_seed_shape() {
        let v = serde_json::to_value(Chat {
            name: "c".into(),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(v["background"], serde_json::Value::Null);
        assert!(v["characters"].is_array());
        assert!(v["lorebooks"].is_array());
        let b: ChatBackground = serde_json::from_str(r#"{"useAvatar":true}"#).unwrap();
        assert_eq!(b.use_avatar, Some(true));
    }

    #[test]
    fn a_background_keeps_fields_it_does_not_know() {
        let original = serde_json::json!({
            "name": "c",
            "background": {"image": "files/chat/bg.png", "opacity": 0.5, "blur": 4, "fit": "cover"},
        });
        let chat: Chat = serde_json::from_value(original.clone()).unwrap_or_else(|e| panic!("{e}"));
        let bg = chat
            .background
            .as_ref()
            .unwrap_or_else(|| panic!("no background"));
        assert_eq!(bg.extra["blur"], 4);
        assert_eq!(
            bg.resolve(),
            Some(BackgroundSource::Image {
                image: "files/chat/bg.png",
                opacity: 0.5
            })
        );
        let back = serde_json::to_value(&chat).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            back["background"], original["background"],
            "read → write loses nothing"
        );
    }
}
