//! Long-term memory extraction against the mock provider on 127.0.0.1: "extract now", what it
//! sends, de-duplication, a user's edit made during the request, and the automatic extraction
//! after a reply (run after the reply is saved, never before it ends).

use std::time::Duration;

use crate::support::{Answers, drive, final_status, lab};
use serde_json::{Value, json};
use tavo_engine::memory::{CURSOR_KEY, EVERY_SETTING, PROMPT_SETTING};
use tavo_engine::{ReplyRequest, ReplyStatus};
use tavo_model::{ChatId, Message, Role};
use tavo_testkit::{Script, Turn, Wire};
use tavo_tools::{CallScope, Services, ToolCall, ToolSettings, UnattendedDoor};

fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

fn add_messages(store: &tavo_store::Store, chat: ChatId, n: usize) {
    for i in 0..n {
        let role = if i % 2 == 0 {
            Role::User
        } else {
            Role::Assistant
        };
        ok(store.message_append(
            chat,
            &Message::new(
                role,
                format!("Fact {i}: the lighthouse keeper's cat is Biscuit."),
            ),
        ));
    }
}

fn slow(text: &str, delay_ms: u64) -> Turn {
    Turn {
        delay_ms,
        ..Turn::text(text)
    }
}

#[tokio::test]
async fn extract_now_stores_short_memories_and_skips_the_known_ones() {
    let l = lab(
        Wire::OpenaiChat,
        Script::new(vec![
            Turn::text(
                r#"```json
["The lighthouse keeper's cat is named Biscuit.", "The user likes tea."]
```"#,
            ),
            Turn::text(
                "- the lighthouse keeper's cat is named biscuit\n- The user lives by the sea.",
            ),
            Turn::text("NONE"),
        ]),
        &[],
    )
    .await;
    add_messages(&l.store, l.chat, 12);
    let engine = l.engine(Services::default(), None);

    let first = ok(engine.extract_memory(l.chat, None, None).await);
    assert_eq!(
        first.added,
        vec![
            "The lighthouse keeper's cat is named Biscuit.",
            "The user likes tea."
        ]
    );
    assert_eq!(first.messages, 12);
    assert!(
        !first.memory.enabled,
        "extracting never switches injection on"
    );

    let requests = l.mock.requests();
    assert_eq!(requests.len(), 1);
    let body = &requests[0].body;
    assert!(
        body.get("tools").is_none(),
        "no tools in an extraction request"
    );
    let prompt = body["messages"][0]["content"].as_str().unwrap_or_default();
    assert!(prompt.contains("User: Fact 0: the lighthouse keeper's cat is Biscuit."));
    assert!(prompt.contains("Bot: Fact 11:"));
    assert!(prompt.contains("Already remembered:\n(none)"));

    let second = ok(engine.extract_memory(l.chat, None, None).await);
    assert_eq!(second.added, vec!["The user lives by the sea."]);
    assert_eq!(second.duplicates, 1);
    let prompt = l.mock.requests()[1].body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        prompt.contains("- The user likes tea."),
        "the prompt lists what is already remembered"
    );

    let third = ok(engine.extract_memory(l.chat, None, None).await);
    assert!(third.added.is_empty());
    let memory = ok(l.store.memory_get(l.chat));
    assert_eq!(memory.memories.len(), 3);
    let cursor = ok(l.store.chat_state_get(l.chat, CURSOR_KEY));
    assert_eq!(cursor.and_then(|c| c["count"].as_u64()), Some(12));
}

#[tokio::test]
async fn the_extraction_prompt_is_editable() {
    let l = lab(
        Wire::Anthropic,
        Script::new(vec![Turn::text(r#"{"memories": ["Custom."]}"#)]),
        &[(
            PROMPT_SETTING,
            json!("Facts about {{user}} and {{char}}:\n{{messages}}\nKnown: {{memories}}"),
        )],
    )
    .await;
    add_messages(&l.store, l.chat, 3);
    let engine = l.engine(Services::default(), None);
    let x = ok(engine.extract_memory(l.chat, None, None).await);
    assert_eq!(x.added, vec!["Custom."]);
    let body = &l.mock.requests()[0].body;
    let text = body.to_string();
    assert!(text.contains("Facts about User and Bot:"), "{text}");
    assert!(text.contains("Known: (none)"));
}

#[tokio::test]
async fn a_manual_edit_made_during_the_request_is_kept() {
    let l = lab(
        Wire::OpenaiChat,
        Script::new(vec![slow(r#"["A new fact.", "Edited by the user"]"#, 150)]),
        &[],
    )
    .await;
    add_messages(&l.store, l.chat, 4);
    ok(l.store
        .memory_update(l.chat, None, Some(&["Old".to_owned()])));
    let engine = l.engine(Services::default(), None);
    let running = {
        let engine = engine.clone();
        let chat = l.chat;
        tokio::spawn(async move { engine.extract_memory(chat, None, None).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    // The user replaces the list while the model is still answering.
    ok(l.store
        .memory_update(l.chat, Some(true), Some(&["Edited by the user".to_owned()])));
    // A second extraction of the same chat is refused while the first runs.
    let busy = engine.extract_memory(l.chat, None, None).await;
    assert!(busy.is_err_and(|e| e.code() == "busy"));
    let x = ok(ok(running.await));
    assert!(x.merged_with_edit);
    assert_eq!(
        x.added,
        vec!["A new fact."],
        "the edit already says the rest"
    );
    let memory = ok(l.store.memory_get(l.chat));
    assert_eq!(memory.memories, vec!["Edited by the user", "A new fact."]);
    assert!(memory.enabled, "the user's switch survives too");
}

#[tokio::test]
async fn extraction_failures_name_the_problem_and_change_nothing() {
    let l = lab(
        Wire::OpenaiChat,
        Script::new(vec![Turn::error(500, "upstream exploded")]),
        &[],
    )
    .await;
    let engine = l.engine(Services::default(), None);
    let empty = engine.extract_memory(l.chat, None, None).await;
    assert!(
        empty.is_err_and(|e| e.code() == "invalid_arguments"),
        "no messages yet"
    );
    let missing = engine
        .extract_memory(ChatId(l.chat.get() + 100), None, None)
        .await;
    assert!(missing.is_err_and(|e| e.code() == "resource_not_found"));
    add_messages(&l.store, l.chat, 2);
    let failed = engine.extract_memory(l.chat, None, None).await;
    assert!(failed.is_err_and(|e| e.code() == "internal_error"));
    assert!(ok(l.store.memory_peek(l.chat)).memories.is_empty());
    let unknown = engine
        .extract_memory(l.chat, Some("nope".into()), None)
        .await;
    assert!(unknown.is_err());
}

#[tokio::test]
async fn automatic_extraction_runs_after_a_reply_once_ten_messages_arrived() {
    let l = lab(
        Wire::OpenaiChat,
        Script::new(vec![
            Turn::text("Hello there."),
            // The extraction answers slowly: the reply must have ended long before.
            slow(r#"["The user greets politely."]"#, 100),
            Turn::text("Second answer."),
        ]),
        &[(EVERY_SETTING, json!(10))],
    )
    .await;
    ok(l.store.memory_update(l.chat, Some(true), None));
    add_messages(&l.store, l.chat, 8);
    let engine = l.engine(Services::default(), None);

    // 8 + the user's message + the answer = 10 new messages: due after this reply.
    let handle = ok(engine.start(ReplyRequest::normal(l.chat, "hi")));
    let events = drive(&handle, &Answers::default()).await;
    assert_eq!(final_status(&events).0, ReplyStatus::Finished);
    assert!(
        ok(l.store.memory_peek(l.chat)).memories.is_empty(),
        "the reply ended before the extraction answered"
    );
    engine.wait_background().await;
    assert_eq!(
        ok(l.store.memory_peek(l.chat)).memories,
        vec!["The user greets politely."]
    );
    let requests = l.mock.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1].body.get("tools").is_none());

    // Two more messages are not ten: no extraction after the next reply.
    let handle = ok(engine.start(ReplyRequest::normal(l.chat, "again")));
    drive(&handle, &Answers::default()).await;
    engine.wait_background().await;
    assert_eq!(l.mock.requests().len(), 3);
}

#[tokio::test]
async fn no_automatic_extraction_while_memory_is_off() {
    let l = lab(
        Wire::OpenaiChat,
        Script::new(vec![
            Turn::text("Hi."),
            Turn::text(r#"["Should not be asked."]"#),
        ]),
        &[],
    )
    .await;
    add_messages(&l.store, l.chat, 20);
    let engine = l.engine(Services::default(), None);
    let handle = ok(engine.start(ReplyRequest::normal(l.chat, "hi")));
    drive(&handle, &Answers::default()).await;
    engine.wait_background().await;
    assert_eq!(l.mock.requests().len(), 1);
    assert!(ok(l.store.memory_peek(l.chat)).memories.is_empty());
}

#[tokio::test]
async fn the_memory_extract_operation_reaches_the_engine() {
    let l = lab(
        Wire::Gemini,
        Script::new(vec![Turn::text(
            "1. The cat is Biscuit.\n2. The user likes tea.",
        )]),
        &[],
    )
    .await;
    add_messages(&l.store, l.chat, 2);
    let engine = l.engine(Services::default(), None);
    let dispatcher = engine.dispatcher();
    let mut scope = CallScope::direct(Some(l.chat), &ToolSettings::default());
    let door = UnattendedDoor {
        confirmed: false,
        refusal: |t| tavo_tools::ToolError::internal(t),
    };
    let call = ToolCall::new("t1", "tavo_memory_extract", json!({}));
    let done = dispatcher.call(&mut scope, &call, &door).await.completed;
    let value: Value = done.envelope["result"].clone();
    assert_eq!(done.envelope["ok"], json!(true), "{}", done.envelope);
    assert_eq!(
        value["added"],
        json!(["The cat is Biscuit.", "The user likes tea."])
    );
    assert_eq!(
        value["memory"]["memories"].as_array().map(Vec::len),
        Some(2)
    );
}
