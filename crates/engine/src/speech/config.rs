//! The voice settings in the library: the connection book (`tts.connections`), the voice
//! bindings (`tts.bindings`), the §14.2 switches (`tts.autoPlay`, `tts.playNarration`,
//! `tts.onlyQuotes`, `tts.playCodeBlocks`, `tts.playTagContent`, `tts.backgroundPlayback`) and
//! the regex playback rules
//! (`tts.rules`). Blocking: every function reads or writes the store; every change is one
//! read-modify-write transaction.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tavo_llm::media::MediaBookError;
use tavo_llm::media::speech::{VoiceBook, VoiceConnection};
use tavo_model::{CharacterId, PersonaId};
use tavo_prompt::speech::{PlaybackRule, PlaybackSettings, validate_rules};
use tavo_store::Store;

use super::SpeechError;

/// The voice bindings.
pub const BINDINGS_KEY: &str = "tts.bindings";
/// The regex playback rules.
pub const RULES_KEY: &str = "tts.rules";
/// Auto-play finished replies in the open app.
pub const AUTO_PLAY: &str = "tts.autoPlay";
/// §14.2: play narration.
pub const PLAY_NARRATION: &str = "tts.playNarration";
/// §14.2: only play quotes.
pub const ONLY_QUOTES: &str = "tts.onlyQuotes";
/// §14.2: play code blocks.
pub const PLAY_CODE_BLOCKS: &str = "tts.playCodeBlocks";
/// §14.2: play `<tag>` content.
pub const PLAY_TAG_CONTENT: &str = "tts.playTagContent";
/// §14.2: background playback — the open app keeps speaking while its page is hidden (another
/// tab, a locked phone). Off, it pauses there and goes on when the page is shown again.
pub const BACKGROUND_PLAYBACK: &str = "tts.backgroundPlayback";

/// The boolean switches with their defaults.
pub const SWITCHES: [(&str, bool); 6] = [
    (AUTO_PLAY, false),
    (BACKGROUND_PLAYBACK, true),
    (PLAY_NARRATION, true),
    (ONLY_QUOTES, false),
    (PLAY_CODE_BLOCKS, false),
    (PLAY_TAG_CONTENT, false),
];

/// Whose voice: a character's or a persona's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VoiceTarget {
    /// The character with this id (a reply's speaker).
    Character(i64),
    /// The persona with this id (the user's side of a chat).
    Persona(i64),
}

impl VoiceTarget {
    /// `character 12` / `persona 5`.
    pub fn describe(self) -> String {
        match self {
            VoiceTarget::Character(id) => format!("character {id}"),
            VoiceTarget::Persona(id) => format!("persona {id}"),
        }
    }

    /// Reads `{character: id|{id}}` or `{persona: id|{id}}` (also `{id}`, a character, as the
    /// seed's example allows).
    pub fn from_json(v: &Value) -> Option<Self> {
        fn id(v: &Value) -> Option<i64> {
            v.as_i64()
                .or_else(|| v.get("id").and_then(Value::as_i64))
                .filter(|n| *n > 0)
        }
        let obj = v.as_object()?;
        match (obj.get("character"), obj.get("persona"), obj.get("id")) {
            (Some(c), None, _) => id(c).map(VoiceTarget::Character),
            (None, Some(p), _) => id(p).map(VoiceTarget::Persona),
            (None, None, Some(i)) => id(i).map(VoiceTarget::Character),
            _ => None,
        }
    }
}

/// One binding: which connection and voice speak for a character or persona.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VoiceBinding {
    /// A `tts.connections` name; `None`: the default connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection: Option<String>,
    /// The voice id (`alloy`, `Kore`, an ElevenLabs voice id).
    pub voice: String,
}

/// Every binding, by id.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct VoiceBindings {
    /// Character bindings, keyed by the character's id as a string (JSON object keys).
    pub characters: BTreeMap<String, VoiceBinding>,
    /// Persona bindings, keyed by the persona's id as a string.
    pub personas: BTreeMap<String, VoiceBinding>,
}

impl VoiceBindings {
    /// The binding of `target`.
    pub fn get(&self, target: VoiceTarget) -> Option<&VoiceBinding> {
        match target {
            VoiceTarget::Character(id) => self.characters.get(&id.to_string()),
            VoiceTarget::Persona(id) => self.personas.get(&id.to_string()),
        }
    }

    fn map(&mut self, target: VoiceTarget) -> (&mut BTreeMap<String, VoiceBinding>, String) {
        match target {
            VoiceTarget::Character(id) => (&mut self.characters, id.to_string()),
            VoiceTarget::Persona(id) => (&mut self.personas, id.to_string()),
        }
    }
}

fn book_error(e: MediaBookError) -> SpeechError {
    if e.is_not_found() {
        SpeechError::NoConnection(e.to_string())
    } else {
        SpeechError::Invalid {
            path: e.field().unwrap_or("tts.connections").to_owned(),
            problem: e.to_string(),
        }
    }
}

/// The connection book.
pub fn load_book(store: &Store) -> Result<VoiceBook, SpeechError> {
    VoiceBook::from_setting(store.setting_get(tavo_llm::media::speech::SETTINGS_KEY)?)
        .map_err(book_error)
}

/// Changes the book in one transaction; nothing is written when `f` fails.
pub fn change_book(
    store: &Store,
    f: impl FnOnce(&mut VoiceBook) -> Result<(), MediaBookError>,
) -> Result<VoiceBook, SpeechError> {
    store.write(|tx| {
        let key = tavo_llm::media::speech::SETTINGS_KEY;
        let mut book = match VoiceBook::from_setting(tx.setting_get(key)?) {
            Ok(b) => b,
            Err(e) => return Ok(Err(book_error(e))),
        };
        if let Err(e) = f(&mut book) {
            return Ok(Err(book_error(e)));
        }
        tx.setting_set(key, &book.to_setting())?;
        Ok(Ok(book))
    })?
}

/// The connection named `name`, else the default one.
pub fn pick_connection(store: &Store, name: Option<&str>) -> Result<VoiceConnection, SpeechError> {
    load_book(store)?.pick(name).cloned().map_err(book_error)
}

/// The voice bindings.
pub fn load_bindings(store: &Store) -> Result<VoiceBindings, SpeechError> {
    match store.setting_get(BINDINGS_KEY)? {
        None | Some(Value::Null) => Ok(VoiceBindings::default()),
        Some(v) => serde_json::from_value(v).map_err(|e| SpeechError::Invalid {
            path: BINDINGS_KEY.into(),
            problem: format!("the setting is not a binding list: {e}"),
        }),
    }
}

/// Binds (or with `None` unbinds) `target`'s voice. The target must exist, and a named
/// connection must be in the book. Answers every binding.
pub fn set_binding(
    store: &Store,
    target: VoiceTarget,
    binding: Option<VoiceBinding>,
) -> Result<VoiceBindings, SpeechError> {
    require_target(store, target)?;
    if let Some(b) = &binding {
        if b.voice.trim().is_empty() {
            return Err(SpeechError::Invalid {
                path: "voice".into(),
                problem: "must not be empty (Tavo: the voice id is entered by hand)".into(),
            });
        }
        if let Some(name) = &b.connection {
            load_book(store)?.get(name).map_err(book_error)?;
        }
    }
    store
        .write(|tx| {
            let mut all: VoiceBindings = match tx.setting_get(BINDINGS_KEY)? {
                None | Some(Value::Null) => VoiceBindings::default(),
                Some(v) => serde_json::from_value(v).unwrap_or_default(),
            };
            let (map, key) = all.map(target);
            match binding {
                Some(b) => {
                    map.insert(key, b);
                }
                None => {
                    map.remove(&key);
                }
            }
            tx.setting_set(
                BINDINGS_KEY,
                &serde_json::to_value(&all).unwrap_or(Value::Null),
            )?;
            Ok(all)
        })
        .map_err(SpeechError::from)
}

/// `resource_not_found` unless the character or persona exists.
pub fn require_target(store: &Store, target: VoiceTarget) -> Result<(), SpeechError> {
    let found = match target {
        VoiceTarget::Character(id) => store
            .get::<tavo_model::Character>(CharacterId(id))?
            .is_some(),
        VoiceTarget::Persona(id) => store.get::<tavo_model::Persona>(PersonaId(id))?.is_some(),
    };
    if found {
        Ok(())
    } else {
        Err(SpeechError::TargetNotFound(target.describe()))
    }
}

/// The voice settings: the switches and the rules.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VoiceSettings {
    /// Auto-play finished replies in the open app (default false).
    pub auto_play: bool,
    /// Keep speaking while the app's page is hidden (default true, what a browser does).
    pub background_playback: bool,
    /// The playback rules.
    #[serde(flatten)]
    pub playback: PlaybackSettings,
}

fn switch(store: &Store, key: &str, default: bool) -> Result<bool, SpeechError> {
    Ok(store
        .setting_get(key)?
        .and_then(|v| v.as_bool())
        .unwrap_or(default))
}

/// The voice settings, defaults filled in.
pub fn load_settings(store: &Store) -> Result<VoiceSettings, SpeechError> {
    let rules: Vec<PlaybackRule> = match store.setting_get(RULES_KEY)? {
        None | Some(Value::Null) => Vec::new(),
        Some(v) => serde_json::from_value(v).map_err(|e| SpeechError::Invalid {
            path: RULES_KEY.into(),
            problem: format!("the setting is not a rule list: {e}"),
        })?,
    };
    Ok(VoiceSettings {
        auto_play: switch(store, AUTO_PLAY, false)?,
        background_playback: switch(store, BACKGROUND_PLAYBACK, true)?,
        playback: PlaybackSettings {
            play_narration: switch(store, PLAY_NARRATION, true)?,
            only_quotes: switch(store, ONLY_QUOTES, false)?,
            play_code_blocks: switch(store, PLAY_CODE_BLOCKS, false)?,
            play_tag_content: switch(store, PLAY_TAG_CONTENT, false)?,
            rules,
        },
    })
}

/// Applies a partial settings object (`{autoPlay?, backgroundPlayback?, playNarration?,
/// onlyQuotes?, playCodeBlocks?, playTagContent?, rules?}`), checked whole first: an unknown field, a
/// non-boolean switch or a bad rule is refused with its path (`rules[1].regex`) and nothing
/// is written. Answers the settings after the change.
pub fn update_settings(store: &Store, patch: &Value) -> Result<VoiceSettings, SpeechError> {
    let obj = patch.as_object().ok_or_else(|| SpeechError::Invalid {
        path: "".into(),
        problem: "expected an object of voice settings".into(),
    })?;
    let fields: [(&str, &str); 6] = [
        ("autoPlay", AUTO_PLAY),
        ("backgroundPlayback", BACKGROUND_PLAYBACK),
        ("playNarration", PLAY_NARRATION),
        ("onlyQuotes", ONLY_QUOTES),
        ("playCodeBlocks", PLAY_CODE_BLOCKS),
        ("playTagContent", PLAY_TAG_CONTENT),
    ];
    let mut writes: Vec<(&str, Value)> = Vec::new();
    for (name, value) in obj {
        if name == "rules" {
            let rules: Vec<PlaybackRule> =
                serde_json::from_value(value.clone()).map_err(|e| SpeechError::Invalid {
                    path: "rules".into(),
                    problem: format!(
                        "expected a list of {{name, regex, mode: include|exclude, enabled?}}: {e}"
                    ),
                })?;
            if let Some(e) = validate_rules(&rules).into_iter().next() {
                return Err(SpeechError::Invalid {
                    path: e.path,
                    problem: e.problem,
                });
            }
            writes.push((RULES_KEY, serde_json::to_value(&rules).unwrap_or(json!([]))));
            continue;
        }
        let Some((_, key)) = fields.iter().find(|(n, _)| n == name) else {
            return Err(SpeechError::Invalid {
                path: name.clone(),
                problem: "no such voice setting (autoPlay, backgroundPlayback, playNarration, onlyQuotes, playCodeBlocks, playTagContent, rules)".into(),
            });
        };
        let Some(b) = value.as_bool() else {
            return Err(SpeechError::Invalid {
                path: name.clone(),
                problem: "expected true or false".into(),
            });
        };
        writes.push((key, Value::Bool(b)));
    }
    store.write(|tx| {
        for (key, value) in &writes {
            tx.setting_set(key, value)?;
        }
        Ok(())
    })?;
    load_settings(store)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn voice_targets_read_every_seed_shape() {
        assert_eq!(
            VoiceTarget::from_json(&json!({"character": 3})),
            Some(VoiceTarget::Character(3))
        );
        assert_eq!(
            VoiceTarget::from_json(&json!({"persona": {"id": 4}})),
            Some(VoiceTarget::Persona(4))
        );
        assert_eq!(
            VoiceTarget::from_json(&json!({"id": 5})),
            Some(VoiceTarget::Character(5))
        );
        assert_eq!(
            VoiceTarget::from_json(&json!({"character": 1, "persona": 2})),
            None
        );
        assert_eq!(VoiceTarget::from_json(&json!({"character": 0})), None);
    }

    #[test]
    fn settings_are_checked_whole_with_field_paths() {
        let dir = tempfile::tempdir().expect("dir");
        let store = Store::open(dir.path()).expect("store");
        let s = load_settings(&store).expect("defaults");
        assert!(!s.auto_play && s.playback.play_narration && !s.playback.only_quotes);
        let bad = json!({"onlyQuotes": true, "rules": [{"name": "a", "regex": "x", "mode": "include"},
            {"name": "b", "regex": "(", "mode": "exclude"}]});
        let e = update_settings(&store, &bad).expect_err("refused");
        assert!(
            matches!(&e, SpeechError::Invalid { path, .. } if path == "rules[1].regex"),
            "{e}"
        );
        assert!(
            !load_settings(&store).expect("read").playback.only_quotes,
            "nothing written"
        );
        let e = update_settings(&store, &json!({"autoPlay": "yes"})).expect_err("refused");
        assert!(matches!(&e, SpeechError::Invalid { path, .. } if path == "autoPlay"));
        let e = update_settings(&store, &json!({"loud": true})).expect_err("refused");
        assert!(matches!(&e, SpeechError::Invalid { path, .. } if path == "loud"));
        let s = update_settings(
            &store,
            &json!({"autoPlay": true, "onlyQuotes": true, "rules": [{"name": "ooc", "regex": "/\\(OOC.*?\\)/i", "mode": "exclude"}]}),
        )
        .expect("saved");
        assert!(s.auto_play && s.playback.only_quotes);
        assert_eq!(s.playback.rules.len(), 1);
        assert!(s.playback.rules[0].enabled);
        let v = serde_json::to_value(&s).expect("json");
        assert_eq!(v["autoPlay"], true);
        assert_eq!(v["rules"][0]["mode"], "exclude");
    }
}
