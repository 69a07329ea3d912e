//! Argument shapes shared by many operations, as seed 000 has them: `get` and `delete` take a
//! positive integer id or an `{ "id": … }` object; `find` needs a non-empty name and matches it
//! `exact`, `contains`, `prefix` or `suffix`.

use schemars::JsonSchema;
use serde::Deserialize;
use tavo_model::common::NameMatch;

use crate::error::{ErrorCode, ToolError};

/// A positive integer id, or an object carrying it (`{ "id": 12 }`, as returned by `get`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum IdRef {
    /// `12`
    Id(#[schemars(range(min = 1))] i64),
    /// `{ "id": 12 }`
    Object(IdObject),
}

/// `{ "id": 12 }`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IdObject {
    /// The id.
    #[schemars(range(min = 1))]
    pub id: i64,
}

impl IdRef {
    /// The id.
    pub fn get(self) -> i64 {
        match self {
            IdRef::Id(id) | IdRef::Object(IdObject { id }) => id,
        }
    }
}

/// Arguments of every `get` and `delete`: `{ "id": 12 }` or `{ "id": { "id": 12 } }`.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IdArgs {
    /// Positive integer id, or an object with `id` (such as the one `get` returned).
    pub id: IdRef,
}

/// Options of `find`.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindOptions {
    /// How the name is compared: `exact` (default), `contains`, `prefix` or `suffix`.
    #[serde(default, rename = "match")]
    pub match_mode: Option<NameMatch>,
}

/// Arguments of every `find`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindArgs {
    /// The name to look for. Non-empty.
    #[schemars(length(min = 1))]
    pub name: String,
    /// Match mode.
    #[serde(default)]
    pub options: Option<FindOptions>,
}

impl FindArgs {
    /// The trimmed, non-empty name and the match mode.
    pub fn parts(&self) -> Result<(&str, NameMatch), ToolError> {
        let name = self.name.trim();
        if name.is_empty() {
            return Err(ToolError::invalid_at(
                "name",
                "a non-empty name",
                "empty string",
            ));
        }
        Ok((
            name,
            self.options.and_then(|o| o.match_mode).unwrap_or_default(),
        ))
    }
}

/// Whether `candidate` matches `name` under `mode` (case-sensitive, as names are shown).
pub fn name_matches(candidate: &str, name: &str, mode: NameMatch) -> bool {
    match mode {
        NameMatch::Exact => candidate == name,
        NameMatch::Contains => candidate.contains(name),
        NameMatch::Prefix => candidate.starts_with(name),
        NameMatch::Suffix => candidate.ends_with(name),
    }
}

/// A positive integer id inside a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct PositiveId(#[schemars(range(min = 1))] pub i64);

/// No arguments: `{}`.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// `resource_not_found` for an asset id.
pub fn missing(kind: &str, id: impl std::fmt::Display) -> ToolError {
    ToolError::new(
        ErrorCode::ResourceNotFound,
        format!("{kind} {id} does not exist; call the matching all or find tool to get a valid id"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_accept_both_forms() {
        let a: IdArgs =
            serde_json::from_value(json!({"id": 12})).unwrap_or(IdArgs { id: IdRef::Id(0) });
        let b: IdArgs = serde_json::from_value(json!({"id": {"id": 12}}))
            .unwrap_or(IdArgs { id: IdRef::Id(0) });
        assert_eq!(a.id.get(), 12);
        assert_eq!(b.id.get(), 12);
    }

    #[test]
    fn match_modes() {
        assert!(name_matches("Alice", "Alice", NameMatch::Exact));
        assert!(!name_matches("Alice", "Ali", NameMatch::Exact));
        assert!(name_matches("Alice", "Ali", NameMatch::Prefix));
        assert!(name_matches("Alice", "ice", NameMatch::Suffix));
        assert!(name_matches("Alice", "lic", NameMatch::Contains));
    }
}
