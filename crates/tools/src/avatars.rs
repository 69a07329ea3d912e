//! Avatar uploads from the doors (the app's avatar crop): the image is checked by its signature
//! (PNG, JPEG, WebP or GIF) and size before anything is stored, and stored for an asset that
//! exists.

use tavo_model::{Character, CharacterId, ImageType, Persona, PersonaId};
use tavo_store::{Asset, Avatar, Store};

use crate::context::store_error;
use crate::error::{ErrorCode, ToolError};

/// The largest avatar accepted (the app uploads its crop, far smaller).
pub const MAX_AVATAR: usize = 8 << 20;

/// The image as an avatar, or why it is refused.
fn avatar_of(bytes: &[u8]) -> Result<Avatar, ToolError> {
    if bytes.len() > MAX_AVATAR {
        return Err(ToolError::new(
            ErrorCode::InvalidArguments,
            format!(
                "the avatar is {} bytes; at most {MAX_AVATAR} are accepted",
                bytes.len()
            ),
        )
        .with_details(serde_json::json!({"path": "body", "expected": "at most 8 MiB"})));
    }
    let kind = ImageType::sniff(bytes).ok_or_else(|| {
        ToolError::new(
            ErrorCode::InvalidArguments,
            "the body is not a PNG, JPEG, WebP or GIF image",
        )
        .with_details(serde_json::json!({"path": "body", "expected": "image bytes"}))
    })?;
    Ok(Avatar {
        mime_type: kind.mime_type().to_owned(),
        bytes: bytes.to_vec(),
    })
}

/// Replaces a persona's avatar (shown beside the user's messages).
pub fn set_persona_avatar(store: &Store, id: PersonaId, bytes: &[u8]) -> Result<(), ToolError> {
    let avatar = avatar_of(bytes)?;
    require::<Persona>(store, id)?;
    store
        .persona_avatar_set(id, &avatar)
        .map_err(|e| store_error("saving the avatar", e))
}

/// Replaces a character's avatar (the card image a PNG export embeds the card in).
pub fn set_character_avatar(store: &Store, id: CharacterId, bytes: &[u8]) -> Result<(), ToolError> {
    let avatar = avatar_of(bytes)?;
    require::<Character>(store, id)?;
    store
        .character_avatar_set(id, &avatar)
        .map_err(|e| store_error("saving the avatar", e))
}

/// `resource_not_found` unless the asset exists: an avatar is stored only for one that does.
fn require<A: Asset>(store: &Store, id: A::Id) -> Result<(), ToolError> {
    let exists = store
        .read(|tx| tx.get::<A>(id))
        .map_err(|e| store_error("reading the asset", e))?
        .is_some();
    if exists {
        Ok(())
    } else {
        Err(ToolError::not_found(A::KIND.as_str(), A::raw_id(id)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_is_not_an_image_and_unknown_personas() {
        let dir = tempfile::tempdir().expect("dir");
        let store = Store::open(dir.path()).expect("store");
        let e = set_persona_avatar(&store, PersonaId(1), b"not an image").unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArguments);
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        let e = set_persona_avatar(&store, PersonaId(99), png).unwrap_err();
        assert_eq!(e.code, ErrorCode::ResourceNotFound);
        let e = set_character_avatar(&store, CharacterId(99), png).unwrap_err();
        assert_eq!(e.code, ErrorCode::ResourceNotFound);
        let e = set_character_avatar(&store, CharacterId(1), b"GIF").unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArguments);
    }
}
