//! One renderer per protocol: a scripted turn as that protocol's response body or SSE frames.

pub mod anthropic;
pub mod gemini;
pub mod openai_chat;
pub mod responses;

use serde_json::Value;

use crate::script::Turn;

/// The four protocols, recognised from the request path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Wire {
    /// OpenAI Chat Completions: a path ending in `/chat/completions`.
    OpenaiChat,
    /// OpenAI Responses: a path ending in `/responses`.
    OpenaiResponses,
    /// Anthropic Messages: a path ending in `/messages`.
    Anthropic,
    /// Gemini: `:generateContent`, or `:streamGenerateContent` for a stream.
    Gemini,
}

impl Wire {
    /// Which protocol a request path speaks, and whether the path itself asks for a stream.
    pub fn from_path(path: &str) -> Option<(Wire, bool)> {
        let p = path.split('?').next().unwrap_or(path);
        if p.ends_with("/chat/completions") {
            Some((Wire::OpenaiChat, false))
        } else if p.ends_with("/responses") {
            Some((Wire::OpenaiResponses, false))
        } else if p.ends_with("/messages") {
            Some((Wire::Anthropic, false))
        } else if p.contains(":streamGenerateContent") {
            Some((Wire::Gemini, true))
        } else if p.contains(":generateContent") {
            Some((Wire::Gemini, false))
        } else {
            None
        }
    }
}

/// One SSE event.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// The `event:` line; only the protocols that name their events (Anthropic, Responses)
    /// have one.
    pub event: Option<String>,
    /// The `data:` line: one JSON value on one line.
    pub data: String,
}

impl Frame {
    pub(crate) fn data(v: &Value) -> Frame {
        Frame {
            event: None,
            data: v.to_string(),
        }
    }

    pub(crate) fn named(v: &Value) -> Frame {
        Frame {
            event: v.get("type").and_then(Value::as_str).map(str::to_owned),
            data: v.to_string(),
        }
    }

    /// The bytes on the wire.
    pub fn to_bytes(&self, crlf: bool) -> Vec<u8> {
        let nl = if crlf { "\r\n" } else { "\n" };
        let mut s = String::new();
        if let Some(e) = &self.event {
            s.push_str("event: ");
            s.push_str(e);
            s.push_str(nl);
        }
        s.push_str("data: ");
        s.push_str(&self.data);
        s.push_str(nl);
        s.push_str(nl);
        s.into_bytes()
    }
}

/// A streamed answer: the frames, and the closing frames a truncated stream leaves out.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Frames {
    /// The frames every stream of the turn sends.
    pub body: Vec<Frame>,
    /// The protocol's closing frames (`[DONE]`, `message_stop`, …), left out when the turn
    /// asks for [`Turn::truncate`].
    pub tail: Vec<Frame>,
}

/// What a renderer needs besides the turn.
#[derive(Debug, Clone, Copy)]
pub struct Ctx<'a> {
    /// The scripted answer to render.
    pub turn: &'a Turn,
    /// The turn's index in the script, from 0; it makes the answer's ids unique.
    pub turn_no: usize,
    /// The model the request named (`mock` when it named none), echoed in the answer.
    pub model: &'a str,
}

/// The error body of a protocol for a status and message.
pub fn error_body(wire: Wire, status: u16, message: &str) -> Value {
    match wire {
        Wire::Anthropic => {
            let ty = match status {
                401 => "authentication_error",
                403 => "permission_error",
                404 => "not_found_error",
                429 => "rate_limit_error",
                529 => "overloaded_error",
                500..=599 => "api_error",
                _ => "invalid_request_error",
            };
            serde_json::json!({"type": "error", "error": {"type": ty, "message": message}})
        }
        Wire::Gemini => {
            let st = match status {
                400 => "INVALID_ARGUMENT",
                401 => "UNAUTHENTICATED",
                403 => "PERMISSION_DENIED",
                404 => "NOT_FOUND",
                429 => "RESOURCE_EXHAUSTED",
                503 => "UNAVAILABLE",
                _ => "INTERNAL",
            };
            serde_json::json!({"error": {"code": status, "message": message, "status": st}})
        }
        Wire::OpenaiChat | Wire::OpenaiResponses => {
            let (ty, code) = match status {
                401 => ("invalid_request_error", "invalid_api_key"),
                429 => ("requests", "rate_limit_exceeded"),
                500..=599 => ("server_error", "server_error"),
                _ => ("invalid_request_error", "invalid_request"),
            };
            serde_json::json!({"error": {"message": message, "type": ty, "param": null, "code": code}})
        }
    }
}
