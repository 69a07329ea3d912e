//! OpenAI Chat Completions, and the OpenAI-compatible family (DeepSeek `reasoning_content`,
//! OpenRouter `reasoning` / `reasoning_details`, llama.cpp, vLLM, Ollama).

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{EncodeError, Encoded, PendingCall, StreamDecoder, bad_event, object, truncated};
use crate::event::{FinishReason, StreamEvent, Usage};
use crate::protocol::Protocol;
use crate::request::{ChatRequest, ImageSource, Message, Native, Part, Role, ToolChoice};
use crate::schema;
use crate::sse::SseEvent;

const P: Protocol = Protocol::OpenaiChat;

// ---------- encoding ----------

pub(super) fn image_url(source: &ImageSource) -> String {
    match source {
        ImageSource::Base64 { media_type, data } => format!("data:{media_type};base64,{data}"),
        ImageSource::Url { url } => url.clone(),
    }
}

fn user_content(m: &Message) -> Value {
    let only_text = m.parts.iter().all(|p| matches!(p, Part::Text { .. }));
    if only_text {
        return Value::String(m.joined_text());
    }
    let parts: Vec<Value> = m
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Text { text } => Some(json!({"type": "text", "text": text})),
            Part::Image { source } => {
                Some(json!({"type": "image_url", "image_url": {"url": image_url(source)}}))
            }
            _ => None,
        })
        .collect();
    Value::Array(parts)
}

fn assistant_message(m: &Message) -> Value {
    let mut msg = Map::new();
    msg.insert("role".into(), json!("assistant"));
    let text = m.joined_text();
    let calls: Vec<Value> = m
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::ToolCall {
                id,
                name,
                arguments,
                ..
            } => Some(json!({
                "id": id,
                "type": "function",
                "function": {"name": name, "arguments": arguments.to_string()},
            })),
            _ => None,
        })
        .collect();
    // Always a string, `""` beside tool calls: OpenAI allows `null` there, but
    // llama-cpp-python types an assistant message's content as `NotRequired[str]` and answers
    // a `null` with HTTP 500, and chat templates of other local servers read the key as text.
    // An empty string is what every server accepts (OpenAI, vLLM, Ollama, llama.cpp, LM Studio).
    msg.insert("content".into(), Value::String(text));
    // Native reasoning fields (`reasoning_content`, `reasoning_details`) go back as received.
    for p in &m.parts {
        if let Part::Reasoning {
            native:
                Some(Native {
                    value: Value::Object(fields),
                    ..
                }),
            ..
        } = p
        {
            for (k, v) in fields {
                msg.insert(k.clone(), v.clone());
            }
        }
    }
    if !calls.is_empty() {
        msg.insert("tool_calls".into(), Value::Array(calls));
    }
    Value::Object(msg)
}

pub(super) fn encode(req: &ChatRequest, messages: &[Message]) -> Result<Encoded, EncodeError> {
    let mut warnings = Vec::new();
    let mut out = Vec::new();
    for m in messages {
        match m.role {
            Role::System => out.push(json!({"role": "system", "content": m.joined_text()})),
            Role::User => {
                // A user turn may carry tool results too (as Anthropic does); split them out.
                for p in &m.parts {
                    if let Part::ToolResult {
                        call_id, content, ..
                    } = p
                    {
                        out.push(
                            json!({"role": "tool", "tool_call_id": call_id, "content": content}),
                        );
                    }
                }
                if m.parts
                    .iter()
                    .any(|p| !matches!(p, Part::ToolResult { .. }))
                {
                    out.push(json!({"role": "user", "content": user_content(m)}));
                }
            }
            Role::Assistant => out.push(assistant_message(m)),
            Role::Tool => {
                for p in &m.parts {
                    if let Part::ToolResult {
                        call_id, content, ..
                    } = p
                    {
                        out.push(
                            json!({"role": "tool", "tool_call_id": call_id, "content": content}),
                        );
                    }
                }
            }
        }
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    body.insert("messages".into(), Value::Array(out));
    if !req.tools.is_empty() {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let mut f = Map::new();
                f.insert("name".into(), json!(t.name));
                if !t.description.is_empty() {
                    f.insert("description".into(), json!(t.description));
                }
                if t.strict {
                    let a =
                        schema::for_openai_strict(&t.parameters, &format!("tools[{i}].parameters"));
                    warnings.extend(a.warnings);
                    f.insert("parameters".into(), a.schema);
                    f.insert("strict".into(), json!(a.strict));
                } else {
                    f.insert("parameters".into(), t.parameters.clone());
                }
                json!({"type": "function", "function": f})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        // `auto` is the default and is not sent: some compatible servers (llama-cpp-python)
        // fail on an explicit `tool_choice: "auto"` while streaming.
        let choice = match &req.tool_choice {
            ToolChoice::Auto => None,
            ToolChoice::None => Some(json!("none")),
            ToolChoice::Required => Some(json!("required")),
            ToolChoice::Tool(name) => Some(json!({"type": "function", "function": {"name": name}})),
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
    if let Some(k) = s.top_k {
        // Not an OpenAI parameter, but the compatible servers (vLLM, llama.cpp, OpenRouter)
        // honour it; it is only sent when the user set it.
        body.insert("top_k".into(), json!(k));
    }
    if let Some(n) = s.max_output_tokens {
        // OpenAI reasoning models refuse `max_tokens` (fixture error-400-unsupported-parameter).
        let key = if req.reasoning.enabled {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        body.insert(key.into(), json!(n));
    }
    if !s.stop.is_empty() {
        body.insert("stop".into(), json!(s.stop));
    }
    if let Some(p) = s.frequency_penalty {
        body.insert("frequency_penalty".into(), json!(p));
    }
    if let Some(p) = s.presence_penalty {
        body.insert("presence_penalty".into(), json!(p));
    }
    if let (true, Some(e)) = (req.reasoning.enabled, req.reasoning.effort) {
        body.insert(
            "reasoning_effort".into(),
            serde_json::to_value(e).unwrap_or(Value::Null),
        );
    }
    if req.stream {
        body.insert("stream".into(), json!(true));
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    Ok(Encoded {
        body: Value::Object(body),
        warnings,
    })
}

// ---------- decoding ----------

#[derive(Deserialize, Default)]
struct Details {
    reasoning_tokens: Option<u64>,
    cached_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct WireUsage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    total_tokens: Option<u64>,
    completion_tokens_details: Option<Details>,
    prompt_tokens_details: Option<Details>,
    /// DeepSeek's name for cached prompt tokens.
    prompt_cache_hit_tokens: Option<u64>,
}

impl WireUsage {
    fn canonical(&self) -> Usage {
        Usage {
            input_tokens: self.prompt_tokens,
            output_tokens: self.completion_tokens,
            reasoning_tokens: self
                .completion_tokens_details
                .as_ref()
                .and_then(|d| d.reasoning_tokens),
            cached_input_tokens: self
                .prompt_tokens_details
                .as_ref()
                .and_then(|d| d.cached_tokens)
                .or(self.prompt_cache_hit_tokens),
            total_tokens: self.total_tokens,
        }
    }
}

#[derive(Deserialize)]
struct WireFunction {
    name: Option<String>,
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct WireToolCall {
    index: Option<usize>,
    id: Option<String>,
    function: Option<WireFunction>,
}

#[derive(Deserialize)]
struct Delta {
    content: Option<String>,
    reasoning_content: Option<String>,
    reasoning: Option<String>,
    reasoning_details: Option<Vec<Value>>,
    tool_calls: Option<Vec<WireToolCall>>,
    refusal: Option<String>,
}

#[derive(Deserialize)]
struct Choice {
    delta: Option<Delta>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    usage: Option<WireUsage>,
    error: Option<Value>,
}

pub(super) fn finish_reason(raw: &str) -> FinishReason {
    match raw {
        "stop" => FinishReason::Stop,
        "length" => FinishReason::Length,
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "content_filter" => FinishReason::ContentFilter,
        "error" => FinishReason::Error,
        _ => FinishReason::Other,
    }
}

/// Merges a streamed `reasoning_details` entry into the list: entries with the same `index`
/// are one detail whose text arrives in pieces and whose signature arrives last.
fn merge_detail(details: &mut Vec<Value>, piece: Value) {
    let idx = piece.get("index").cloned();
    let existing = idx
        .as_ref()
        .and_then(|i| details.iter_mut().find(|d| d.get("index") == Some(i)));
    match (existing, piece) {
        (Some(Value::Object(have)), Value::Object(new)) => {
            for (k, v) in new {
                match (have.get_mut(&k), v) {
                    (Some(Value::String(a)), Value::String(b))
                        if matches!(k.as_str(), "text" | "summary" | "data") =>
                    {
                        a.push_str(&b)
                    }
                    (_, Value::Null) => {}
                    (_, v) => {
                        have.insert(k, v);
                    }
                }
            }
        }
        (_, piece) => details.push(piece),
    }
}

/// Streaming state of one Chat Completions answer.
#[derive(Default)]
pub struct ChatStream {
    calls: Vec<PendingCall>,
    /// Wire index of each entry of `calls` (OpenAI numbers calls with `index`).
    wire_index: Vec<usize>,
    reasoning_content: String,
    details: Vec<Value>,
    finished: bool,
    done: bool,
    flushed: bool,
}

impl ChatStream {
    fn flush(&mut self, out: &mut Vec<StreamEvent>) {
        if self.flushed {
            return;
        }
        self.flushed = true;
        let mut native = Map::new();
        if !self.reasoning_content.is_empty() {
            native.insert(
                "reasoning_content".into(),
                Value::String(std::mem::take(&mut self.reasoning_content)),
            );
        }
        if !self.details.is_empty() {
            native.insert(
                "reasoning_details".into(),
                Value::Array(std::mem::take(&mut self.details)),
            );
        }
        if !native.is_empty() {
            out.push(StreamEvent::Native {
                native: Native {
                    protocol: P,
                    value: Value::Object(native),
                },
            });
        }
        for c in self.calls.drain(..) {
            out.push(c.complete(None));
        }
    }

    fn tool_delta(&mut self, tc: WireToolCall, out: &mut Vec<StreamEvent>) {
        let wire = tc.index.unwrap_or(0);
        let pos = match self.wire_index.iter().position(|w| *w == wire) {
            Some(p) => p,
            None => {
                self.wire_index.push(wire);
                self.calls.push(PendingCall {
                    index: self.calls.len(),
                    ..PendingCall::default()
                });
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[pos];
        let was_named = !call.name.is_empty();
        if let Some(id) = tc.id.filter(|i| !i.is_empty()) {
            call.id = id;
        }
        let (name, args) = match tc.function {
            Some(f) => (f.name, f.arguments),
            None => (None, None),
        };
        // Some servers (llama-cpp-python) repeat the name on every delta: replace, never append.
        if let Some(n) = name.filter(|n| !n.is_empty()) {
            call.name = n;
        }
        if !was_named && !call.name.is_empty() {
            if call.id.is_empty() {
                call.id = format!("call_{}", call.index);
            }
            out.push(StreamEvent::ToolCallStart {
                index: call.index,
                id: call.id.clone(),
                name: call.name.clone(),
            });
        }
        if let Some(a) = args.filter(|a| !a.is_empty()) {
            call.arguments.push_str(&a);
            out.push(StreamEvent::ToolCallDelta {
                index: call.index,
                arguments: a,
            });
        }
    }
}

impl StreamDecoder for ChatStream {
    fn on_event(&mut self, event: SseEvent<'_>, out: &mut Vec<StreamEvent>) {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.done = true;
            self.flush(out);
            return;
        }
        let chunk: Chunk = match serde_json::from_str(data) {
            Ok(c) => c,
            Err(e) => {
                out.push(bad_event(P, data, &e));
                return;
            }
        };
        if let Some(err) = chunk.error.as_ref() {
            let wrapped = json!({ "error": err });
            if let Some(e) = crate::error::error_from_body(P, None, &wrapped) {
                out.push(e.to_event());
            }
        }
        for choice in chunk.choices {
            if let Some(d) = choice.delta {
                if let Some(r) = d.reasoning_content.filter(|r| !r.is_empty()) {
                    self.reasoning_content.push_str(&r);
                    out.push(StreamEvent::ReasoningDelta { text: r });
                } else if let Some(r) = d.reasoning.filter(|r| !r.is_empty()) {
                    out.push(StreamEvent::ReasoningDelta { text: r });
                }
                for detail in d.reasoning_details.unwrap_or_default() {
                    merge_detail(&mut self.details, detail);
                }
                if let Some(t) = d.content.filter(|t| !t.is_empty()) {
                    out.push(StreamEvent::TextDelta { text: t });
                }
                if let Some(r) = d.refusal.filter(|r| !r.is_empty()) {
                    out.push(StreamEvent::Warning {
                        message: format!("the model refused: {r}"),
                    });
                }
                for tc in d.tool_calls.unwrap_or_default() {
                    self.tool_delta(tc, out);
                }
            }
            if let Some(raw) = choice.finish_reason {
                self.flush(out);
                self.finished = true;
                out.push(StreamEvent::Finish {
                    reason: finish_reason(&raw),
                    raw: Some(raw),
                });
            }
        }
        if let Some(u) = chunk.usage {
            out.push(StreamEvent::Usage {
                usage: u.canonical(),
            });
        }
    }

    fn on_end(&mut self, out: &mut Vec<StreamEvent>) {
        self.flush(out);
        if !self.finished && !self.done {
            out.push(truncated(P));
        }
    }
}

/// A whole `chat.completion` body.
pub(super) fn decode_body(body: &Value, out: &mut Vec<StreamEvent>) {
    let choice = body.get("choices").and_then(|c| c.get(0));
    let msg = choice.and_then(|c| c.get("message"));
    if let Some(m) = msg {
        let reasoning = m
            .get("reasoning_content")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .or_else(|| {
                m.get("reasoning")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
            });
        if let Some(r) = reasoning {
            out.push(StreamEvent::ReasoningDelta { text: r.to_owned() });
        }
        let native = object([
            (
                "reasoning_content",
                m.get("reasoning_content")
                    .filter(|v| v.as_str().is_some_and(|s| !s.is_empty()))
                    .cloned(),
            ),
            (
                "reasoning_details",
                m.get("reasoning_details")
                    .filter(|v| v.as_array().is_some_and(|a| !a.is_empty()))
                    .cloned(),
            ),
        ]);
        if native.as_object().is_some_and(|o| !o.is_empty()) {
            out.push(StreamEvent::Native {
                native: Native {
                    protocol: P,
                    value: native,
                },
            });
        }
        if let Some(t) = m
            .get("content")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        {
            out.push(StreamEvent::TextDelta { text: t.to_owned() });
        }
        if let Some(r) = m.get("refusal").and_then(Value::as_str) {
            out.push(StreamEvent::Warning {
                message: format!("the model refused: {r}"),
            });
        }
        for (i, tc) in m
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let f = tc.get("function");
            let call = PendingCall {
                index: i,
                id: tc
                    .get("id")
                    .and_then(Value::as_str)
                    .map_or_else(|| format!("call_{i}"), str::to_owned),
                name: f
                    .and_then(|f| f.get("name"))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                arguments: match f.and_then(|f| f.get("arguments")) {
                    Some(Value::String(s)) => s.clone(),
                    Some(v @ Value::Object(_)) => v.to_string(),
                    _ => String::new(),
                },
            };
            out.push(call.complete(None));
        }
    }
    if let Some(raw) = choice
        .and_then(|c| c.get("finish_reason"))
        .and_then(Value::as_str)
    {
        out.push(StreamEvent::Finish {
            reason: finish_reason(raw),
            raw: Some(raw.to_owned()),
        });
    }
    if let Some(u) = body
        .get("usage")
        .and_then(|u| serde_json::from_value::<WireUsage>(u.clone()).ok())
    {
        out.push(StreamEvent::Usage {
            usage: u.canonical(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tool round as a local server receives it: llama-cpp-python's request schema
    /// (`ChatCompletionRequestAssistantMessage.content: NotRequired[str]`) accepts this body;
    /// with `"content": null` on the assistant turn it answered HTTP 500.
    const LLAMA_CPP_TOOL_HISTORY: &str = r#"{
        "model": "smollm2",
        "messages": [
            {"role": "user", "content": "Save a note named todo.txt that says buy milk."},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "tavo_file_save", "arguments": "{\"name\":\"todo.txt\",\"content\":\"buy milk\"}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "{\"ok\":true}"}
        ]
    }"#;

    fn tool_history() -> Vec<Message> {
        vec![
            Message::text(Role::User, "Save a note named todo.txt that says buy milk."),
            Message {
                role: Role::Assistant,
                parts: vec![Part::ToolCall {
                    id: "call_1".into(),
                    name: "tavo_file_save".into(),
                    arguments: json!({"name": "todo.txt", "content": "buy milk"}),
                    native: None,
                }],
            },
            Message {
                role: Role::Tool,
                parts: vec![Part::ToolResult {
                    call_id: "call_1".into(),
                    name: "tavo_file_save".into(),
                    content: r#"{"ok":true}"#.into(),
                    is_error: false,
                }],
            },
        ]
    }

    #[test]
    fn an_assistant_turn_with_only_tool_calls_sends_empty_string_content() {
        let req = ChatRequest::new("smollm2", tool_history());
        let encoded = encode(&req, &req.messages).expect("encodes");
        let want: Value = serde_json::from_str(LLAMA_CPP_TOOL_HISTORY).expect("fixture");
        assert_eq!(encoded.body["messages"], want["messages"]);
        // No message of any role carries a null content.
        let messages = encoded.body["messages"].as_array().expect("messages");
        assert!(
            messages.iter().all(|m| m["content"].is_string()),
            "{messages:?}"
        );
    }

    #[test]
    fn an_assistant_turn_with_text_and_tool_calls_keeps_its_text() {
        let mut history = tool_history();
        history[1].parts.insert(0, Part::text("Saving it."));
        let req = ChatRequest::new("smollm2", history);
        let encoded = encode(&req, &req.messages).expect("encodes");
        assert_eq!(encoded.body["messages"][1]["content"], "Saving it.");
        assert_eq!(
            encoded.body["messages"][1]["tool_calls"][0]["function"]["name"],
            "tavo_file_save"
        );
    }

    #[test]
    fn details_with_the_same_index_merge() {
        let mut d = Vec::new();
        merge_detail(
            &mut d,
            json!({"type": "reasoning.text", "text": "a", "signature": null, "index": 0}),
        );
        merge_detail(
            &mut d,
            json!({"type": "reasoning.text", "text": "b", "signature": "S", "index": 0}),
        );
        assert_eq!(
            d,
            vec![json!({"type": "reasoning.text", "text": "ab", "signature": "S", "index": 0})]
        );
    }
}
