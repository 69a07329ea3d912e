//! The browser app's routes: chat creation through `tools::chats`, display copies (macros and
//! `display` regex rules shown, never stored), card text as shown, and cloning a chat.

use crate::support::{TestServer, get, post};
use serde_json::json;

/// A persona, a character with macros in its card, and a display rule group.
async fn library(s: &TestServer) -> (i64, i64) {
    let (st, _) = post(
        s,
        "/api/library/persona",
        json!({"name": "Ann", "description": "d", "active": true}),
    )
    .await;
    assert_eq!(st, 201);
    let (st, c) = post(
        s,
        "/api/library/character",
        json!({"name": "Mira", "description": "{{char}} and {{user}}",
               "firstMes": "Hi {{user}}", "alternateGreetings": ["Yo {{user}}"]}),
    )
    .await;
    assert_eq!(st, 201, "{c}");
    let (st, g) = post(
        s,
        "/api/library/regex",
        json!({"name": "box", "entries": [{
            "name": "status", "findRegex": "/<status>([\\s\\S]*?)<\\/status>/g",
            "replaceString": "[{{char}}: $1]", "placements": ["char"],
            "timing": "display", "enabled": true}]}),
    )
    .await;
    assert_eq!(st, 201, "{g}");
    (c["id"].as_i64().expect("id"), g["id"].as_i64().expect("id"))
}

#[tokio::test]
async fn a_chat_is_created_by_tools_chats_with_its_greeting_and_swipes() {
    let s = TestServer::start().await;
    let (mira, group) = library(&s).await;
    let (st, created) = post(
        &s,
        "/api/chats",
        json!({"characters": [mira], "regexes": [group]}),
    )
    .await;
    assert_eq!(st, 201, "{created}");
    let id = created["id"].as_i64().expect("id");
    assert!(created["greeting"].is_i64(), "{created}");
    let (_, chat) = get(&s, &format!("/api/library/chat/{id}")).await;
    assert_eq!(chat["regexes"][0]["id"], group);
    let (_, page) = get(&s, &format!("/api/chats/{id}/messages")).await;
    assert_eq!(page["messages"][0]["content"], "Hi Ann");
    assert_eq!(page["messages"][0]["swipes"], json!(["Hi Ann", "Yo Ann"]));

    let (st, bad) = post(
        &s,
        "/api/chats",
        json!({"characters": [mira], "lorebooks": [99]}),
    )
    .await;
    assert_eq!(st, 404, "{bad}");
    assert!(
        bad["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("chat.lorebooks[0]")),
        "{bad}"
    );
    let (_, chats) = get(&s, "/api/chats").await;
    assert_eq!(
        chats.as_array().map(Vec::len),
        Some(1),
        "a refused chat is not stored"
    );
}

#[tokio::test]
async fn the_view_shows_macros_and_display_rules_and_stores_neither() {
    let s = TestServer::start().await;
    let (mira, group) = library(&s).await;
    let (_, created) = post(
        &s,
        "/api/chats",
        json!({"characters": [mira], "regexes": [group]}),
    )
    .await;
    let id = created["id"].as_i64().expect("id");
    let raw = "Fine, {{user}}. <status>hp 3</status>";
    let (st, _) = post(
        &s,
        &format!("/api/ops/tavo_message_append?chat={id}"),
        json!({"message": {"role": "assistant", "content": raw}}),
    )
    .await;
    assert_eq!(st, 200);
    let (st, view) = get(&s, &format!("/api/chats/{id}/view")).await;
    assert_eq!(st, 200, "{view}");
    assert_eq!(view["displayRules"], 1);
    let last = &view["messages"][1];
    assert_eq!(last["display"]["content"], "Fine, Ann. [Mira: hp 3]");
    assert_eq!(
        last["content"], raw,
        "the stored text comes along, unchanged"
    );
    let (_, page) = get(&s, &format!("/api/chats/{id}/messages")).await;
    assert_eq!(page["messages"][1]["content"], raw);

    let (st, shown) = post(
        &s,
        &format!("/api/chats/{id}/display"),
        json!({"content": "half <status>ok</status> and <stat"}),
    )
    .await;
    assert_eq!(st, 200, "{shown}");
    assert_eq!(shown["content"], "half [Mira: ok] and <stat");
    let (st, _) = post(&s, "/api/chats/999/display", json!({"content": "x"})).await;
    assert_eq!(st, 404);
    let (st, _) = get(&s, &format!("/api/chats/{id}/view?limit=0")).await;
    assert_eq!(st, 400);

    let (st, card) = get(&s, &format!("/api/characters/{mira}/display")).await;
    assert_eq!(st, 200, "{card}");
    assert_eq!(card["description"], "Mira and Ann");
    assert_eq!(card["alternateGreetings"], json!(["Yo Ann"]));
}

#[tokio::test]
async fn clone_copies_the_messages_under_a_new_name() {
    let s = TestServer::start().await;
    let (mira, _) = library(&s).await;
    let (_, created) = post(
        &s,
        "/api/chats",
        json!({"characters": [mira], "name": "Inn"}),
    )
    .await;
    let id = created["id"].as_i64().expect("id");
    let (st, copy) = post(&s, &format!("/api/chats/{id}/clone"), json!({})).await;
    assert_eq!(st, 201, "{copy}");
    let copy = copy["id"].as_i64().expect("id");
    assert_ne!(copy, id);
    let (_, chat) = get(&s, &format!("/api/library/chat/{copy}")).await;
    assert_eq!(chat["name"], "Inn (copy)");
    let (_, page) = get(&s, &format!("/api/chats/{copy}/messages")).await;
    assert_eq!(page["total"], 1);
    let (st, _) = post(&s, "/api/chats/999/clone", json!({})).await;
    assert_eq!(st, 404);
    let (st, _) = post(&s, &format!("/api/chats/{id}/clone"), json!({"name": "  "})).await;
    assert_eq!(st, 400);
}
