//! Gemini `generateContent` / `streamGenerateContent?alt=sse`: `contents` of `parts`,
//! `systemInstruction`, `functionDeclarations`, `functionCall` / `functionResponse` with ids,
//! `thought` parts and `thoughtSignature`s that must come back byte for byte.

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Map, Value, json};

use super::{EncodeError, Encoded, PendingCall, StreamDecoder, bad_event, result_json, truncated};
use crate::event::{FinishReason, StreamEvent, Usage};
use crate::protocol::Protocol;
use crate::request::{ChatRequest, Effort, ImageSource, Message, Native, Part, Role, ToolChoice};
use crate::schema;
use crate::sse::SseEvent;

const P: Protocol = Protocol::Gemini;

// ---------- encoding ----------

/// The `id` of the provider's functionCall for a canonical call id, when the provider gave one.
fn native_call_id<'a>(
    messages: &'a [Message],
    call_id: &str,
) -> Option<(&'a str, Option<&'a str>)> {
    messages
        .iter()
        .flat_map(|m| &m.parts)
        .find_map(|p| match p {
            Part::ToolCall {
                id, name, native, ..
            } if id == call_id => {
                let wire_id = native
                    .as_ref()
                    .and_then(|n| n.value.get("functionCall"))
                    .and_then(|fc| fc.get("id"))
                    .and_then(Value::as_str);
                Some((name.as_str(), wire_id))
            }
            _ => None,
        })
}

fn part(p: &Part, messages: &[Message], warnings: &mut Vec<String>) -> Option<Value> {
    Some(match p {
        Part::Text { text } => json!({"text": text}),
        Part::Image { source } => match source {
            ImageSource::Base64 { media_type, data } => {
                json!({"inlineData": {"mimeType": media_type, "data": data}})
            }
            ImageSource::Url { url } => json!({"fileData": {"fileUri": url}}),
        },
        Part::Reasoning {
            native: Some(n), ..
        } => n.value.clone(),
        Part::Reasoning { native: None, .. } => return None,
        Part::ToolCall {
            native: Some(n), ..
        } => n.value.clone(),
        Part::ToolCall {
            name, arguments, ..
        } => {
            let args = if arguments.is_object() {
                arguments.clone()
            } else {
                json!({})
            };
            json!({"functionCall": {"name": name, "args": args}})
        }
        Part::ToolResult {
            call_id,
            name,
            content,
            is_error,
        } => {
            let (call_name, wire_id) = native_call_id(messages, call_id).unwrap_or(("", None));
            let name = if name.is_empty() {
                call_name
            } else {
                name.as_str()
            };
            if name.is_empty() {
                warnings.push(format!(
                    "tool result `{call_id}`: Gemini pairs results by function name and none is known"
                ));
            }
            let response = match result_json(content) {
                Value::Object(o) => Value::Object(o),
                other if *is_error => json!({"error": other}),
                other => json!({"result": other}),
            };
            let mut fr = Map::new();
            if let Some(id) = wire_id {
                fr.insert("id".into(), json!(id));
            }
            fr.insert("name".into(), json!(name));
            fr.insert("response".into(), response);
            json!({"functionResponse": fr})
        }
    })
}

fn thinking_budget(effort: Option<Effort>) -> i64 {
    match effort {
        Some(Effort::Minimal) => 512,
        Some(Effort::Low) => 1024,
        Some(Effort::Medium) => 8192,
        Some(Effort::High) => 24576,
        None => -1, // dynamic
    }
}

pub(super) fn encode(req: &ChatRequest, messages: &[Message]) -> Result<Encoded, EncodeError> {
    let mut warnings = Vec::new();
    let mut system = Vec::new();
    let mut contents: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for m in messages {
        let role = match m.role {
            Role::System => {
                system.push(json!({"text": m.joined_text()}));
                continue;
            }
            Role::User | Role::Tool => "user",
            Role::Assistant => "model",
        };
        let parts: Vec<Value> = m
            .parts
            .iter()
            .filter_map(|p| part(p, messages, &mut warnings))
            .collect();
        if parts.is_empty() {
            continue;
        }
        match contents.last_mut() {
            Some((r, ps)) if *r == role => ps.extend(parts),
            _ => contents.push((role, parts)),
        }
    }
    let mut body = Map::new();
    body.insert(
        "contents".into(),
        Value::Array(
            contents
                .into_iter()
                .map(|(role, parts)| json!({"role": role, "parts": parts}))
                .collect(),
        ),
    );
    if !system.is_empty() {
        body.insert("systemInstruction".into(), json!({"parts": system}));
    }
    if !req.tools.is_empty() {
        let decls: Vec<Value> = req
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let mut d = Map::new();
                d.insert("name".into(), json!(t.name));
                if !t.description.is_empty() {
                    d.insert("description".into(), json!(t.description));
                }
                let a = schema::for_gemini(&t.parameters, &format!("tools[{i}].parameters"));
                warnings.extend(a.warnings);
                if a.schema.as_object().is_some_and(|o| !o.is_empty()) {
                    d.insert("parameters".into(), a.schema);
                }
                Value::Object(d)
            })
            .collect();
        body.insert("tools".into(), json!([{"functionDeclarations": decls}]));
        let config = match &req.tool_choice {
            ToolChoice::Auto => None,
            ToolChoice::None => Some(json!({"mode": "NONE"})),
            ToolChoice::Required => Some(json!({"mode": "ANY"})),
            ToolChoice::Tool(name) => Some(json!({"mode": "ANY", "allowedFunctionNames": [name]})),
        };
        if let Some(c) = config {
            body.insert("toolConfig".into(), json!({"functionCallingConfig": c}));
        }
    }
    let s = &req.sampling;
    let mut generation = Map::new();
    if let Some(t) = s.temperature {
        generation.insert("temperature".into(), json!(t));
    }
    if let Some(t) = s.top_p {
        generation.insert("topP".into(), json!(t));
    }
    if let Some(k) = s.top_k {
        generation.insert("topK".into(), json!(k));
    }
    if let Some(n) = s.max_output_tokens {
        generation.insert("maxOutputTokens".into(), json!(n));
    }
    if !s.stop.is_empty() {
        generation.insert("stopSequences".into(), json!(s.stop));
    }
    if let Some(p) = s.frequency_penalty {
        generation.insert("frequencyPenalty".into(), json!(p));
    }
    if let Some(p) = s.presence_penalty {
        generation.insert("presencePenalty".into(), json!(p));
    }
    if req.reasoning.enabled {
        let budget = req
            .reasoning
            .budget_tokens
            .map_or_else(|| thinking_budget(req.reasoning.effort), i64::from);
        generation.insert(
            "thinkingConfig".into(),
            json!({"includeThoughts": true, "thinkingBudget": budget}),
        );
    }
    if !generation.is_empty() {
        body.insert("generationConfig".into(), Value::Object(generation));
    }
    Ok(Encoded {
        body: Value::Object(body),
        warnings,
    })
}

// ---------- decoding ----------

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireUsage {
    prompt_token_count: Option<u64>,
    candidates_token_count: Option<u64>,
    thoughts_token_count: Option<u64>,
    cached_content_token_count: Option<u64>,
    total_token_count: Option<u64>,
}

impl WireUsage {
    fn canonical(&self) -> Usage {
        Usage {
            input_tokens: self.prompt_token_count,
            output_tokens: self.candidates_token_count,
            reasoning_tokens: self.thoughts_token_count,
            cached_input_tokens: self.cached_content_token_count,
            total_tokens: self.total_token_count,
        }
    }
}

fn usage_of(v: &Value) -> Option<Usage> {
    let usage = WireUsage::deserialize(v).ok()?.canonical();
    (usage != Usage::default()).then_some(usage)
}

fn finish_reason(raw: &str, saw_calls: bool) -> FinishReason {
    match raw {
        "STOP" if saw_calls => FinishReason::ToolCalls,
        "STOP" => FinishReason::Stop,
        "MAX_TOKENS" => FinishReason::Length,
        "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "IMAGE_SAFETY"
        | "LANGUAGE" => FinishReason::ContentFilter,
        "MALFORMED_FUNCTION_CALL" | "UNEXPECTED_TOOL_CALL" => FinishReason::Error,
        _ => FinishReason::Other,
    }
}

/// Arguments streamed by Vertex AI as `partialArgs` (`jsonPath` + typed value pieces).
#[derive(Default)]
struct PartialCall {
    call: PendingCall,
    args: Map<String, Value>,
    native: Value,
}

impl PartialCall {
    fn apply(&mut self, pieces: &[Value], warnings: &mut Vec<StreamEvent>) {
        for piece in pieces {
            let Some(path) = piece.get("jsonPath").and_then(Value::as_str) else {
                continue;
            };
            let keys: Vec<&str> = path.trim_start_matches("$.").split('.').collect();
            if path.contains('[') || keys.iter().any(|k| k.is_empty()) {
                warnings.push(StreamEvent::Warning {
                    message: format!(
                        "gemini: partial argument path `{path}` is not supported; ignored"
                    ),
                });
                continue;
            }
            let mut slot = &mut self.args;
            let (last, parents) = keys.split_last().unwrap_or((&"", &[]));
            for k in parents {
                let entry = slot.entry((*k).to_owned()).or_insert_with(|| json!({}));
                if !entry.is_object() {
                    *entry = json!({});
                }
                match entry {
                    Value::Object(m) => slot = m,
                    _ => return,
                }
            }
            if let Some(s) = piece.get("stringValue").and_then(Value::as_str) {
                match slot.get_mut(*last) {
                    Some(Value::String(have)) => have.push_str(s),
                    _ => {
                        slot.insert((*last).to_owned(), json!(s));
                    }
                }
            } else if let Some(v) = piece.get("numberValue").or_else(|| piece.get("boolValue")) {
                slot.insert((*last).to_owned(), v.clone());
            } else if piece.get("nullValue").is_some() {
                slot.insert((*last).to_owned(), Value::Null);
            }
        }
    }
}

/// Decoding state shared by the stream and the whole-body decoder.
#[derive(Default)]
pub struct GeminiStream {
    calls: usize,
    partial: Option<PartialCall>,
    usage: Option<Usage>,
    finished: bool,
    errored: bool,
}

impl GeminiStream {
    fn parts(&mut self, parts: &[Value], out: &mut Vec<StreamEvent>) {
        for p in parts {
            let signature = p.get("thoughtSignature").and_then(Value::as_str);
            if let Some(fc) = p.get("functionCall") {
                self.function_call(p, fc, out);
            } else if p.get("thought").and_then(Value::as_bool) == Some(true) {
                if let Some(t) = p
                    .get("text")
                    .and_then(Value::as_str)
                    .filter(|t| !t.is_empty())
                {
                    out.push(StreamEvent::ReasoningDelta { text: t.to_owned() });
                }
                if signature.is_some() {
                    out.push(native(p.clone()));
                }
            } else if let Some(t) = p.get("text").and_then(Value::as_str) {
                if !t.is_empty() {
                    out.push(StreamEvent::TextDelta { text: t.to_owned() });
                }
                if let Some(sig) = signature {
                    // The signature goes back in an empty text part (the shape Gemini itself
                    // streams last), so the answer text is not sent twice.
                    let value = if t.is_empty() {
                        p.clone()
                    } else {
                        json!({"text": "", "thoughtSignature": sig})
                    };
                    out.push(native(value));
                }
            }
        }
    }

    fn function_call(&mut self, part: &Value, fc: &Value, out: &mut Vec<StreamEvent>) {
        let name = fc.get("name").and_then(Value::as_str);
        let will_continue = fc.get("willContinue").and_then(Value::as_bool) == Some(true);
        let pieces = fc.get("partialArgs").and_then(Value::as_array);
        if let Some(pc) = self.partial.as_mut() {
            if let Some(pieces) = pieces {
                pc.apply(pieces, out);
            }
            if name.is_none() && !will_continue {
                // `functionCall: {}` closes the streamed call.
                if let Some(pc) = self.partial.take() {
                    let mut call = pc.call;
                    let args = Value::Object(pc.args);
                    call.arguments = args.to_string();
                    // Replay the call whole: the opening part (and its signature) with the
                    // assembled arguments instead of the streaming markers.
                    let mut native = pc.native;
                    if let Some(fc) = native.get_mut("functionCall") {
                        let mut whole = json!({"name": call.name, "args": args});
                        if let Some(id) = fc.get("id") {
                            whole["id"] = id.clone();
                        }
                        *fc = whole;
                    }
                    out.push(call.complete(Some(Native {
                        protocol: P,
                        value: native,
                    })));
                }
            }
            if name.is_none() {
                return;
            }
        }
        let index = self.calls;
        self.calls += 1;
        let id = fc
            .get("id")
            .and_then(Value::as_str)
            .map_or_else(|| synthetic_id(index, part), str::to_owned);
        let name = name.unwrap_or_default().to_owned();
        out.push(StreamEvent::ToolCallStart {
            index,
            id: id.clone(),
            name: name.clone(),
        });
        let call = PendingCall {
            index,
            id,
            name,
            arguments: String::new(),
        };
        if will_continue || pieces.is_some() {
            let mut pc = PartialCall {
                call,
                args: Map::new(),
                native: part.clone(),
            };
            if let Some(pieces) = pieces {
                pc.apply(pieces, out);
            }
            self.partial = Some(pc);
            return;
        }
        let mut call = call;
        call.arguments = fc.get("args").map(Value::to_string).unwrap_or_default();
        out.push(call.complete(Some(Native {
            protocol: P,
            value: part.clone(),
        })));
    }

    fn chunk(&mut self, c: &Value, out: &mut Vec<StreamEvent>) {
        if let Some(e) = crate::error::error_from_body(P, None, c) {
            out.push(e.to_event());
            self.errored = true;
            return;
        }
        if let Some(reason) = c
            .get("promptFeedback")
            .and_then(|f| f.get("blockReason"))
            .and_then(Value::as_str)
        {
            out.push(
                crate::error::LlmError::new(
                    crate::error::ErrorKind::ContentFiltered,
                    format!("Gemini blocked the prompt: {reason}"),
                )
                .to_event(),
            );
            self.errored = true;
        }
        if let Some(u) = c.get("usageMetadata").and_then(usage_of) {
            self.usage = Some(u);
        }
        let Some(cand) = c.get("candidates").and_then(|cs| cs.get(0)) else {
            return;
        };
        if let Some(parts) = cand
            .get("content")
            .and_then(|ct| ct.get("parts"))
            .and_then(Value::as_array)
        {
            self.parts(parts, out);
        }
        if let Some(raw) = cand.get("finishReason").and_then(Value::as_str) {
            self.finish(raw.to_owned(), out);
        }
    }
}

/// An id for a call Gemini sent without one. Canonical tool results are matched by id, and a
/// plain `call_0` would repeat in every round of a tool loop; a hash of the part keeps ids
/// distinct across rounds yet deterministic (golden tests, replays).
fn synthetic_id(index: usize, part: &Value) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in part.to_string().bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("call_{index}_{:08x}", h as u32)
}

fn native(value: Value) -> StreamEvent {
    StreamEvent::Native {
        native: Native { protocol: P, value },
    }
}

/// The common chunk (text or thought parts, usage, finish) read without building a `Value`
/// tree; anything else (calls, signatures, errors, blocked prompts) takes the full path.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FastChunk {
    #[serde(default)]
    candidates: Vec<FastCandidate>,
    usage_metadata: Option<WireUsage>,
    prompt_feedback: Option<IgnoredAny>,
    error: Option<IgnoredAny>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FastCandidate {
    content: Option<FastContent>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct FastContent {
    #[serde(default)]
    parts: Vec<FastPart>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FastPart {
    text: Option<String>,
    thought: Option<bool>,
    thought_signature: Option<IgnoredAny>,
    function_call: Option<IgnoredAny>,
}

impl GeminiStream {
    /// Returns `false` when the chunk needs the full path.
    fn fast_chunk(&mut self, c: FastChunk, out: &mut Vec<StreamEvent>) -> bool {
        let simple = c.error.is_none()
            && c.prompt_feedback.is_none()
            && c.candidates.iter().all(|cand| {
                cand.content.as_ref().is_none_or(|ct| {
                    ct.parts
                        .iter()
                        .all(|p| p.thought_signature.is_none() && p.function_call.is_none())
                })
            });
        if !simple || self.partial.is_some() {
            return false;
        }
        if let Some(u) = c.usage_metadata {
            let usage = u.canonical();
            if usage != Usage::default() {
                self.usage = Some(usage);
            }
        }
        let Some(cand) = c.candidates.into_iter().next() else {
            return true;
        };
        for p in cand.content.map(|ct| ct.parts).unwrap_or_default() {
            match (p.text, p.thought) {
                (Some(t), Some(true)) if !t.is_empty() => {
                    out.push(StreamEvent::ReasoningDelta { text: t })
                }
                (Some(t), _) if !t.is_empty() => out.push(StreamEvent::TextDelta { text: t }),
                _ => {}
            }
        }
        if let Some(raw) = cand.finish_reason {
            self.finish(raw, out);
        }
        true
    }

    fn finish(&mut self, raw: String, out: &mut Vec<StreamEvent>) {
        self.finished = true;
        if let Some(u) = self.usage.take() {
            out.push(StreamEvent::Usage { usage: u });
        }
        out.push(StreamEvent::Finish {
            reason: finish_reason(&raw, self.calls > 0),
            raw: Some(raw),
        });
    }
}

impl StreamDecoder for GeminiStream {
    fn on_event(&mut self, event: SseEvent<'_>, out: &mut Vec<StreamEvent>) {
        let data = event.data.trim();
        if let Ok(fast) = serde_json::from_str::<FastChunk>(data)
            && self.fast_chunk(fast, out)
        {
            return;
        }
        match serde_json::from_str::<Value>(data) {
            Ok(c) => self.chunk(&c, out),
            Err(e) => out.push(bad_event(P, data, &e)),
        }
    }

    fn on_end(&mut self, out: &mut Vec<StreamEvent>) {
        if let Some(pc) = self.partial.take() {
            out.push(StreamEvent::Warning {
                message: format!(
                    "tool call `{}` was cut off while its arguments streamed",
                    pc.call.name
                ),
            });
        }
        if let Some(u) = self.usage.take() {
            out.push(StreamEvent::Usage { usage: u });
        }
        if !self.finished && !self.errored {
            out.push(truncated(P));
        }
    }
}

/// A whole `GenerateContentResponse` body.
pub(super) fn decode_body(body: &Value, out: &mut Vec<StreamEvent>) {
    let mut s = GeminiStream::default();
    if body.get("candidates").is_none() && body.get("content").is_some() {
        // A bare candidate (as the documentation shows model turns).
        s.chunk(&json!({"candidates": [body]}), out);
    } else {
        s.chunk(body, out);
    }
    if let Some(u) = s.usage.take() {
        out.push(StreamEvent::Usage { usage: u });
    }
}
