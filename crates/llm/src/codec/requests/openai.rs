//! OpenAI Chat Completions and Responses request bodies.

use serde_json::{Map, Value, json};

use super::{Decoded, args_of, image_of_url, sampling_f64, sampling_u32, str_of, text_of};
use crate::protocol::Protocol;
use crate::request::{Message, Native, Part, Role, Sampling, ToolChoice, ToolDecl};

// ---------- OpenAI Chat Completions ----------

/// `tool_choice` of both OpenAI protocols. An explicit `"auto"` (the default, which the encoder
/// leaves out) stays in `extras` so that it is sent again as it was.
fn openai_choice(
    d: &mut Decoded<'_>,
    tool_name: impl Fn(&Map<String, Value>) -> String,
) -> ToolChoice {
    match d.src.get("tool_choice") {
        Some(Value::String(s)) if s == "none" => {
            d.used.push("tool_choice");
            ToolChoice::None
        }
        Some(Value::String(s)) if s == "required" => {
            d.used.push("tool_choice");
            ToolChoice::Required
        }
        Some(Value::Object(o)) => {
            d.used.push("tool_choice");
            ToolChoice::Tool(tool_name(o))
        }
        _ => ToolChoice::Auto,
    }
}

pub(super) fn chat(d: &mut Decoded<'_>) {
    for m in d
        .take("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("user");
        match role {
            "system" | "developer" => d.push(Role::System, Part::text(text_of(m.get("content")))),
            "assistant" => {
                let mut native = Map::new();
                for k in ["reasoning_content", "reasoning_details"] {
                    if let Some(v) = m.get(k) {
                        native.insert(k.into(), v.clone());
                    }
                }
                let mut parts = Vec::new();
                if !native.is_empty() {
                    parts.push(Part::Reasoning {
                        text: str_of(m, "reasoning_content"),
                        native: Some(Native {
                            protocol: Protocol::OpenaiChat,
                            value: Value::Object(native),
                        }),
                    });
                }
                let text = text_of(m.get("content"));
                if !text.is_empty() {
                    parts.push(Part::text(text));
                }
                for tc in m
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let f = tc.get("function").cloned().unwrap_or(Value::Null);
                    parts.push(Part::ToolCall {
                        id: str_of(tc, "id"),
                        name: str_of(&f, "name"),
                        arguments: args_of(f.get("arguments")),
                        native: None,
                    });
                }
                d.req.messages.push(Message {
                    role: Role::Assistant,
                    parts,
                });
            }
            "tool" => d.push(
                Role::Tool,
                Part::ToolResult {
                    call_id: str_of(m, "tool_call_id"),
                    name: String::new(),
                    content: text_of(m.get("content")),
                    is_error: false,
                },
            ),
            _ => {
                let parts = match m.get("content") {
                    Some(Value::Array(items)) => items
                        .iter()
                        .filter_map(|p| match p.get("type").and_then(Value::as_str) {
                            Some("text") => Some(Part::text(str_of(p, "text"))),
                            Some("image_url") => p
                                .get("image_url")
                                .and_then(|i| i.get("url"))
                                .and_then(Value::as_str)
                                .map(|u| Part::Image {
                                    source: image_of_url(u),
                                }),
                            _ => None,
                        })
                        .collect(),
                    other => vec![Part::text(text_of(other))],
                };
                d.req.messages.push(Message {
                    role: Role::User,
                    parts,
                });
            }
        }
    }
    for t in d
        .take("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let f = t.get("function").cloned().unwrap_or(Value::Null);
        d.req.tools.push(ToolDecl {
            name: str_of(&f, "name"),
            description: str_of(&f, "description"),
            parameters: f.get("parameters").cloned().unwrap_or_else(|| json!({})),
            strict: f.get("strict").and_then(Value::as_bool).unwrap_or(false),
        });
    }
    d.req.tool_choice = openai_choice(d, |o| {
        o.get("function")
            .map(|f| str_of(f, "name"))
            .unwrap_or_default()
    });
    d.req.sampling = Sampling {
        temperature: sampling_f64(d.take("temperature")),
        top_p: sampling_f64(d.take("top_p")),
        top_k: sampling_u32(d.take("top_k")),
        max_output_tokens: sampling_u32(d.take("max_tokens")),
        stop: match d.take("stop") {
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        },
        frequency_penalty: sampling_f64(d.take("frequency_penalty")),
        presence_penalty: sampling_f64(d.take("presence_penalty")),
    };
    d.req.stream = d.take("stream").and_then(Value::as_bool).unwrap_or(false);
    // Regenerated by the encoder for every streamed request.
    d.take("stream_options");
}

// ---------- OpenAI Responses ----------

pub(super) fn responses(d: &mut Decoded<'_>) {
    match d.take("input") {
        Some(Value::String(s)) => d.push(Role::User, Part::text(s.clone())),
        Some(Value::Array(items)) => {
            for it in items {
                match (
                    it.get("type").and_then(Value::as_str),
                    it.get("role").and_then(Value::as_str),
                ) {
                    (Some("function_call"), _) => d.push(
                        Role::Assistant,
                        Part::ToolCall {
                            id: str_of(it, "call_id"),
                            name: str_of(it, "name"),
                            arguments: args_of(it.get("arguments")),
                            native: None,
                        },
                    ),
                    (Some("function_call_output"), _) => d.push(
                        Role::Tool,
                        Part::ToolResult {
                            call_id: str_of(it, "call_id"),
                            name: String::new(),
                            content: match it.get("output") {
                                Some(Value::String(s)) => s.clone(),
                                Some(v) => v.to_string(),
                                None => String::new(),
                            },
                            is_error: false,
                        },
                    ),
                    (Some("reasoning"), _) => {
                        let text = it
                            .get("summary")
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                            .filter_map(|s| s.get("text").and_then(Value::as_str))
                            .collect::<Vec<_>>()
                            .join("\n\n");
                        d.push(
                            Role::Assistant,
                            Part::Reasoning {
                                text,
                                native: Some(Native {
                                    protocol: Protocol::OpenaiResponses,
                                    value: it.clone(),
                                }),
                            },
                        );
                    }
                    (_, Some(role)) => {
                        let role = match role {
                            "system" | "developer" => Role::System,
                            "assistant" => Role::Assistant,
                            _ => Role::User,
                        };
                        let parts: Vec<Part> = match it.get("content") {
                            Some(Value::Array(cs)) => cs
                                .iter()
                                .filter_map(|c| match c.get("type").and_then(Value::as_str) {
                                    Some("input_text" | "output_text") => {
                                        Some(Part::text(str_of(c, "text")))
                                    }
                                    Some("input_image") => c
                                        .get("image_url")
                                        .and_then(Value::as_str)
                                        .map(|u| Part::Image {
                                            source: image_of_url(u),
                                        }),
                                    _ => None,
                                })
                                .collect(),
                            other => vec![Part::text(text_of(other))],
                        };
                        for p in parts {
                            d.push(role, p);
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
    for t in d
        .take("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        d.req.tools.push(ToolDecl {
            name: str_of(t, "name"),
            description: str_of(t, "description"),
            parameters: t.get("parameters").cloned().unwrap_or_else(|| json!({})),
            strict: t.get("strict").and_then(Value::as_bool).unwrap_or(false),
        });
    }
    d.req.tool_choice = openai_choice(d, |o| {
        o.get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    });
    d.req.sampling.temperature = sampling_f64(d.take("temperature"));
    d.req.sampling.top_p = sampling_f64(d.take("top_p"));
    d.req.sampling.max_output_tokens = sampling_u32(d.take("max_output_tokens"));
    d.req.stream = d.take("stream").and_then(Value::as_bool).unwrap_or(false);
}
