//! A loopback mock of the four image platforms (`image.connections`), answering in each one's
//! real shape (the fixtures of `crates/llm/tests/fixtures/media/image/`) and recording every
//! request:
//!
//! - OpenAI `POST {base}/v1/images/generations` → `{created, data: [{b64_json}]}` (a prompt
//!   containing `URL` gets `data[0].url` pointing at `GET {base}/files/image.png`), and
//!   `POST {base}/v1/images/edits` (multipart) → the same;
//! - Gemini `POST {base}/v1beta/models/{model}:generateContent` → an `inlineData` part;
//! - OpenRouter `POST {base}/api/v1/chat/completions` → `choices[0].message.images[]`;
//! - NovelAI `POST {base}/ai/generate-image` → a ZIP holding `image_0.png`.
//!
//! Failures on demand: the key `bad-key` → 401 with a body that echoes the key; a prompt
//! containing `FAIL 403`, `FAIL 404`, `FAIL 429` or `FAIL 500` → that status with a body that
//! names a server path; `REFUSE` → the platform's safety refusal (Gemini `blockReason`,
//! OpenAI 400 `content_policy_violation`). Connection bases: `{base}/v1` (openai),
//! `{base}/v1beta` (gemini), `{base}/api/v1` (openrouter), `{base}` (novelai).

use axum::body::Body;
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::media::{MediaMock, MediaRequestSeen, no_such_route};

/// A 1×1 PNG, base64: every generated image.
pub const PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/// The PNG's bytes.
pub fn png() -> Vec<u8> {
    decode_base64(PNG_BASE64)
}

fn decode_base64(s: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in s.bytes() {
        let Some(v) = ALPHABET.iter().position(|&a| a == c) else {
            continue;
        };
        acc = (acc << 6) | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A ZIP archive holding `name` stored (no compression), as NovelAI answers.
pub fn stored_zip(name: &str, data: &[u8]) -> Vec<u8> {
    let crc = crc32(data);
    let size = data.len() as u32;
    let n = name.len() as u16;
    let mut z = Vec::new();
    z.extend_from_slice(&[0x50, 0x4b, 0x03, 0x04, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    z.extend_from_slice(&crc.to_le_bytes());
    z.extend_from_slice(&size.to_le_bytes());
    z.extend_from_slice(&size.to_le_bytes());
    z.extend_from_slice(&n.to_le_bytes());
    z.extend_from_slice(&0u16.to_le_bytes());
    z.extend_from_slice(name.as_bytes());
    z.extend_from_slice(data);
    let central = z.len() as u32;
    z.extend_from_slice(&[0x50, 0x4b, 0x01, 0x02, 20, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    z.extend_from_slice(&crc.to_le_bytes());
    z.extend_from_slice(&size.to_le_bytes());
    z.extend_from_slice(&size.to_le_bytes());
    z.extend_from_slice(&n.to_le_bytes());
    z.extend_from_slice(&[0; 12]);
    z.extend_from_slice(&0u32.to_le_bytes());
    z.extend_from_slice(name.as_bytes());
    let central_size = z.len() as u32 - central;
    z.extend_from_slice(&[0x50, 0x4b, 0x05, 0x06, 0, 0, 0, 0, 1, 0, 1, 0]);
    z.extend_from_slice(&central_size.to_le_bytes());
    z.extend_from_slice(&central.to_le_bytes());
    z.extend_from_slice(&0u16.to_le_bytes());
    z
}

/// One request the mock received (`raw`: the multipart body of an edit).
pub type ImageRequestSeen = MediaRequestSeen;

/// A running mock. Dropping it stops the server.
pub struct MockImage(MediaMock);

impl MockImage {
    /// Starts on a free loopback port.
    pub async fn start() -> std::io::Result<Self> {
        MediaMock::start(answer).await.map(Self)
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base(&self) -> String {
        self.0.base()
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<ImageRequestSeen> {
        self.0.requests()
    }
}

fn prompt_of(body: &Value, raw: &[u8]) -> String {
    body.get("prompt")
        .or_else(|| body.get("input"))
        .or_else(|| body.pointer("/contents/0/parts/0/text"))
        .or_else(|| body.pointer("/messages/0/content/0/text"))
        .or_else(|| body.pointer("/messages/0/content"))
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| String::from_utf8_lossy(raw).into_owned())
}

fn failure(prompt: &str) -> Option<Response> {
    for (needle, status) in [
        ("FAIL 403", StatusCode::FORBIDDEN),
        ("FAIL 404", StatusCode::NOT_FOUND),
        ("FAIL 429", StatusCode::TOO_MANY_REQUESTS),
        ("FAIL 500", StatusCode::INTERNAL_SERVER_ERROR),
    ] {
        if prompt.contains(needle) {
            return Some(
                (
                    status,
                    axum::Json(json!({"error": {"message": format!(
                        "{needle}: see /srv/provider/secret/config.yaml"), "code": "mock_failure"}})),
                )
                    .into_response(),
            );
        }
    }
    None
}

fn answer(seen: &ImageRequestSeen, base: &str) -> Response {
    let (body, raw) = (&seen.body, &seen.raw);
    let p = seen.route();
    if seen.method == Method::GET.as_str() && p == "/files/image.png" {
        return Response::builder()
            .header(header::CONTENT_TYPE, "image/png")
            .body(Body::from(png()))
            .unwrap_or_default();
    }
    let prompt = prompt_of(body, raw);
    if let Some(r) = failure(&prompt) {
        return r;
    }
    let refuse = prompt.contains("REFUSE");
    if p.ends_with("/images/generations") || p.ends_with("/images/edits") {
        if refuse {
            return (
                StatusCode::BAD_REQUEST,
                axum::Json(
                    json!({"error": {"message": "Your request was rejected by the safety system.",
                    "type": "image_generation_user_error", "code": "content_policy_violation"}}),
                ),
            )
                .into_response();
        }
        if prompt.contains("URL") {
            return axum::Json(json!({"created": 1_700_000_000,
                "data": [{"url": format!("{base}/files/image.png")}]}))
            .into_response();
        }
        axum::Json(json!({"created": 1_700_000_000,
            "data": [{"b64_json": PNG_BASE64, "revised_prompt": prompt}]}))
        .into_response()
    } else if p.ends_with(":generateContent") {
        if refuse {
            return axum::Json(json!({"promptFeedback": {"blockReason": "SAFETY"}}))
                .into_response();
        }
        axum::Json(
            json!({"candidates": [{"content": {"role": "model", "parts": [
            {"text": "Here is your image."},
            {"inlineData": {"mimeType": "image/png", "data": PNG_BASE64}}]},
            "finishReason": "STOP"}]}),
        )
        .into_response()
    } else if p.ends_with("/chat/completions") {
        let images = if refuse {
            json!([])
        } else {
            json!([{"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG_BASE64}")}}])
        };
        axum::Json(
            json!({"id": "gen-1", "object": "chat.completion", "choices": [{"index": 0,
            "message": {"role": "assistant", "content": "", "images": images},
            "finish_reason": if refuse { "content_filter" } else { "stop" }}]}),
        )
        .into_response()
    } else if p == "/ai/generate-image" {
        Response::builder()
            .header(header::CONTENT_TYPE, "application/zip")
            .body(Body::from(stored_zip("image_0.png", &png())))
            .unwrap_or_default()
    } else {
        no_such_route()
    }
}
