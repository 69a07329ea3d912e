//! ElevenLabs text-to-speech.
//!
//! Request: `POST {base}/v1/text-to-speech/{voice_id}?output_format=mp3_44100_128` with the
//! `xi-api-key` header and `{text, model_id}` (plus `voice_settings` when the connection's
//! `voiceSettings` option is an object; `outputFormat` changes the format). Answer: the audio
//! bytes (`audio/mpeg`). A key without the text-to-speech permission is answered 401/403 with
//! `detail.status` such as `missing_permissions`.

use serde_json::{Map, Value, json};

use super::{Audio, VoiceConnection, binary_audio, option_str};
use crate::error::{ErrorKind, LlmError};
use crate::media::image::{Auth, WireRequest};

/// The format asked for when the connection's options do not say.
pub const DEFAULT_FORMAT: &str = "mp3_44100_128";

/// Builds the request.
pub fn build(
    conn: &VoiceConnection,
    key: Option<&str>,
    text: &str,
    voice: &str,
) -> Result<WireRequest, LlmError> {
    // Voice ids are URL path segments: letters, digits, `_` and `-` only.
    if !voice
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(LlmError::new(
            ErrorKind::InvalidRequest,
            "voice: an ElevenLabs voice id has only letters, digits, `_` and `-` (see the voice library)",
        ));
    }
    let format = option_str(conn, "outputFormat").unwrap_or(DEFAULT_FORMAT);
    if !format
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return Err(LlmError::new(
            ErrorKind::InvalidRequest,
            "options.outputFormat: such as mp3_44100_128",
        ));
    }
    // The base may be given with or without the version segment.
    let base = conn.base();
    let base = base.strip_suffix("/v1").unwrap_or(base);
    let mut body = Map::new();
    body.insert("text".into(), json!(text));
    body.insert("model_id".into(), json!(conn.model));
    if let Some(settings) = conn.options.get("voiceSettings").filter(|v| v.is_object()) {
        body.insert("voice_settings".into(), settings.clone());
    }
    Ok(WireRequest {
        url: format!("{base}/v1/text-to-speech/{voice}?output_format={format}"),
        auth: key.map_or(Auth::None, |k| Auth::Header("xi-api-key", k.to_owned())),
        headers: vec![("accept", "audio/mpeg".to_owned())],
        body: super::json(Value::Object(body)),
    })
}

/// Parses the answer: the bytes themselves.
pub fn parse(content_type: &str, body: &[u8]) -> Result<Audio, LlmError> {
    binary_audio("elevenlabs", content_type, body, "audio/mpeg")
}
