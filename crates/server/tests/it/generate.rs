//! `POST /api/chats/{id}/generate` (`tavo.generate`, seed 002): a request of its own by
//! default, the chat's conversation with `context: true`, the seed's per-call settings on the
//! wire, nothing stored; no connection, an empty prompt, a missing chat or preset and an
//! unknown setting are refused with the seed's "throws" as an error.

use crate::support::{TestServer, client, json_of, make_chat};
use serde_json::{Value, json};
use tavo_model::{ChatId, Message, Role};
use tavo_testkit::{MockProvider, Script, Turn, Wire};

async fn post(s: &TestServer, chat: i64, body: Value) -> (u16, Value) {
    json_of(
        client()
            .post(s.url(&format!("/api/chats/{chat}/generate")))
            .json(&body)
            .send()
            .await
            .expect("send"),
    )
    .await
}

#[tokio::test]
async fn a_generation_answers_the_whole_text_and_stores_nothing() {
    let s = TestServer::start().await;
    let chat = make_chat(&s.store, "generate");
    s.store
        .message_append(
            ChatId(chat),
            &Message::new(Role::User, "We met at the harbour."),
        )
        .expect("append");

    // No connection yet: the seed's "throws".
    let (st, e) = post(&s, chat, json!({"prompt": "hi"})).await;
    assert_eq!(
        (st, e["error"]["code"].clone()),
        (400, json!("no_connection")),
        "{e}"
    );

    let mock = MockProvider::start(Script::new(vec![
        Turn::text("One line about today."),
        Turn::text("Go to the harbour."),
    ]))
    .await
    .expect("mock");
    let r = client()
        .post(s.url("/api/connections"))
        .json(&json!({"name": "mock", "source": "custom", "protocol": "openai-chat",
                      "baseUrl": mock.base_url(Wire::OpenaiChat), "model": "mock-model", "apiKey": "sk-mock-0123456789abcdef"}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);

    let (st, g) = post(
        &s,
        chat,
        json!({"prompt": "Summarise today in one line", "options": {}}),
    )
    .await;
    assert_eq!(st, 200, "{g}");
    assert_eq!(g["text"], "One line about today.");
    assert_eq!(g["connection"], "mock");
    let first = &mock.requests()[0].body;
    assert_eq!(
        first["messages"],
        json!([{"role": "user", "content": "Summarise today in one line"}]),
        "context defaults to false: the prompt alone"
    );
    assert_ne!(first["stream"], json!(true), "one answer, whole");

    let (st, g) = post(
        &s,
        chat,
        json!({"prompt": "Three suggestions", "options": {"context": true,
               "settings": {"temperature": 0.7, "topP": 0.9, "maxCompletionTokens": 300}}}),
    )
    .await;
    assert_eq!(st, 200, "{g}");
    assert_eq!(g["text"], "Go to the harbour.");
    let second = &mock.requests()[1].body;
    let messages = second["messages"].as_array().expect("messages");
    assert!(
        messages.iter().any(|m| m["content"]
            .as_str()
            .unwrap_or("")
            .contains("We met at the harbour.")),
        "context: the chat's history is in the prompt: {second}"
    );
    assert_eq!(
        messages.last().expect("last"),
        &json!({"role": "user", "content": "Three suggestions"})
    );
    assert_eq!(second["temperature"], json!(0.7));
    assert_eq!(second["top_p"], json!(0.9));
    assert_eq!(second["max_tokens"], json!(300));

    // Nothing was written.
    assert_eq!(s.store.message_count(ChatId(chat)).expect("count"), 1);

    for (body, status, code) in [
        (json!({"prompt": "  "}), 400, "invalid_arguments"),
        (
            json!({"prompt": "x", "options": {"preset": 777}}),
            404,
            "resource_not_found",
        ),
        (
            json!({"prompt": "x", "options": {"preset": "default"}}),
            400,
            "invalid_arguments",
        ),
        (
            json!({"prompt": "x", "options": {"settings": {"frequencyPenalty": 1}}}),
            422,
            "invalid_arguments",
        ),
    ] {
        let (st, e) = post(&s, chat, body.clone()).await;
        assert_eq!(
            (st, e["error"]["code"].as_str().unwrap_or("")),
            (status, code),
            "{body}: {e}"
        );
    }
    let (st, e) = post(&s, 9999, json!({"prompt": "x"})).await;
    assert_eq!(
        (st, e["error"]["code"].clone()),
        (404, json!("resource_not_found"))
    );
    assert_eq!(mock.requests().len(), 2, "refused calls reach no provider");
}
