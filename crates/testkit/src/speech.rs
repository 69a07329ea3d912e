//! A loopback mock of the three voice platforms (`tts.connections`): OpenAI
//! `POST /v1/audio/speech`, Gemini `POST /v1beta/models/{model}:generateContent` (AUDIO) and
//! ElevenLabs `POST /v1/text-to-speech/{voice_id}`, answering in each one's real shape (the
//! fixtures of `crates/llm/tests/fixtures/media/speech/`), and recording every request.
//!
//! The key `bad-key` is refused with 401 and a body that echoes it (as OpenAI's does), the
//! text `FAIL 500` is answered 500, so tests can check that neither reaches an error.
//! Connection bases: `{base}/v1` (openai), `{base}/v1beta` (gemini), `{base}` (elevenlabs).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::sync::oneshot;

/// The MP3 bytes every mp3 answer starts with (an ID3 tag and one frame header).
pub const MP3_PREFIX: &[u8] = b"ID3\x04\x00\x00\x00\x00\x00\x00\xff\xfb\x90\x64";
/// Base64 of 8 PCM samples (16 bytes), the Gemini answer's audio.
pub const PCM_BASE64: &str = "AADoA9AH6AMAABj8MPgY/A==";

/// One request the mock received.
#[derive(Debug, Clone)]
pub struct SpeechRequestSeen {
    /// The HTTP method.
    pub method: String,
    /// Path and query.
    pub path: String,
    /// Lower-case names.
    pub headers: BTreeMap<String, String>,
    /// The JSON body (`Null` when it is not JSON).
    pub body: Value,
}

#[derive(Default)]
struct Shared {
    requests: Mutex<Vec<SpeechRequestSeen>>,
}

/// A running mock. Dropping it stops the server.
pub struct MockSpeech {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<oneshot::Sender<()>>,
}

impl Drop for MockSpeech {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

impl MockSpeech {
    /// Starts on a free loopback port.
    pub async fn start() -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::default());
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await;
        });
        Ok(Self {
            addr,
            shared,
            stop: Some(stop),
        })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<SpeechRequestSeen> {
        self.shared
            .requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

fn key_of(headers: &BTreeMap<String, String>) -> Option<String> {
    headers
        .get("authorization")
        .map(|v| v.trim_start_matches("Bearer ").to_owned())
        .or_else(|| headers.get("x-goog-api-key").cloned())
        .or_else(|| headers.get("xi-api-key").cloned())
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let headers: BTreeMap<String, String> = headers
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_ascii_lowercase(),
                v.to_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let path = uri
        .path_and_query()
        .map_or(uri.path().to_owned(), |p| p.as_str().to_owned());
    shared
        .requests
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(SpeechRequestSeen {
            method: method.to_string(),
            path: path.clone(),
            headers: headers.clone(),
            body: body.clone(),
        });
    if let Some(key) = key_of(&headers).filter(|k| k == "bad-key") {
        return (
            StatusCode::UNAUTHORIZED,
            axum::Json(
                json!({"error": {"message": format!("Incorrect API key provided: {key}."),
                "type": "invalid_request_error", "code": "invalid_api_key"}}),
            ),
        )
            .into_response();
    }
    let text = body
        .get("input")
        .or_else(|| body.get("text"))
        .or_else(|| body.pointer("/contents/0/parts/0/text"))
        .and_then(Value::as_str)
        .unwrap_or("");
    if text.contains("FAIL 500") {
        return (StatusCode::INTERNAL_SERVER_ERROR, "upstream exploded").into_response();
    }
    let mp3 = |t: &str| {
        let mut bytes = MP3_PREFIX.to_vec();
        bytes.extend_from_slice(t.as_bytes());
        Response::builder()
            .header(header::CONTENT_TYPE, "audio/mpeg")
            .body(Body::from(bytes))
            .unwrap_or_default()
    };
    let p = uri.path();
    if p.ends_with("/audio/speech") || p.contains("/text-to-speech/") {
        mp3(text)
    } else if p.ends_with(":generateContent") {
        axum::Json(json!({"candidates": [{"content": {"role": "model", "parts": [{"inlineData": {
            "mimeType": "audio/L16;codec=pcm;rate=24000", "data": PCM_BASE64}}]}, "finishReason": "STOP"}]}))
            .into_response()
    } else {
        (
            StatusCode::NOT_FOUND,
            axum::Json(json!({"error": {"message": "no such route"}})),
        )
            .into_response()
    }
}
