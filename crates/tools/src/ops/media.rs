//! Image generation and TTS: [`image`](super::image) and [`tts`](super::tts), registered in
//! this order.

use crate::registry::Registry;
use crate::validate::SchemaError;

/// Registers image generation and TTS.
pub fn register(r: &mut Registry) -> Result<(), SchemaError> {
    super::image::register(r)?;
    super::tts::register(r)
}
