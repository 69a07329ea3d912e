//! `GET /api/audit` pages the audit log newest first; `DELETE /api/audit` clears it and leaves
//! the messages' compact tool-call cards alone (seed 000, privacy).

use crate::support::{TestServer, bare_client, client, json_of, make_chat};
use serde_json::json;
use tavo_model::{ChatId, Message, Role};

#[tokio::test]
async fn the_audit_log_can_be_read_and_cleared() {
    let s = TestServer::start().await;
    let chat = make_chat(&s.store, "audited");
    let mut m = Message::new(Role::Assistant, "saved");
    m.extra.insert(
        "toolCalls".into(),
        json!([{"callId": "c", "tool": "tavo_file_save", "status": "ok", "label": "a.txt"}]),
    );
    let message = s.store.message_append(ChatId(chat), &m).expect("message");
    for i in 0..3 {
        s.store
            .audit_append("tool.tavo_file_save", Some("chat:1"), &json!({ "n": i }))
            .expect("append");
    }
    let (status, page) = json_of(
        bare_client()
            .get(s.url("/api/audit?limit=2"))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["entries"][0]["details"]["n"], 2);
    assert_eq!(page["entries"].as_array().map(Vec::len), Some(2));
    let before = page["nextBefore"].as_i64().expect("a next page");
    let (_, older) = json_of(
        bare_client()
            .get(s.url(&format!("/api/audit?limit=2&before={before}")))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(older["entries"][0]["details"]["n"], 0);
    assert!(older.get("nextBefore").is_none(), "{older}");

    let (status, bad) = json_of(
        bare_client()
            .get(s.url("/api/audit?limit=0"))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(status, 400, "{bad}");

    // Clearing changes state: without the CSRF header it is refused.
    let refused = bare_client()
        .delete(s.url("/api/audit"))
        .header("origin", "http://evil.example")
        .send()
        .await
        .expect("send");
    assert_eq!(refused.status().as_u16(), 403);
    let (status, cleared) = json_of(
        client()
            .delete(s.url("/api/audit"))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!((status, cleared), (200, json!({"removed": 3})));
    let (_, empty) = json_of(
        bare_client()
            .get(s.url("/api/audit"))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(empty["entries"], json!([]));
    let kept = s
        .store
        .message_get(message)
        .expect("read")
        .expect("message");
    assert_eq!(kept.extra["toolCalls"][0]["tool"], "tavo_file_save");
}

#[tokio::test]
async fn the_audit_log_is_filtered_by_chat_tool_and_call() {
    let s = TestServer::start().await;
    for (tool, chat, call) in [
        ("tavo_file_save", 1, "c1"),
        ("tavo_image_generate", 1, "c2"),
        ("tavo_file_save", 2, "c1"),
    ] {
        s.store
            .audit_append(
                &format!("tool.{tool}"),
                Some(&format!("chat:{chat}")),
                &json!({ "callId": call, "tool": tool }),
            )
            .expect("append");
    }
    let get = |q: &'static str| {
        let url = s.url(&format!("/api/audit?{q}"));
        async move { json_of(bare_client().get(url).send().await.expect("send")).await }
    };
    let tools = |page: &serde_json::Value| -> Vec<String> {
        page["entries"]
            .as_array()
            .map(|l| {
                l.iter()
                    .map(|e| {
                        format!(
                            "{} {}",
                            e["action"].as_str().unwrap_or(""),
                            e["target"].as_str().unwrap_or("")
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let (status, page) = get("tool=tavo_file_save").await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(
        tools(&page),
        ["tool.tavo_file_save chat:2", "tool.tavo_file_save chat:1"]
    );
    let (_, page) = get("chat=1").await;
    assert_eq!(
        tools(&page),
        [
            "tool.tavo_image_generate chat:1",
            "tool.tavo_file_save chat:1"
        ]
    );
    let (_, page) = get("chat=1&call=c1&limit=1").await;
    assert_eq!(tools(&page), ["tool.tavo_file_save chat:1"]);
    let (status, bad) = get("tool=").await;
    assert_eq!(status, 400, "{bad}");
}
