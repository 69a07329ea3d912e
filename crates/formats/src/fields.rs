//! Serialized field names of the model types.
//!
//! A key left over from a foreign format is stored in the type's flattened `extra`; if it had
//! the same name as a model field (a CCv3 card with `data.avatar`, a chat message with `id`), the
//! Tavo JSON would get the key twice and the value would be lost on re-import. Importers therefore
//! call [`shelter`], which moves such keys under [`SHADOWED`]; [`crate::value::append_extra`]
//! puts them back when exporting to the foreign format.

use serde_json::{Map, Value};

/// Key in `extra` that holds foreign keys whose names collide with model fields.
pub const SHADOWED: &str = "shadowedFields";

/// `Character` fields.
pub const CHARACTER: &[&str] = &[
    "id",
    "revision",
    "avatar",
    "name",
    "description",
    "firstMes",
    "personality",
    "scenario",
    "mesExample",
    "creatorNotes",
    "systemPrompt",
    "postHistoryInstructions",
    "alternateGreetings",
    "tags",
    "creator",
    "characterVersion",
    "nickname",
    "groupOnlyGreetings",
    "creationDate",
    "modificationDate",
    "extensions",
    "cardExtra",
];
/// `Lorebook` and `RegexGroup` fields.
pub const GROUP: &[&str] = &["id", "revision", "name", "entries"];
/// `LorebookEntry` fields.
pub const LOREBOOK_ENTRY: &[&str] = &[
    "identifier",
    "name",
    "content",
    "enabled",
    "strategy",
    "keywords",
    "secondaryKeywords",
    "secondaryKeywordStrategy",
    "scanDepth",
    "caseSensitive",
    "matchWholeWord",
    "injectionPosition",
    "injectionDepth",
    "injectionRole",
    "probability",
    "sticky",
    "cooldown",
    "delay",
    "order",
];
/// `RegexEntry` fields.
pub const REGEX_ENTRY: &[&str] = &[
    "identifier",
    "name",
    "findRegex",
    "replaceString",
    "trimStrings",
    "placements",
    "timing",
    "substitution",
    "minDepth",
    "maxDepth",
    "enabled",
];
/// `Preset` fields.
pub const PRESET: &[&str] = &["id", "revision", "name", "basicPrompts", "entries"];
/// `PresetEntry` fields.
pub const PRESET_ENTRY: &[&str] = &[
    "identifier",
    "name",
    "content",
    "enabled",
    "active",
    "type",
    "role",
    "injectionPosition",
    "injectionDepth",
    "forbidOverrides",
];
/// `Chat` fields.
pub const CHAT: &[&str] = &[
    "id",
    "revision",
    "name",
    "characters",
    "persona",
    "preset",
    "lorebooks",
    "regexes",
    "background",
    "advancedRendering",
    "creationDate",
    "replyMode",
];
/// `Message` fields.
pub const MESSAGE: &[&str] = &[
    "id",
    "floor",
    "role",
    "characterId",
    "name",
    "content",
    "reasoning",
    "hidden",
    "sendDate",
    "swipes",
    "swipeId",
];

/// Moves keys of `extra` named like a model field (`fields`) under [`SHADOWED`].
pub fn shelter(mut extra: Map<String, Value>, fields: &[&str]) -> Map<String, Value> {
    let clashing: Vec<String> = extra
        .keys()
        .filter(|k| fields.contains(&k.as_str()) || k.as_str() == SHADOWED)
        .cloned()
        .collect();
    if clashing.is_empty() {
        return extra;
    }
    let mut shadow = Map::new();
    for k in clashing {
        if let Some(v) = extra.shift_remove(&k) {
            shadow.insert(k, v);
        }
    }
    extra.insert(SHADOWED.into(), Value::Object(shadow));
    extra
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tavo_model::*;

    fn keys<T: serde::Serialize>(v: &T) -> Vec<String> {
        serde_json::to_value(v)
            .ok()
            .and_then(|v| v.as_object().map(|m| m.keys().cloned().collect()))
            .unwrap_or_default()
    }

    fn assert_listed<T: serde::Serialize>(v: &T, list: &[&str]) {
        for k in keys(v) {
            assert!(list.contains(&k.as_str()), "field {k} is not listed");
        }
    }

    #[test]
    fn lists_cover_every_serialized_field() {
        let mut ext = Map::new();
        ext.insert("x".into(), json!(1));
        let c = Character {
            id: Some(CharacterId(1)),
            revision: 1,
            avatar: Some("a".into()),
            nickname: Some("n".into()),
            creation_date: Some(chrono::Utc::now()),
            modification_date: Some(chrono::Utc::now()),
            extensions: ext.clone(),
            card_extra: ext,
            ..Default::default()
        };
        assert_listed(&c, CHARACTER);
        assert_eq!(keys(&c).len(), CHARACTER.len());
        assert_listed(
            &Lorebook {
                id: Some(LorebookId(1)),
                revision: 1,
                ..Default::default()
            },
            GROUP,
        );
        assert_listed(
            &RegexGroup {
                id: Some(RegexId(1)),
                revision: 1,
                ..Default::default()
            },
            GROUP,
        );
        assert_eq!(keys(&LorebookEntry::default()).len(), LOREBOOK_ENTRY.len());
        assert_listed(&LorebookEntry::default(), LOREBOOK_ENTRY);
        assert_eq!(keys(&RegexEntry::default()).len(), REGEX_ENTRY.len());
        let pe = PresetEntry {
            content: Some(String::new()),
            role: Some(Role::User),
            forbid_overrides: true,
            ..Default::default()
        };
        assert_eq!(keys(&pe).len(), PRESET_ENTRY.len());
        assert_listed(
            &Preset {
                id: Some(PresetId(1)),
                revision: 1,
                ..Default::default()
            },
            PRESET,
        );
        let chat = Chat {
            id: Some(ChatId(1)),
            revision: 1,
            creation_date: Some(chrono::Utc::now()),
            ..Default::default()
        };
        assert_eq!(keys(&chat).len(), CHAT.len());
        let m = Message {
            id: Some(MessageId(1)),
            floor: Some(0),
            character_id: Some(CharacterId(1)),
            name: Some("n".into()),
            reasoning: Some("r".into()),
            send_date: Some("d".into()),
            swipes: vec!["s".into()],
            swipe_id: Some(0),
            ..Default::default()
        };
        assert_eq!(keys(&m).len(), MESSAGE.len());
    }

    #[test]
    fn shelter_moves_clashing_keys() {
        let mut m = Map::new();
        m.insert("avatar".into(), json!("none"));
        m.insert("other".into(), json!(1));
        let s = shelter(m, CHARACTER);
        assert_eq!(s[SHADOWED], json!({"avatar": "none"}));
        assert_eq!(s["other"], json!(1));
    }
}
