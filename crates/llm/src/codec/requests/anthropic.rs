//! Anthropic Messages request bodies.

use serde_json::{Value, json};

use super::{Decoded, sampling_f64, sampling_u32, str_of, text_of};
use crate::protocol::Protocol;
use crate::request::{
    ImageSource, Message, Native, Part, ReasoningSettings, Role, Sampling, ToolChoice, ToolDecl,
};

// ---------- Anthropic Messages ----------

pub(super) fn messages(d: &mut Decoded<'_>) {
    match d.take("system") {
        Some(Value::String(s)) => d.push(Role::System, Part::text(s.clone())),
        Some(other @ Value::Array(_)) => d.push(Role::System, Part::text(text_of(Some(other)))),
        _ => {}
    }
    for m in d
        .take("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let role = if m.get("role").and_then(Value::as_str) == Some("assistant") {
            Role::Assistant
        } else {
            Role::User
        };
        let parts: Vec<Part> = match m.get("content") {
            Some(Value::Array(blocks)) => blocks
                .iter()
                .filter_map(|b| {
                    Some(match b.get("type").and_then(Value::as_str)? {
                        "text" => Part::text(str_of(b, "text")),
                        "image" => {
                            let s = b.get("source")?;
                            Part::Image {
                                source: match s.get("type").and_then(Value::as_str) {
                                    Some("url") => ImageSource::Url {
                                        url: str_of(s, "url"),
                                    },
                                    _ => ImageSource::Base64 {
                                        media_type: str_of(s, "media_type"),
                                        data: str_of(s, "data"),
                                    },
                                },
                            }
                        }
                        "thinking" | "redacted_thinking" => Part::Reasoning {
                            text: str_of(b, "thinking"),
                            native: Some(Native {
                                protocol: Protocol::Anthropic,
                                value: b.clone(),
                            }),
                        },
                        "tool_use" => Part::ToolCall {
                            id: str_of(b, "id"),
                            name: str_of(b, "name"),
                            arguments: b.get("input").cloned().unwrap_or_else(|| json!({})),
                            native: None,
                        },
                        "tool_result" => Part::ToolResult {
                            call_id: str_of(b, "tool_use_id"),
                            name: String::new(),
                            content: text_of(b.get("content")),
                            is_error: b.get("is_error").and_then(Value::as_bool).unwrap_or(false),
                        },
                        _ => return None,
                    })
                })
                .collect(),
            other => vec![Part::text(text_of(other))],
        };
        d.req.messages.push(Message { role, parts });
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
            parameters: t.get("input_schema").cloned().unwrap_or_else(|| json!({})),
            strict: false,
        });
    }
    d.req.tool_choice = match d
        .take("tool_choice")
        .and_then(|c| c.get("type"))
        .and_then(Value::as_str)
    {
        Some("any") => ToolChoice::Required,
        Some("none") => ToolChoice::None,
        Some("tool") => ToolChoice::Tool(
            d.src
                .get("tool_choice")
                .map(|c| str_of(c, "name"))
                .unwrap_or_default(),
        ),
        _ => ToolChoice::Auto,
    };
    d.req.sampling = Sampling {
        temperature: sampling_f64(d.take("temperature")),
        top_p: sampling_f64(d.take("top_p")),
        top_k: sampling_u32(d.take("top_k")),
        max_output_tokens: sampling_u32(d.take("max_tokens")),
        stop: d
            .take("stop_sequences")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default(),
        ..Sampling::default()
    };
    d.req.reasoning = ReasoningSettings::default();
    d.req.stream = d.take("stream").and_then(Value::as_bool).unwrap_or(false);
}
