//! Characters (seed 002 §🧙 角色: the character object fields and `tavo.character.import`).

use crate::common::{Extra, is_zero};
use crate::ids::{CharacterId, LorebookId, RegexId, Revision};
use crate::validation::ValidationErrors;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// A character (seed: 角色对象字段). Field names are the seed's camelCase names.
///
/// Fields the seed does not name are kept so that a card survives import → export:
/// `extensions` is the card's `data.extensions` (minus `regex_scripts`, which becomes a
/// [`crate::RegexGroup`]), `cardExtra` holds wrapper-level keys of the card file outside `data`
/// (SillyTavern's `chat`, `fav`, `create_date` …), and any other unknown key lands in `extra`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct Character {
    /// Unique id; `None` until stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<CharacterId>,
    /// Optimistic-concurrency revision of the stored row.
    #[serde(skip_serializing_if = "is_zero")]
    pub revision: Revision,
    /// Avatar image URL or path (e.g. `chara/alice.png`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub avatar: Option<String>,
    /// Name (required).
    pub name: String,
    /// Description.
    pub description: String,
    /// Greeting (required by create/update).
    pub first_mes: String,
    /// Personality.
    pub personality: String,
    /// Scenario.
    pub scenario: String,
    /// Dialogue examples, blocks separated by `<START>`.
    pub mes_example: String,
    /// Creator's notes.
    pub creator_notes: String,
    /// System prompt (overrides the preset's `main`; `{{original}}` keeps it).
    pub system_prompt: String,
    /// Post-history instructions (overrides the preset's `jailbreak`).
    pub post_history_instructions: String,
    /// Alternate greetings.
    pub alternate_greetings: Vec<String>,
    /// Tags.
    pub tags: Vec<String>,
    /// Creator name.
    pub creator: String,
    /// Character version string.
    pub character_version: String,
    /// Nickname; replaces `name` as `{{char}}` when set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nickname: Option<String>,
    /// Greetings used only in group chats.
    pub group_only_greetings: Vec<String>,
    /// Creation time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub creation_date: Option<DateTime<Utc>>,
    /// Last modification time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modification_date: Option<DateTime<Utc>>,
    /// The card's `data.extensions` (SillyTavern's `talkativeness`, `fav`, `world`,
    /// `depth_prompt`, and any tool's own keys), kept verbatim.
    #[serde(skip_serializing_if = "Extra::is_empty")]
    pub extensions: Extra,
    /// Keys of the card file outside `data` that are not derived mirrors of `data`.
    #[serde(skip_serializing_if = "Extra::is_empty")]
    pub card_extra: Extra,
    /// Unknown fields (e.g. CCv3 `assets`, `source`, `creator_notes_multilingual`).
    #[serde(flatten)]
    pub extra: Extra,
}

impl Character {
    /// The name `{{char}}` expands to: the nickname when set, else the name.
    pub fn display_name(&self) -> &str {
        match &self.nickname {
            Some(n) if !n.trim().is_empty() => n,
            _ => &self.name,
        }
    }

    /// Checks the fields the seed marks required (`name`, `firstMes` are required by
    /// create/update; an imported card may have an empty greeting, so only `name` is enforced).
    pub fn validate(&self) -> Result<(), ValidationErrors> {
        let mut e = ValidationErrors::default();
        e.require_non_blank("name", &self.name);
        e.into_result()
    }
}

/// Summary returned by `tavo.character.all()` and listed in a chat's `characters`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CharacterSummary {
    /// Character id.
    pub id: CharacterId,
    /// Name.
    #[serde(default)]
    pub name: String,
    /// Avatar URL or path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avatar: Option<String>,
}

/// Result of `tavo.character.import(card)` (seed: `{ characterId, lorebookId, regexId }`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CharacterImportResult {
    /// The created character.
    pub character_id: CharacterId,
    /// The lorebook created from `character_book`, or `null`.
    pub lorebook_id: Option<LorebookId>,
    /// The regex group created from `extensions.regex_scripts`, or `null`.
    pub regex_id: Option<RegexId>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_names_are_the_seeds() {
        let c = Character {
            name: "Alice".into(),
            first_mes: "hi".into(),
            alternate_greetings: vec!["yo".into()],
            group_only_greetings: vec!["all".into()],
            character_version: "1.0".into(),
            post_history_instructions: "p".into(),
            nickname: Some("Ali".into()),
            ..Default::default()
        };
        let v = serde_json::to_value(&c).unwrap();
        for k in [
            "name",
            "firstMes",
            "alternateGreetings",
            "groupOnlyGreetings",
            "characterVersion",
            "postHistoryInstructions",
            "nickname",
            "mesExample",
            "creatorNotes",
            "systemPrompt",
        ] {
            assert!(v.get(k).is_some(), "missing {k}");
        }
        assert_eq!(c.display_name(), "Ali");
    }

    #[test]
    fn unknown_fields_round_trip() {
        let json = r#"{"name":"A","firstMes":"x","assets":[{"type":"icon"}],"creationDate":"2026-03-05T10:20:30Z"}"#;
        let c: Character = serde_json::from_str(json).unwrap();
        assert!(c.extra.contains_key("assets"));
        assert!(c.creation_date.is_some());
        let back: Character = serde_json::from_value(serde_json::to_value(&c).unwrap()).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn blank_name_is_refused_with_path() {
        let err = Character::default().validate().unwrap_err();
        assert_eq!(err.0[0].path, "name");
    }

    #[test]
    fn import_result_uses_seed_names() {
        let r = CharacterImportResult {
            character_id: CharacterId(12),
            lorebook_id: Some(LorebookId(5)),
            regex_id: None,
        };
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"characterId":12,"lorebookId":5,"regexId":null}"#
        );
    }
}
