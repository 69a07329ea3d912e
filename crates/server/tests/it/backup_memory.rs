//! The HTTP doors of long-term memory (`/api/chats/{id}/memory`, `…/memory/extract`) and of
//! backup and restore (`GET|POST /api/backup`, `POST /api/restore`) on a running server.

use crate::support::{TestServer, client, connect, make_chat, multipart, send};
use serde_json::json;
use tavo_model::{ChatId, Message, Role};
use tavo_testkit::{MockProvider, Script, Turn};

#[tokio::test]
async fn memory_routes_read_edit_and_extract() {
    let s = TestServer::start().await;
    let mock = MockProvider::start(Script::new(vec![Turn::text(
        r#"["The user keeps bees.", "Old fact"]"#,
    )]))
    .await
    .expect("mock");
    connect(&s.store, &mock);
    let chat = make_chat(&s.store, "bees");
    for i in 0..12 {
        s.store
            .message_append(
                ChatId(chat),
                &Message::new(Role::User, format!("I keep bees ({i})")),
            )
            .expect("message");
    }
    let c = client();
    let (st, m) = send(c.get(s.url(&format!("/api/chats/{chat}/memory")))).await;
    assert_eq!(st, 200, "{m}");
    assert_eq!(m["enabled"], json!(false));
    assert!(m["id"].is_i64());
    let (st, m) = send(
        c.put(s.url(&format!("/api/chats/{chat}/memory")))
            .json(&json!({"enabled": true, "memories": ["Old fact"]})),
    )
    .await;
    assert_eq!(st, 200, "{m}");
    let (st, bad) = send(
        c.put(s.url(&format!("/api/chats/{chat}/memory")))
            .json(&json!({"memories": [" "]})),
    )
    .await;
    assert_eq!(st, 400, "{bad}");

    let (st, x) = send(c.post(s.url(&format!("/api/chats/{chat}/memory/extract")))).await;
    assert_eq!(st, 200, "{x}");
    assert_eq!(x["added"], json!(["The user keeps bees."]));
    assert_eq!(x["duplicates"], json!(1));
    assert_eq!(
        x["memory"]["memories"],
        json!(["Old fact", "The user keeps bees."])
    );
    let (st, missing) = send(
        c.post(s.url("/api/chats/999/memory/extract"))
            .json(&json!({})),
    )
    .await;
    assert_eq!(st, 404, "{missing}");
    assert_eq!(missing["error"]["code"], json!("resource_not_found"));

    // The same through the operation door (TavoJS's tavo.memory.extract()).
    let (st, env) = send(c.post(s.url(&format!("/api/ops/memory.extract?chat={chat}")))).await;
    assert_eq!(
        st, 500,
        "the script is used up, so the provider fails: {env}"
    );
    assert_eq!(env["ok"], json!(false));
}

#[tokio::test]
async fn a_backup_downloaded_from_one_server_restores_into_another() {
    let a = TestServer::start().await;
    for name in ["first", "second"] {
        let chat = make_chat(&a.store, name);
        a.store
            .message_append(ChatId(chat), &Message::new(Role::User, "hello"))
            .expect("message");
    }
    let mock = MockProvider::start(Script::new(vec![]))
        .await
        .expect("mock");
    connect(&a.store, &mock);
    let c = client();
    let response = c.get(a.url("/api/backup")).send().await.expect("send");
    assert_eq!(response.status().as_u16(), 200);
    let disposition = response
        .headers()
        .get("content-disposition")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert!(disposition.contains(".tavobackup"), "{disposition}");
    let plain = response.bytes().await.expect("body").to_vec();
    assert!(plain.starts_with(b"PK"));
    let sealed = c
        .post(a.url("/api/backup"))
        .json(&json!({"passphrase": "pass phrase"}))
        .send()
        .await
        .expect("send")
        .bytes()
        .await
        .expect("body")
        .to_vec();

    let b = TestServer::start().await;
    make_chat(&b.store, "only in b");
    // Not empty: refused without yes.
    let (ct, body) = multipart(&[("lib.tavobackup", &plain)], &[]);
    let (st, e) = send(
        c.post(b.url("/api/restore"))
            .header("content-type", ct)
            .body(body),
    )
    .await;
    assert_eq!(st, 409, "{e}");
    // Cut short: refused, nothing changed.
    let (ct, body) = multipart(
        &[("lib.tavobackup", &plain[..plain.len() / 2])],
        &[("yes", "true")],
    );
    let (st, e) = send(
        c.post(b.url("/api/restore"))
            .header("content-type", ct)
            .body(body),
    )
    .await;
    assert_eq!(st, 422, "{e}");
    // A reply running in another process on this library: refused.
    let mut other = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .expect("sleep");
    b.store
        .setting_set(
            "engine.reply.77",
            &json!({"id": "rpl_other", "chatId": 77, "status": "running", "pid": other.id(),
                    "startedAt": "x", "updatedAt": "x"}),
        )
        .expect("record");
    let (ct, body) = multipart(&[("lib.tavobackup", &plain)], &[("yes", "true")]);
    let (st, e) = send(
        c.post(b.url("/api/restore"))
            .header("content-type", ct)
            .body(body),
    )
    .await;
    let _ = other.kill();
    let _ = other.wait();
    assert_eq!(st, 409, "{e}");
    assert_eq!(e["error"]["code"], json!("busy"));
    b.store.setting_delete("engine.reply.77").expect("record");
    // Wrong passphrase: refused.
    let (ct, body) = multipart(
        &[("lib.tavobackup", &sealed)],
        &[("yes", "true"), ("passphrase", "nope")],
    );
    let (st, e) = send(
        c.post(b.url("/api/restore"))
            .header("content-type", ct)
            .body(body),
    )
    .await;
    assert_eq!(st, 403, "{e}");
    let (_, chats) = send(c.get(b.url("/api/chats"))).await;
    assert!(chats.to_string().contains("only in b"), "{chats}");

    let (ct, body) = multipart(
        &[("lib.tavobackup", &sealed)],
        &[("yes", "true"), ("passphrase", "pass phrase")],
    );
    let (st, r) = send(
        c.post(b.url("/api/restore"))
            .header("content-type", ct)
            .body(body),
    )
    .await;
    assert_eq!(st, 200, "{r}");
    assert_eq!(r["keys"], json!(1));
    // The running server sees the restored library at once.
    let (_, chats) = send(c.get(b.url("/api/chats"))).await;
    let text = chats.to_string();
    assert!(text.contains("first") && text.contains("second"), "{text}");
    assert!(!text.contains("only in b"), "{text}");
    let book = b
        .store
        .setting_get("llm.connections")
        .expect("setting")
        .unwrap_or_default();
    assert_eq!(
        book["connections"][0]["apiKey"],
        json!("sk-server-test-key-0123")
    );
}
