//! Personas (seed 002 §🎭 用户身份).

use crate::common::{Extra, is_zero};
use crate::ids::{PersonaId, Revision};
use crate::validation::ValidationErrors;
use serde::{Deserialize, Serialize};

/// A user persona (seed: 用户身份对象字段).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct Persona {
    /// Unique id; `None` until stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<PersonaId>,
    /// Optimistic-concurrency revision.
    #[serde(skip_serializing_if = "is_zero")]
    pub revision: Revision,
    /// Name (required).
    pub name: String,
    /// Description (required by create/update).
    pub description: String,
    /// Avatar URL or path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub avatar: Option<String>,
    /// Whether this is the default persona.
    pub active: bool,
    /// Sort index in the persona list.
    pub sort_index: i64,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Extra,
}

impl Persona {
    /// Checks the seed's required fields (`name`; `description` may be empty text but must exist).
    pub fn validate(&self) -> Result<(), ValidationErrors> {
        let mut e = ValidationErrors::default();
        e.require_non_blank("name", &self.name);
        e.into_result()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_use_seed_names() {
        let p = Persona {
            name: "P".into(),
            active: true,
            sort_index: 12,
            ..Default::default()
        };
        let v = serde_json::to_value(&p).unwrap();
        assert_eq!(v["sortIndex"], 12);
        assert_eq!(v["active"], true);
        assert!(Persona::default().validate().is_err());
    }
}
