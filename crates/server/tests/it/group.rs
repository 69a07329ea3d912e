//! Group chats over HTTP: `replyMode` on chat creation, `PUT /api/chats/{id}/members/{character}`
//! (mute), `{{groupNotMuted}}` in the display copy, and `speaker` on the reply routes — a group
//! reply streamed with its `speaker` events.

use std::time::Duration;

use crate::support::{SseEvent, TestServer, bare_client, client, connect, read_sse, send};
use serde_json::{Value, json};
use tavo_model::{ChatId, Message, Role};
use tavo_testkit::{MockProvider, Script, Turn};

async fn events(s: &TestServer, reply: &str) -> Vec<SseEvent> {
    let r = bare_client()
        .get(s.url(&format!("/api/replies/{reply}/events")))
        .send()
        .await
        .expect("send");
    read_sse(r, Duration::from_secs(20), |e| e.event == "finished").await
}

fn speakers(store: &tavo_store::Store, chat: i64) -> Vec<i64> {
    store
        .messages_all(ChatId(chat))
        .expect("messages")
        .into_iter()
        .filter(|m| m.role == Role::Assistant)
        .filter_map(|m| m.character_id.map(|c| c.0))
        .collect()
}

#[tokio::test]
async fn group_chats_over_http_modes_mutes_and_a_chosen_speaker() {
    let s = TestServer::start().await;
    let mock = MockProvider::start(Script::new(vec![
        Turn::text("ann says"),
        Turn::text("bo says"),
        Turn::text("bo again"),
    ]))
    .await
    .expect("mock");
    connect(&s.store, &mock);
    let c = client();
    let mut ids = Vec::new();
    for name in ["Ann", "Bo"] {
        let (st, body) = send(c.post(s.url("/api/library/character")).json(
            &json!({"name": name, "firstMes": format!("{name} greets."), "description": "d"}),
        ))
        .await;
        assert_eq!(st, 201, "{body}");
        ids.push(body["id"].as_i64().expect("id"));
    }
    let (st, created) = send(
        c.post(s.url("/api/chats"))
            .json(&json!({"characters": ids, "replyMode": "all"})),
    )
    .await;
    assert_eq!(st, 201, "{created}");
    let chat = created["id"].as_i64().expect("id");
    assert_eq!(speakers(&s.store, chat), ids, "every member greets");
    let (st, bad) = send(
        c.post(s.url("/api/chats"))
            .json(&json!({"characters": ids, "replyMode": "pooled"})),
    )
    .await;
    // A body that does not deserialize (an unknown enum value) is 422 invalid_arguments naming
    // the field (routes::json_errors; docs/api.md, as for generate's unknown settings key).
    assert_eq!(st, 422, "an unknown mode is refused: {bad}");
    assert_eq!(bad["error"]["code"], "invalid_arguments", "{bad}");

    // One reply, two speakers, each announced.
    let (st, started) = send(
        c.post(s.url(&format!("/api/chats/{chat}/messages")))
            .json(&json!({"content": "hello both"})),
    )
    .await;
    assert_eq!(st, 202, "{started}");
    let evs = events(&s, started["replyId"].as_str().expect("reply")).await;
    let turns: Vec<Value> = evs
        .iter()
        .filter(|e| e.event == "speaker")
        .map(|e| e.json())
        .collect();
    assert_eq!(turns.len(), 2, "{evs:?}");
    assert_eq!(turns[0]["characterId"], ids[0]);
    assert_eq!(turns[1]["name"], "Bo");
    assert_eq!(
        evs.last().map(|e| e.json()["text"].clone()),
        Some(json!("ann says\n\nbo says"))
    );
    assert_eq!(speakers(&s.store, chat)[2..], ids[..]);

    // Mute Bo: the chat says so, and {{groupNotMuted}} leaves Bo out of the display copy.
    let member = |id: i64| s.url(&format!("/api/chats/{chat}/members/{id}"));
    let (st, muted) = send(c.put(member(ids[1])).json(&json!({"muted": true}))).await;
    assert_eq!(st, 200, "{muted}");
    assert_eq!(muted["mutedCharacterIds"], json!([ids[1]]));
    let (st, refused) = send(c.put(member(9999)).json(&json!({"muted": true}))).await;
    assert_eq!(st, 400, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("not a member")),
        "{refused}"
    );
    s.store
        .message_append(
            ChatId(chat),
            &Message::new(Role::System, "open: {{groupNotMuted}} / all: {{group}}"),
        )
        .expect("message");
    let (st, view) = send(c.get(s.url(&format!("/api/chats/{chat}/view")))).await;
    assert_eq!(st, 200, "{view}");
    let shown = view["messages"]
        .as_array()
        .and_then(|m| m.last())
        .map(|m| m["display"]["content"].clone());
    assert_eq!(shown, Some(json!("open: Ann / all: Ann, Bo")));

    // Quick group speech: the muted member answers when chosen.
    let (st, started) = send(
        c.post(s.url(&format!("/api/chats/{chat}/replies")))
            .json(&json!({"type": "normal", "message": "Bo?", "speaker": ids[1]})),
    )
    .await;
    assert_eq!(st, 202, "{started}");
    let evs = events(&s, started["replyId"].as_str().expect("reply")).await;
    assert_eq!(
        evs.last().map(|e| e.json()["status"].clone()),
        Some(json!("finished"))
    );
    assert_eq!(speakers(&s.store, chat).last(), Some(&ids[1]));
    let (st, bad) = send(
        c.post(s.url(&format!("/api/chats/{chat}/replies")))
            .json(&json!({"type": "continue", "speaker": ids[1]})),
    )
    .await;
    assert_eq!(st, 400, "{bad}");
    let (st, bad) = send(
        c.post(s.url(&format!("/api/chats/{chat}/messages")))
            .json(&json!({"content": "x", "speaker": 9999})),
    )
    .await;
    assert_eq!(st, 400, "{bad}");
    assert_eq!(mock.requests().len(), 3);
}
