//! What bubble scripts (TavoJS, seed 002) need from the operation layer beyond the model's
//! tools: message-scope variables through `tavo_variable_*`, and the chat's advanced-rendering
//! flag through `tavo_chat_update`.

use crate::support::Lib;
use serde_json::json;
use tavo_model::{ChatId, Message, Role};
use tavo_store::VarScope;

fn messages(lib: &Lib, chat: ChatId, n: usize) -> Vec<i64> {
    (0..n)
        .map(|i| {
            lib.store
                .message_append(chat, &Message::new(Role::User, format!("m{i}")))
                .map(|id| id.0)
                .unwrap_or_else(|e| panic!("{e}"))
        })
        .collect()
}

#[tokio::test]
async fn message_scope_by_id_index_or_last_message() {
    let lib = Lib::new();
    let chat = lib.chat("bubbles");
    let ids = messages(&lib, chat, 3);
    lib.ok(
        Some(chat),
        "tavo_variable_set",
        json!({"name": "hp", "value": 7, "scope": "message", "message": {"id": ids[0]}}),
    )
    .await;
    lib.ok(
        Some(chat),
        "tavo_variable_set",
        json!({"name": "mood", "value": {"a": 1}, "scope": "message", "message": {"index": -2}}),
    )
    .await;
    lib.ok(
        Some(chat),
        "tavo_variable_update",
        json!({"name": "mood", "value": {"b": 2}, "scope": "message", "message": {"index": 1}}),
    )
    .await;
    lib.ok(
        Some(chat),
        "tavo_variable_set",
        json!({"name": "last", "value": true, "scope": "message"}),
    )
    .await;
    let var = |scope, name: &str| lib.store.var_get(scope, name).unwrap_or_default();
    assert_eq!(var(VarScope::Message(ids[0]), "hp"), Some(json!(7)));
    assert_eq!(
        var(VarScope::Message(ids[1]), "mood"),
        Some(json!({"a": 1, "b": 2}))
    );
    assert_eq!(var(VarScope::Message(ids[2]), "last"), Some(json!(true)));
    assert_eq!(
        var(VarScope::Chat(chat.get()), "hp"),
        None,
        "scopes never fall through"
    );
    let got = lib
        .ok(
            Some(chat),
            "tavo_variable_get",
            json!({"name": "hp", "scope": "message", "message": {"id": ids[0]}}),
        )
        .await;
    assert_eq!(got["value"], json!(7));
    assert_eq!(got["scope"], json!("message"));
    lib.ok(
        Some(chat),
        "tavo_variable_unset",
        json!({"name": "hp", "scope": "message", "message": {"id": ids[0]}}),
    )
    .await;
    assert_eq!(var(VarScope::Message(ids[0]), "hp"), None);
}

#[tokio::test]
async fn another_chats_message_or_a_missing_floor_is_refused_and_changes_nothing() {
    let lib = Lib::new();
    let chat = lib.chat("mine");
    let other = lib.chat("theirs");
    messages(&lib, chat, 1);
    let theirs = messages(&lib, other, 1);
    let e = lib
        .err(
            Some(chat),
            "tavo_variable_set",
            json!({"name": "x", "value": 1, "scope": "message", "message": {"id": theirs[0]}}),
        )
        .await;
    assert_eq!(e["code"], json!("resource_not_found"));
    assert_eq!(e["details"]["path"], json!("message.id"));
    assert_eq!(
        lib.store
            .var_get(VarScope::Message(theirs[0]), "x")
            .unwrap_or_default(),
        None
    );
    let e = lib
        .err(
            Some(chat),
            "tavo_variable_set",
            json!({"name": "x", "value": 1, "scope": "message", "message": {"index": 5}}),
        )
        .await;
    assert_eq!(e["details"]["path"], json!("message.index"));
    let e = lib
        .err(
            Some(chat),
            "tavo_variable_set",
            json!({"name": "x", "value": 1, "message": {"index": 0}}),
        )
        .await;
    assert_eq!(e["code"], json!("invalid_arguments"));
}

#[tokio::test]
async fn advanced_rendering_is_on_by_default_and_switched_by_chat_update() {
    let lib = Lib::new();
    let chat = lib.chat("render");
    let current = lib.ok(Some(chat), "tavo_chat_current", json!({})).await;
    assert_eq!(current["advancedRendering"], json!(true));
    let updated = lib
        .ok(
            Some(chat),
            "tavo_chat_update",
            json!({"chat": {"advancedRendering": false}}),
        )
        .await;
    assert_eq!(updated["advancedRendering"], json!(false));
    let stored = lib
        .store
        .chat_get(chat)
        .unwrap_or_default()
        .unwrap_or_default();
    assert!(!stored.advanced_rendering);
    let e = lib
        .err(
            Some(chat),
            "tavo_chat_update",
            json!({"chat": {"advancedRendering": "yes"}}),
        )
        .await;
    assert_eq!(e["code"], json!("invalid_arguments"));
}
