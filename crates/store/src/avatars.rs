//! Avatar images of characters and personas, kept as bytes beside the asset row.
//!
//! A card's PNG is its avatar; keeping the original bytes lets an export embed the card into
//! the same image instead of a placeholder.

use crate::sql::params;

use tavo_model::{CharacterId, PersonaId};

use crate::error::{Result, StoreError};
use crate::store::Tx;

/// An image and its MIME type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Avatar {
    /// The image's type (`image/png`, …), served as its `Content-Type`.
    pub mime_type: String,
    /// The image exactly as it was imported or uploaded, so an export can embed the card in it.
    pub bytes: Vec<u8>,
}

/// Where one owner kind keeps its avatars.
struct AvatarTable {
    kind: &'static str,
    table: &'static str,
    column: &'static str,
    owners: &'static str,
}

const CHARACTER: AvatarTable = AvatarTable {
    kind: "character",
    table: "character_avatars",
    column: "character_id",
    owners: "characters",
};
const PERSONA: AvatarTable = AvatarTable {
    kind: "persona",
    table: "persona_avatars",
    column: "persona_id",
    owners: "personas",
};

impl Tx<'_> {
    fn avatar_set(&self, t: &AvatarTable, id: i64, avatar: &Avatar) -> Result<()> {
        let AvatarTable {
            kind,
            table,
            column,
            owners,
        } = t;
        // Inserting through a SELECT of the owner makes a missing owner write nothing, which is
        // then reported as not found instead of a foreign-key failure.
        let written = self.execute(
            &format!(
                "INSERT INTO {table} ({column}, mime_type, bytes) SELECT id, ?2, ?3 FROM {owners} WHERE id = ?1
                 ON CONFLICT({column}) DO UPDATE SET mime_type = excluded.mime_type, bytes = excluded.bytes"
            ),
            params![id, avatar.mime_type, avatar.bytes])?;
        if written == 0 {
            return Err(StoreError::not_found(kind, id));
        }
        Ok(())
    }

    fn avatar_get(&self, t: &AvatarTable, id: i64) -> Result<Option<Avatar>> {
        self.query_opt(
            &format!(
                "SELECT mime_type, bytes FROM {} WHERE {} = ?1",
                t.table, t.column
            ),
            params![id],
            |r| {
                Ok(Avatar {
                    mime_type: r.get(0)?,
                    bytes: r.get(1)?,
                })
            },
        )
    }

    /// Stores (or replaces) a character's avatar image.
    pub fn character_avatar_set(&self, id: CharacterId, avatar: &Avatar) -> Result<()> {
        self.avatar_set(&CHARACTER, id.0, avatar)
    }

    /// A character's avatar image, or `None`.
    pub fn character_avatar_get(&self, id: CharacterId) -> Result<Option<Avatar>> {
        self.avatar_get(&CHARACTER, id.0)
    }

    /// Removes a character's avatar; returns whether there was one.
    pub fn character_avatar_delete(&self, id: CharacterId) -> Result<bool> {
        Ok(self.execute(
            "DELETE FROM character_avatars WHERE character_id = ?1",
            params![id.0],
        )? > 0)
    }

    /// Stores (or replaces) a persona's avatar image.
    pub fn persona_avatar_set(&self, id: PersonaId, avatar: &Avatar) -> Result<()> {
        self.avatar_set(&PERSONA, id.0, avatar)
    }

    /// A persona's avatar image, or `None`.
    pub fn persona_avatar_get(&self, id: PersonaId) -> Result<Option<Avatar>> {
        self.avatar_get(&PERSONA, id.0)
    }
}
