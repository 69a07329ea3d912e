//! The HTTP exchange every media kind shares (image generation, speech): one send under the
//! header time-out, one body reader capped at [`MAX_ANSWER_BYTES`] under the idle time-out,
//! one mapping of a failed status and the provider's error code to an [`ErrorKind`] with a
//! message of ours, and one reading of a media failure for the layers above
//! ([`MediaFailure`]).
//!
//! The provider's body never reaches a message (it may echo the key or a server path): only
//! the status and an error code that looks like one.

use std::time::Duration;

use serde_json::Value;

use crate::error::{ErrorKind, LlmError};
use crate::transport::Client;

/// The largest media answer accepted (bytes of the HTTP body): a generated image or a spoken
/// text is a few MiB at most; more is a misbehaving server.
pub const MAX_ANSWER_BYTES: usize = 32 * 1024 * 1024;

/// Error codes that mean the provider's safety system refused, whatever the status (OpenAI's
/// `content_policy_violation` and `moderation_blocked`, Azure's `content_filter`, Gemini's
/// `SAFETY`).
const REFUSAL_CODES: &[&str] = &[
    "content_policy_violation",
    "moderation_blocked",
    "content_filter",
    "SAFETY",
];

/// Which API a message is about: `the {platform} {medium} API`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MediaApi {
    /// The platform id (`openai`, `elevenlabs`).
    pub platform: &'static str,
    /// What it makes (`image`, `speech`).
    pub medium: &'static str,
}

impl std::fmt::Display for MediaApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the {} {} API", self.platform, self.medium)
    }
}

/// The kind of a failed status: a refusal code wins over the status (a safety block is often
/// a plain 400), else [`ErrorKind::from_status`].
pub fn status_kind(status: u16, code: Option<&str>) -> ErrorKind {
    if code.is_some_and(|c| REFUSAL_CODES.contains(&c)) {
        ErrorKind::ContentFiltered
    } else {
        ErrorKind::from_status(status)
    }
}

/// The error for a failed status: `the {api} answered HTTP {status}[, code {code}]: {hint}`,
/// where `hint(kind)` says what to check for that medium. An odd code (long, or with
/// characters an error code does not have) is kept in the error but left out of the message.
pub fn status_error(
    api: MediaApi,
    status: u16,
    code: Option<String>,
    hint: fn(ErrorKind) -> &'static str,
) -> LlmError {
    let kind = status_kind(status, code.as_deref());
    let code_note = code
        .as_deref()
        .filter(|c| {
            c.len() <= 64
                && c.chars()
                    .all(|ch| ch.is_ascii_alphanumeric() || "_-.".contains(ch))
        })
        .map(|c| format!(", code {c}"))
        .unwrap_or_default();
    LlmError {
        kind,
        message: format!("{api} answered HTTP {status}{code_note}: {}", hint(kind)),
        status: Some(status),
        code,
        retry_after: None,
    }
}

/// The provider's error code in a JSON error body: `error.code|type|status`, ElevenLabs'
/// `detail.status`, or the same keys at the top level.
pub fn error_code(body: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(body).ok()?;
    let e = v.get("error").or_else(|| v.get("detail")).unwrap_or(&v);
    ["code", "type", "status"]
        .iter()
        .find_map(|k| match e.get(*k) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        })
}

/// A request that did not get through: `Timeout` or `Network`, with a hint when the
/// connection itself failed.
pub(crate) fn transport_error(api: MediaApi, e: &reqwest::Error) -> LlmError {
    let (kind, note) = if e.is_timeout() {
        (ErrorKind::Timeout, " (timed out)")
    } else if e.is_connect() {
        (
            ErrorKind::Network,
            " (connection failed; check the connection's baseUrl)",
        )
    } else {
        (ErrorKind::Network, "")
    };
    LlmError::new(kind, format!("cannot reach {api}{note}"))
}

/// Reads a body chunk by chunk: each chunk must come within `idle`, and the whole body may not
/// pass `max` bytes — checked before a chunk is kept, so an endless answer never fills memory.
pub async fn read_capped(
    api: MediaApi,
    mut resp: reqwest::Response,
    idle: Duration,
    max: usize,
) -> Result<Vec<u8>, LlmError> {
    let mut out = Vec::new();
    loop {
        let chunk = tokio::time::timeout(idle, resp.chunk())
            .await
            .map_err(|_| LlmError::new(ErrorKind::Timeout, format!("{api} stopped answering")))?
            .map_err(|e| transport_error(api, &e))?;
        let Some(chunk) = chunk else { break };
        if out.len() + chunk.len() > max {
            return Err(LlmError::new(
                ErrorKind::InvalidResponse,
                format!("{api} answered more than {}", size_words(max)),
            ));
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

fn size_words(bytes: usize) -> String {
    const MIB: usize = 1024 * 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// A whole answer: its status, `content-type` and body (capped).
#[derive(Debug)]
pub(crate) struct Answered {
    /// The HTTP status.
    pub status: u16,
    /// The `content-type` header, `""` without one.
    pub content_type: String,
    /// The body, at most [`MAX_ANSWER_BYTES`].
    pub body: Vec<u8>,
}

impl Answered {
    /// Whether the status is 2xx.
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// Sends once (a generation costs money: never retried) and reads the whole answer.
pub(crate) async fn exchange(
    client: &Client,
    api: MediaApi,
    rb: reqwest::RequestBuilder,
) -> Result<Answered, LlmError> {
    let timeouts = client.timeouts;
    let sent = tokio::time::timeout(timeouts.headers, rb.send())
        .await
        .map_err(|_| {
            LlmError::new(
                ErrorKind::Timeout,
                format!(
                    "no answer from {api} within {}s",
                    timeouts.headers.as_secs()
                ),
            )
        })?
        .map_err(|e| transport_error(api, &e))?;
    let status = sent.status().as_u16();
    let content_type = sent
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let body = read_capped(api, sent, timeouts.idle, MAX_ANSWER_BYTES).await?;
    Ok(Answered {
        status,
        content_type,
        body,
    })
}

/// What a media provider's failure means to the person who asked, the same for images and
/// speech at every door: the tool envelope, the HTTP API and the CLI each map these three.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MediaFailure {
    /// The key, its permissions or the provider's safety system said no (401, 403, a refusal
    /// code): retrying the same request will not help.
    Refused,
    /// No such model, voice or endpoint (404): the connection needs fixing.
    NotFound,
    /// Anything else — rate limit, server error, time-out, an answer without the media.
    Failed,
}

impl MediaFailure {
    /// The failure of `e`.
    pub fn of(e: &LlmError) -> Self {
        match e.kind {
            ErrorKind::Authentication | ErrorKind::Permission | ErrorKind::ContentFiltered => {
                MediaFailure::Refused
            }
            ErrorKind::NotFound => MediaFailure::NotFound,
            _ => MediaFailure::Failed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const API: MediaApi = MediaApi {
        platform: "openai",
        medium: "image",
    };

    fn hint(kind: ErrorKind) -> &'static str {
        match kind {
            ErrorKind::Authentication => "check the key",
            _ => "other",
        }
    }

    #[test]
    fn statuses_and_refusal_codes_map_to_kinds() {
        let cases = [
            (401, None, ErrorKind::Authentication),
            (403, None, ErrorKind::Permission),
            (404, None, ErrorKind::NotFound),
            (429, None, ErrorKind::RateLimit),
            (500, None, ErrorKind::Server),
            (503, None, ErrorKind::Overloaded),
            (400, None, ErrorKind::InvalidRequest),
            (
                400,
                Some("content_policy_violation"),
                ErrorKind::ContentFiltered,
            ),
            (200, Some("SAFETY"), ErrorKind::ContentFiltered),
            (400, Some("invalid_size"), ErrorKind::InvalidRequest),
        ];
        for (status, code, kind) in cases {
            assert_eq!(status_kind(status, code), kind, "{status} {code:?}");
        }
    }

    #[test]
    fn status_errors_are_ours_and_name_a_well_formed_code_only() {
        let e = status_error(API, 401, Some("invalid_api_key".into()), hint);
        assert_eq!(e.kind, ErrorKind::Authentication);
        assert_eq!(
            e.message,
            "the openai image API answered HTTP 401, code invalid_api_key: check the key"
        );
        assert_eq!(e.status, Some(401));
        let odd = status_error(API, 400, Some("sk-secret /etc/passwd".into()), hint);
        assert!(!odd.message.contains("sk-secret"), "{}", odd.message);
        assert_eq!(odd.code.as_deref(), Some("sk-secret /etc/passwd"));
        assert_eq!(odd.message, "the openai image API answered HTTP 400: other");
    }

    #[test]
    fn error_codes_are_found_in_every_providers_shape() {
        let code = |b: &[u8]| error_code(b);
        assert_eq!(
            code(br#"{"error": {"code": "invalid_api_key", "type": "x"}}"#).as_deref(),
            Some("invalid_api_key")
        );
        assert_eq!(
            code(br#"{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED"}}"#).as_deref(),
            Some("429")
        );
        assert_eq!(
            code(br#"{"error": {"status": "PERMISSION_DENIED"}}"#).as_deref(),
            Some("PERMISSION_DENIED")
        );
        assert_eq!(
            code(br#"{"detail": {"status": "missing_permissions"}}"#).as_deref(),
            Some("missing_permissions")
        );
        assert_eq!(code(b"upstream exploded"), None);
        assert_eq!(code(br#"{"error": "plain text"}"#), None);
    }

    #[test]
    fn failures_read_the_same_for_every_medium() {
        let of = |kind| MediaFailure::of(&LlmError::new(kind, "m"));
        assert_eq!(of(ErrorKind::Authentication), MediaFailure::Refused);
        assert_eq!(of(ErrorKind::Permission), MediaFailure::Refused);
        assert_eq!(of(ErrorKind::ContentFiltered), MediaFailure::Refused);
        assert_eq!(of(ErrorKind::NotFound), MediaFailure::NotFound);
        for kind in [
            ErrorKind::RateLimit,
            ErrorKind::Server,
            ErrorKind::Timeout,
            ErrorKind::InvalidResponse,
        ] {
            assert_eq!(of(kind), MediaFailure::Failed, "{kind:?}");
        }
    }

    /// A loopback server that answers one request with `head` and then `body_len` bytes.
    async fn serve_once(head: String, body_len: usize) -> String {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .unwrap_or_else(|e| panic!("bind: {e}"));
        let addr = listener
            .local_addr()
            .unwrap_or_else(|e| panic!("addr: {e}"));
        tokio::spawn(async move {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let mut buf = [0u8; 4096];
            let _ = socket.read(&mut buf).await;
            let _ = socket.write_all(head.as_bytes()).await;
            let chunk = vec![b'x'; 64 * 1024];
            let mut left = body_len;
            while left > 0 {
                let n = left.min(chunk.len());
                if socket.write_all(&chunk[..n]).await.is_err() {
                    return;
                }
                left -= n;
            }
        });
        format!("http://{addr}/")
    }

    #[tokio::test]
    async fn the_capped_reader_keeps_a_body_within_the_cap_and_refuses_one_past_it() {
        let idle = Duration::from_secs(30);
        let head = |len: usize| {
            format!(
                "HTTP/1.1 200 OK\r\ncontent-type: image/png\r\ncontent-length: {len}\r\nconnection: close\r\n\r\n"
            )
        };
        let http = reqwest::Client::new();
        let url = serve_once(head(1000), 1000).await;
        let resp = http
            .get(&url)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let body = read_capped(API, resp, idle, 1000)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(body.len(), 1000, "exactly the cap is fine");

        let url = serve_once(head(300_000), 300_000).await;
        let resp = http
            .get(&url)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let e = read_capped(API, resp, idle, 100_000)
            .await
            .expect_err("past the cap");
        assert_eq!(e.kind, ErrorKind::InvalidResponse);
        assert_eq!(
            e.message,
            "the openai image API answered more than 100000 bytes"
        );
        assert_eq!(size_words(MAX_ANSWER_BYTES), "32 MiB");
    }
}
