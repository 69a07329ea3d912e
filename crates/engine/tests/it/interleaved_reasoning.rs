//! `tools.reasoningMode` (seed 001's interleaved reasoning) through the engine's tool loop, on
//! each of the four protocols against the mock provider: which reasoning of the tool rounds the
//! next request of a reply sends back, and that a finished reply's rounds send nothing back in
//! the next reply (its user message starts a new chain in every mode). The selection rule
//! itself, with the mode where Since Last User Message and Active Tool Chain differ, is pinned
//! body by body in `crates/llm/tests/it/interleaved_reasoning.rs`.

use crate::support::{Answers, WIRES, drive, final_status, lab};
use serde_json::{Value, json};
use tavo_engine::{ReplyRequest, ReplyStatus};
use tavo_testkit::{Script, Turn, Wire};
use tavo_tools::Services;

fn search(n: u32) -> Turn {
    Turn::call("tavo_tool_search", json!({"query": "files", "limit": 3}))
        .with_reasoning(format!("think-{n}"), format!("sig-{n}"))
}

/// Which `think-N` texts a request body carries.
fn thoughts(body: &Value) -> Vec<u32> {
    let s = body.to_string();
    (1..=5)
        .filter(|n| s.contains(&format!("think-{n}\"")))
        .collect()
}

#[tokio::test]
async fn the_reasoning_mode_setting_decides_what_tool_rounds_send_back() {
    for wire in WIRES {
        for mode in ["disabled", "sinceLastUserMessage", "activeToolChain"] {
            // Reply 1: two tool rounds, then the answer. Reply 2: one tool round, the answer.
            let script = Script::new(vec![
                search(1),
                search(2),
                Turn::text("Found them.").with_reasoning("think-3", "sig-3"),
                search(4),
                Turn::text("Done again."),
            ]);
            let lab = lab(
                wire,
                script,
                &[
                    ("tools.enabled", json!(true)),
                    ("tools.reasoningMode", json!(mode)),
                ],
            )
            .await;
            let engine = lab.engine(Services::default(), None);
            for (text, answer) in [("Find files.", "Found them."), ("Again.", "Done again.")] {
                let handle = engine
                    .start(ReplyRequest::normal(lab.chat, text))
                    .unwrap_or_else(|e| panic!("{wire:?} {mode}: {e}"));
                let events = drive(&handle, &Answers::default()).await;
                let (status, got) = final_status(&events);
                assert_eq!(status, ReplyStatus::Finished, "{wire:?} {mode}: {events:?}");
                assert_eq!(got, answer, "{wire:?} {mode}");
            }
            let reqs = lab.mock.requests();
            assert_eq!(reqs.len(), 5, "{wire:?} {mode}");
            let seen: Vec<Vec<u32>> = reqs.iter().map(|r| thoughts(&r.body)).collect();
            // What the mode sends back in the requests after a tool round (2, 3 and 5).
            let sent = mode != "disabled";
            let want: Vec<Vec<u32>> = match wire {
                // Gemini takes no thought text back in any mode (its signatures ride on the
                // calls instead).
                Wire::Gemini => vec![vec![]; 5],
                // Anthropic requires the signed thinking of the open chain with tool results:
                // sent in every mode.
                Wire::Anthropic => vec![vec![], vec![1], vec![1, 2], vec![], vec![4]],
                _ if sent => vec![vec![], vec![1], vec![1, 2], vec![], vec![4]],
                _ => vec![vec![]; 5],
            };
            assert_eq!(seen, want, "{wire:?} {mode}");
            // Request 4 starts reply 2: reply 1's rounds are before its user message and the
            // chain they formed was closed by an answer, so nothing of them goes back.
            assert!(seen[3].is_empty(), "{wire:?} {mode}: {:?}", reqs[3].body);
        }
    }
}
