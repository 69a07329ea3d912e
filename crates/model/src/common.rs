//! Small shared pieces: the message role enum, the unknown-field map and summaries.

use serde::{Deserialize, Serialize};

/// Unknown fields kept verbatim so that import → export → import is lossless.
///
/// Every type read from outside flattens one of these: keys that this program does not model are
/// stored under their original names and written back on export.
pub type Extra = serde_json::Map<String, serde_json::Value>;

/// Who speaks a message or an injected prompt (seed: `'system' | 'user' | 'assistant'`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// System / narrator text.
    #[default]
    System,
    /// The human player.
    User,
    /// A character.
    Assistant,
}

impl Role {
    /// The seed's string for this role.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// `{ id, name }` summary as the seed's `all()` calls and chat objects return it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, schemars::JsonSchema)]
pub struct Summary<Id> {
    /// The referenced object's id.
    pub id: Id,
    /// Its display name.
    #[serde(default)]
    pub name: String,
}

/// Name-lookup mode of the seed's `find(name, { match })` calls.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum NameMatch {
    /// Whole name equal (default).
    #[default]
    Exact,
    /// Name starts with the query.
    Prefix,
    /// Name ends with the query.
    Suffix,
    /// Name contains the query.
    Contains,
}

impl NameMatch {
    /// Whether `name` matches `query` under this mode (case-sensitive, as the seed does not say otherwise).
    pub fn matches(self, name: &str, query: &str) -> bool {
        match self {
            NameMatch::Exact => name == query,
            NameMatch::Prefix => name.starts_with(query),
            NameMatch::Suffix => name.ends_with(query),
            NameMatch::Contains => name.contains(query),
        }
    }
}

pub(crate) fn is_false(b: &bool) -> bool {
    !*b
}

pub(crate) fn is_zero(n: &u64) -> bool {
    *n == 0
}

pub(crate) fn default_true() -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_strings_match_the_seed() {
        assert_eq!(
            serde_json::to_string(&Role::Assistant).unwrap(),
            "\"assistant\""
        );
        let r: Role = serde_json::from_str("\"user\"").unwrap();
        assert_eq!(r, Role::User);
        assert_eq!(Role::System.as_str(), "system");
    }

    #[test]
    fn name_match_modes() {
        assert!(NameMatch::Prefix.matches("Alice", "Ali"));
        assert!(NameMatch::Suffix.matches("Alice", "ice"));
        assert!(NameMatch::Contains.matches("Alice", "lic"));
        assert!(!NameMatch::Exact.matches("Alice", "Ali"));
    }
}
