//! Gemini answers: thought parts, text parts, functionCall parts (with ids, the first one
//! carrying the turn's signature as `thoughtSignature`, as Gemini 3 does).

use serde_json::{Value, json};

use super::{Ctx, Frame, Frames};
use crate::script::pieces;

fn call_parts(c: &Ctx<'_>) -> Vec<Value> {
    c.turn
        .tool_calls
        .iter()
        .zip(c.turn.call_ids(c.turn_no))
        .enumerate()
        .map(|(i, (tc, id))| {
            let args = if tc.arguments.is_object() {
                tc.arguments.clone()
            } else {
                json!({})
            };
            let mut p = json!({"functionCall": {"id": id, "name": tc.name, "args": args}});
            if let (0, Some(sig)) = (i, &c.turn.signature) {
                p["thoughtSignature"] = json!(sig);
            }
            p
        })
        .collect()
}

fn usage() -> Value {
    json!({"promptTokenCount": 11, "candidatesTokenCount": 7, "totalTokenCount": 18})
}

fn candidate(parts: Vec<Value>, finish: Option<&str>) -> Value {
    let mut cand = json!({"content": {"role": "model", "parts": parts}, "index": 0});
    if let Some(f) = finish {
        cand["finishReason"] = json!(f);
    }
    cand
}

fn text_signature(c: &Ctx<'_>) -> Option<Value> {
    // Without calls, a signature rides on a final empty text part.
    if c.turn.tool_calls.is_empty() {
        c.turn
            .signature
            .as_ref()
            .map(|s| json!({"text": "", "thoughtSignature": s}))
    } else {
        None
    }
}

/// The whole `GenerateContentResponse` body.
pub fn body(c: &Ctx<'_>) -> Value {
    let mut parts = Vec::new();
    if let Some(r) = &c.turn.reasoning {
        parts.push(json!({"text": r, "thought": true}));
    }
    if let Some(t) = &c.turn.text {
        parts.push(json!({"text": t}));
    }
    parts.extend(call_parts(c));
    parts.extend(text_signature(c));
    json!({"candidates": [candidate(parts, Some("STOP"))], "usageMetadata": usage(), "modelVersion": c.model})
}

/// The SSE frames (Gemini ends at EOF: the tail is the chunk with `finishReason`).
pub fn frames(c: &Ctx<'_>) -> Frames {
    let n = c.turn.chunk_size();
    let mut body = Vec::new();
    let chunk = |parts: Vec<Value>| {
        Frame::data(&json!({"candidates": [candidate(parts, None)], "modelVersion": c.model}))
    };
    if let Some(r) = &c.turn.reasoning {
        for p in pieces(r, n) {
            body.push(chunk(vec![json!({"text": p, "thought": true})]));
        }
    }
    if let Some(t) = &c.turn.text {
        for p in pieces(t, n) {
            body.push(chunk(vec![json!({"text": p})]));
        }
    }
    let calls = call_parts(c);
    if !calls.is_empty() {
        body.push(chunk(calls));
    }
    let last: Vec<Value> = text_signature(c).into_iter().collect();
    let tail = vec![Frame::data(
        &json!({"candidates": [candidate(last, Some("STOP"))], "usageMetadata": usage(),
                                        "modelVersion": c.model}),
    )];
    Frames { body, tail }
}
