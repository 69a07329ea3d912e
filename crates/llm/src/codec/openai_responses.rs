//! OpenAI Responses: input items in, output items and typed stream events out.
//!
//! Reasoning items (with `encrypted_content` when `include: ["reasoning.encrypted_content"]`)
//! are kept verbatim from `response.output_item.done` and sent back as input items, which is
//! what a stateless (`store: false`) tool loop needs.

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::openai_chat::image_url;
use super::{EncodeError, Encoded, PendingCall, StreamDecoder, bad_event, truncated};
use crate::event::{FinishReason, StreamEvent, Usage};
use crate::protocol::Protocol;
use crate::request::{ChatRequest, Message, Native, Part, Role, ToolChoice};
use crate::schema;
use crate::sse::SseEvent;

const P: Protocol = Protocol::OpenaiResponses;

// ---------- encoding ----------

fn content_parts(m: &Message, text_type: &str) -> Value {
    let only_text = m.parts.iter().all(|p| matches!(p, Part::Text { .. }));
    if only_text {
        return Value::String(m.joined_text());
    }
    Value::Array(
        m.parts
            .iter()
            .filter_map(|p| match p {
                Part::Text { text } => Some(json!({"type": text_type, "text": text})),
                Part::Image { source } => {
                    Some(json!({"type": "input_image", "image_url": image_url(source)}))
                }
                _ => None,
            })
            .collect(),
    )
}

pub(super) fn encode(req: &ChatRequest, messages: &[Message]) -> Result<Encoded, EncodeError> {
    let mut warnings = Vec::new();
    let mut input = Vec::new();
    for m in messages {
        match m.role {
            Role::System => input.push(json!({"role": "system", "content": m.joined_text()})),
            Role::User | Role::Tool => {
                for p in &m.parts {
                    if let Part::ToolResult {
                        call_id, content, ..
                    } = p
                    {
                        input.push(json!({"type": "function_call_output", "call_id": call_id, "output": content}));
                    }
                }
                if m.role == Role::User
                    && m.parts
                        .iter()
                        .any(|p| !matches!(p, Part::ToolResult { .. }))
                {
                    input.push(json!({"role": "user", "content": content_parts(m, "input_text")}));
                }
            }
            Role::Assistant => {
                // Items in the order the model produced them: reasoning, text, calls.
                let mut text = String::new();
                let flush_text = |text: &mut String, input: &mut Vec<Value>| {
                    if !text.is_empty() {
                        input.push(json!({"role": "assistant", "content": std::mem::take(text)}));
                    }
                };
                for p in &m.parts {
                    match p {
                        Part::Reasoning {
                            native: Some(n), ..
                        } => {
                            flush_text(&mut text, &mut input);
                            input.push(n.value.clone());
                        }
                        Part::Text { text: t } => text.push_str(t),
                        Part::ToolCall {
                            id,
                            name,
                            arguments,
                            ..
                        } => {
                            flush_text(&mut text, &mut input);
                            input.push(json!({
                                "type": "function_call",
                                "call_id": id,
                                "name": name,
                                "arguments": arguments.to_string(),
                            }));
                        }
                        _ => {}
                    }
                }
                flush_text(&mut text, &mut input);
            }
        }
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    body.insert("input".into(), Value::Array(input));
    if !req.tools.is_empty() {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| {
                // Responses makes function tools strict unless told otherwise.
                let (parameters, strict) = if t.strict {
                    let a =
                        schema::for_openai_strict(&t.parameters, &format!("tools[{i}].parameters"));
                    warnings.extend(a.warnings);
                    (a.schema, a.strict)
                } else {
                    (t.parameters.clone(), false)
                };
                let mut tool = Map::new();
                tool.insert("type".into(), json!("function"));
                tool.insert("name".into(), json!(t.name));
                if !t.description.is_empty() {
                    tool.insert("description".into(), json!(t.description));
                }
                tool.insert("parameters".into(), parameters);
                tool.insert("strict".into(), json!(strict));
                Value::Object(tool)
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        // `auto` is the default and is not sent: some compatible servers (llama-cpp-python)
        // fail on an explicit `tool_choice: "auto"` while streaming.
        let choice = match &req.tool_choice {
            ToolChoice::Auto => None,
            ToolChoice::None => Some(json!("none")),
            ToolChoice::Required => Some(json!("required")),
            ToolChoice::Tool(name) => Some(json!({"type": "function", "name": name})),
        };
        if let Some(c) = choice {
            body.insert("tool_choice".into(), c);
        }
    }
    let s = &req.sampling;
    if let Some(t) = s.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(t) = s.top_p {
        body.insert("top_p".into(), json!(t));
    }
    if s.top_k.is_some() {
        warnings.push("sampling.topK: not a Responses parameter; not sent".into());
    }
    if let Some(n) = s.max_output_tokens {
        body.insert("max_output_tokens".into(), json!(n));
    }
    if !s.stop.is_empty() {
        warnings.push("sampling.stop: not a Responses parameter; not sent".into());
    }
    if s.frequency_penalty.is_some() || s.presence_penalty.is_some() {
        warnings.push(
            "sampling.frequencyPenalty/presencePenalty: not Responses parameters; not sent".into(),
        );
    }
    if req.reasoning.enabled {
        let mut r = Map::new();
        if let Some(e) = req.reasoning.effort {
            r.insert(
                "effort".into(),
                serde_json::to_value(e).unwrap_or(Value::Null),
            );
        }
        r.insert("summary".into(), json!("auto"));
        body.insert("reasoning".into(), Value::Object(r));
        body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    }
    // The whole conversation is sent every time, so nothing needs to be stored upstream.
    body.insert("store".into(), json!(false));
    if req.stream {
        body.insert("stream".into(), json!(true));
    }
    Ok(Encoded {
        body: Value::Object(body),
        warnings,
    })
}

// ---------- decoding ----------

#[derive(Deserialize, Default)]
struct TokenDetails {
    reasoning_tokens: Option<u64>,
    cached_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    total_tokens: Option<u64>,
    input_tokens_details: Option<TokenDetails>,
    output_tokens_details: Option<TokenDetails>,
}

fn usage_of(v: &Value) -> Option<Usage> {
    let u: WireUsage = serde_json::from_value(v.clone()).ok()?;
    Some(Usage {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        reasoning_tokens: u.output_tokens_details.and_then(|d| d.reasoning_tokens),
        cached_input_tokens: u.input_tokens_details.and_then(|d| d.cached_tokens),
        total_tokens: u.total_tokens,
    })
}

/// The typed fields of a stream event this decoder reads; the rest stays unparsed.
#[derive(Deserialize)]
struct Event {
    #[serde(rename = "type")]
    kind: String,
    delta: Option<String>,
    item_id: Option<String>,
    item: Option<Value>,
    response: Option<Value>,
    arguments: Option<String>,
    refusal: Option<String>,
}

fn call_from_item(index: usize, item: &Value) -> PendingCall {
    let s = |k: &str| {
        item.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    PendingCall {
        index,
        id: s("call_id"),
        name: s("name"),
        arguments: s("arguments"),
    }
}

fn finish_of(response: &Value, saw_calls: bool) -> (FinishReason, String) {
    let status = response
        .get("status")
        .and_then(Value::as_str)
        .unwrap_or("completed");
    let reason = response
        .get("incomplete_details")
        .and_then(|d| d.get("reason"))
        .and_then(Value::as_str);
    match (status, reason) {
        (_, Some("max_output_tokens")) => (FinishReason::Length, "max_output_tokens".into()),
        (_, Some("content_filter")) => (FinishReason::ContentFilter, "content_filter".into()),
        ("completed", _) if saw_calls => (FinishReason::ToolCalls, "completed".into()),
        ("completed", _) => (FinishReason::Stop, "completed".into()),
        ("failed", _) => (FinishReason::Error, "failed".into()),
        (other, r) => (FinishReason::Other, r.unwrap_or(other).to_owned()),
    }
}

/// Streaming state of one Responses answer.
#[derive(Default)]
pub struct ResponsesStream {
    /// Calls being streamed, with the item id that their argument deltas name.
    calls: Vec<(String, PendingCall)>,
    next_call: usize,
    errored: bool,
    ended: bool,
}

impl ResponsesStream {
    fn item_added(&mut self, item: &Value, out: &mut Vec<StreamEvent>) {
        if item.get("type").and_then(Value::as_str) != Some("function_call") {
            return;
        }
        let mut call = call_from_item(self.next_call, item);
        self.next_call += 1;
        if call.id.is_empty() {
            call.id = format!("call_{}", call.index);
        }
        out.push(StreamEvent::ToolCallStart {
            index: call.index,
            id: call.id.clone(),
            name: call.name.clone(),
        });
        let item_id = item
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        self.calls.push((item_id, call));
    }

    fn item_done(&mut self, item: Value, out: &mut Vec<StreamEvent>) {
        match item.get("type").and_then(Value::as_str) {
            Some("function_call") => {
                let item_id = item.get("id").and_then(Value::as_str).unwrap_or_default();
                let pending = self
                    .calls
                    .iter()
                    .position(|(id, _)| id == item_id)
                    .map(|i| self.calls.remove(i).1);
                let index = pending.as_ref().map_or_else(
                    || {
                        self.next_call += 1;
                        self.next_call - 1
                    },
                    |p| p.index,
                );
                let mut call = call_from_item(index, &item);
                if call.arguments.is_empty() {
                    call.arguments = pending.map(|p| p.arguments).unwrap_or_default();
                }
                out.push(call.complete(None));
            }
            Some("reasoning") => out.push(StreamEvent::Native {
                native: Native {
                    protocol: P,
                    value: item,
                },
            }),
            _ => {}
        }
    }

    fn end(&mut self, response: Option<Value>, out: &mut Vec<StreamEvent>) {
        self.ended = true;
        let response = response.unwrap_or(Value::Null);
        if let Some(u) = response.get("usage").and_then(usage_of) {
            out.push(StreamEvent::Usage { usage: u });
        }
        let (reason, raw) = finish_of(&response, self.next_call > 0);
        out.push(StreamEvent::Finish {
            reason,
            raw: Some(raw),
        });
    }
}

impl StreamDecoder for ResponsesStream {
    fn on_event(&mut self, event: SseEvent<'_>, out: &mut Vec<StreamEvent>) {
        let data = event.data.trim();
        let ev: Event = match serde_json::from_str(data) {
            Ok(e) => e,
            Err(e) => {
                out.push(bad_event(P, data, &e));
                return;
            }
        };
        match ev.kind.as_str() {
            "response.output_text.delta" => {
                if let Some(t) = ev.delta.filter(|t| !t.is_empty()) {
                    out.push(StreamEvent::TextDelta { text: t });
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                if let Some(t) = ev.delta.filter(|t| !t.is_empty()) {
                    out.push(StreamEvent::ReasoningDelta { text: t });
                }
            }
            "response.output_item.added" => {
                if let Some(item) = ev.item {
                    self.item_added(&item, out);
                }
            }
            "response.function_call_arguments.delta" => {
                let id = ev.item_id.unwrap_or_default();
                if let (Some((_, call)), Some(d)) =
                    (self.calls.iter_mut().find(|(i, _)| *i == id), ev.delta)
                {
                    call.arguments.push_str(&d);
                    out.push(StreamEvent::ToolCallDelta {
                        index: call.index,
                        arguments: d,
                    });
                }
            }
            "response.function_call_arguments.done" => {
                let id = ev.item_id.unwrap_or_default();
                if let (Some((_, call)), Some(a)) =
                    (self.calls.iter_mut().find(|(i, _)| *i == id), ev.arguments)
                {
                    call.arguments = a;
                }
            }
            "response.output_item.done" => {
                if let Some(item) = ev.item {
                    self.item_done(item, out);
                }
            }
            "response.refusal.done" => out.push(StreamEvent::Warning {
                message: format!("the model refused: {}", ev.refusal.unwrap_or_default()),
            }),
            "response.completed" | "response.incomplete" => self.end(ev.response, out),
            "response.failed" => {
                let response = ev.response.unwrap_or(Value::Null);
                if !self.errored {
                    let e =
                        crate::error::error_from_body(P, None, &response).unwrap_or_else(|| {
                            crate::error::LlmError::new(
                                crate::error::ErrorKind::Server,
                                "the response failed",
                            )
                        });
                    out.push(e.to_event());
                    self.errored = true;
                }
                self.end(Some(response), out);
            }
            "error" => {
                // Either `{"type":"error","error":{...}}` or the fields at the top level.
                let payload: Value = serde_json::from_str(data).unwrap_or(Value::Null);
                let wrapped = if payload.get("error").is_some_and(Value::is_object) {
                    payload
                } else {
                    json!({"error": payload})
                };
                if let Some(e) = crate::error::error_from_body(P, None, &wrapped) {
                    out.push(e.to_event());
                }
                self.errored = true;
            }
            // Lifecycle and part bookkeeping events carry nothing the canonical stream needs:
            // response.created / in_progress / queued, content_part.*, output_text.done,
            // reasoning_summary_part.*, reasoning_summary_text.done, *.annotation.added.
            _ => {}
        }
    }

    fn on_end(&mut self, out: &mut Vec<StreamEvent>) {
        if !self.ended && !self.errored {
            for (_, call) in self.calls.drain(..) {
                out.push(StreamEvent::Warning {
                    message: format!("tool call `{}` was cut off before it completed", call.name),
                });
            }
            out.push(truncated(P));
        }
    }
}

/// A whole `response` body.
pub(super) fn decode_body(body: &Value, out: &mut Vec<StreamEvent>) {
    let mut calls = 0;
    for item in body
        .get("output")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match item.get("type").and_then(Value::as_str) {
            Some("message") => {
                for c in item
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    match c.get("type").and_then(Value::as_str) {
                        Some("output_text") => {
                            if let Some(t) = c
                                .get("text")
                                .and_then(Value::as_str)
                                .filter(|t| !t.is_empty())
                            {
                                out.push(StreamEvent::TextDelta { text: t.to_owned() });
                            }
                        }
                        Some("refusal") => out.push(StreamEvent::Warning {
                            message: format!(
                                "the model refused: {}",
                                c.get("refusal").and_then(Value::as_str).unwrap_or_default()
                            ),
                        }),
                        _ => {}
                    }
                }
            }
            Some("function_call") => {
                out.push(call_from_item(calls, item).complete(None));
                calls += 1;
            }
            Some("reasoning") => {
                for s in item
                    .get("summary")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(t) = s
                        .get("text")
                        .and_then(Value::as_str)
                        .filter(|t| !t.is_empty())
                    {
                        out.push(StreamEvent::ReasoningDelta { text: t.to_owned() });
                    }
                }
                out.push(StreamEvent::Native {
                    native: Native {
                        protocol: P,
                        value: item.clone(),
                    },
                });
            }
            _ => {}
        }
    }
    if let Some(u) = body.get("usage").and_then(usage_of) {
        out.push(StreamEvent::Usage { usage: u });
    }
    let (reason, raw) = finish_of(body, calls > 0);
    out.push(StreamEvent::Finish {
        reason,
        raw: Some(raw),
    });
}
