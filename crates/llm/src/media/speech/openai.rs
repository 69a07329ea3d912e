//! OpenAI text-to-speech (`tts-1`, `tts-1-hd`, `gpt-4o-mini-tts`) and every OpenAI-compatible
//! TTS server.
//!
//! Request: `POST {base}/audio/speech` with `Authorization: Bearer <key>` and
//! `{model, input, voice, response_format}` (plus `speed` and `instructions` when the
//! connection's options set them). Answer: the audio file's bytes (`audio/mpeg` for mp3).

use serde_json::{Map, Value, json};

use super::{Audio, VoiceConnection, bearer, binary_audio, mime_for, option_str};
use crate::error::LlmError;
use crate::media::image::WireRequest;

/// The format asked for when the connection's options do not say.
pub const DEFAULT_FORMAT: &str = "mp3";

/// Builds the request.
pub fn build(
    conn: &VoiceConnection,
    key: Option<&str>,
    text: &str,
    voice: &str,
) -> Result<WireRequest, LlmError> {
    let format = option_str(conn, "responseFormat").unwrap_or(DEFAULT_FORMAT);
    let mut body = Map::new();
    body.insert("model".into(), json!(conn.model));
    body.insert("input".into(), json!(text));
    body.insert("voice".into(), json!(voice));
    body.insert("response_format".into(), json!(format));
    if let Some(speed) = conn.options.get("speed").and_then(Value::as_f64) {
        body.insert("speed".into(), json!(speed));
    }
    if let Some(instructions) = option_str(conn, "instructions") {
        body.insert("instructions".into(), json!(instructions));
    }
    Ok(WireRequest {
        url: format!("{}/audio/speech", conn.base()),
        auth: bearer(key),
        headers: vec![(
            "accept",
            format!("{}, application/octet-stream", mime_for(format)),
        )],
        body: super::json(Value::Object(body)),
    })
}

/// Parses the answer: the bytes themselves.
pub fn parse(content_type: &str, body: &[u8]) -> Result<Audio, LlmError> {
    binary_audio("openai", content_type, body, "audio/mpeg")
}
