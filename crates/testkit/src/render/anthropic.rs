//! Messages answers: a signed thinking block, a text block, tool_use blocks.

use serde_json::{Value, json};

use super::{Ctx, Frame, Frames};
use crate::script::pieces;

fn blocks(c: &Ctx<'_>) -> Vec<Value> {
    let mut out = Vec::new();
    if let Some(r) = &c.turn.reasoning {
        let sig = c
            .turn
            .signature
            .clone()
            .unwrap_or_else(|| format!("sig-{}", c.turn_no));
        out.push(json!({"type": "thinking", "thinking": r, "signature": sig}));
    }
    if let Some(t) = &c.turn.text {
        out.push(json!({"type": "text", "text": t}));
    }
    for (tc, id) in c.turn.tool_calls.iter().zip(c.turn.call_ids(c.turn_no)) {
        let input = if tc.arguments.is_object() {
            tc.arguments.clone()
        } else {
            json!({})
        };
        out.push(json!({"type": "tool_use", "id": id, "name": tc.name, "input": input}));
    }
    out
}

fn stop_reason(c: &Ctx<'_>) -> &'static str {
    if c.turn.tool_calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    }
}

/// The whole `message` body.
pub fn body(c: &Ctx<'_>) -> Value {
    json!({"id": format!("msg_{}", c.turn_no), "type": "message", "role": "assistant", "model": c.model,
           "content": blocks(c), "stop_reason": stop_reason(c), "stop_sequence": null,
           "usage": {"input_tokens": 11, "output_tokens": 7}})
}

/// The SSE frames.
pub fn frames(c: &Ctx<'_>) -> Frames {
    let n = c.turn.chunk_size();
    let mut start = body(c);
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    start["usage"] = json!({"input_tokens": 11, "output_tokens": 1});
    let mut out = vec![
        Frame::named(&json!({"type": "message_start", "message": start})),
        Frame::named(&json!({"type": "ping"})),
    ];
    for (i, b) in blocks(c).into_iter().enumerate() {
        let delta = |d: Value| {
            Frame::named(&json!({"type": "content_block_delta", "index": i, "delta": d}))
        };
        match b["type"].as_str() {
            Some("thinking") => {
                out.push(Frame::named(&json!({"type": "content_block_start", "index": i,
                                              "content_block": {"type": "thinking", "thinking": "", "signature": ""}})));
                for p in pieces(b["thinking"].as_str().unwrap_or_default(), n) {
                    out.push(delta(json!({"type": "thinking_delta", "thinking": p})));
                }
                out.push(delta(
                    json!({"type": "signature_delta", "signature": b["signature"]}),
                ));
            }
            Some("text") => {
                out.push(Frame::named(
                    &json!({"type": "content_block_start", "index": i,
                                              "content_block": {"type": "text", "text": ""}}),
                ));
                for p in pieces(b["text"].as_str().unwrap_or_default(), n) {
                    out.push(delta(json!({"type": "text_delta", "text": p})));
                }
            }
            _ => {
                let mut start = b.clone();
                start["input"] = json!({});
                out.push(Frame::named(
                    &json!({"type": "content_block_start", "index": i, "content_block": start}),
                ));
                for p in pieces(&b["input"].to_string(), n) {
                    out.push(delta(
                        json!({"type": "input_json_delta", "partial_json": p}),
                    ));
                }
            }
        }
        out.push(Frame::named(
            &json!({"type": "content_block_stop", "index": i}),
        ));
    }
    let tail = vec![
        Frame::named(
            &json!({"type": "message_delta", "delta": {"stop_reason": stop_reason(c), "stop_sequence": null},
                             "usage": {"output_tokens": 7}}),
        ),
        Frame::named(&json!({"type": "message_stop"})),
    ];
    Frames { body: out, tail }
}
