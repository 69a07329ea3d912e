//! Shared set-up of the engine's end-to-end tests: a library with one character and chat, a
//! scripted mock provider, a connection to it, and a driver that answers what a reply waits for.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tavo_engine::{Engine, EventKind, Interaction, ReplyEvent, ReplyHandle, ReplyStatus, Response};
use tavo_llm::connection::SETTINGS_KEY;
use tavo_llm::retry::RetryPolicy;
use tavo_llm::{Client, Connection, ConnectionBook, Parameters, Protocol, Timeouts};
use tavo_model::{Character, CharacterSummary, Chat, ChatId};
use tavo_store::Store;
use tavo_testkit::{MockProvider, Script, Wire};
use tavo_tools::{Services, UserAnswer, builtin_registry};

pub const WIRES: [Wire; 4] = [
    Wire::OpenaiChat,
    Wire::OpenaiResponses,
    Wire::Anthropic,
    Wire::Gemini,
];

pub fn protocol(wire: Wire) -> Protocol {
    match wire {
        Wire::OpenaiChat => Protocol::OpenaiChat,
        Wire::OpenaiResponses => Protocol::OpenaiResponses,
        Wire::Anthropic => Protocol::Anthropic,
        Wire::Gemini => Protocol::Gemini,
    }
}

pub struct Lab {
    /// The library's folder, removed when the lab is dropped; no test reads it.
    #[allow(dead_code)]
    pub dir: tempfile::TempDir,
    pub store: Store,
    pub chat: ChatId,
    pub mock: MockProvider,
}

fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

/// A library with one character, one chat, `tools.*` settings and a connection to a mock
/// playing `script` over `wire`.
pub async fn lab(wire: Wire, script: Script, settings: &[(&str, Value)]) -> Lab {
    let dir = ok(tempfile::tempdir());
    let store = tavo_testkit::test_library(dir.path());
    let chat = ok(store.write(|tx| {
        let character = Character {
            name: "Bot".into(),
            description: "A test bot.".into(),
            ..Character::default()
        };
        let id = tx.create(&character)?;
        let chat = Chat {
            name: "test".into(),
            characters: vec![CharacterSummary {
                id,
                name: "Bot".into(),
                avatar: None,
            }],
            ..Chat::default()
        };
        tx.chat_create(&chat)
    }));
    for (k, v) in settings {
        ok(store.setting_set(k, v));
    }
    let mock = ok(MockProvider::start(script).await);
    let mut book = ConnectionBook::default();
    ok(book.add(
        Connection {
            name: "mock".into(),
            source: "custom".into(),
            protocol: protocol(wire),
            base_url: mock.base_url(wire),
            model: "mock-model".into(),
            api_key: Some("sk-test-secret-key-0123".into()),
            api_key_env: None,
            parameters: Parameters::default(),
        },
        true,
    ));
    ok(store.setting_set(SETTINGS_KEY, &book.to_setting()));
    Lab {
        dir,
        store,
        chat,
        mock,
    }
}

impl Lab {
    pub fn engine(
        &self,
        services: Services,
        runner: Option<Arc<dyn tavo_engine::ExtensionRunner>>,
    ) -> Engine {
        let registry = ok(builtin_registry());
        let retry = RetryPolicy {
            max_retries: 0,
            base_delay: Duration::from_millis(10),
            max_wait: Duration::from_secs(1),
        };
        let client = ok(Client::with(retry, Timeouts::default()));
        Engine::with_client(
            self.store.clone(),
            registry,
            Arc::new(services),
            client,
            runner,
        )
    }

    pub fn messages(&self) -> Vec<tavo_model::Message> {
        ok(self.store.messages_all(self.chat))
    }
}

/// How the driver answers.
#[derive(Debug, Clone)]
pub struct Answers {
    pub approve: bool,
    pub answer: UserAnswer,
    /// Wait this long before answering (waiting must not count toward time-outs).
    pub delay: Duration,
}

impl Default for Answers {
    fn default() -> Self {
        Self {
            approve: true,
            answer: UserAnswer::Cancelled,
            delay: Duration::ZERO,
        }
    }
}

/// Follows a reply to its end, answering what it waits for; returns every event.
pub async fn drive(handle: &ReplyHandle, answers: &Answers) -> Vec<ReplyEvent> {
    let mut sub = handle.subscribe(0);
    let mut events = Vec::new();
    let run = async {
        while let Some(item) = sub.next().await {
            let ev = ok(item);
            if let EventKind::Waiting {
                pending_id,
                interaction,
            } = &ev.kind
            {
                tokio::time::sleep(answers.delay).await;
                let response = match interaction {
                    Interaction::Confirmation { .. } if answers.approve => {
                        Response::Approve { remember: false }
                    }
                    Interaction::Confirmation { .. } => Response::Deny { remember: false },
                    Interaction::Question { .. } => Response::Answer {
                        answer: answers.answer.clone(),
                    },
                };
                ok(handle.respond(*pending_id, response));
            }
            let last = ev.is_final();
            events.push(ev);
            if last {
                break;
            }
        }
    };
    ok(tokio::time::timeout(Duration::from_secs(60), run).await);
    events
}

pub fn final_status(events: &[ReplyEvent]) -> (ReplyStatus, String) {
    match events.last().map(|e| &e.kind) {
        Some(EventKind::Finished { status, text, .. }) => (*status, text.clone()),
        other => panic!("the reply did not finish: {other:?}"),
    }
}

/// Tool names a request offered, per protocol.
pub fn offered(wire: Wire, body: &Value) -> Vec<String> {
    let tools = body
        .get("tools")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut names = Vec::new();
    for t in tools {
        match wire {
            Wire::OpenaiChat => names.extend(
                t.pointer("/function/name")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            ),
            Wire::OpenaiResponses | Wire::Anthropic => {
                names.extend(t.get("name").and_then(Value::as_str).map(str::to_owned))
            }
            Wire::Gemini => {
                for fd in t
                    .get("functionDeclarations")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default()
                {
                    names.extend(fd.get("name").and_then(Value::as_str).map(str::to_owned));
                }
            }
        }
    }
    names
}

/// The tool-result texts a request sent back, per protocol, in order.
pub fn tool_results(wire: Wire, body: &Value) -> Vec<String> {
    let mut out = Vec::new();
    match wire {
        Wire::OpenaiChat => {
            for m in body
                .get("messages")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
            {
                if m.get("role").and_then(Value::as_str) == Some("tool") {
                    out.push(
                        m.get("content")
                            .map(|c| c.as_str().map_or_else(|| c.to_string(), str::to_owned))
                            .unwrap_or_default(),
                    );
                }
            }
        }
        Wire::OpenaiResponses => {
            for it in body
                .get("input")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
            {
                if it.get("type").and_then(Value::as_str) == Some("function_call_output") {
                    out.push(
                        it.get("output")
                            .map(|c| c.as_str().map_or_else(|| c.to_string(), str::to_owned))
                            .unwrap_or_default(),
                    );
                }
            }
        }
        Wire::Anthropic => {
            for m in body
                .get("messages")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
            {
                for b in m
                    .get("content")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default()
                {
                    if b.get("type").and_then(Value::as_str) == Some("tool_result") {
                        out.push(b.get("content").map(Value::to_string).unwrap_or_default());
                    }
                }
            }
        }
        Wire::Gemini => {
            for c in body
                .get("contents")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
            {
                for p in c
                    .get("parts")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default()
                {
                    if let Some(fr) = p.get("functionResponse") {
                        out.push(fr.get("response").map(Value::to_string).unwrap_or_default());
                    }
                }
            }
        }
    }
    out
}
