//! `POST /api/chats/{id}/messages` stores the user's message through the chat's `receive`
//! regex rules, like every other door (the engine's one message write).

use std::time::Duration;

use crate::support::{TestServer, bare_client, client, json_of, make_chat, read_sse};
use serde_json::json;
use tavo_model::{ChatId, RegexEntry, RegexGroup, RegexPlacement, RegexTiming, Summary};
use tavo_testkit::{MockProvider, Script, Turn, Wire};

#[tokio::test]
async fn the_send_route_stores_the_receive_rewrite_of_both_messages() {
    let mock = MockProvider::start(Script::new(vec![Turn::text("a cat")]))
        .await
        .expect("mock");
    let s = TestServer::start().await;
    let r = client()
        .post(s.url("/api/connections"))
        .json(
            &json!({"name": "mock", "source": "custom", "protocol": "openai-chat",
                      "baseUrl": mock.base_url(Wire::OpenaiChat), "model": "mock-model",
                      "apiKey": "sk-mock-0123456789abcdef"}),
        )
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    let chat = make_chat(&s.store, "regex");
    let group = s
        .store
        .create(&RegexGroup {
            name: "rules".into(),
            entries: vec![RegexEntry {
                identifier: "r".into(),
                name: "r".into(),
                find_regex: "/cat/g".into(),
                replace_string: "CAT".into(),
                placements: vec![RegexPlacement::User, RegexPlacement::Char],
                timing: RegexTiming::Receive,
                enabled: true,
                ..RegexEntry::default()
            }],
            ..RegexGroup::default()
        })
        .expect("regex");
    let mut c = s.store.chat_get(ChatId(chat)).expect("read").expect("chat");
    c.regexes.push(Summary {
        id: group,
        name: "rules".into(),
    });
    s.store.update(&c, None).expect("bind");

    let r = client()
        .post(s.url(&format!("/api/chats/{chat}/messages")))
        .json(&json!({"content": "my cat"}))
        .send()
        .await
        .expect("send");
    let (status, body) = json_of(r).await;
    assert_eq!(status, 202, "{body}");
    let reply = body["replyId"].as_str().expect("replyId").to_owned();
    let events = read_sse(
        bare_client()
            .get(s.url(&format!("/api/replies/{reply}/events")))
            .send()
            .await
            .expect("events"),
        Duration::from_secs(20),
        |e| e.event == "finished",
    )
    .await;
    let last = events.last().expect("events");
    assert_eq!(last.json()["text"], json!("a CAT"), "{events:?}");
    let stored = s.store.messages_all(ChatId(chat)).expect("messages");
    let texts: Vec<&str> = stored.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(texts, ["my CAT", "a CAT"]);
}
