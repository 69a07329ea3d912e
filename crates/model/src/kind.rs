//! [`AssetKind`]: the six kinds of library asset, and the one parser of their names.
//!
//! Every door names kinds — `tavo import --kind`, `tavo export KIND`, `tavo list KIND`,
//! `GET /api/library/{kind}`, the import form's `kind` field — and they used to parse them with
//! two enums that had drifted (`worldinfo` worked for export but not for import). There is now
//! one enum and one parser here, so a name accepted by one door is accepted by all of them.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The kinds of library asset: what a file can hold, what the store keeps in its asset tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AssetKind {
    /// Character card.
    Character,
    /// User persona.
    Persona,
    /// Prompt preset.
    Preset,
    /// Lorebook / world info.
    Lorebook,
    /// Regex group.
    Regex,
    /// Chat with its messages.
    Chat,
}

/// A kind name no door accepts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown kind {0:?}: use character, persona, preset, lorebook, regex or chat (plurals and any case accepted)"
)]
pub struct UnknownKind(pub String);

impl AssetKind {
    /// Every kind, in the order the CLI lists them.
    pub const ALL: [AssetKind; 6] = [
        AssetKind::Character,
        AssetKind::Persona,
        AssetKind::Preset,
        AssetKind::Lorebook,
        AssetKind::Regex,
        AssetKind::Chat,
    ];

    /// The singular name the seed and every door use (`character`, …, `regex`, `chat`).
    pub fn as_str(self) -> &'static str {
        match self {
            AssetKind::Character => "character",
            AssetKind::Persona => "persona",
            AssetKind::Preset => "preset",
            AssetKind::Lorebook => "lorebook",
            AssetKind::Regex => "regex",
            AssetKind::Chat => "chat",
        }
    }

    /// The key under which import results name this kind's id (`characterId`, …), the seed's
    /// `tavo.character.import` spelling.
    pub fn id_key(self) -> &'static str {
        match self {
            AssetKind::Character => "characterId",
            AssetKind::Persona => "personaId",
            AssetKind::Preset => "presetId",
            AssetKind::Lorebook => "lorebookId",
            AssetKind::Regex => "regexId",
            AssetKind::Chat => "chatId",
        }
    }

    /// The kind whose id an import result names under `key` (the inverse of [`Self::id_key`]).
    pub fn of_id_key(key: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.id_key() == key)
    }

    /// Parses a kind name: singular or plural, any case, surrounding blanks ignored, plus the
    /// aliases users type (`char`, `worldinfo`, `world-info`, `regexp`). `card` is not an alias:
    /// a card file holds a character *and* possibly a lorebook and regex group.
    pub fn parse(name: &str) -> Option<Self> {
        let name = name.trim().to_ascii_lowercase();
        let kind = match name.as_str() {
            "character" | "characters" | "char" | "chars" => AssetKind::Character,
            "persona" | "personas" => AssetKind::Persona,
            "preset" | "presets" => AssetKind::Preset,
            "lorebook" | "lorebooks" | "worldinfo" | "world-info" | "world_info" => {
                AssetKind::Lorebook
            }
            "regex" | "regexes" | "regexp" | "regexps" => AssetKind::Regex,
            "chat" | "chats" => AssetKind::Chat,
            _ => return None,
        };
        Some(kind)
    }
}

impl fmt::Display for AssetKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for AssetKind {
    type Err = UnknownKind;

    /// See [`AssetKind::parse`].
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        AssetKind::parse(s).ok_or_else(|| UnknownKind(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every spelling a door has ever accepted, and a few it must refuse.
    #[test]
    fn kind_names_parse_as_a_table() {
        use AssetKind::*;
        let table: &[(&str, Option<AssetKind>)] = &[
            ("character", Some(Character)),
            ("characters", Some(Character)),
            ("Character", Some(Character)),
            ("CHARACTERS", Some(Character)),
            ("char", Some(Character)),
            ("chars", Some(Character)),
            ("  character\n", Some(Character)),
            ("persona", Some(Persona)),
            ("Personas", Some(Persona)),
            ("preset", Some(Preset)),
            ("PRESETS", Some(Preset)),
            ("lorebook", Some(Lorebook)),
            ("Lorebooks", Some(Lorebook)),
            ("worldinfo", Some(Lorebook)),
            ("WorldInfo", Some(Lorebook)),
            ("world-info", Some(Lorebook)),
            ("world_info", Some(Lorebook)),
            ("regex", Some(Regex)),
            ("Regexes", Some(Regex)),
            ("regexp", Some(Regex)),
            ("regexps", Some(Regex)),
            ("chat", Some(Chat)),
            ("Chats", Some(Chat)),
            ("", None),
            ("cards", None),
            ("card", None),
            ("theme", None),
            ("regexs", None),
            ("characterss", None),
            ("world info", None),
        ];
        for (name, want) in table {
            assert_eq!(AssetKind::parse(name), *want, "{name:?}");
            assert_eq!(name.parse::<AssetKind>().ok(), *want, "{name:?}");
        }
    }

    #[test]
    fn names_round_trip_and_errors_list_the_kinds() {
        for kind in AssetKind::ALL {
            assert_eq!(AssetKind::parse(kind.as_str()), Some(kind));
            assert_eq!(AssetKind::of_id_key(kind.id_key()), Some(kind));
            assert_eq!(
                serde_json::to_value(kind).ok(),
                Some(serde_json::Value::String(kind.as_str().into()))
            );
        }
        let err = "cards".parse::<AssetKind>().unwrap_err().to_string();
        assert!(err.contains("\"cards\""), "{err}");
        assert!(err.contains("lorebook, regex or chat"), "{err}");
        assert_eq!(AssetKind::of_id_key("id"), None);
    }
}
