//! Typed provider errors, mapped from each protocol's error bodies and HTTP statuses.
//!
//! The provider's own message is kept (it is usually the only useful hint: which parameter,
//! which limit), with any API key scrubbed out of it.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::protocol::Protocol;

/// What went wrong, in terms a caller can act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The key is missing, wrong, revoked or for another platform.
    Authentication,
    /// The key is valid but may not use this model or region.
    Permission,
    /// Too many requests or tokens per minute; `retry_after` says when to come back.
    RateLimit,
    /// The balance or quota is used up (Tavo's "resource exhausted").
    QuotaExceeded,
    /// The prompt plus the requested output do not fit the model's context.
    ContextTooLong,
    /// The provider refused the request as malformed (bad parameter, bad tool schema, missing
    /// signature, ...); the provider's message names the field.
    InvalidRequest,
    /// The model or endpoint does not exist (wrong model id or base URL).
    NotFound,
    /// A safety system refused or stopped the output.
    ContentFiltered,
    /// The provider is overloaded (Anthropic 529, HTTP 503).
    Overloaded,
    /// The provider failed (5xx).
    Server,
    /// No connection could be made or it broke.
    Network,
    /// No answer in time.
    Timeout,
    /// The answer was not what the protocol promises (an empty stream, a body that is not
    /// JSON, a stream cut before its end).
    InvalidResponse,
}

impl ErrorKind {
    /// The stable snake_case name used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Authentication => "authentication",
            ErrorKind::Permission => "permission",
            ErrorKind::RateLimit => "rate_limit",
            ErrorKind::QuotaExceeded => "quota_exceeded",
            ErrorKind::ContextTooLong => "context_too_long",
            ErrorKind::InvalidRequest => "invalid_request",
            ErrorKind::NotFound => "not_found",
            ErrorKind::ContentFiltered => "content_filtered",
            ErrorKind::Overloaded => "overloaded",
            ErrorKind::Server => "server",
            ErrorKind::Network => "network",
            ErrorKind::Timeout => "timeout",
            ErrorKind::InvalidResponse => "invalid_response",
        }
    }

    /// The kind an HTTP status implies when the body says nothing more precise.
    pub fn from_status(status: u16) -> ErrorKind {
        match status {
            401 => ErrorKind::Authentication,
            402 => ErrorKind::QuotaExceeded,
            403 => ErrorKind::Permission,
            404 => ErrorKind::NotFound,
            408 | 504 => ErrorKind::Timeout,
            413 => ErrorKind::ContextTooLong,
            429 => ErrorKind::RateLimit,
            503 | 529 => ErrorKind::Overloaded,
            500..=599 => ErrorKind::Server,
            _ => ErrorKind::InvalidRequest,
        }
    }

    /// Whether the same request may be sent again unchanged.
    pub fn is_retryable(self) -> bool {
        matches!(
            self,
            ErrorKind::RateLimit
                | ErrorKind::Overloaded
                | ErrorKind::Server
                | ErrorKind::Network
                | ErrorKind::Timeout
        )
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A provider call that failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{kind}: {message}")]
pub struct LlmError {
    /// What went wrong, in terms a caller can act on (retry, fix the key, shorten the prompt).
    pub kind: ErrorKind,
    /// The provider's message (secrets scrubbed), or ours for transport failures.
    pub message: String,
    /// HTTP status, when there was a response.
    pub status: Option<u16>,
    /// The provider's own error code or type (`invalid_api_key`, `overloaded_error`, ...).
    pub code: Option<String>,
    /// When to try again, from `retry-after` / `retry-after-ms` or Gemini's `RetryInfo`.
    pub retry_after: Option<Duration>,
}

impl LlmError {
    /// An error with only a kind and a message.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        LlmError {
            kind,
            message: message.into(),
            status: None,
            code: None,
            retry_after: None,
        }
    }

    /// This error as the canonical stream event.
    pub fn to_event(&self) -> crate::event::StreamEvent {
        crate::event::StreamEvent::Error {
            kind: self.kind,
            message: self.message.clone(),
            retry_after_secs: self.retry_after.map(|d| d.as_secs_f64()),
        }
    }
}

/// Replaces every occurrence of `secret` in `text` by a mask, so a provider that echoes the
/// key back ("Incorrect API key provided: sk-...") never leaks it into logs or the UI.
pub fn scrub(text: &str, secret: Option<&str>) -> String {
    match secret {
        Some(s) if s.len() >= 4 && text.contains(s) => {
            text.replace(s, &crate::connection::mask_key(s))
        }
        _ => text.to_owned(),
    }
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn code_of(v: &Value) -> Option<String> {
    match v.get("code") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    }
}

fn mentions_context(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("context length")
        || m.contains("context_length")
        || m.contains("context window")
        || m.contains("prompt is too long")
        || m.contains("too many tokens")
        || m.contains("exceeds the maximum number of tokens")
        || m.contains("input token count")
}

/// Maps a provider code or type string to a kind, when it is one we recognise.
fn kind_of_code(code: &str) -> Option<ErrorKind> {
    Some(match code {
        "invalid_api_key" | "authentication_error" | "UNAUTHENTICATED" | "API_KEY_INVALID" => {
            ErrorKind::Authentication
        }
        "permission_error" | "PERMISSION_DENIED" | "unsupported_country_region_territory" => {
            ErrorKind::Permission
        }
        "rate_limit_exceeded" | "rate_limit_error" | "tokens" | "requests" => ErrorKind::RateLimit,
        "insufficient_quota" | "billing_error" => ErrorKind::QuotaExceeded,
        "context_length_exceeded" | "request_too_large" | "string_above_max_length" => {
            ErrorKind::ContextTooLong
        }
        "not_found_error" | "model_not_found" | "NOT_FOUND" => ErrorKind::NotFound,
        "overloaded_error" | "UNAVAILABLE" | "server_is_overloaded" => ErrorKind::Overloaded,
        "api_error" | "server_error" | "INTERNAL" => ErrorKind::Server,
        "DEADLINE_EXCEEDED" | "timeout_error" => ErrorKind::Timeout,
        "content_filter" | "content_policy_violation" => ErrorKind::ContentFiltered,
        "invalid_request_error" | "INVALID_ARGUMENT" | "FAILED_PRECONDITION" => {
            ErrorKind::InvalidRequest
        }
        _ => return None,
    })
}

/// Parses Gemini's `RetryInfo.retryDelay` ("34.4s").
fn gemini_retry_delay(error: &Value) -> Option<Duration> {
    let details = error.get("details")?.as_array()?;
    details.iter().find_map(|d| {
        let ty = str_of(d, "@type")?;
        if !ty.ends_with("google.rpc.RetryInfo") {
            return None;
        }
        let secs: f64 = str_of(d, "retryDelay")?.strip_suffix('s')?.parse().ok()?;
        (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs))
    })
}

fn gemini_reason(error: &Value) -> Option<&str> {
    error.get("details")?.as_array()?.iter().find_map(|d| {
        if str_of(d, "@type")?.ends_with("google.rpc.ErrorInfo") {
            str_of(d, "reason")
        } else {
            None
        }
    })
}

/// Reads an error out of a JSON error body (or an in-band error event) of any of the four
/// protocols. `status` is the HTTP status when there was one. Returns `None` when the value
/// holds no error.
pub fn error_from_body(protocol: Protocol, status: Option<u16>, body: &Value) -> Option<LlmError> {
    // Anthropic: {"type":"error","error":{"type","message"}}; the others: {"error":{...}}.
    let error = body.get("error")?;
    if error.is_null() || error == &Value::Bool(false) {
        return None;
    }
    let (message, code, ty) = match error {
        Value::String(s) => (s.clone(), None, None),
        Value::Object(_) => (
            str_of(error, "message").unwrap_or_default().to_owned(),
            code_of(error),
            str_of(error, "type")
                .or_else(|| str_of(error, "status"))
                .map(str::to_owned),
        ),
        _ => (error.to_string(), None, None),
    };
    let reason = gemini_reason(error);
    let from_codes = reason
        .and_then(kind_of_code)
        .or_else(|| code.as_deref().and_then(kind_of_code))
        .or_else(|| ty.as_deref().and_then(kind_of_code));
    let numeric = code
        .as_deref()
        .and_then(|c| c.parse::<u16>().ok())
        .filter(|c| (400..600).contains(c));
    let by_status = status.or(numeric).map(ErrorKind::from_status);
    let mut kind = match (from_codes, by_status) {
        // A generic "invalid request" type says less than a precise status, and a generic
        // server error less than 503/529.
        (Some(ErrorKind::InvalidRequest), Some(s)) if s != ErrorKind::Server => s,
        (Some(ErrorKind::Server), Some(ErrorKind::Overloaded)) => ErrorKind::Overloaded,
        (Some(k), _) => k,
        (None, Some(s)) => s,
        (None, None) => ErrorKind::InvalidRequest,
    };
    if matches!(kind, ErrorKind::InvalidRequest | ErrorKind::ContextTooLong)
        && mentions_context(&message)
    {
        kind = ErrorKind::ContextTooLong;
    }
    if kind == ErrorKind::RateLimit && ty.as_deref() == Some("insufficient_quota") {
        kind = ErrorKind::QuotaExceeded;
    }
    let retry_after = if protocol == Protocol::Gemini {
        gemini_retry_delay(error)
    } else {
        None
    };
    let message = if message.is_empty() {
        format!(
            "the provider returned an error without a message{}",
            status.map(|s| format!(" (HTTP {s})")).unwrap_or_default()
        )
    } else {
        message
    };
    Some(LlmError {
        kind,
        message,
        status,
        code: code.or(ty),
        retry_after,
    })
}

/// Builds the error for a non-success HTTP response from its status, headers and body bytes.
pub fn error_from_response(
    protocol: Protocol,
    status: u16,
    retry_after: Option<Duration>,
    body: &[u8],
    secret: Option<&str>,
) -> LlmError {
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let mut err = parsed
        .as_ref()
        .and_then(|v| error_from_body(protocol, Some(status), v))
        .unwrap_or_else(|| {
            let text = String::from_utf8_lossy(body);
            let snippet: String = text.trim().chars().take(300).collect();
            let mut e = LlmError::new(
                ErrorKind::from_status(status),
                if snippet.is_empty() {
                    format!("HTTP {status} with an empty body")
                } else {
                    format!("HTTP {status}: {snippet}")
                },
            );
            e.status = Some(status);
            e
        });
    if retry_after.is_some() {
        err.retry_after = retry_after;
    }
    err.message = scrub(&err.message, secret);
    err
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn status_fallbacks() {
        assert_eq!(ErrorKind::from_status(529), ErrorKind::Overloaded);
        assert_eq!(ErrorKind::from_status(502), ErrorKind::Server);
        assert_eq!(ErrorKind::from_status(400), ErrorKind::InvalidRequest);
    }

    #[test]
    fn gemini_invalid_key_is_authentication_despite_400() {
        let body = json!({"error": {"code": 400, "message": "API key not valid.", "status": "INVALID_ARGUMENT",
            "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}]}});
        let e = error_from_body(Protocol::Gemini, Some(400), &body)
            .unwrap_or_else(|| panic!("no error"));
        assert_eq!(e.kind, ErrorKind::Authentication);
    }

    #[test]
    fn secrets_are_scrubbed_from_messages() {
        let e = error_from_response(
            Protocol::OpenaiChat,
            401,
            None,
            br#"{"error":{"message":"Incorrect API key provided: sk-secret-123456.","code":"invalid_api_key"}}"#,
            Some("sk-secret-123456"),
        );
        assert_eq!(e.kind, ErrorKind::Authentication);
        assert!(!e.message.contains("sk-secret-123456"), "{}", e.message);
    }

    #[test]
    fn a_body_that_is_not_json_keeps_a_snippet() {
        let e = error_from_response(
            Protocol::Anthropic,
            502,
            None,
            b"<html>Bad gateway</html>",
            None,
        );
        assert_eq!(e.kind, ErrorKind::Server);
        assert!(e.message.contains("Bad gateway"));
    }
}
