//! Speech synthesis (Tavo §14.1): one codec per voice platform — a pure request builder and a
//! pure response parser — and [`synthesize`], the HTTP call through the crate's [`Client`].
//!
//! - `openai`: `POST {base}/audio/speech` `{model, input, voice, response_format}` → the
//!   audio bytes (mp3 unless the connection's `responseFormat` option says otherwise). Also
//!   every OpenAI-compatible TTS server (Tavo: "custom OpenAI-protocol TTS").
//! - `gemini`: `POST {base}/models/{model}:generateContent` with `responseModalities:
//!   ["AUDIO"]` and `speechConfig.voiceConfig.prebuiltVoiceConfig.voiceName`; the answer is
//!   base64 16-bit PCM (24 kHz mono) in an `inlineData` part, wrapped here as a WAV file.
//! - `elevenlabs`: `POST {base}/v1/text-to-speech/{voice_id}?output_format=…` with the
//!   `xi-api-key` header and `{text, model_id}` → mp3.
//!
//! Connections live in the generic media book ([`crate::media::book`]) under
//! `tts.connections`. Options a connection may carry (all optional): `voice` (the voice used
//! when a call names none), `responseFormat` and `speed` and `instructions` (openai),
//! `languageCode` (gemini), `outputFormat` and `voiceSettings` (elevenlabs).
//!
//! Errors are [`LlmError`]s whose messages are ours: the provider's body is never copied into
//! them (it may echo the key), only its status and a well-formed error code.

pub mod elevenlabs;
pub mod gemini;
pub mod openai;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{ErrorKind, LlmError};
use crate::media::book::{MediaBook, MediaConnection, Platform};
use crate::media::http::{self, MediaApi};
use crate::media::image::{Auth, WireBody, WireRequest};
use crate::transport::Client;

/// The settings key of the voice connection book.
pub const SETTINGS_KEY: &str = "tts.connections";
/// The largest audio answer accepted (bytes of the HTTP body).
pub use crate::media::http::MAX_ANSWER_BYTES;
/// The longest text sent in one request (OpenAI's limit is 4,096 characters; longer text
/// is refused before any request rather than cut).
pub const MAX_TEXT_CHARS: usize = 4096;

/// A voice platform (the protocol a voice connection speaks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VoicePlatform {
    /// OpenAI `/v1/audio/speech` and every compatible server.
    Openai,
    /// Google Gemini TTS models through `generateContent` with the AUDIO modality.
    Gemini,
    /// ElevenLabs `/v1/text-to-speech/{voice_id}`.
    Elevenlabs,
}

impl Platform for VoicePlatform {
    const SETTINGS_KEY: &'static str = SETTINGS_KEY;
    const COMMAND: &'static str = "tavo tts connection";

    fn all() -> &'static [Self] {
        &[
            VoicePlatform::Openai,
            VoicePlatform::Gemini,
            VoicePlatform::Elevenlabs,
        ]
    }

    fn id(self) -> &'static str {
        match self {
            VoicePlatform::Openai => "openai",
            VoicePlatform::Gemini => "gemini",
            VoicePlatform::Elevenlabs => "elevenlabs",
        }
    }

    fn default_base_url(self) -> Option<&'static str> {
        Some(match self {
            VoicePlatform::Openai => "https://api.openai.com/v1",
            VoicePlatform::Gemini => "https://generativelanguage.googleapis.com/v1beta",
            VoicePlatform::Elevenlabs => "https://api.elevenlabs.io",
        })
    }
}

/// A voice connection.
pub type VoiceConnection = MediaConnection<VoicePlatform>;
/// The voice connection book (`tts.connections`).
pub type VoiceBook = MediaBook<VoicePlatform>;

/// Audio bytes with their MIME type.
#[derive(Clone, PartialEq, Eq)]
pub struct Audio {
    /// The encoded audio file (MP3, WAV, Opus, ...), ready to play or store. Gemini's raw PCM
    /// is wrapped as WAV first.
    pub bytes: Vec<u8>,
    /// Its MIME type (`audio/mpeg`, `audio/wav`): for an answer of raw bytes, its
    /// `content-type` when that is audio (parameters kept), else what the signature says.
    pub mime: String,
}

impl std::fmt::Debug for Audio {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Audio")
            .field("bytes", &self.bytes.len())
            .field("mime", &self.mime)
            .finish()
    }
}

impl Audio {
    /// The file extension for the MIME type.
    pub fn extension(&self) -> &'static str {
        extension_for(&self.mime)
    }
}

/// The file extension for an audio MIME type (`mp3` when unknown).
pub fn extension_for(mime: &str) -> &'static str {
    match mime.split(';').next().unwrap_or("").trim() {
        "audio/wav" | "audio/x-wav" | "audio/wave" => "wav",
        "audio/ogg" | "audio/opus" => "opus",
        "audio/aac" => "aac",
        "audio/flac" => "flac",
        "audio/L16" | "audio/pcm" => "pcm",
        _ => "mp3",
    }
}

/// The MIME type for an audio file extension (`audio/mpeg` when unknown).
pub fn mime_for(extension: &str) -> &'static str {
    match extension {
        "wav" => "audio/wav",
        "opus" => "audio/ogg",
        "aac" => "audio/aac",
        "flac" => "audio/flac",
        "pcm" => "audio/L16",
        _ => "audio/mpeg",
    }
}

/// One text to speak.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpeechRequest {
    /// The text, already through the playback rules.
    pub text: String,
    /// The voice id (`alloy`, `Kore`, an ElevenLabs voice id); `None`: the connection's
    /// `voice` option.
    pub voice: Option<String>,
}

/// The voice a request uses: its own, else the connection's `voice` option.
pub fn voice_of(conn: &VoiceConnection, req: &SpeechRequest) -> Result<String, LlmError> {
    req.voice
        .as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
        .or_else(|| option_str(conn, "voice").map(str::to_owned))
        .ok_or_else(|| {
            LlmError::new(
                ErrorKind::InvalidRequest,
                format!(
                    "voice: connection `{}` has no voice option and none was given (bind a voice or pass one)",
                    conn.name
                ),
            )
        })
}

/// A string option of the connection.
pub(crate) fn option_str<'a>(conn: &'a VoiceConnection, key: &str) -> Option<&'a str> {
    conn.options
        .get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// Builds the request for `conn` (pure: no I/O).
pub fn build(
    conn: &VoiceConnection,
    key: Option<&str>,
    req: &SpeechRequest,
) -> Result<WireRequest, LlmError> {
    if req.text.trim().is_empty() {
        return Err(LlmError::new(
            ErrorKind::InvalidRequest,
            "text: must not be empty",
        ));
    }
    let chars = req.text.chars().count();
    if chars > MAX_TEXT_CHARS {
        return Err(LlmError::new(
            ErrorKind::InvalidRequest,
            format!("text: {chars} characters, at most {MAX_TEXT_CHARS} are spoken at once"),
        ));
    }
    let voice = voice_of(conn, req)?;
    match conn.platform {
        VoicePlatform::Openai => openai::build(conn, key, &req.text, &voice),
        VoicePlatform::Gemini => gemini::build(conn, key, &req.text, &voice),
        VoicePlatform::Elevenlabs => elevenlabs::build(conn, key, &req.text, &voice),
    }
}

/// Parses a successful answer of `platform` (pure).
pub fn parse(platform: VoicePlatform, content_type: &str, body: &[u8]) -> Result<Audio, LlmError> {
    match platform {
        VoicePlatform::Openai => openai::parse(content_type, body),
        VoicePlatform::Gemini => gemini::parse(body),
        VoicePlatform::Elevenlabs => elevenlabs::parse(content_type, body),
    }
}

/// Audio bytes answered directly (openai, elevenlabs): refused when empty or JSON.
pub(crate) fn binary_audio(
    platform: &str,
    content_type: &str,
    body: &[u8],
    fallback_mime: &str,
) -> Result<Audio, LlmError> {
    let ct = content_type.split(';').next().unwrap_or("").trim();
    if body.is_empty() {
        return Err(no_audio(platform, "the answer is empty"));
    }
    if ct.ends_with("json") || ct.starts_with("text/") {
        return Err(no_audio(platform, "the answer is not audio"));
    }
    let mime = if ct.starts_with("audio/") {
        content_type.trim().to_owned()
    } else {
        sniff_audio(body).unwrap_or(fallback_mime).to_owned()
    };
    Ok(Audio {
        bytes: body.to_vec(),
        mime,
    })
}

/// The audio type a byte signature says.
pub fn sniff_audio(bytes: &[u8]) -> Option<&'static str> {
    if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WAVE" {
        Some("audio/wav")
    } else if bytes.starts_with(b"ID3")
        || (bytes.len() > 1 && bytes[0] == 0xff && bytes[1] & 0xe0 == 0xe0)
    {
        Some("audio/mpeg")
    } else if bytes.starts_with(b"OggS") {
        Some("audio/ogg")
    } else if bytes.starts_with(b"fLaC") {
        Some("audio/flac")
    } else {
        None
    }
}

/// An answer without audio.
pub(crate) fn no_audio(platform: &str, why: &str) -> LlmError {
    LlmError::new(
        ErrorKind::InvalidResponse,
        format!("the {platform} speech API answered without audio ({why})"),
    )
}

/// Which API a voice platform's messages name.
fn api(platform: VoicePlatform) -> MediaApi {
    MediaApi {
        platform: platform.id(),
        medium: "speech",
    }
}

/// What to check after a failed speech request, by kind.
fn hint(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Authentication => "the key was refused; check the voice connection's key",
        ErrorKind::Permission => {
            "the key may not use text-to-speech or this voice (an ElevenLabs key needs the text-to-speech permission)"
        }
        ErrorKind::NotFound => {
            "no such model, voice or endpoint; check the connection's baseUrl, model and the voice id"
        }
        ErrorKind::RateLimit => "too many requests; try again later",
        ErrorKind::QuotaExceeded => "the balance or quota is used up",
        ErrorKind::Overloaded | ErrorKind::Server => "the provider failed; try again later",
        ErrorKind::Timeout => "the provider timed out",
        ErrorKind::ContentFiltered => "the provider's safety system refused the text",
        _ => "the provider refused the request (check the model, voice and options)",
    }
}

/// The message for a failed HTTP status: ours, never the provider's body
/// ([`http::status_error`] with the speech hints).
pub fn status_error(platform: VoicePlatform, status: u16, code: Option<String>) -> LlmError {
    http::status_error(api(platform), status, code, hint)
}

/// Synthesizes `req` with `conn`: builds, sends (no retries: a synthesis costs money), maps
/// failures, parses.
pub async fn synthesize(
    client: &Client,
    conn: &VoiceConnection,
    req: &SpeechRequest,
) -> Result<Audio, LlmError> {
    let key = conn
        .resolve_key()
        .map_err(|e| LlmError::new(ErrorKind::Authentication, e.to_string()))?;
    let wire = build(conn, key.as_deref(), req)?;
    let platform = conn.platform;
    let rb = wire.to_reqwest(client.http()).map_err(|e| {
        LlmError::new(
            ErrorKind::InvalidRequest,
            format!("cannot encode the request: {e}"),
        )
    })?;
    let answer = http::exchange(client, api(platform), rb).await?;
    if !answer.ok() {
        tracing::debug!(
            platform = platform.id(),
            status = answer.status,
            "speech synthesis failed"
        );
        return Err(status_error(
            platform,
            answer.status,
            http::error_code(&answer.body),
        ));
    }
    parse(platform, &answer.content_type, &answer.body)
}

/// The key as the request carries it (for fixture tests: never printed).
pub(crate) fn bearer(key: Option<&str>) -> Auth {
    key.map_or(Auth::None, |k| Auth::Bearer(k.to_owned()))
}

/// A JSON body.
pub(crate) fn json(v: Value) -> WireBody {
    WireBody::Json(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn conn(platform: VoicePlatform) -> VoiceConnection {
        let mut c = VoiceConnection::new("voice", platform, "m");
        c.base_url = "http://127.0.0.1:9/v1".into();
        c
    }

    #[test]
    fn the_platforms_and_their_book_key() {
        assert_eq!(
            VoicePlatform::parse("ElevenLabs"),
            Ok(VoicePlatform::Elevenlabs)
        );
        assert!(VoicePlatform::parse("azure").is_err());
        assert_eq!(<VoicePlatform as Platform>::SETTINGS_KEY, "tts.connections");
        let c = VoiceConnection::new("x", VoicePlatform::Elevenlabs, "eleven_multilingual_v2");
        assert_eq!(c.base_url, "https://api.elevenlabs.io");
    }

    #[test]
    fn text_and_voice_are_checked_before_any_request() {
        let c = conn(VoicePlatform::Openai);
        let empty = SpeechRequest {
            text: " ".into(),
            voice: Some("alloy".into()),
        };
        assert!(
            build(&c, None, &empty)
                .expect_err("empty")
                .message
                .starts_with("text")
        );
        let long = SpeechRequest {
            text: "a".repeat(MAX_TEXT_CHARS + 1),
            voice: Some("alloy".into()),
        };
        assert!(build(&c, None, &long).is_err());
        let no_voice = SpeechRequest {
            text: "hi".into(),
            voice: None,
        };
        let e = build(&c, None, &no_voice).expect_err("no voice");
        assert!(e.message.starts_with("voice"), "{}", e.message);
        let mut c = c;
        c.options.insert("voice".into(), "nova".into());
        assert!(
            build(&c, None, &no_voice).is_ok(),
            "the connection's voice option"
        );
    }

    #[test]
    fn status_errors_are_ours_and_mapped() {
        let cases = [
            (401, ErrorKind::Authentication),
            (403, ErrorKind::Permission),
            (404, ErrorKind::NotFound),
            (429, ErrorKind::RateLimit),
            (500, ErrorKind::Server),
            (503, ErrorKind::Overloaded),
        ];
        for (status, kind) in cases {
            let e = status_error(VoicePlatform::Elevenlabs, status, None);
            assert_eq!(e.kind, kind, "{status}");
            assert!(e.message.contains(&format!("HTTP {status}")));
        }
        let e = status_error(
            VoicePlatform::Openai,
            400,
            Some("sk-secret /etc/passwd".into()),
        );
        assert!(!e.message.contains("sk-secret"));
        let code =
            http::error_code(br#"{"detail": {"status": "missing_permissions", "message": "x"}}"#);
        assert_eq!(code.as_deref(), Some("missing_permissions"));
    }

    #[test]
    fn audio_types() {
        assert_eq!(extension_for("audio/mpeg"), "mp3");
        assert_eq!(extension_for("audio/wav"), "wav");
        assert_eq!(mime_for("wav"), "audio/wav");
        assert_eq!(sniff_audio(b"ID3\x04"), Some("audio/mpeg"));
        assert_eq!(sniff_audio(b"RIFF\0\0\0\0WAVEfmt "), Some("audio/wav"));
        assert!(binary_audio("openai", "application/json", b"{}", "audio/mpeg").is_err());
        assert!(binary_audio("openai", "audio/mpeg", b"", "audio/mpeg").is_err());
        let a = binary_audio(
            "openai",
            "application/octet-stream",
            b"ID3abc",
            "audio/mpeg",
        )
        .expect("audio");
        assert_eq!(a.mime, "audio/mpeg");
    }
}
