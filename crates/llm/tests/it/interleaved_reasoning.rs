//! Interleaved reasoning (seed 001, "交替思考"): for each of the three modes and each of the
//! four protocols, the exact history a tool-call request sends back, against the loopback
//! mock provider. The conversation is built from the mock's real answers (decoded, native
//! forms and all), so the bodies are what a tool loop sends:
//!
//! ```text
//! user "one"   → A1 think-1 + call get_weather   → result
//!              → A2 think-2 + "Sunny."            (a normal reply ends that chain)
//! user "two"   → A3 think-3 + call get_weather   → result
//!              → A4 think-4 + "Rainy."            (a normal reply)
//!              → A5 think-5 + call get_weather   → result   (a new chain, no user turn between)
//!              → request 6: the body under test
//! ```
//!
//! - Disabled: no reasoning goes back — except what the provider requires of the still-open
//!   chain (Anthropic's signed thinking of A5; Gemini's thoughtSignature lives on each
//!   functionCall part and is never reasoning to drop).
//! - Since Last User Message: the reasoning of every tool round after "two": A3 and A5 (A4 is a
//!   normal reply, not a tool round).
//! - Active Tool Chain: only the open chain's: A5.
//!
//! Gemini is the exception the selection rule in `tavo_llm::reasoning` documents: it takes no
//! thought text back at all, and the thoughtSignature of each functionCall is part of the call,
//! so its body is the same in the three modes (the test checks that too).
//!
//! Each body's history is also pinned as an insta snapshot
//! (`snapshots/it__interleaved_reasoning__*`).

use crate::support::{client, weather_tool};
use serde_json::{Value, json};
use tavo_llm::{ChatRequest, Endpoint, InterleavedReasoning, Message, Part, Protocol, Role};
use tavo_testkit::{MockProvider, Script, Turn, Wire};

const PROTOCOLS: [(Protocol, Wire); 4] = [
    (Protocol::OpenaiChat, Wire::OpenaiChat),
    (Protocol::OpenaiResponses, Wire::OpenaiResponses),
    (Protocol::Anthropic, Wire::Anthropic),
    (Protocol::Gemini, Wire::Gemini),
];

const MODES: [InterleavedReasoning; 3] = [
    InterleavedReasoning::Disabled,
    InterleavedReasoning::SinceLastUserMessage,
    InterleavedReasoning::ActiveToolChain,
];

fn script() -> Script {
    let call = |n: u32, city: &str| {
        Turn::call("get_weather", json!({"city": city}))
            .with_reasoning(format!("think-{n}"), format!("sig-{n}"))
    };
    let text =
        |n: u32, t: &str| Turn::text(t).with_reasoning(format!("think-{n}"), format!("sig-{n}"));
    Script::new(vec![
        call(1, "Paris"),
        text(2, "Sunny."),
        call(3, "Oslo"),
        text(4, "Rainy."),
        call(5, "Rome"),
        Turn::text("Warm."),
    ])
}

/// The tool result answering every call of `reply`.
fn results(reply: &Message) -> Message {
    Message {
        role: Role::Tool,
        parts: reply
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::ToolCall { id, name, .. } => Some(Part::ToolResult {
                    call_id: id.clone(),
                    name: name.clone(),
                    content: r#"{"sky":"fine"}"#.into(),
                    is_error: false,
                }),
                _ => None,
            })
            .collect(),
    }
}

/// Runs the conversation; answers the body of the sixth request.
async fn sixth_body(protocol: Protocol, wire: Wire, mode: InterleavedReasoning) -> Value {
    let mock = MockProvider::start(script())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let ep = Endpoint {
        protocol,
        base_url: mock.base_url(wire),
        api_key: Some("test-key-0123456789".into()),
    };
    let mut req = ChatRequest::new("mock-model", vec![Message::text(Role::User, "one")]);
    req.tools = vec![weather_tool()];
    req.reasoning.enabled = true;
    req.reasoning.interleaved = mode;
    for round in 1..=5 {
        if round == 3 {
            req.messages.push(Message::text(Role::User, "two"));
        }
        let reply = client()
            .complete(&ep, &req)
            .await
            .unwrap_or_else(|e| panic!("{protocol} {mode:?} round {round}: {e}"));
        let calls = reply.tool_calls().count();
        assert_eq!(
            calls,
            usize::from(round % 2 == 1),
            "{protocol} round {round}: the script's calls"
        );
        let answer = reply.message.clone();
        req.messages.push(answer.clone());
        if calls > 0 {
            req.messages.push(results(&answer));
        }
    }
    let last = client()
        .complete(&ep, &req)
        .await
        .unwrap_or_else(|e| panic!("{protocol} {mode:?} round 6: {e}"));
    assert_eq!(last.text(), "Warm.");
    let seen = mock.requests();
    assert_eq!(seen.len(), 6, "{protocol}");
    seen[5].body.clone()
}

/// The body's history (what the mode acts on), without the fields every request repeats.
fn history(protocol: Protocol, body: &Value) -> Value {
    let key = match protocol {
        Protocol::OpenaiChat | Protocol::Anthropic => "messages",
        Protocol::OpenaiResponses => "input",
        Protocol::Gemini => "contents",
    };
    body[key].clone()
}

/// Which `think-N` texts and `sig-N` signatures the history carries.
fn markers(history: &Value) -> (Vec<u32>, Vec<u32>) {
    let s = history.to_string();
    let has = |prefix: &str| -> Vec<u32> {
        (1..=5)
            .filter(|n| s.contains(&format!("{prefix}-{n}\"")))
            .collect()
    };
    (has("think"), has("sig"))
}

#[tokio::test]
async fn each_mode_sends_back_exactly_its_reasoning_in_every_protocol() {
    for (protocol, wire) in PROTOCOLS {
        let mut bodies = Vec::new();
        for mode in MODES {
            let body = sixth_body(protocol, wire, mode).await;
            let h = history(protocol, &body);
            bodies.push(h.clone());
            let (thoughts, signatures) = markers(&h);
            // What the seed's modes select (the reasoning of tool rounds only).
            let by_mode: Vec<u32> = match mode {
                InterleavedReasoning::Disabled => vec![],
                InterleavedReasoning::SinceLastUserMessage => vec![3, 5],
                InterleavedReasoning::ActiveToolChain => vec![5],
            };
            let (want_thoughts, want_signatures) = match protocol {
                // Reasoning goes back as the provider's own fields: DeepSeek's
                // reasoning_content with OpenRouter's signed reasoning_details; the Responses
                // reasoning item (summary + encrypted_content).
                Protocol::OpenaiChat | Protocol::OpenaiResponses => {
                    (by_mode.clone(), by_mode.clone())
                }
                // A signed thinking block of the open chain is required with tool use: A5's
                // goes back in every mode.
                Protocol::Anthropic => {
                    let mut v = by_mode.clone();
                    if !v.contains(&5) {
                        v.push(5);
                    }
                    (v.clone(), v)
                }
                // Gemini takes no thought text back (its thought parts are summaries; the
                // context travels in signatures), and each functionCall keeps its
                // thoughtSignature, which Gemini requires: the same history in every mode.
                // The signatures of normal replies (sig-2, sig-4, on empty text parts) are not
                // tool-round reasoning and stay out.
                Protocol::Gemini => (vec![], vec![1, 3, 5]),
            };
            assert_eq!(
                (thoughts, signatures),
                (want_thoughts, want_signatures),
                "{protocol} {mode:?}: {h:#}"
            );
            // Everything else of the conversation is there in every mode: both user turns,
            // the three calls with their results, both normal replies.
            let s = h.to_string();
            for needle in ["one", "two", "Sunny.", "Rainy.", "Paris", "Oslo", "Rome"] {
                assert!(
                    s.contains(needle),
                    "{protocol} {mode:?}: {needle} missing: {h:#}"
                );
            }
            insta::assert_snapshot!(
                format!("{protocol}-{mode:?}"),
                serde_json::to_string_pretty(&h).unwrap_or_default()
            );
        }
        let same = bodies.windows(2).all(|w| w[0] == w[1]);
        assert_eq!(
            same,
            protocol == Protocol::Gemini,
            "{protocol}: the modes give different bodies (all but Gemini)"
        );
    }
}
