//! Gemini generateContent request bodies.

use serde_json::{Value, json};

use super::{Decoded, sampling_f64, sampling_u32, str_of};
use crate::protocol::Protocol;
use crate::request::{ImageSource, Message, Native, Part, Role, Sampling, ToolChoice, ToolDecl};

// ---------- Gemini ----------

pub(super) fn contents(d: &mut Decoded<'_>) {
    system_instruction(d);
    messages(d);
    tools(d);
    tool_choice(d);
    generation_config(d);
}

/// `systemInstruction`: its text parts, as one system message.
fn system_instruction(d: &mut Decoded<'_>) {
    if let Some(si) = d.take("systemInstruction") {
        let text = si
            .get("parts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n\n");
        d.push(Role::System, Part::text(text));
    }
}

/// `contents`: one message per content; a user content of only function responses is the
/// tool's message.
fn messages(d: &mut Decoded<'_>) {
    // Calls without ids are answered by name: remember them to give results the same id.
    let mut open_calls: Vec<(String, String)> = Vec::new();
    for c in d
        .take("contents")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let model = c.get("role").and_then(Value::as_str) == Some("model");
        let index = d.req.messages.len();
        let parts: Vec<Part> = c
            .get("parts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
            .filter_map(|(i, p)| part(p, index, i, &mut open_calls))
            .collect();
        let role = if model {
            Role::Assistant
        } else if parts.iter().all(|p| matches!(p, Part::ToolResult { .. })) && !parts.is_empty() {
            Role::Tool
        } else {
            Role::User
        };
        d.req.messages.push(Message { role, parts });
    }
}

/// One part of content `message` (its `i`th): a call, a response, a thought, text or an
/// inline image; anything else is dropped.
fn part(
    p: &Value,
    message: usize,
    i: usize,
    open_calls: &mut Vec<(String, String)>,
) -> Option<Part> {
    if let Some(fc) = p.get("functionCall") {
        let name = str_of(fc, "name");
        let id = fc
            .get("id")
            .and_then(Value::as_str)
            .map_or_else(|| format!("call_{message}_{i}"), str::to_owned);
        open_calls.push((name.clone(), id.clone()));
        Some(Part::ToolCall {
            id,
            name,
            arguments: fc.get("args").cloned().unwrap_or_else(|| json!({})),
            native: Some(Native {
                protocol: Protocol::Gemini,
                value: p.clone(),
            }),
        })
    } else if let Some(fr) = p.get("functionResponse") {
        let name = str_of(fr, "name");
        let id = match fr.get("id").and_then(Value::as_str) {
            Some(id) => id.to_owned(),
            None => open_calls
                .iter()
                .position(|(n, _)| *n == name)
                .map(|pos| open_calls.remove(pos).1)
                .unwrap_or_default(),
        };
        Some(Part::ToolResult {
            call_id: id,
            name,
            content: fr.get("response").map(Value::to_string).unwrap_or_default(),
            is_error: false,
        })
    } else if p.get("thought").and_then(Value::as_bool) == Some(true)
        || p.get("thoughtSignature").is_some()
    {
        Some(Part::Reasoning {
            text: if p.get("thought").is_some() {
                str_of(p, "text")
            } else {
                String::new()
            },
            native: Some(Native {
                protocol: Protocol::Gemini,
                value: p.clone(),
            }),
        })
    } else if let Some(t) = p.get("text").and_then(Value::as_str) {
        Some(Part::text(t))
    } else {
        p.get("inlineData").map(|inline| Part::Image {
            source: ImageSource::Base64 {
                media_type: str_of(inline, "mimeType"),
                data: str_of(inline, "data"),
            },
        })
    }
}

/// `tools[].functionDeclarations`.
fn tools(d: &mut Decoded<'_>) {
    for t in d
        .take("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for f in t
            .get("functionDeclarations")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            d.req.tools.push(ToolDecl {
                name: str_of(f, "name"),
                description: str_of(f, "description"),
                parameters: f.get("parameters").cloned().unwrap_or_else(|| json!({})),
                strict: false,
            });
        }
    }
}

/// `toolConfig.functionCallingConfig`: NONE, ANY (one allowed name: that tool), else auto.
fn tool_choice(d: &mut Decoded<'_>) {
    let config = d
        .take("toolConfig")
        .and_then(|c| c.get("functionCallingConfig"));
    d.req.tool_choice = match config.and_then(|c| c.get("mode")).and_then(Value::as_str) {
        Some("NONE") => ToolChoice::None,
        Some("ANY") => match config
            .and_then(|c| c.get("allowedFunctionNames"))
            .and_then(Value::as_array)
        {
            Some(names) if names.len() == 1 => {
                ToolChoice::Tool(names[0].as_str().unwrap_or_default().to_owned())
            }
            _ => ToolChoice::Required,
        },
        _ => ToolChoice::Auto,
    };
}

/// `generationConfig`'s sampling fields; the config is marked used only when nothing else is
/// in it.
fn generation_config(d: &mut Decoded<'_>) {
    if let Some(g) = d.src.get("generationConfig").and_then(Value::as_object) {
        const MAPPED: [&str; 7] = [
            "temperature",
            "topP",
            "topK",
            "maxOutputTokens",
            "stopSequences",
            "frequencyPenalty",
            "presencePenalty",
        ];
        d.req.sampling = Sampling {
            temperature: sampling_f64(g.get("temperature")),
            top_p: sampling_f64(g.get("topP")),
            top_k: sampling_u32(g.get("topK")),
            max_output_tokens: sampling_u32(g.get("maxOutputTokens")),
            stop: g
                .get("stopSequences")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default(),
            frequency_penalty: sampling_f64(g.get("frequencyPenalty")),
            presence_penalty: sampling_f64(g.get("presencePenalty")),
        };
        // A config with more than the mapped fields (thinkingConfig, ...) travels whole.
        if g.keys().all(|k| MAPPED.contains(&k.as_str())) {
            d.used.push("generationConfig");
        }
    }
}
