//! Anthropic Messages: `system` apart, alternating user/assistant turns of content blocks,
//! `tool_use` / `tool_result`, signed `thinking` and `redacted_thinking` blocks.

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{EncodeError, Encoded, PendingCall, StreamDecoder, bad_event, truncated};
use crate::event::{FinishReason, StreamEvent, Usage};
use crate::protocol::Protocol;
use crate::request::{ChatRequest, Effort, ImageSource, Message, Native, Part, Role, ToolChoice};
use crate::schema;
use crate::sse::SseEvent;

const P: Protocol = Protocol::Anthropic;

/// `max_tokens` is mandatory in Messages; this is sent when the caller set no limit.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

// ---------- encoding ----------

fn block(p: &Part) -> Option<Value> {
    Some(match p {
        Part::Text { text } => json!({"type": "text", "text": text}),
        Part::Image { source } => match source {
            ImageSource::Base64 { media_type, data } => {
                json!({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}})
            }
            ImageSource::Url { url } => {
                json!({"type": "image", "source": {"type": "url", "url": url}})
            }
        },
        Part::Reasoning {
            native: Some(n), ..
        } => n.value.clone(),
        Part::Reasoning { native: None, .. } => return None,
        Part::ToolCall {
            id,
            name,
            arguments,
            ..
        } => {
            let input = if arguments.is_object() {
                arguments.clone()
            } else {
                json!({})
            };
            json!({"type": "tool_use", "id": id, "name": name, "input": input})
        }
        Part::ToolResult {
            call_id,
            content,
            is_error,
            ..
        } => {
            let mut b = json!({"type": "tool_result", "tool_use_id": call_id, "content": content});
            if *is_error {
                b["is_error"] = json!(true);
            }
            b
        }
    })
}

/// A part in a request without tools: calls and results as text, the rest as [`block`].
fn folded_block(p: &Part) -> Option<Value> {
    match p {
        Part::ToolCall {
            name, arguments, ..
        } => Some(json!({"type": "text", "text": format!("[called {name} {arguments}]")})),
        Part::ToolResult {
            name,
            content,
            is_error,
            ..
        } => {
            let what = if *is_error { "error" } else { "result" };
            let name = if name.is_empty() { "the tool" } else { name };
            Some(json!({"type": "text", "text": format!("[{name} {what}: {content}]")}))
        }
        other => block(other),
    }
}

fn budget(effort: Option<Effort>) -> u32 {
    match effort {
        Some(Effort::Minimal) | Some(Effort::Low) => 1024,
        Some(Effort::Medium) | None => 4096,
        Some(Effort::High) => 16000,
    }
}

pub(super) fn encode(req: &ChatRequest, messages: &[Message]) -> Result<Encoded, EncodeError> {
    let mut warnings = Vec::new();
    let mut system = Vec::new();
    // (role, blocks); consecutive turns of one role merge, as Messages requires alternation.
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    // Messages refuses `tool_use` / `tool_result` blocks in a request that defines no tools
    // (a continue or quiet generation after a reply that called tools): they go as text then.
    let fold_tools = req.tools.is_empty()
        && messages
            .iter()
            .flat_map(|m| &m.parts)
            .any(|p| matches!(p, Part::ToolCall { .. } | Part::ToolResult { .. }));
    if fold_tools {
        warnings.push(
            "earlier tool calls are sent as text: Anthropic takes tool_use blocks only in a request that defines tools".to_owned(),
        );
    }
    for m in messages {
        let role = match m.role {
            Role::System => {
                system.push(m.joined_text());
                continue;
            }
            Role::User | Role::Tool => "user",
            Role::Assistant => "assistant",
        };
        let blocks: Vec<Value> = if fold_tools {
            m.parts.iter().filter_map(folded_block).collect()
        } else {
            m.parts.iter().filter_map(block).collect()
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((r, b)) if *r == role => b.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    let messages: Vec<Value> = turns
        .into_iter()
        .map(|(role, blocks)| {
            let content = match blocks.as_slice() {
                [only] if only.get("type") == Some(&json!("text")) => only["text"].clone(),
                _ => Value::Array(blocks),
            };
            json!({"role": role, "content": content})
        })
        .collect();
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    let s = &req.sampling;
    let mut max_tokens = s.max_output_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    if req.reasoning.enabled {
        let b = req
            .reasoning
            .budget_tokens
            .unwrap_or_else(|| budget(req.reasoning.effort))
            .max(1024);
        if max_tokens <= b {
            warnings.push(format!(
                "sampling.maxOutputTokens ({max_tokens}) must exceed the thinking budget ({b}); sent {}",
                b + DEFAULT_MAX_TOKENS
            ));
            max_tokens = b + DEFAULT_MAX_TOKENS;
        }
        body.insert(
            "thinking".into(),
            json!({"type": "enabled", "budget_tokens": b}),
        );
    }
    body.insert("max_tokens".into(), json!(max_tokens));
    if !system.is_empty() {
        body.insert("system".into(), json!(system.join("\n\n")));
    }
    body.insert("messages".into(), Value::Array(messages));
    if !req.tools.is_empty() {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| {
                let mut tool = Map::new();
                tool.insert("name".into(), json!(t.name));
                if !t.description.is_empty() {
                    tool.insert("description".into(), json!(t.description));
                }
                tool.insert("input_schema".into(), schema::for_anthropic(&t.parameters));
                Value::Object(tool)
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        let choice = match &req.tool_choice {
            ToolChoice::Auto => None,
            ToolChoice::None => Some(json!({"type": "none"})),
            ToolChoice::Required => Some(json!({"type": "any"})),
            ToolChoice::Tool(name) => Some(json!({"type": "tool", "name": name})),
        };
        if let Some(c) = choice {
            body.insert("tool_choice".into(), c);
        }
    }
    if let Some(t) = s.temperature {
        if req.reasoning.enabled {
            warnings
                .push("sampling.temperature: not allowed with extended thinking; not sent".into());
        } else {
            body.insert("temperature".into(), json!(t));
        }
    }
    if let Some(t) = s.top_p {
        body.insert("top_p".into(), json!(t));
    }
    if let Some(k) = s.top_k {
        if req.reasoning.enabled {
            warnings.push("sampling.topK: not allowed with extended thinking; not sent".into());
        } else {
            body.insert("top_k".into(), json!(k));
        }
    }
    if !s.stop.is_empty() {
        body.insert("stop_sequences".into(), json!(s.stop));
    }
    if s.frequency_penalty.is_some() || s.presence_penalty.is_some() {
        warnings.push(
            "sampling.frequencyPenalty/presencePenalty: not Anthropic parameters; not sent".into(),
        );
    }
    if req.stream {
        body.insert("stream".into(), json!(true));
    }
    Ok(Encoded {
        body: Value::Object(body),
        warnings,
    })
}

// ---------- decoding ----------

#[derive(Deserialize)]
struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
}

fn usage_of(v: &Value) -> Option<Usage> {
    let u: WireUsage = serde_json::from_value(v.clone()).ok()?;
    Some(Usage {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        reasoning_tokens: None,
        cached_input_tokens: u.cache_read_input_tokens,
        total_tokens: None,
    })
}

pub(super) fn stop_reason(raw: &str) -> FinishReason {
    match raw {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
        "tool_use" => FinishReason::ToolCalls,
        "refusal" => FinishReason::ContentFilter,
        _ => FinishReason::Other,
    }
}

#[derive(Deserialize)]
struct Delta {
    #[serde(rename = "type")]
    kind: Option<String>,
    text: Option<String>,
    thinking: Option<String>,
    signature: Option<String>,
    partial_json: Option<String>,
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct Event {
    #[serde(rename = "type")]
    kind: String,
    index: Option<usize>,
    delta: Option<Delta>,
    content_block: Option<Value>,
    message: Option<Value>,
    usage: Option<Value>,
}

/// A content block being streamed.
enum Block {
    Text,
    Thinking {
        text: String,
        signature: String,
    },
    Redacted(Value),
    /// The call, and the `input` of the start event (used when no delta follows).
    Tool(PendingCall, Option<String>),
    Other,
}

/// Streaming state of one Messages answer.
#[derive(Default)]
pub struct MessagesStream {
    blocks: Vec<(usize, Block)>,
    calls: usize,
    stopped: bool,
    errored: bool,
}

impl MessagesStream {
    fn block_mut(&mut self, index: usize) -> Option<&mut Block> {
        self.blocks
            .iter_mut()
            .find(|(i, _)| *i == index)
            .map(|(_, b)| b)
    }

    fn start(&mut self, index: usize, cb: Value, out: &mut Vec<StreamEvent>) {
        let s = |k: &str| {
            cb.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let block = match cb.get("type").and_then(Value::as_str) {
            Some("text") => {
                let t = s("text");
                if !t.is_empty() {
                    out.push(StreamEvent::TextDelta { text: t });
                }
                Block::Text
            }
            Some("thinking") => {
                let t = s("thinking");
                if !t.is_empty() {
                    out.push(StreamEvent::ReasoningDelta { text: t.clone() });
                }
                Block::Thinking {
                    text: t,
                    signature: s("signature"),
                }
            }
            Some("redacted_thinking") => Block::Redacted(cb),
            Some("tool_use") => {
                let call = PendingCall {
                    index: self.calls,
                    id: s("id"),
                    name: s("name"),
                    arguments: String::new(),
                };
                self.calls += 1;
                out.push(StreamEvent::ToolCallStart {
                    index: call.index,
                    id: call.id.clone(),
                    name: call.name.clone(),
                });
                let initial = cb
                    .get("input")
                    .filter(|i| i.as_object().is_some_and(|o| !o.is_empty()))
                    .map(Value::to_string);
                Block::Tool(call, initial)
            }
            _ => Block::Other,
        };
        self.blocks.push((index, block));
    }

    fn delta(&mut self, index: usize, d: Delta, out: &mut Vec<StreamEvent>) {
        let Some(block) = self.block_mut(index) else {
            // A delta for a block we never saw start (a stream fragment): text still counts.
            if let Some(t) = d.text {
                out.push(StreamEvent::TextDelta { text: t });
            }
            return;
        };
        match (block, d.kind.as_deref()) {
            (_, Some("text_delta")) => {
                if let Some(t) = d.text.filter(|t| !t.is_empty()) {
                    out.push(StreamEvent::TextDelta { text: t });
                }
            }
            (Block::Thinking { text, .. }, Some("thinking_delta")) => {
                if let Some(t) = d.thinking.filter(|t| !t.is_empty()) {
                    text.push_str(&t);
                    out.push(StreamEvent::ReasoningDelta { text: t });
                }
            }
            (Block::Thinking { signature, .. }, Some("signature_delta")) => {
                if let Some(s) = d.signature {
                    signature.push_str(&s);
                }
            }
            (Block::Tool(call, _), Some("input_json_delta")) => {
                if let Some(j) = d.partial_json.filter(|j| !j.is_empty()) {
                    call.arguments.push_str(&j);
                    out.push(StreamEvent::ToolCallDelta {
                        index: call.index,
                        arguments: j,
                    });
                }
            }
            _ => {}
        }
    }

    fn stop(&mut self, index: usize, out: &mut Vec<StreamEvent>) {
        let Some(pos) = self.blocks.iter().position(|(i, _)| *i == index) else {
            return;
        };
        match self.blocks.remove(pos).1 {
            Block::Thinking { text, signature } => out.push(StreamEvent::Native {
                native: Native {
                    protocol: P,
                    value: json!({"type": "thinking", "thinking": text, "signature": signature}),
                },
            }),
            Block::Redacted(v) => out.push(StreamEvent::Native {
                native: Native {
                    protocol: P,
                    value: v,
                },
            }),
            Block::Tool(mut call, initial) => {
                if call.arguments.is_empty() {
                    call.arguments = initial.unwrap_or_default();
                }
                out.push(call.complete(None));
            }
            Block::Text | Block::Other => {}
        }
    }
}

impl StreamDecoder for MessagesStream {
    fn on_event(&mut self, event: SseEvent<'_>, out: &mut Vec<StreamEvent>) {
        let data = event.data.trim();
        let ev: Event = match serde_json::from_str(data) {
            Ok(e) => e,
            Err(e) => {
                out.push(bad_event(P, data, &e));
                return;
            }
        };
        let index = ev.index.unwrap_or(0);
        match ev.kind.as_str() {
            "message_start" => {
                if let Some(u) = ev
                    .message
                    .as_ref()
                    .and_then(|m| m.get("usage"))
                    .and_then(usage_of)
                {
                    out.push(StreamEvent::Usage { usage: u });
                }
            }
            "content_block_start" => {
                if let Some(cb) = ev.content_block {
                    self.start(index, cb, out);
                }
            }
            "content_block_delta" => {
                if let Some(d) = ev.delta {
                    self.delta(index, d, out);
                }
            }
            "content_block_stop" => self.stop(index, out),
            "message_delta" => {
                if let Some(u) = ev.usage.as_ref().and_then(usage_of) {
                    out.push(StreamEvent::Usage { usage: u });
                }
                if let Some(raw) = ev.delta.and_then(|d| d.stop_reason) {
                    self.stopped = true;
                    out.push(StreamEvent::Finish {
                        reason: stop_reason(&raw),
                        raw: Some(raw),
                    });
                }
            }
            "message_stop" => self.stopped = true,
            "error" => {
                let payload: Value = serde_json::from_str(data).unwrap_or(Value::Null);
                if let Some(e) = crate::error::error_from_body(P, None, &payload) {
                    out.push(e.to_event());
                }
                self.errored = true;
            }
            // `ping` keeps proxies from closing an idle connection.
            _ => {}
        }
    }

    fn on_end(&mut self, out: &mut Vec<StreamEvent>) {
        // A tool_use block without content_block_stop (cut by max_tokens) is not a call.
        for (_, block) in self.blocks.drain(..) {
            if let Block::Tool(call, _) = block {
                out.push(StreamEvent::Warning {
                    message: format!(
                        "tool call `{}` ({}) was left unfinished by the provider; it is not executed",
                        call.name, call.id
                    ),
                });
            }
        }
        if !self.stopped && !self.errored {
            out.push(truncated(P));
        }
    }
}

/// A whole `message` body.
pub(super) fn decode_body(body: &Value, out: &mut Vec<StreamEvent>) {
    let mut calls = 0;
    for b in body
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match b.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(t) = b
                    .get("text")
                    .and_then(Value::as_str)
                    .filter(|t| !t.is_empty())
                {
                    out.push(StreamEvent::TextDelta { text: t.to_owned() });
                }
            }
            Some("thinking") => {
                if let Some(t) = b
                    .get("thinking")
                    .and_then(Value::as_str)
                    .filter(|t| !t.is_empty())
                {
                    out.push(StreamEvent::ReasoningDelta { text: t.to_owned() });
                }
                out.push(StreamEvent::Native {
                    native: Native {
                        protocol: P,
                        value: b.clone(),
                    },
                });
            }
            Some("redacted_thinking") => out.push(StreamEvent::Native {
                native: Native {
                    protocol: P,
                    value: b.clone(),
                },
            }),
            Some("tool_use") => {
                let s = |k: &str| {
                    b.get(k)
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned()
                };
                let call = PendingCall {
                    index: calls,
                    id: s("id"),
                    name: s("name"),
                    arguments: b.get("input").map(Value::to_string).unwrap_or_default(),
                };
                calls += 1;
                out.push(call.complete(None));
            }
            _ => {}
        }
    }
    if let Some(u) = body.get("usage").and_then(usage_of) {
        out.push(StreamEvent::Usage { usage: u });
    }
    if let Some(raw) = body.get("stop_reason").and_then(Value::as_str) {
        out.push(StreamEvent::Finish {
            reason: stop_reason(raw),
            raw: Some(raw.to_owned()),
        });
    }
}
