//! One codec per protocol: encode a canonical request into the provider's body, decode a
//! whole response body, decode an SSE stream incrementally. Every decoder produces the same
//! [`StreamEvent`]s.

pub mod anthropic;
pub mod gemini;
pub mod openai_chat;
pub mod openai_responses;
pub mod requests;

pub use requests::decode_request;

use serde_json::{Map, Value};

use crate::error::{ErrorKind, LlmError};
use crate::event::{StreamEvent, parse_arguments};
use crate::protocol::Protocol;
use crate::reasoning;
use crate::request::{ChatRequest, Message, Native, Part};
use crate::sse::{SseEvent, SseParser};

/// A request body ready to send, and what had to be changed or dropped to build it.
#[derive(Debug, Clone, PartialEq)]
pub struct Encoded {
    /// The provider's JSON body, [`ChatRequest::extras`] merged in last.
    pub body: Value,
    /// One sentence per change, naming the field (`sampling.topK: not a Responses parameter;
    /// not sent`); [`crate::Client::send`] puts them at the head of the stream as warnings.
    pub warnings: Vec<String>,
}

/// A request that cannot be expressed in the target protocol at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot encode the request for {protocol}: {message}")]
pub struct EncodeError {
    /// The protocol being encoded to, or decoded from by [`decode_request`].
    pub protocol: Protocol,
    /// What is wrong with the request, in words for the user.
    pub message: String,
}

/// A protocol's stream decoder: it sees SSE events one by one and appends canonical events.
pub trait StreamDecoder: Send {
    /// One SSE event (name may be empty, data is the joined `data:` lines).
    fn on_event(&mut self, event: SseEvent<'_>, out: &mut Vec<StreamEvent>);
    /// The byte stream ended: flush what is pending and report a stream cut short.
    fn on_end(&mut self, out: &mut Vec<StreamEvent>);
}

/// Encodes a canonical request for `protocol`.
pub fn encode(protocol: Protocol, req: &ChatRequest) -> Result<Encoded, EncodeError> {
    let (messages, mut warnings) = prepare(protocol, req);
    let mut enc = match protocol {
        Protocol::OpenaiChat => openai_chat::encode(req, &messages)?,
        Protocol::OpenaiResponses => openai_responses::encode(req, &messages)?,
        Protocol::Anthropic => anthropic::encode(req, &messages)?,
        Protocol::Gemini => gemini::encode(req, &messages)?,
    };
    warnings.append(&mut enc.warnings);
    if let Value::Object(body) = &mut enc.body {
        for (k, v) in &req.extras {
            body.insert(k.clone(), v.clone());
        }
    }
    Ok(Encoded {
        body: enc.body,
        warnings,
    })
}

/// Decodes a whole (non-streaming) response body, or an error body, into events.
pub fn decode_body(protocol: Protocol, body: &[u8]) -> Vec<StreamEvent> {
    let value: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            return vec![StreamEvent::Error {
                kind: ErrorKind::InvalidResponse,
                message: format!("the response body is not JSON ({e}); is the base URL right?"),
                retry_after_secs: None,
            }];
        }
    };
    if let Some(err) = crate::error::error_from_body(protocol, None, &value) {
        return vec![err.to_event()];
    }
    let mut out = Vec::new();
    match protocol {
        Protocol::OpenaiChat => openai_chat::decode_body(&value, &mut out),
        Protocol::OpenaiResponses => openai_responses::decode_body(&value, &mut out),
        Protocol::Anthropic => anthropic::decode_body(&value, &mut out),
        Protocol::Gemini => gemini::decode_body(&value, &mut out),
    }
    out
}

/// A fresh stream decoder for `protocol`.
pub fn stream_decoder(protocol: Protocol) -> Box<dyn StreamDecoder> {
    match protocol {
        Protocol::OpenaiChat => Box::new(openai_chat::ChatStream::default()),
        Protocol::OpenaiResponses => Box::new(openai_responses::ResponsesStream::default()),
        Protocol::Anthropic => Box::new(anthropic::MessagesStream::default()),
        Protocol::Gemini => Box::new(gemini::GeminiStream::default()),
    }
}

/// SSE bytes in, canonical events out: the SSE reader and a protocol decoder together.
pub struct StreamDecode {
    sse: SseParser,
    decoder: Box<dyn StreamDecoder>,
    events: usize,
}

impl StreamDecode {
    /// A decoder for a new stream of `protocol`.
    pub fn new(protocol: Protocol) -> Self {
        StreamDecode {
            sse: SseParser::new(),
            decoder: stream_decoder(protocol),
            events: 0,
        }
    }

    /// Feeds bytes as they arrive (any split); appends the events they complete.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<StreamEvent>) {
        let decoder = &mut self.decoder;
        let events = &mut self.events;
        self.sse.feed(bytes, &mut |e| {
            *events += 1;
            decoder.on_event(e, out);
        });
    }

    /// Ends the stream. A stream with no event at all is an error in every protocol (a server
    /// that failed after sending its 200 headers, like llama-cpp-python with `tool_choice`).
    pub fn finish(&mut self, out: &mut Vec<StreamEvent>) {
        let decoder = &mut self.decoder;
        let events = &mut self.events;
        self.sse.finish(&mut |e| {
            *events += 1;
            decoder.on_event(e, out);
        });
        if self.events == 0 {
            out.push(StreamEvent::Error {
                kind: ErrorKind::InvalidResponse,
                message: "the provider sent an empty stream (no events after HTTP 200); try again, or turn streaming off for this connection".into(),
                retry_after_secs: None,
            });
            return;
        }
        self.decoder.on_end(out);
    }
}

/// Decodes a complete SSE byte string (the `--stream` mode of `tavo llm decode`).
pub fn decode_stream(protocol: Protocol, bytes: &[u8]) -> Vec<StreamEvent> {
    let mut d = StreamDecode::new(protocol);
    let mut out = Vec::new();
    d.feed(bytes, &mut out);
    d.finish(&mut out);
    out
}

/// Applies the interleaved-reasoning mode and drops native blocks of other protocols, with a
/// warning for each (they cannot be replayed anywhere else).
fn prepare(protocol: Protocol, req: &ChatRequest) -> (Vec<Message>, Vec<String>) {
    let mut warnings = Vec::new();
    let mut messages = reasoning::select(&req.messages, req.reasoning.interleaved);
    for (mi, m) in messages.iter_mut().enumerate() {
        m.parts.retain_mut(|p| match p {
            Part::Reasoning { native: Some(n), .. } if n.protocol != protocol => {
                warnings.push(format!(
                    "messages[{mi}]: a {} reasoning block cannot be replayed to {protocol}; dropped",
                    n.protocol
                ));
                false
            }
            Part::ToolCall { native, .. } => {
                if let Some(n) = native.as_ref().filter(|n| n.protocol != protocol) {
                    warnings.push(format!(
                        "messages[{mi}]: the {} form of a tool call (signature) cannot be replayed to {protocol}; sent without it",
                        n.protocol
                    ));
                    *native = None;
                }
                true
            }
            _ => true,
        });
    }
    messages.retain(|m| !m.parts.is_empty());
    (messages, warnings)
}

/// A tool call being streamed.
#[derive(Debug, Default, Clone)]
pub(crate) struct PendingCall {
    pub index: usize,
    pub id: String,
    pub name: String,
    pub arguments: String,
}

impl PendingCall {
    /// The completed-call event, arguments parsed.
    pub fn complete(self, native: Option<Native>) -> StreamEvent {
        let (arguments, arguments_error) = parse_arguments(&self.arguments);
        StreamEvent::ToolCall {
            index: self.index,
            id: self.id,
            name: self.name,
            arguments,
            arguments_error,
            native,
        }
    }
}

/// Turns a JSON-decoding failure of one stream event into a warning event (one bad event
/// should not throw away the rest of the answer).
pub(crate) fn bad_event(protocol: Protocol, data: &str, err: &serde_json::Error) -> StreamEvent {
    let snippet: String = data.chars().take(80).collect();
    StreamEvent::Warning {
        message: format!(
            "{protocol}: skipped a stream event that is not valid JSON ({err}): {snippet}"
        ),
    }
}

/// The error for a stream that stopped before the provider's end marker.
pub(crate) fn truncated(protocol: Protocol) -> StreamEvent {
    LlmError::new(
        ErrorKind::InvalidResponse,
        format!(
            "the {protocol} stream ended before the provider finished its answer (connection cut?)"
        ),
    )
    .to_event()
}

/// A JSON object from `(key, value)` pairs, skipping `None`s.
pub(crate) fn object(pairs: impl IntoIterator<Item = (&'static str, Option<Value>)>) -> Value {
    let mut m = Map::new();
    for (k, v) in pairs {
        if let Some(v) = v {
            m.insert(k.to_owned(), v);
        }
    }
    Value::Object(m)
}

/// Tool results are plain text on the wire; a result that is JSON goes as its text.
pub(crate) fn result_json(content: &str) -> Value {
    serde_json::from_str(content).unwrap_or_else(|_| Value::String(content.to_owned()))
}
