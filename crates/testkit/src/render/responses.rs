//! Responses answers: reasoning item (with `encrypted_content` = the turn's signature),
//! message item, function_call items, the typed stream events around them.

use serde_json::{Value, json};

use super::{Ctx, Frame, Frames};
use crate::script::pieces;

fn items(c: &Ctx<'_>) -> Vec<Value> {
    let mut out = Vec::new();
    if let Some(r) = &c.turn.reasoning {
        let mut item = json!({"id": format!("rs_{}", c.turn_no), "type": "reasoning",
                              "summary": [{"type": "summary_text", "text": r}]});
        if let Some(sig) = &c.turn.signature {
            item["encrypted_content"] = json!(sig);
        }
        out.push(item);
    }
    if let Some(t) = &c.turn.text {
        out.push(json!({"id": format!("msg_{}", c.turn_no), "type": "message", "status": "completed", "role": "assistant",
                        "content": [{"type": "output_text", "text": t, "annotations": []}]}));
    }
    for (i, (tc, id)) in c
        .turn
        .tool_calls
        .iter()
        .zip(c.turn.call_ids(c.turn_no))
        .enumerate()
    {
        out.push(json!({"id": format!("fc_{}_{i}", c.turn_no), "type": "function_call", "status": "completed",
                        "call_id": id, "name": tc.name, "arguments": tc.arguments.to_string()}));
    }
    out
}

/// The whole `response` body.
pub fn body(c: &Ctx<'_>) -> Value {
    json!({"id": format!("resp_{}", c.turn_no), "object": "response", "status": "completed", "model": c.model,
           "output": items(c), "usage": {"input_tokens": 11, "output_tokens": 7, "total_tokens": 18}})
}

/// The SSE frames.
pub fn frames(c: &Ctx<'_>) -> Frames {
    let n = c.turn.chunk_size();
    let mut seq = 0u64;
    let mut ev = |mut v: Value| {
        v["sequence_number"] = json!(seq);
        seq += 1;
        Frame::named(&v)
    };
    let whole = body(c);
    let mut created = whole.clone();
    created["status"] = json!("in_progress");
    created["output"] = json!([]);
    let mut out = vec![ev(json!({"type": "response.created", "response": created}))];
    for (oi, item) in items(c).into_iter().enumerate() {
        let item_id = item["id"].clone();
        match item["type"].as_str() {
            Some("reasoning") => {
                let mut added = item.clone();
                added["summary"] = json!([]);
                out.push(ev(json!({"type": "response.output_item.added", "output_index": oi, "item": added})));
                let text = item["summary"][0]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                for p in pieces(&text, n) {
                    out.push(ev(
                        json!({"type": "response.reasoning_summary_text.delta", "item_id": item_id,
                                       "output_index": oi, "summary_index": 0, "delta": p}),
                    ));
                }
            }
            Some("message") => {
                let mut added = item.clone();
                added["content"] = json!([]);
                added["status"] = json!("in_progress");
                out.push(ev(json!({"type": "response.output_item.added", "output_index": oi, "item": added})));
                let text = item["content"][0]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                for p in pieces(&text, n) {
                    out.push(ev(json!({"type": "response.output_text.delta", "item_id": item_id, "output_index": oi,
                                       "content_index": 0, "delta": p})));
                }
                out.push(ev(json!({"type": "response.output_text.done", "item_id": item_id, "output_index": oi,
                                   "content_index": 0, "text": text})));
            }
            _ => {
                let mut added = item.clone();
                added["arguments"] = json!("");
                added["status"] = json!("in_progress");
                out.push(ev(json!({"type": "response.output_item.added", "output_index": oi, "item": added})));
                let args = item["arguments"].as_str().unwrap_or_default().to_owned();
                for p in pieces(&args, n) {
                    out.push(ev(
                        json!({"type": "response.function_call_arguments.delta", "item_id": item_id,
                                       "output_index": oi, "delta": p}),
                    ));
                }
                out.push(ev(
                    json!({"type": "response.function_call_arguments.done", "item_id": item_id,
                                   "output_index": oi, "arguments": args}),
                ));
            }
        }
        out.push(ev(
            json!({"type": "response.output_item.done", "output_index": oi, "item": item}),
        ));
    }
    let tail = vec![ev(json!({"type": "response.completed", "response": whole}))];
    Frames { body: out, tail }
}
