//! Lorebooks / world info (seed 002 §📚 世界书: the lorebook object and `LorebookEntry`).

use crate::common::{Extra, Role, default_true, is_zero};
use crate::ids::{LorebookId, Revision};
use crate::validation::{ValidationErrors, index, join};
use serde::{Deserialize, Serialize};

/// Default `scanDepth` (seed: 默认 2).
pub const DEFAULT_SCAN_DEPTH: u32 = 2;
/// Largest `scanDepth` (seed: 最大 1000).
pub const MAX_SCAN_DEPTH: u32 = 1000;
/// Default `injectionDepth` for `atDepth` entries (observed import default).
pub const DEFAULT_INJECTION_DEPTH: u32 = 4;
/// Default insertion order (SillyTavern's `order` default).
pub const DEFAULT_ORDER: i64 = 100;

/// Lorebook-level `extra` key choosing which characters are word characters for whole-word
/// keys: `"ascii"` — SillyTavern's JavaScript `\W`, `[A-Za-z0-9_]` only — which imports of
/// SillyTavern world info and card books set, so they match as in SillyTavern; absent (or any
/// other value) — Tavo's rule: letters and digits of every script except CJK. In SillyTavern
/// and CCv3 files the absent key means SillyTavern's rule and [`WORD_CHARACTERS_UNICODE`]
/// Tavo's (see `tavo-formats`).
pub const WORD_CHARACTERS_KEY: &str = "wordCharacters";

/// [`WORD_CHARACTERS_KEY`]'s value for SillyTavern's ASCII-only rule.
pub const WORD_CHARACTERS_ASCII: &str = "ascii";

/// [`WORD_CHARACTERS_KEY`]'s value naming Tavo's rule in a SillyTavern or CCv3 file, where the
/// absent key means SillyTavern's: a native book exported to those formats says so, and comes
/// back native.
pub const WORD_CHARACTERS_UNICODE: &str = "unicode";

/// A lorebook (seed: `{ id, name, entries }`).
///
/// `extra` keeps the file-level keys of SillyTavern world info (`originalData`, `extensions` …)
/// and of CCv3 books (`description`, `scan_depth`, `token_budget`, `recursive_scanning`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct Lorebook {
    /// Unique id; `None` until stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<LorebookId>,
    /// Optimistic-concurrency revision.
    #[serde(skip_serializing_if = "is_zero")]
    pub revision: Revision,
    /// Name (required).
    pub name: String,
    /// Entries.
    pub entries: Vec<LorebookEntry>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Extra,
}

/// Trigger strategy (seed: `'constant' | 'keyword'`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum LorebookStrategy {
    /// Always injected.
    Constant,
    /// Injected when a keyword matches.
    #[default]
    Keyword,
}

/// Secondary keyword logic (seed: `'none' | 'andAny' | 'andAll' | 'notAny' | 'notAll'`).
/// Every strategy also requires a primary keyword hit.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub enum SecondaryKeywordStrategy {
    /// Secondary keywords are ignored.
    None,
    /// Any secondary keyword must match (the seed's default).
    #[default]
    AndAny,
    /// All secondary keywords must match.
    AndAll,
    /// No secondary keyword may match.
    NotAny,
    /// Not all secondary keywords may match.
    NotAll,
}

/// Where a lorebook entry is injected (seed: the five `injectionPosition`s).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub enum LorebookPosition {
    /// Above the character description (↑Char, preset marker `worldInfoBefore`).
    LorebookBefore,
    /// Below the character description (↓Char, preset marker `worldInfoAfter`); import default.
    #[default]
    LorebookAfter,
    /// Before the dialogue examples.
    TopOfExampleMessages,
    /// After the dialogue examples.
    BottomOfExampleMessages,
    /// In chat history at `injectionDepth`.
    AtDepth,
}

/// One lorebook entry (seed: 条目对象字段 LorebookEntry).
///
/// `order` is not in the seed's field list but decides the insertion order among entries
/// (SillyTavern `order` / CCv3 `insertion_order`), so it is modelled rather than left in `extra`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct LorebookEntry {
    /// Unique entry identifier (generated on import when absent).
    pub identifier: String,
    /// Display / search name; not injected (SillyTavern `comment`).
    pub name: String,
    /// Injected text.
    pub content: String,
    /// Disabled entries never fire.
    #[serde(default = "default_true")]
    pub enabled: bool,
    /// constant / keyword.
    pub strategy: LorebookStrategy,
    /// Primary keywords.
    pub keywords: Vec<String>,
    /// Secondary keywords.
    pub secondary_keywords: Vec<String>,
    /// Secondary keyword logic.
    pub secondary_keyword_strategy: SecondaryKeywordStrategy,
    /// Messages scanned for keywords (default 2, max 1000).
    pub scan_depth: u32,
    /// Case-sensitive keyword match.
    pub case_sensitive: bool,
    /// Whole-word keyword match.
    pub match_whole_word: bool,
    /// Injection position.
    pub injection_position: LorebookPosition,
    /// Depth for `atDepth`.
    pub injection_depth: u32,
    /// Role of the injected message.
    pub injection_role: Role,
    /// Activation probability 0–100.
    pub probability: u32,
    /// Turns the entry stays active after activation.
    pub sticky: u32,
    /// Turns after an activation during which it cannot activate.
    pub cooldown: u32,
    /// Turns before the entry may activate.
    pub delay: u32,
    /// Insertion order among entries at the same position (lower first, as SillyTavern).
    pub order: i64,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Extra,
}

impl Default for LorebookEntry {
    fn default() -> Self {
        Self {
            identifier: String::new(),
            name: String::new(),
            content: String::new(),
            enabled: true,
            strategy: LorebookStrategy::Keyword,
            keywords: Vec::new(),
            secondary_keywords: Vec::new(),
            secondary_keyword_strategy: SecondaryKeywordStrategy::AndAny,
            scan_depth: DEFAULT_SCAN_DEPTH,
            case_sensitive: false,
            match_whole_word: true,
            injection_position: LorebookPosition::LorebookAfter,
            injection_depth: DEFAULT_INJECTION_DEPTH,
            injection_role: Role::System,
            probability: 100,
            sticky: 0,
            cooldown: 0,
            delay: 0,
            order: DEFAULT_ORDER,
            extra: Extra::new(),
        }
    }
}

impl LorebookEntry {
    /// Whether the entry's probability roll applies. SillyTavern's `useProbability: false`
    /// makes it ignore `probability` (the entry always passes its roll); tavo keeps that flag
    /// in the entry's extras — at the top level from a world-info file, under `extensions`
    /// from a CCv3 book. Without the flag (Tavo's own entries) the roll applies.
    pub fn rolls_probability(&self) -> bool {
        let flag = self.extra.get("useProbability").or_else(|| {
            self.extra
                .get("extensions")
                .and_then(|e| e.get("useProbability"))
        });
        flag.and_then(serde_json::Value::as_bool) != Some(false)
    }

    /// The effective secondary logic: an empty secondary list behaves as `none`
    /// (the seed leaves this open; treating it as `none` keeps a plain keyword entry firing).
    pub fn effective_secondary_strategy(&self) -> SecondaryKeywordStrategy {
        if self.secondary_keywords.iter().all(|k| k.trim().is_empty()) {
            SecondaryKeywordStrategy::None
        } else {
            self.secondary_keyword_strategy
        }
    }

    /// Validates this entry, reporting paths under `prefix` (e.g. `entries[3]`).
    pub fn validate_into(&self, prefix: &str, e: &mut ValidationErrors) {
        if self.identifier.trim().is_empty() {
            e.push(
                join(prefix, "identifier"),
                "is required and must not be blank",
            );
        }
        if self.scan_depth > MAX_SCAN_DEPTH {
            e.check_range(
                &join(prefix, "scanDepth"),
                i64::from(self.scan_depth),
                0,
                i64::from(MAX_SCAN_DEPTH),
            );
        }
        if self.probability > 100 {
            e.check_range(
                &join(prefix, "probability"),
                i64::from(self.probability),
                0,
                100,
            );
        }
    }
}

impl Lorebook {
    /// Validates the lorebook: name required, unique entry identifiers, ranges of the seed.
    pub fn validate(&self) -> Result<(), ValidationErrors> {
        let mut e = ValidationErrors::default();
        e.require_non_blank("name", &self.name);
        let mut seen = std::collections::HashSet::new();
        for (i, entry) in self.entries.iter().enumerate() {
            let p = index("entries", i);
            entry.validate_into(&p, &mut e);
            if !entry.identifier.is_empty() && !seen.insert(entry.identifier.as_str()) {
                e.push(
                    join(&p, "identifier"),
                    format!("duplicate identifier '{}'", entry.identifier),
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
    fn defaults_follow_the_seed() {
        let e: LorebookEntry = serde_json::from_str(r#"{"identifier":"a","content":"x"}"#).unwrap();
        assert_eq!(e.scan_depth, 2);
        assert_eq!(e.probability, 100);
        assert!(e.enabled);
        assert_eq!(e.injection_position, LorebookPosition::LorebookAfter);
        assert_eq!(e.injection_role, Role::System);
    }

    #[test]
    fn enum_strings_are_the_seeds() {
        let v = serde_json::to_value(LorebookEntry {
            secondary_keyword_strategy: SecondaryKeywordStrategy::NotAll,
            injection_position: LorebookPosition::BottomOfExampleMessages,
            strategy: LorebookStrategy::Constant,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(v["secondaryKeywordStrategy"], "notAll");
        assert_eq!(v["injectionPosition"], "bottomOfExampleMessages");
        assert_eq!(v["strategy"], "constant");
        assert!(v.get("matchWholeWord").is_some());
        for s in ["none", "andAny", "andAll", "notAny", "notAll"] {
            let _: SecondaryKeywordStrategy = serde_json::from_value(serde_json::json!(s)).unwrap();
        }
        for s in [
            "lorebookBefore",
            "lorebookAfter",
            "topOfExampleMessages",
            "bottomOfExampleMessages",
            "atDepth",
        ] {
            let _: LorebookPosition = serde_json::from_value(serde_json::json!(s)).unwrap();
        }
    }

    #[test]
    fn scan_depth_over_limit_names_the_path() {
        let book = Lorebook {
            name: "b".into(),
            entries: vec![
                LorebookEntry {
                    identifier: "a".into(),
                    ..Default::default()
                },
                LorebookEntry {
                    identifier: "b".into(),
                    scan_depth: 1001,
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let err = book.validate().unwrap_err();
        assert_eq!(
            err.to_string(),
            "entries[1].scanDepth: must be 0..=1000, found 1001"
        );
    }

    #[test]
    fn empty_secondary_list_acts_as_none() {
        let e = LorebookEntry::default();
        assert_eq!(
            e.effective_secondary_strategy(),
            SecondaryKeywordStrategy::None
        );
    }
}
