//! A loopback mock of the three voice platforms (`tts.connections`): OpenAI
//! `POST /v1/audio/speech`, Gemini `POST /v1beta/models/{model}:generateContent` (AUDIO) and
//! ElevenLabs `POST /v1/text-to-speech/{voice_id}`, answering in each one's real shape (the
//! fixtures of `crates/llm/tests/fixtures/media/speech/`), and recording every request.
//!
//! The key `bad-key` is refused with 401 and a body that echoes it (as OpenAI's does), the
//! text `FAIL 500` is answered 500, so tests can check that neither reaches an error.
//! Connection bases: `{base}/v1` (openai), `{base}/v1beta` (gemini), `{base}` (elevenlabs).

use axum::body::Body;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::media::{MediaMock, MediaRequestSeen, no_such_route};

/// The MP3 bytes every mp3 answer starts with (an ID3 tag and one frame header).
pub const MP3_PREFIX: &[u8] = b"ID3\x04\x00\x00\x00\x00\x00\x00\xff\xfb\x90\x64";
/// Base64 of 8 PCM samples (16 bytes), the Gemini answer's audio.
pub const PCM_BASE64: &str = "AADoA9AH6AMAABj8MPgY/A==";

/// One request the mock received.
pub type SpeechRequestSeen = MediaRequestSeen;

/// A running mock. Dropping it stops the server.
pub struct MockSpeech(MediaMock);

impl MockSpeech {
    /// Starts on a free loopback port.
    pub async fn start() -> std::io::Result<Self> {
        MediaMock::start(answer).await.map(Self)
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base(&self) -> String {
        self.0.base()
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<SpeechRequestSeen> {
        self.0.requests()
    }
}

fn answer(seen: &SpeechRequestSeen, _base: &str) -> Response {
    let body = &seen.body;
    let text = body
        .get("input")
        .or_else(|| body.get("text"))
        .or_else(|| body.pointer("/contents/0/parts/0/text"))
        .and_then(Value::as_str)
        .unwrap_or("");
    if text.contains("FAIL 500") {
        return (StatusCode::INTERNAL_SERVER_ERROR, "upstream exploded").into_response();
    }
    let p = seen.route();
    if p.ends_with("/audio/speech") || p.contains("/text-to-speech/") {
        let mut bytes = MP3_PREFIX.to_vec();
        bytes.extend_from_slice(text.as_bytes());
        Response::builder()
            .header(header::CONTENT_TYPE, "audio/mpeg")
            .body(Body::from(bytes))
            .unwrap_or_default()
    } else if p.ends_with(":generateContent") {
        axum::Json(json!({"candidates": [{"content": {"role": "model", "parts": [{"inlineData": {
            "mimeType": "audio/L16;codec=pcm;rate=24000", "data": PCM_BASE64}}]}, "finishReason": "STOP"}]}))
            .into_response()
    } else {
        no_such_route()
    }
}
