//! Presets (seed 002 §🎛️ 预设: `basicPrompts`, `PresetEntry`, the built-in identifier table).

use crate::common::{Extra, Role, default_true, is_false, is_zero};
use crate::ids::{PresetId, Revision};
use crate::validation::{ValidationErrors, index, join};
use serde::{Deserialize, Serialize};

/// A preset (seed: 预设对象字段 `{ id, name, basicPrompts, entries }`).
///
/// `extra` keeps everything else a SillyTavern preset carries (sampler settings, model names,
/// `prompt_order` lists other than the one that became `entries`, `extensions` …) under the
/// original keys, so exporting back to SillyTavern loses nothing.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct Preset {
    /// Unique id; `None` until stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<PresetId>,
    /// Optimistic-concurrency revision.
    #[serde(skip_serializing_if = "is_zero")]
    pub revision: Revision,
    /// Name (required; SillyTavern import defaults it to `Preset`).
    pub name: String,
    /// System prompt templates; missing ones take the seed's defaults.
    pub basic_prompts: BasicPrompts,
    /// Prompt entries in assembly order.
    pub entries: Vec<PresetEntry>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Extra,
}

/// Default of `basicPrompts.impersonation`. The seed truncates it with `...`; this is
/// SillyTavern's full default text, which the seed's prefix is taken from.
pub const DEFAULT_IMPERSONATION: &str = "[Write your next reply from the point of view of {{user}}, using the chat history so far as a guideline for the writing style of {{user}}. Don't write as {{char}} or system. Don't describe actions of {{char}}.]";

/// Basic prompt templates (seed: 基础提词字段 BasicPrompts). Every field is optional on input and
/// takes the seed's built-in default when missing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct BasicPrompts {
    /// Persona description template (`{{persona}}`).
    pub persona: String,
    /// Character description template (`{{description}}`).
    pub description: String,
    /// Personality template (`{{personality}}`).
    pub personality: String,
    /// Scenario template (`{{scenario}}`).
    pub scenario: String,
    /// Marker before dialogue examples (`[Example Chat]`).
    pub example_message_start: String,
    /// Marker before chat history (`[Start a new Chat]`).
    pub chat_start: String,
    /// Group chat start marker.
    pub group_chat_start: String,
    /// Group nudge.
    pub group_nudge: String,
    /// Continue nudge.
    pub continue_nudge: String,
    /// Impersonation prompt.
    pub impersonation: String,
    /// Lorebook entry wrapper; `{0}` is the entry content.
    pub lorebook: String,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Extra,
}

impl Default for BasicPrompts {
    fn default() -> Self {
        Self {
            persona: "{{persona}}".into(),
            description: "{{description}}".into(),
            personality: "{{personality}}".into(),
            scenario: "{{scenario}}".into(),
            example_message_start: "[Example Chat]".into(),
            chat_start: "[Start a new Chat]".into(),
            group_chat_start: "[Start a new group chat. Group members: {{group}}]".into(),
            group_nudge: "[Write the next reply only as {{char}}.]".into(),
            continue_nudge: "[Continue your last message without repeating its original content.]"
                .into(),
            impersonation: DEFAULT_IMPERSONATION.into(),
            lorebook: "{0}".into(),
            extra: Extra::new(),
        }
    }
}

/// Entry type (seed: `'builtin' | 'marker' | 'custom'`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum PresetEntryType {
    /// Built-in prompt with a fixed identifier (`main`, `jailbreak` …).
    Builtin,
    /// Position marker without content.
    Marker,
    /// User-defined prompt.
    #[default]
    Custom,
}

/// Where an entry goes (seed: `'relative' | 'absolute'`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum PresetInjectionPosition {
    /// Follows the entry list order.
    #[default]
    Relative,
    /// Inserted into chat history at `injectionDepth`.
    Absolute,
}

/// One prompt entry (seed: 提词条目字段 PresetEntry).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct PresetEntry {
    /// Unique identifier within the preset; built-ins use the fixed ids of [`BUILTIN_ENTRIES`].
    pub identifier: String,
    /// Display name.
    pub name: String,
    /// Prompt text; markers have none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Switch of an entry in the active list.
    #[serde(default = "default_true")]
    pub enabled: bool,
    /// Whether the entry is in the active list at all (`false` = archived, never built).
    #[serde(default = "default_true")]
    pub active: bool,
    /// builtin / marker / custom.
    #[serde(rename = "type")]
    pub kind: PresetEntryType,
    /// Message role; `None` (SillyTavern markers have `role: null`) means system.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
    /// relative / absolute.
    pub injection_position: PresetInjectionPosition,
    /// Depth for `absolute`: 0 = after the last message, 1 = before it, …
    pub injection_depth: u32,
    /// Character cards may not override this entry.
    #[serde(skip_serializing_if = "is_false")]
    pub forbid_overrides: bool,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Extra,
}

impl Default for PresetEntry {
    fn default() -> Self {
        Self {
            identifier: String::new(),
            name: String::new(),
            content: None,
            enabled: true,
            active: true,
            kind: PresetEntryType::Custom,
            role: None,
            injection_position: PresetInjectionPosition::Relative,
            injection_depth: 4,
            forbid_overrides: false,
            extra: Extra::new(),
        }
    }
}

impl PresetEntry {
    /// The role used when building: `system` when none is set.
    pub fn effective_role(&self) -> Role {
        self.role.unwrap_or_default()
    }
}

/// One row of the seed's built-in identifier table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuiltinEntry {
    /// Fixed identifier.
    pub identifier: &'static str,
    /// Display name.
    pub name: &'static str,
    /// builtin or marker.
    pub kind: PresetEntryType,
}

/// The seed's built-in identifiers (内置条目 identifier 列表), in the official order.
pub const BUILTIN_ENTRIES: [BuiltinEntry; 12] = [
    BuiltinEntry {
        identifier: "main",
        name: "Main Prompt",
        kind: PresetEntryType::Builtin,
    },
    BuiltinEntry {
        identifier: "worldInfoBefore",
        name: "Lorebook Before",
        kind: PresetEntryType::Marker,
    },
    BuiltinEntry {
        identifier: "personaDescription",
        name: "Persona Description",
        kind: PresetEntryType::Marker,
    },
    BuiltinEntry {
        identifier: "charDescription",
        name: "Char Description",
        kind: PresetEntryType::Marker,
    },
    BuiltinEntry {
        identifier: "charPersonality",
        name: "Char Personality",
        kind: PresetEntryType::Marker,
    },
    BuiltinEntry {
        identifier: "scenario",
        name: "Scenario",
        kind: PresetEntryType::Marker,
    },
    BuiltinEntry {
        identifier: "enhanceDefinitions",
        name: "Enhance Definitions",
        kind: PresetEntryType::Builtin,
    },
    BuiltinEntry {
        identifier: "nsfw",
        name: "Auxiliary Prompt",
        kind: PresetEntryType::Builtin,
    },
    BuiltinEntry {
        identifier: "worldInfoAfter",
        name: "Lorebook After",
        kind: PresetEntryType::Marker,
    },
    BuiltinEntry {
        identifier: "dialogueExamples",
        name: "Chat Examples",
        kind: PresetEntryType::Marker,
    },
    BuiltinEntry {
        identifier: "chatHistory",
        name: "Chat History",
        kind: PresetEntryType::Marker,
    },
    BuiltinEntry {
        identifier: "jailbreak",
        name: "Post-History Instructions",
        kind: PresetEntryType::Builtin,
    },
];

/// Looks up a built-in identifier.
pub fn builtin_entry(identifier: &str) -> Option<&'static BuiltinEntry> {
    BUILTIN_ENTRIES.iter().find(|b| b.identifier == identifier)
}

impl Preset {
    /// The entries of a new preset: the built-in table in official order, all active,
    /// `enhanceDefinitions` disabled (as SillyTavern ships it), builtins with empty content.
    pub fn default_entries() -> Vec<PresetEntry> {
        BUILTIN_ENTRIES
            .iter()
            .map(|b| PresetEntry {
                identifier: b.identifier.into(),
                name: b.name.into(),
                content: (b.kind == PresetEntryType::Builtin).then(String::new),
                enabled: b.identifier != "enhanceDefinitions",
                kind: b.kind,
                role: Some(Role::System),
                ..PresetEntry::default()
            })
            .collect()
    }

    /// Adds the built-in entries a new preset lacks, with their defaults (seed: "preset.entries
    /// 中缺失的部分将自动填充默认值"), so that a preset created with only its own entries still
    /// has a main prompt, the character's definitions and — above all — the chat history.
    ///
    /// Each missing built-in goes right before the present built-in that follows it most closely
    /// in the official order (so the definitions stay above `chatHistory`), else right after the
    /// one that precedes it most closely, else (no built-in given at all) at the front. The caller's entries keep their order; with none of the built-ins
    /// given, they come after the whole built-in list, as a new prompt is appended in
    /// SillyTavern's prompt manager.
    pub fn fill_missing_builtins(&mut self) {
        let rank = |identifier: &str| {
            BUILTIN_ENTRIES
                .iter()
                .position(|b| b.identifier == identifier)
        };
        let defaults = Self::default_entries();
        for (k, default) in defaults.into_iter().enumerate() {
            if self.entry(&default.identifier).is_some() {
                continue;
            }
            let ranks: Vec<Option<usize>> =
                self.entries.iter().map(|e| rank(&e.identifier)).collect();
            // The present built-in nearest in official order after `k`, else before it.
            let next = (0..ranks.len())
                .filter(|&i| ranks[i].is_some_and(|r| r > k))
                .min_by_key(|&i| ranks[i]);
            let previous = (0..ranks.len())
                .filter(|&i| ranks[i].is_some_and(|r| r < k))
                .max_by_key(|&i| ranks[i]);
            let at = match (next, previous) {
                (Some(i), _) => i,
                (None, Some(i)) => i + 1,
                (None, None) => 0,
            };
            self.entries.insert(at, default);
        }
    }

    /// Finds an entry by identifier.
    pub fn entry(&self, identifier: &str) -> Option<&PresetEntry> {
        self.entries.iter().find(|e| e.identifier == identifier)
    }

    /// Checks names, identifier uniqueness and marker/builtin consistency, naming field paths.
    pub fn validate(&self) -> Result<(), ValidationErrors> {
        let mut e = ValidationErrors::default();
        e.require_non_blank("name", &self.name);
        let mut seen = std::collections::HashSet::new();
        for (i, entry) in self.entries.iter().enumerate() {
            let p = index("entries", i);
            if entry.identifier.trim().is_empty() {
                e.push(join(&p, "identifier"), "is required and must not be blank");
            } else if !seen.insert(entry.identifier.as_str()) {
                e.push(
                    join(&p, "identifier"),
                    format!("duplicate identifier '{}'", entry.identifier),
                );
            }
            if let Some(b) = builtin_entry(&entry.identifier)
                && entry.kind != PresetEntryType::Custom
                && entry.kind != b.kind
            {
                e.push(
                    join(&p, "type"),
                    format!("'{}' is a built-in {:?} entry", b.identifier, b.kind).to_lowercase(),
                );
            }
            if entry.injection_depth > 10_000 {
                e.check_range(
                    &join(&p, "injectionDepth"),
                    i64::from(entry.injection_depth),
                    0,
                    10_000,
                );
            }
        }
        e.into_result()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_prompt_defaults_are_the_seeds() {
        let b: BasicPrompts = serde_json::from_str(r#"{"continueNudge":"go on"}"#).unwrap();
        assert_eq!(b.continue_nudge, "go on");
        assert_eq!(b.chat_start, "[Start a new Chat]");
        assert_eq!(b.lorebook, "{0}");
        assert_eq!(
            b.group_chat_start,
            "[Start a new group chat. Group members: {{group}}]"
        );
        assert!(
            b.impersonation
                .starts_with("[Write your next reply from the point of view of {{user}}")
        );
        let v = serde_json::to_value(BasicPrompts::default()).unwrap();
        assert!(v.get("exampleMessageStart").is_some());
        assert!(v.get("groupNudge").is_some());
    }

    #[test]
    fn entry_serde_names() {
        let e: PresetEntry = serde_json::from_str(
            r#"{"identifier":"x","type":"custom","role":"user","injectionPosition":"absolute","injectionDepth":0}"#,
        )
        .unwrap();
        assert_eq!(e.kind, PresetEntryType::Custom);
        assert_eq!(e.injection_position, PresetInjectionPosition::Absolute);
        assert!(e.enabled && e.active);
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v["type"], "custom");
        assert_eq!(v["injectionDepth"], 0);
    }

    #[test]
    fn builtin_table_has_twelve_rows_in_order() {
        assert_eq!(BUILTIN_ENTRIES[0].identifier, "main");
        assert_eq!(BUILTIN_ENTRIES[11].identifier, "jailbreak");
        assert_eq!(
            builtin_entry("chatHistory").map(|b| b.kind),
            Some(PresetEntryType::Marker)
        );
        let p = Preset {
            name: "D".into(),
            entries: Preset::default_entries(),
            ..Default::default()
        };
        assert!(p.validate().is_ok());
    }

    fn ids(p: &Preset) -> Vec<&str> {
        p.entries.iter().map(|e| e.identifier.as_str()).collect()
    }

    #[test]
    fn a_preset_with_only_its_own_entries_gets_the_builtins_first() {
        let mut p = Preset {
            name: "Mini".into(),
            entries: vec![PresetEntry {
                identifier: "abc123".into(),
                content: Some("style".into()),
                ..Default::default()
            }],
            ..Default::default()
        };
        p.fill_missing_builtins();
        let mut want: Vec<&str> = BUILTIN_ENTRIES.iter().map(|b| b.identifier).collect();
        want.push("abc123");
        assert_eq!(ids(&p), want);
        assert!(p.validate().is_ok());
        assert_eq!(
            p.entry("chatHistory").map(|e| e.kind),
            Some(PresetEntryType::Marker)
        );
    }

    #[test]
    fn missing_builtins_go_beside_their_neighbours_and_given_ones_are_kept() {
        let entry = |id: &str| PresetEntry {
            identifier: id.into(),
            content: Some(format!("{id}!")),
            ..Default::default()
        };
        let mut p = Preset {
            name: "P".into(),
            entries: vec![entry("x"), entry("chatHistory"), entry("main")],
            ..Default::default()
        };
        p.fill_missing_builtins();
        let got = ids(&p);
        assert_eq!(got.len(), 13);
        // `main` was given after chatHistory: it stays there (last), untouched.
        assert_eq!(got.last(), Some(&"main"));
        assert_eq!(
            p.entry("main").and_then(|e| e.content.as_deref()),
            Some("main!")
        );
        let pos = |id: &str| got.iter().position(|g| *g == id).unwrap_or(usize::MAX);
        assert!(pos("dialogueExamples") < pos("chatHistory"));
        assert!(pos("x") < pos("chatHistory"));
        assert_eq!(pos("jailbreak"), pos("chatHistory") + 1);
        let again = p.clone();
        p.fill_missing_builtins();
        assert_eq!(p, again, "filling twice changes nothing");
    }

    #[test]
    fn duplicate_identifier_is_reported_with_path() {
        let e = PresetEntry {
            identifier: "a".into(),
            ..Default::default()
        };
        let p = Preset {
            name: "x".into(),
            entries: vec![e.clone(), e],
            ..Default::default()
        };
        let err = p.validate().unwrap_err();
        assert_eq!(err.0[0].path, "entries[1].identifier");
    }
}
