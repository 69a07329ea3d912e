//! Earlier tool calls in later prompts (issue 30 items 11 and 12; seed 001: "continue,
//! impersonate and quiet cannot call tools but can still use earlier successful calls"), on the
//! four protocols against the mock provider:
//!
//! - a finished reply's calls and results go back in the next reply's request in the
//!   protocol's own shape, not as a `[tool calls: …]` line;
//! - after a provider switch they are re-encoded for the new protocol, the old provider's
//!   signatures left out, and the request succeeds;
//! - cleared logs fold them to the line;
//! - interleaved reasoning: with no new user message, `sinceLastUserMessage` sends the earlier
//!   reply's round reasoning back, `activeToolChain` only the current chain's.

use crate::support::{Answers, WIRES, drive, final_status, lab, protocol};
use serde_json::{Value, json};
use tavo_engine::{ReplyRequest, ReplyStatus};
use tavo_llm::connection::SETTINGS_KEY;
use tavo_llm::{Connection, ConnectionBook, Parameters};
use tavo_testkit::{MockProvider, Script, Turn, Wire};
use tavo_tools::Services;

fn search(n: u32) -> Turn {
    Turn::call("tavo_tool_search", json!({"query": "files", "limit": 3}))
        .with_reasoning(format!("think-{n}"), format!("sig-{n}"))
}

async fn reply(
    engine: &tavo_engine::Engine,
    chat: tavo_model::ChatId,
    text: &str,
    what: &str,
) -> String {
    let handle = engine
        .start(ReplyRequest::normal(chat, text))
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let events = drive(&handle, &Answers::default()).await;
    let (status, got) = final_status(&events);
    assert_eq!(status, ReplyStatus::Finished, "{what}: {events:?}");
    got
}

/// Whether `body` carries a tavo_tool_search call and its result in `wire`'s own shape.
fn carries_call_and_result(wire: Wire, body: &Value) -> bool {
    let s = body.to_string();
    match wire {
        Wire::OpenaiChat => {
            s.contains("\"tool_calls\"")
                && s.contains("\"role\":\"tool\"")
                && s.contains("tool_call_id")
        }
        Wire::OpenaiResponses => {
            s.contains("\"function_call\"") && s.contains("\"function_call_output\"")
        }
        Wire::Anthropic => s.contains("\"tool_use\"") && s.contains("\"tool_result\""),
        Wire::Gemini => s.contains("\"functionCall\"") && s.contains("\"functionResponse\""),
    }
}

#[tokio::test]
async fn a_finished_replys_calls_and_results_go_back_in_each_protocols_shape() {
    for wire in WIRES {
        let script = Script::new(vec![
            search(1),
            Turn::text("Found them."),
            Turn::text("Still there."),
        ]);
        let lab = lab(wire, script, &[("tools.enabled", json!(true))]).await;
        let engine = lab.engine(Services::default(), None);
        reply(&engine, lab.chat, "Find files.", &format!("{wire:?} 1")).await;
        reply(&engine, lab.chat, "Are they?", &format!("{wire:?} 2")).await;
        let reqs = lab.mock.requests();
        assert_eq!(reqs.len(), 3, "{wire:?}");
        let next = &reqs[2].body;
        assert!(carries_call_and_result(wire, next), "{wire:?}: {next}");
        assert!(
            !next.to_string().contains("[tool calls:"),
            "{wire:?}: the calls themselves, not the summary line: {next}"
        );
        // The same request through `tavo prompt --explain`: the rounds and where they came from.
        let preview = engine
            .preview(&tavo_engine::prompt::PreviewRequest {
                chat: lab.chat,
                kind: tavo_tools::GenerationKind::Normal,
                connection: None,
                model: None,
                overrides: Parameters::default(),
                seed: None,
                speaker: None,
                record: false,
            })
            .unwrap_or_else(|e| panic!("{wire:?}: {e}"));
        let explain = preview.explain_json();
        assert_eq!(
            explain["toolHistory"]["rounds"],
            json!(1),
            "{wire:?}: {explain}"
        );
        assert!(
            explain["messages"].to_string().contains("\"toolCalls\""),
            "{wire:?}: {}",
            explain["messages"]
        );

        // Cleared logs take the arguments and results with them: the line stands in.
        lab.store.audit_clear().unwrap_or_else(|e| panic!("{e}"));
        let preview = engine
            .preview(&tavo_engine::prompt::PreviewRequest {
                chat: lab.chat,
                kind: tavo_tools::GenerationKind::Normal,
                connection: None,
                model: None,
                overrides: Parameters::default(),
                seed: None,
                speaker: None,
                record: false,
            })
            .unwrap_or_else(|e| panic!("{wire:?}: {e}"));
        let explain = preview.explain_json();
        assert_eq!(
            explain["toolHistory"]["folded"][0]["reason"], "logCleared",
            "{explain}"
        );
        assert!(
            explain["messages"]
                .to_string()
                .contains("[tool calls: tavo_tool_search")
        );
    }
}

#[tokio::test]
async fn a_provider_switch_re_encodes_earlier_calls_for_the_new_protocol() {
    for (from, to) in [
        (Wire::Anthropic, Wire::OpenaiChat),
        (Wire::Gemini, Wire::Anthropic),
        (Wire::OpenaiResponses, Wire::Gemini),
        (Wire::OpenaiChat, Wire::OpenaiResponses),
    ] {
        let script = Script::new(vec![search(1), Turn::text("Found them.")]);
        let lab = lab(
            from,
            script,
            &[
                ("tools.enabled", json!(true)),
                ("tools.reasoningMode", json!("sinceLastUserMessage")),
            ],
        )
        .await;
        let engine = lab.engine(Services::default(), None);
        reply(&engine, lab.chat, "Find files.", &format!("{from:?}")).await;
        // The user switches the chat's provider.
        let other = MockProvider::start(Script::new(vec![Turn::text("Switched.")]))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let mut book = ConnectionBook::default();
        book.add(
            Connection {
                name: "other".into(),
                source: "custom".into(),
                protocol: protocol(to),
                base_url: other.base_url(to),
                model: "other-model".into(),
                api_key: Some("sk-test-secret-key-0123".into()),
                api_key_env: None,
                parameters: Parameters::default(),
            },
            true,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        lab.store
            .setting_set(SETTINGS_KEY, &book.to_setting())
            .unwrap_or_else(|e| panic!("{e}"));
        let got = reply(&engine, lab.chat, "", &format!("{from:?} → {to:?}")).await;
        assert_eq!(got, "Switched.");
        let body = &other.requests()[0].body;
        assert!(
            carries_call_and_result(to, body),
            "{from:?} → {to:?}: {body}"
        );
        assert!(
            !body.to_string().contains("sig-1"),
            "{from:?} → {to:?}: the old provider's signature stays behind: {body}"
        );
    }
}

/// Which `think-N` texts a request body carries.
fn thoughts(body: &Value) -> Vec<u32> {
    let s = body.to_string();
    (1..=5)
        .filter(|n| s.contains(&format!("think-{n}\"")))
        .collect()
}

#[tokio::test]
async fn since_last_user_message_and_active_tool_chain_differ_across_replies() {
    for wire in WIRES {
        for mode in ["disabled", "sinceLastUserMessage", "activeToolChain"] {
            // Reply 1 answers the user with a tool round; reply 2 answers the chat as it stands
            // (no new user message) with a tool round of its own.
            let script = Script::new(vec![
                search(1),
                Turn::text("Found them."),
                search(3),
                Turn::text("And more."),
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
            reply(
                &engine,
                lab.chat,
                "Find files.",
                &format!("{wire:?} {mode} 1"),
            )
            .await;
            reply(&engine, lab.chat, "", &format!("{wire:?} {mode} 2")).await;
            let reqs = lab.mock.requests();
            assert_eq!(reqs.len(), 4, "{wire:?} {mode}");
            // Request 4 follows reply 2's own round.
            let seen = thoughts(&reqs[3].body);
            let want: Vec<u32> = match (wire, mode) {
                // Gemini takes no thought text back (its signatures ride on the calls).
                (Wire::Gemini, _) => vec![],
                (_, "sinceLastUserMessage") => vec![1, 3],
                (_, "activeToolChain") => vec![3],
                // Anthropic's open chain keeps its signed thinking in every mode.
                (Wire::Anthropic, _) => vec![3],
                _ => vec![],
            };
            assert_eq!(seen, want, "{wire:?} {mode}: {}", reqs[3].body);
            // Reply 1's calls are in reply 2's requests whatever the mode.
            assert!(
                carries_call_and_result(wire, &reqs[2].body),
                "{wire:?} {mode}"
            );
        }
    }
}
