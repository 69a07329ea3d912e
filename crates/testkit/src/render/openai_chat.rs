//! Chat Completions answers (with DeepSeek `reasoning_content` and OpenRouter
//! `reasoning_details` when the turn has reasoning).

use serde_json::{Value, json};

use super::{Ctx, Frame, Frames};
use crate::script::pieces;

fn usage() -> Value {
    json!({"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18})
}

fn details(c: &Ctx<'_>) -> Option<Value> {
    let sig = c.turn.signature.as_ref()?;
    Some(
        json!([{"type": "reasoning.text", "text": c.turn.reasoning.clone().unwrap_or_default(),
                 "signature": sig, "id": "reasoning-text-1", "format": "anthropic-claude-v1", "index": 0}]),
    )
}

/// The whole `chat.completion` body.
pub fn body(c: &Ctx<'_>) -> Value {
    let ids = c.turn.call_ids(c.turn_no);
    let mut msg = json!({"role": "assistant", "content": c.turn.text.clone()});
    if let Some(r) = &c.turn.reasoning {
        msg["reasoning_content"] = json!(r);
    }
    if let Some(d) = details(c) {
        msg["reasoning_details"] = d;
    }
    if !c.turn.tool_calls.is_empty() {
        msg["tool_calls"] = c
            .turn
            .tool_calls
            .iter()
            .zip(&ids)
            .map(|(tc, id)| json!({"id": id, "type": "function", "function": {"name": tc.name, "arguments": tc.arguments.to_string()}}))
            .collect();
    }
    let finish = if c.turn.tool_calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    json!({"id": format!("chatcmpl-{}", c.turn_no), "object": "chat.completion", "model": c.model,
           "choices": [{"index": 0, "message": msg, "finish_reason": finish}], "usage": usage()})
}

/// The SSE frames.
pub fn frames(c: &Ctx<'_>) -> Frames {
    let n = c.turn.chunk_size();
    let id = format!("chatcmpl-{}", c.turn_no);
    let chunk = |delta: Value, finish: Value| {
        Frame::data(
            &json!({"id": id, "object": "chat.completion.chunk", "model": c.model,
                            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
        )
    };
    let mut body = vec![chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )];
    if let Some(r) = &c.turn.reasoning {
        for p in pieces(r, n) {
            body.push(chunk(json!({"reasoning_content": p}), Value::Null));
        }
        if let Some(d) = details(c) {
            body.push(chunk(json!({"reasoning_details": d}), Value::Null));
        }
    }
    if let Some(t) = &c.turn.text {
        for p in pieces(t, n) {
            body.push(chunk(json!({"content": p}), Value::Null));
        }
    }
    for (i, (tc, call_id)) in c
        .turn
        .tool_calls
        .iter()
        .zip(c.turn.call_ids(c.turn_no))
        .enumerate()
    {
        body.push(chunk(
            json!({"tool_calls": [{"index": i, "id": call_id, "type": "function", "function": {"name": tc.name, "arguments": ""}}]}),
            Value::Null,
        ));
        for p in pieces(&tc.arguments.to_string(), n) {
            body.push(chunk(
                json!({"tool_calls": [{"index": i, "function": {"arguments": p}}]}),
                Value::Null,
            ));
        }
    }
    let finish = if c.turn.tool_calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    let tail = vec![
        chunk(json!({}), json!(finish)),
        Frame::data(
            &json!({"id": id, "object": "chat.completion.chunk", "model": c.model, "choices": [], "usage": usage()}),
        ),
        Frame {
            event: None,
            data: "[DONE]".into(),
        },
    ];
    Frames { body, tail }
}
