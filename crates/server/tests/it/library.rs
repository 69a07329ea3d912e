//! Import/export, avatars, assets with revisions, connections, message pages, library events.

use crate::support::{
    self, TestServer, bare_client, client, corpus, json_of, make_chat, multipart,
};
use serde_json::{Value, json};
use tavo_model::{ChatId, Message, Role};

#[tokio::test]
async fn import_gives_one_result_per_file_and_export_round_trips() {
    let s = TestServer::start().await;
    let png = corpus("cards/st-default_Seraphina.png");
    let (ct, body) = multipart(
        &[("Seraphina.png", &png), ("broken.json", b"{\"nope\": ")],
        &[],
    );
    let r = client()
        .post(s.url("/api/import"))
        .header("content-type", ct)
        .body(body)
        .send()
        .await
        .expect("send");
    let (status, out) = json_of(r).await;
    assert_eq!(status, 200, "{out}");
    assert_eq!(
        (out["imported"].clone(), out["failed"].clone()),
        (json!(1), json!(1))
    );
    let first = &out["results"][0];
    assert_eq!(first["ok"], true);
    assert_eq!(first["kind"], "character");
    assert_eq!(first["file"], "Seraphina.png");
    let id = first["characterId"].as_i64().expect("characterId");
    let second = &out["results"][1];
    assert_eq!(second["ok"], false);
    assert_eq!(second["file"], "broken.json");
    assert!(
        second["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("broken.json"))
    );

    let avatar = bare_client()
        .get(s.url(&format!("/api/characters/{id}/avatar")))
        .send()
        .await
        .expect("send");
    assert_eq!(avatar.status(), 200);
    assert_eq!(
        avatar.headers().get("content-type").map(|v| v.as_bytes()),
        Some(&b"image/png"[..])
    );

    let exported = bare_client()
        .get(s.url(&format!("/api/export/character/{id}?format=png")))
        .send()
        .await
        .expect("send");
    assert_eq!(exported.status(), 200);
    assert_eq!(
        exported.headers().get("content-type").map(|v| v.as_bytes()),
        Some(&b"image/png"[..])
    );
    let disposition = exported
        .headers()
        .get("content-disposition")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert!(
        disposition.starts_with("attachment;") && disposition.contains(".png"),
        "{disposition}"
    );
    let bytes = exported.bytes().await.expect("bytes");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    // What was exported imports again.
    let (ct, body) = multipart(&[("again.png", &bytes)], &[("kind", "character")]);
    let (status, out) = json_of(
        client()
            .post(s.url("/api/import"))
            .header("content-type", ct)
            .body(body)
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!((status, out["imported"].clone()), (200, json!(1)), "{out}");

    let (status, err) = json_of(
        bare_client()
            .get(s.url(&format!("/api/export/character/{id}?format=jsonl")))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        err["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("png"))
    );
    let (status, _) = json_of(
        bare_client()
            .get(s.url("/api/export/character/99999"))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn uploads_are_limited_per_file_and_per_request() {
    let s = TestServer::start_with(|c| {
        c.limits.upload_file = 1000;
        c.limits.upload_total = 4000;
    })
    .await;
    let big = vec![b'x'; 2000];
    let (ct, body) = multipart(&[("big.json", &big)], &[]);
    let (status, out) = json_of(
        client()
            .post(s.url("/api/import"))
            .header("content-type", ct)
            .body(body)
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(out["results"][0]["error"]["code"], "payload_too_large");
    let huge = vec![b'x'; 6000];
    let (ct, body) = multipart(&[("huge.json", &huge)], &[]);
    let r = client()
        .post(s.url("/api/import"))
        .header("content-type", ct)
        .body(body)
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 413);
    // Nothing is left in the spool folder.
    let spool = s.dir.path().join("tmp/uploads");
    let left = std::fs::read_dir(&spool).map(|d| d.count()).unwrap_or(0);
    assert_eq!(left, 0);
}

#[tokio::test]
async fn a_second_write_at_the_same_revision_is_a_conflict() {
    let s = TestServer::start().await;
    let card = corpus("cards/serioustavern-selene-v2.json");
    let (ct, body) = multipart(&[("selene.json", &card)], &[]);
    let (_, out) = json_of(
        client()
            .post(s.url("/api/import"))
            .header("content-type", ct)
            .body(body)
            .send()
            .await
            .expect("send"),
    )
    .await;
    let id = out["results"][0]["characterId"].as_i64().expect("id");
    let url = s.url(&format!("/api/library/character/{id}"));
    let (status, mut asset) = json_of(bare_client().get(&url).send().await.expect("send")).await;
    assert_eq!(status, 200);
    let revision = asset["revision"].as_u64().expect("revision");
    // Two clients read the same revision; the first write wins, the second is refused.
    asset["description"] = json!("first writer");
    let (status, written) =
        json_of(client().put(&url).json(&asset).send().await.expect("send")).await;
    assert_eq!(status, 200, "{written}");
    assert_eq!(written["revision"], revision + 1);
    asset["description"] = json!("second writer");
    let (status, err) = json_of(client().put(&url).json(&asset).send().await.expect("send")).await;
    assert_eq!(status, 409, "{err}");
    assert_eq!(err["error"]["code"], "conflict");
    assert_eq!(err["error"]["details"]["revision"], revision + 1);
    let (_, now) = json_of(bare_client().get(&url).send().await.expect("send")).await;
    assert_eq!(now["description"], "first writer");
    // No revision at all is refused too.
    asset.as_object_mut().map(|m| m.shift_remove("revision"));
    let r = client().put(&url).json(&asset).send().await.expect("send");
    assert_eq!(r.status(), 428);
    // An invalid asset names its field.
    let (_, mut fresh) = json_of(bare_client().get(&url).send().await.expect("send")).await;
    fresh["name"] = json!("   ");
    let (status, err) = json_of(client().put(&url).json(&fresh).send().await.expect("send")).await;
    assert_eq!(status, 400);
    assert!(
        err["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("name")),
        "{err}"
    );
}

#[tokio::test]
async fn api_keys_are_write_only() {
    let s = TestServer::start().await;
    let c = client();
    let key = "sk-test-0123456789abcdefSECRET";
    let r = c
        .post(s.url("/api/connections"))
        .json(
            &json!({"name": "mock", "source": "custom", "protocol": "openai-chat",
                      "baseUrl": "http://127.0.0.1:9/v1", "model": "m", "apiKey": key}),
        )
        .send()
        .await
        .expect("send");
    let (status, book) = json_of(r).await;
    assert_eq!(status, 200, "{book}");
    assert!(!book.to_string().contains("SECRET"));
    assert_eq!(book["default"], "mock");
    let (_, listed) = json_of(
        bare_client()
            .get(s.url("/api/connections"))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert!(!listed.to_string().contains("SECRET"));
    assert!(
        listed["connections"][0]["apiKey"]
            .as_str()
            .is_some_and(|k| k.contains('…'))
    );
    // Replace without apiKey keeps the stored key.
    let r = c
        .put(s.url("/api/connections/mock"))
        .json(
            &json!({"name": "mock", "source": "custom", "protocol": "openai-chat",
                      "baseUrl": "http://127.0.0.1:9/v1", "model": "m2"}),
        )
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    let stored = s
        .store
        .setting_get("llm.connections")
        .expect("read")
        .expect("book");
    assert_eq!(stored["connections"][0]["apiKey"], key);
    assert_eq!(stored["connections"][0]["model"], "m2");
    // A duplicate name is a conflict; an invalid URL names the field.
    let (status, _) = json_of(
        c.post(s.url("/api/connections"))
            .json(&json!({"name": "mock", "source": "custom", "protocol": "openai-chat", "baseUrl": "http://x/v1", "model": "m"}))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(status, 409);
    let (status, err) = json_of(
        c.post(s.url("/api/connections"))
            .json(&json!({"name": "bad", "source": "custom", "protocol": "openai-chat", "baseUrl": "ftp://x", "model": "m"}))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        err["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("baseUrl"))
    );
    let r = c
        .delete(s.url("/api/connections/mock"))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn message_pages_start_at_the_latest() {
    let s = TestServer::start().await;
    let chat = make_chat(&s.store, "paged");
    let messages: Vec<Message> = (0..120)
        .map(|i| Message::new(Role::User, format!("m{i}")))
        .collect();
    s.store
        .messages_append(ChatId(chat), &messages)
        .expect("append");
    let (status, page) = json_of(
        bare_client()
            .get(s.url(&format!("/api/chats/{chat}/messages?limit=50")))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(status, 200);
    let contents: Vec<&str> = page["messages"]
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(contents.len(), 50);
    assert_eq!((contents[0], contents[49]), ("m70", "m119"));
    assert_eq!(
        (page["total"].clone(), page["hasMore"].clone()),
        (json!(120), json!(true))
    );
    let (_, older) = json_of(
        bare_client()
            .get(s.url(&format!("/api/chats/{chat}/messages?limit=100&before=70")))
            .send()
            .await
            .expect("send"),
    )
    .await;
    let first: Vec<&Value> = older["messages"]
        .as_array()
        .expect("array")
        .iter()
        .collect();
    assert_eq!(
        (first.len(), first[0]["content"].as_str()),
        (70, Some("m0"))
    );
    assert_eq!(older["hasMore"], false);
    let (status, _) = json_of(
        bare_client()
            .get(s.url("/api/chats/999/messages"))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(status, 404);
    let (status, _) = json_of(
        bare_client()
            .get(s.url(&format!("/api/chats/{chat}/messages?limit=0")))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn library_changes_reach_the_global_stream() {
    let s = TestServer::start().await;
    let events = bare_client()
        .get(s.url("/api/events"))
        .send()
        .await
        .expect("send");
    let card = corpus("cards/serioustavern-selene-v2.json");
    let (ct, body) = multipart(&[("selene.json", &card)], &[]);
    let r = client()
        .post(s.url("/api/import"))
        .header("content-type", ct)
        .body(body)
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    let got = support::read_sse(events, std::time::Duration::from_secs(5), |e| {
        e.event == "library"
    })
    .await;
    let ev = got.last().expect("a library event");
    assert_eq!(ev.event, "library");
    assert_eq!(ev.json()["kind"], "character");
    assert_eq!(ev.json()["action"], "imported");
    assert_eq!(ev.id.as_deref(), Some("1"));
    // Resume with Last-Event-ID: 0 replays it.
    let again = bare_client()
        .get(s.url("/api/events"))
        .header("last-event-id", "0")
        .send()
        .await
        .expect("send");
    let got = support::read_sse(again, std::time::Duration::from_secs(5), |_| true).await;
    assert_eq!(got.first().map(|e| e.event.as_str()), Some("library"));
}

#[tokio::test]
async fn assets_are_created_validated_and_deleted() {
    let s = TestServer::start().await;
    let c = client();
    let (status, zed) = json_of(
        c.post(s.url("/api/library/character"))
            .json(&json!({"name": "Zed", "firstMes": "Yo"}))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(status, 201, "{zed}");
    let r = c
        .post(s.url("/api/library/chat"))
        .json(&json!({"name": "New chat", "id": 999, "revision": 7, "characters": [zed["id"]]}))
        .send()
        .await
        .expect("send");
    let (status, created) = json_of(r).await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_i64().expect("id");
    assert_ne!(id, 999, "a client cannot choose the id");
    let (_, chat) = json_of(
        bare_client()
            .get(s.url(&format!("/api/library/chat/{id}")))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(
        (chat["name"].clone(), chat["revision"].clone()),
        (json!("New chat"), json!(1))
    );
    let (status, err) = json_of(
        c.post(s.url("/api/library/persona"))
            .json(&json!({"name": "", "description": "d"}))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        err["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("name")),
        "{err}"
    );
    let (status, _) = json_of(
        c.post(s.url("/api/library/widgets"))
            .json(&json!({}))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(status, 404);
    let (_, list) = json_of(
        bare_client()
            .get(s.url("/api/library/chats"))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert!(
        list.as_array()
            .is_some_and(|l| l.iter().any(|c| c["id"] == id))
    );
    assert_eq!(
        c.delete(s.url(&format!("/api/library/chat/{id}")))
            .send()
            .await
            .expect("send")
            .status(),
        204
    );
    assert_eq!(
        c.delete(s.url(&format!("/api/library/chat/{id}")))
            .send()
            .await
            .expect("send")
            .status(),
        404
    );
}

/// `GET /api/library/lorebook/{id}/entries`: the book with one page of its entries, in book
/// order, its whole count and revision; pages put together are the whole book's entries.
#[tokio::test]
async fn lorebook_entries_come_in_pages_of_the_whole_book() {
    let s = TestServer::start().await;
    let entries: Vec<Value> = (0..23)
        .map(|i| json!({"identifier": format!("e{i}"), "name": format!("Entry {i}"), "content": format!("lore {i}"), "keywords": [format!("k{i}")]}))
        .collect();
    let (status, made) = json_of(
        client()
            .post(s.url("/api/library/lorebook"))
            .json(&json!({"name": "Paged", "entries": entries}))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(status, 201, "{made}");
    let id = made["id"].as_i64().expect("id");
    let (_, whole) = json_of(
        bare_client()
            .get(s.url(&format!("/api/library/lorebook/{id}")))
            .send()
            .await
            .expect("send"),
    )
    .await;
    let page = |offset: u64, limit: u64| {
        let url = s.url(&format!(
            "/api/library/lorebook/{id}/entries?offset={offset}&limit={limit}"
        ));
        async move { json_of(bare_client().get(url).send().await.expect("send")).await }
    };
    let mut joined = Vec::new();
    for offset in (0..30).step_by(10) {
        let (status, p) = page(offset, 10).await;
        assert_eq!(status, 200, "{p}");
        assert_eq!(p["entryCount"], 23);
        assert_eq!(p["offset"], offset);
        assert_eq!(p["revision"], whole["revision"]);
        assert_eq!(p["name"], "Paged");
        joined.extend(p["entries"].as_array().cloned().unwrap_or_default());
    }
    assert_eq!(Value::Array(joined), whole["entries"]);
    // Past the end: no entries, the count still there.
    let (status, p) = page(100, 10).await;
    assert_eq!(
        (status, p["entries"].clone(), p["entryCount"].clone()),
        (200, json!([]), json!(23))
    );
    // A bad limit names its field; a missing book is 404.
    for bad in [0, 5001] {
        let (status, err) = page(0, bad).await;
        assert_eq!(status, 400, "{err}");
        assert_eq!(err["error"]["code"], "invalid_arguments");
        assert_eq!(err["error"]["details"]["path"], "limit");
    }
    let r = bare_client()
        .get(s.url("/api/library/lorebook/999/entries"))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 404);
}
