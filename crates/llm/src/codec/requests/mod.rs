//! Provider request bodies back into the canonical model: the inverse of the encoders, so a
//! request captured from any client (a fixture, a proxy log) can be inspected, replayed or
//! re-encoded for another protocol.
//!
//! Rule: a field is mapped into the canonical model only where the encoder maps it back the
//! same way; every other top-level field goes to `extras` verbatim (and wins on re-encoding),
//! so `encode(decode(body))` is equivalent to `body`.

use serde_json::{Map, Value, json};

use super::EncodeError;
use crate::protocol::Protocol;
use crate::request::{ChatRequest, ImageSource, Message, Part, Role};

mod anthropic;
mod gemini;
mod openai;

/// Reads a provider request body.
pub fn decode_request(protocol: Protocol, body: &Value) -> Result<ChatRequest, EncodeError> {
    let Some(obj) = body.as_object() else {
        return Err(EncodeError {
            protocol,
            message: "the request body is not a JSON object".into(),
        });
    };
    let mut d = Decoded::new(obj);
    match protocol {
        Protocol::OpenaiChat => openai::chat(&mut d),
        Protocol::OpenaiResponses => openai::responses(&mut d),
        Protocol::Anthropic => anthropic::messages(&mut d),
        Protocol::Gemini => gemini::contents(&mut d),
    }
    let mut req = d.finish();
    // The client sent this reasoning back on purpose; the mode that re-sends the reasoning of
    // the current tool rounds keeps it (reasoning before the last user message would need a
    // mode the seed does not have, and clients do not send it).
    if req
        .messages
        .iter()
        .any(|m| m.parts.iter().any(|p| matches!(p, Part::Reasoning { .. })))
    {
        req.reasoning.interleaved = crate::reasoning::InterleavedReasoning::SinceLastUserMessage;
    }
    Ok(req)
}

pub(super) struct Decoded<'a> {
    pub(super) src: &'a Map<String, Value>,
    pub(super) used: Vec<&'static str>,
    pub(super) req: ChatRequest,
}

impl<'a> Decoded<'a> {
    fn new(src: &'a Map<String, Value>) -> Self {
        let model = src
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let mut req = ChatRequest::new(model, Vec::new());
        req.stream = false;
        Decoded {
            src,
            used: vec!["model"],
            req,
        }
    }

    pub(super) fn take(&mut self, key: &'static str) -> Option<&'a Value> {
        self.used.push(key);
        self.src.get(key)
    }

    fn finish(mut self) -> ChatRequest {
        for (k, v) in self.src {
            if !self.used.contains(&k.as_str()) {
                self.req.extras.insert(k.clone(), v.clone());
            }
        }
        self.req
    }

    pub(super) fn push(&mut self, role: Role, part: Part) {
        match self.req.messages.last_mut() {
            Some(m) if m.role == role && role != Role::System => m.parts.push(part),
            _ => self.req.messages.push(Message {
                role,
                parts: vec![part],
            }),
        }
    }
}

pub(super) fn str_of(v: &Value, k: &str) -> String {
    v.get(k)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

pub(super) fn args_of(v: Option<&Value>) -> Value {
    match v {
        Some(Value::String(s)) => {
            serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
        }
        Some(v @ Value::Object(_)) => v.clone(),
        _ => json!({}),
    }
}

pub(super) fn text_of(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

pub(super) fn image_of_url(url: &str) -> ImageSource {
    match url
        .strip_prefix("data:")
        .and_then(|r| r.split_once(";base64,"))
    {
        Some((mt, data)) => ImageSource::Base64 {
            media_type: mt.to_owned(),
            data: data.to_owned(),
        },
        None => ImageSource::Url {
            url: url.to_owned(),
        },
    }
}

pub(super) fn sampling_f64(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64)
}

pub(super) fn sampling_u32(v: Option<&Value>) -> Option<u32> {
    v.and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
}
