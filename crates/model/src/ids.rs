//! Typed ids for every stored kind.
//!
//! The seed's operations (`tavo.character.get(12)`, `tavo.message.get(2338)`, …) take positive
//! integer ids; a newtype per kind keeps a `LorebookId` from being passed where a `CharacterId`
//! is expected, while serde still reads and writes a plain JSON number.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema)]
        #[serde(transparent)]
        pub struct $name(pub i64);

        impl $name {
            /// The raw integer, as the seed's APIs expose it.
            pub fn get(self) -> i64 {
                self.0
            }

            /// `true` when the id is a usable stored id (the seed's ids are positive).
            pub fn is_valid(self) -> bool {
                self.0 > 0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl From<i64> for $name {
            fn from(v: i64) -> Self {
                Self(v)
            }
        }

        impl std::str::FromStr for $name {
            type Err = std::num::ParseIntError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                s.trim().parse::<i64>().map(Self)
            }
        }
    };
}

id_type!(
    /// Id of a [`crate::Character`] (seed: 🧙 角色, `characterId`).
    CharacterId
);
id_type!(
    /// Id of a [`crate::Persona`] (seed: 🎭 用户身份).
    PersonaId
);
id_type!(
    /// Id of a [`crate::Preset`] (seed: 🎛️ 预设).
    PresetId
);
id_type!(
    /// Id of a [`crate::Lorebook`] (seed: 📚 世界书, `lorebookId`).
    LorebookId
);
id_type!(
    /// Id of a [`crate::RegexGroup`] (seed: 🎨 正则, `regexId`).
    RegexId
);
id_type!(
    /// Id of a [`crate::Chat`] (seed: 🗨️ 聊天).
    ChatId
);
id_type!(
    /// Id of a [`crate::Message`] (seed: 💬 消息; stable, unlike the floor index).
    MessageId
);
id_type!(
    /// Id of a chat's [`crate::Memory`] record (seed: 🧠 长记忆).
    MemoryId
);

/// Optimistic-concurrency counter carried by every stored asset.
///
/// A write names the revision it read; the store refuses it when the stored revision moved on.
pub type Revision = u64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_serialize_as_plain_numbers() {
        assert_eq!(serde_json::to_string(&CharacterId(12)).unwrap(), "12");
        let id: LorebookId = serde_json::from_str("5").unwrap();
        assert_eq!(id, LorebookId(5));
        assert!(id.is_valid());
        assert!(!MessageId(0).is_valid());
        assert_eq!("34".parse::<ChatId>().unwrap(), ChatId(34));
    }
}
