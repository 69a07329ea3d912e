//! Regex groups (seed 002 §🎨 正则: the group object and `RegexEntry`).

use crate::common::{Extra, default_true, is_zero};
use crate::ids::{RegexId, Revision};
use crate::validation::{ValidationErrors, index, join};
use serde::{Deserialize, Serialize};

/// A group of find/replace rules (seed: `{ id, name, entries }`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct RegexGroup {
    /// Unique id; `None` until stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<RegexId>,
    /// Optimistic-concurrency revision.
    #[serde(skip_serializing_if = "is_zero")]
    pub revision: Revision,
    /// Name (required; SillyTavern import defaults it to `Regex`).
    pub name: String,
    /// Rules, applied in order.
    pub entries: Vec<RegexEntry>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Extra,
}

/// What text a rule applies to (seed: `'user' | 'char' | 'reasoning' | 'lorebook'`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RegexPlacement {
    /// User input.
    User,
    /// AI output.
    Char,
    /// Reasoning content.
    Reasoning,
    /// Injected lorebook content.
    Lorebook,
}

/// When a rule runs (seed: the five timings).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub enum RegexTiming {
    /// Only when rendering; the stored message is untouched (SillyTavern `markdownOnly`).
    #[default]
    Display,
    /// Only on the copy sent to the model (SillyTavern `promptOnly`).
    Send,
    /// Both display and model copy; storage untouched.
    SendAndDisplay,
    /// Persisted rewrite when a reply arrives.
    Receive,
    /// Persisted rewrite on receive and on edit (SillyTavern `runOnEdit`).
    EditAndReceive,
}

/// Macro substitution inside the find pattern (seed: `'none' | 'raw' | 'escaped'`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Substitution {
    /// No macro substitution.
    #[default]
    None,
    /// Macros substituted verbatim.
    Raw,
    /// Macros substituted regex-escaped.
    Escaped,
}

/// One rule (seed: 规则条目字段 RegexEntry).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct RegexEntry {
    /// Identifier (generated on SillyTavern import).
    pub identifier: String,
    /// Display name (required).
    pub name: String,
    /// Pattern, plain or `/pattern/flags`.
    pub find_regex: String,
    /// Replacement (`$1`, `{{match}}`, macros).
    pub replace_string: String,
    /// Strings removed from captures before replacement.
    pub trim_strings: Vec<String>,
    /// Where the rule applies (default `['char']`).
    pub placements: Vec<RegexPlacement>,
    /// When the rule runs (default `display`).
    pub timing: RegexTiming,
    /// Macro substitution mode.
    pub substitution: Substitution,
    /// Lowest message depth the rule applies to; `null` = unbounded.
    pub min_depth: Option<i64>,
    /// Highest message depth; `null` = unbounded.
    pub max_depth: Option<i64>,
    /// Whether the rule is on.
    #[serde(default = "default_true")]
    pub enabled: bool,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Extra,
}

impl Default for RegexEntry {
    fn default() -> Self {
        Self {
            identifier: String::new(),
            name: String::new(),
            find_regex: String::new(),
            replace_string: String::new(),
            trim_strings: Vec::new(),
            placements: vec![RegexPlacement::Char],
            timing: RegexTiming::Display,
            substitution: Substitution::None,
            min_depth: None,
            max_depth: None,
            enabled: true,
            extra: Extra::new(),
        }
    }
}

impl RegexGroup {
    /// Validates names and depth bounds, naming field paths.
    pub fn validate(&self) -> Result<(), ValidationErrors> {
        let mut e = ValidationErrors::default();
        e.require_non_blank("name", &self.name);
        for (i, r) in self.entries.iter().enumerate() {
            let p = index("entries", i);
            if let (Some(lo), Some(hi)) = (r.min_depth, r.max_depth)
                && lo >= 0
                && hi >= 0
                && lo > hi
            {
                e.push(
                    join(&p, "minDepth"),
                    format!("must not exceed maxDepth ({lo} > {hi})"),
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
    fn omitted_fields_take_seed_defaults() {
        let r: RegexEntry = serde_json::from_str(r#"{"name":"n","findRegex":"a"}"#).unwrap();
        assert_eq!(r.placements, vec![RegexPlacement::Char]);
        assert_eq!(r.timing, RegexTiming::Display);
        assert_eq!(r.substitution, Substitution::None);
        assert!(r.enabled);
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["minDepth"], serde_json::Value::Null);
        assert!(v.get("trimStrings").is_some());
    }

    #[test]
    fn timing_strings() {
        for (s, t) in [
            ("display", RegexTiming::Display),
            ("send", RegexTiming::Send),
            ("sendAndDisplay", RegexTiming::SendAndDisplay),
            ("receive", RegexTiming::Receive),
            ("editAndReceive", RegexTiming::EditAndReceive),
        ] {
            assert_eq!(serde_json::to_value(t).unwrap(), serde_json::json!(s));
        }
    }

    #[test]
    fn inverted_depths_are_refused() {
        let g = RegexGroup {
            name: "g".into(),
            entries: vec![RegexEntry {
                min_depth: Some(5),
                max_depth: Some(1),
                ..Default::default()
            }],
            ..Default::default()
        };
        assert_eq!(g.validate().unwrap_err().0[0].path, "entries[0].minDepth");
    }
}
