//! Image generation at the HTTP door (Tavo §14.3): `POST /api/images/generate` (data URL, or a
//! stored file with `saveAs`), `/imagine` from the composer's send route, the model's
//! `tavo_image_generate` through `POST /api/ops/…`, the chat's image connection binding, the
//! image connection CRUD with keys write-only, and every failure mapped (404 no connection,
//! 403 refusals, 502 provider failures) without the key or the provider's body.

use crate::support::{TestServer, client, json_of, make_chat, post};
use serde_json::{Value, json};
use tavo_model::{Chat, ChatId, Role};
use tavo_store::FileScope;
use tavo_testkit::image::{MockImage, PNG_BASE64, png};

const KEY: &str = "sk-image-0123456789abcdef";

async fn add_openai(s: &TestServer, mock: &MockImage, name: &str, key: &str) -> (u16, Value) {
    post(
        s,
        "/api/images/connections",
        json!({"name": name, "platform": "openai", "baseUrl": format!("{}/v1", mock.base()),
               "model": "dall-e-3", "apiKey": key}),
    )
    .await
}

#[tokio::test]
async fn generate_answers_a_data_url_or_stores_with_save_as() {
    let s = TestServer::start().await;
    let mock = MockImage::start().await.expect("mock");
    let chat = make_chat(&s.store, "images");

    let (st, e) = post(&s, "/api/images/generate", json!({"prompt": "a cat"})).await;
    assert_eq!(
        (st, e["error"]["code"].clone()),
        (404, json!("resource_not_found")),
        "{e}"
    );

    let (st, book) = add_openai(&s, &mock, "main", KEY).await;
    assert_eq!(st, 200, "{book}");
    assert_eq!(book["default"], "main");
    assert!(!book.to_string().contains(KEY), "the key is masked: {book}");
    assert_eq!(book["connections"][0]["hasKey"], true);

    let (st, img) = post(
        &s,
        "/api/images/generate",
        json!({"prompt": "a cat", "chatId": chat, "options": {"size": "512x512"}}),
    )
    .await;
    assert_eq!(st, 200, "{img}");
    assert_eq!(img["mimeType"], "image/png");
    assert_eq!(
        img["dataUrl"],
        format!("data:image/png;base64,{PNG_BASE64}")
    );
    let files = s
        .store
        .files()
        .list(FileScope::Chat(chat), 10, None)
        .expect("list");
    assert!(files.files.is_empty(), "nothing stored without saveAs");
    let sent = &mock.requests()[0];
    assert_eq!(sent.body["size"], "512x512");
    assert_eq!(sent.headers["authorization"], format!("Bearer {KEY}"));

    let (st, saved) = post(
        &s,
        "/api/images/generate",
        json!({"prompt": "a cat", "chatId": chat, "options": {"saveAs": "hero.png"}}),
    )
    .await;
    assert_eq!(st, 200, "{saved}");
    assert_eq!(
        saved,
        json!({"path": "files/chat/hero.png", "mimeType": "image/png", "size": png().len()})
    );
    let stored = s
        .store
        .files()
        .load(FileScope::Chat(chat), "hero.png")
        .expect("load");
    assert_eq!(stored, Some(png()));

    let (st, e) = post(
        &s,
        "/api/images/generate",
        json!({"prompt": "a cat", "options": {"saveAs": "../x.png"}}),
    )
    .await;
    assert_eq!(st, 400, "{e}");
    let (st, e) = post(
        &s,
        "/api/images/generate",
        json!({"prompt": "a cat", "options": {"size": "big"}}),
    )
    .await;
    assert_eq!(
        (st, e["error"]["code"].clone()),
        (400, json!("invalid_arguments")),
        "{e}"
    );
    let (st, _) = post(&s, "/api/images/generate", json!({"prompt": "  "})).await;
    assert_eq!(st, 400);
}

#[tokio::test]
async fn failures_are_403_404_502_without_the_key_or_the_provider_body() {
    let s = TestServer::start().await;
    let mock = MockImage::start().await.expect("mock");
    add_openai(&s, &mock, "bad", "bad-key").await;
    let (st, e) = post(&s, "/api/images/generate", json!({"prompt": "a cat"})).await;
    assert_eq!(
        (st, e["error"]["code"].clone()),
        (403, json!("permission_denied")),
        "{e}"
    );
    assert!(!e.to_string().contains("bad-key"), "{e}");

    add_openai(&s, &mock, "good", KEY).await;
    let make_default = client()
        .post(s.url("/api/images/connections/good/default"))
        .send()
        .await
        .expect("send");
    assert_eq!(make_default.status(), 200);
    for (prompt, status, code) in [
        ("FAIL 500", 502, "internal_error"),
        ("FAIL 429", 502, "internal_error"),
        ("FAIL 404", 404, "resource_not_found"),
        ("FAIL 403", 403, "permission_denied"),
        ("REFUSE it", 403, "permission_denied"),
    ] {
        let (st, e) = post(&s, "/api/images/generate", json!({"prompt": prompt})).await;
        assert_eq!(
            (st, e["error"]["code"].as_str()),
            (status, Some(code)),
            "{prompt}: {e}"
        );
        let text = e.to_string();
        assert!(
            !text.contains("/srv/provider") && !text.contains(KEY),
            "{prompt}: {text}"
        );
    }
    let (st, e) = post(
        &s,
        "/api/images/generate",
        json!({"prompt": "x", "connection": "nope"}),
    )
    .await;
    assert_eq!(
        (st, e["error"]["code"].clone()),
        (404, json!("resource_not_found")),
        "{e}"
    );
}

#[tokio::test]
async fn imagine_from_the_composer_writes_the_image_message() {
    let s = TestServer::start().await;
    let mock = MockImage::start().await.expect("mock");
    add_openai(&s, &mock, "main", KEY).await;
    let chat = make_chat(&s.store, "imagine");
    let (st, done) = post(
        &s,
        &format!("/api/chats/{chat}/messages"),
        json!({"content": "/imagine a cat on a windowsill"}),
    )
    .await;
    assert_eq!(st, 201, "{done}");
    assert_eq!(done["content"], "[生成了一张图片：a cat on a windowsill]");
    assert!(done.get("replyId").is_none(), "no reply starts");
    let path = done["path"].as_str().expect("path");
    assert!(
        path.starts_with("files/chat/image-") && path.ends_with(".png"),
        "{path}"
    );
    let messages = s.store.messages_last(ChatId(chat), 5).expect("messages");
    let m = messages.last().expect("the image message");
    assert_eq!(m.role, Role::Assistant);
    assert_eq!(m.content, "[生成了一张图片：a cat on a windowsill]");
    assert_eq!(m.extra["extra"]["image"], path);
    assert_eq!(m.extra["extra"]["title"], "a cat on a windowsill");
    assert_eq!(m.extra["extra"]["inline_image"], false);
    assert_eq!(mock.requests()[0].body["prompt"], "a cat on a windowsill");

    // The template is a setting, with the chat's macros.
    let (st, _) = json_of(
        client()
            .put(s.url("/api/settings/image.injectionTemplate"))
            .json(&json!({"value": "[{{char}} drew: {{prompt}}]"}))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(st, 200, "settings: {st}");
    let (st, done) = post(
        &s,
        &format!("/api/chats/{chat}/imagine"),
        json!({"prompt": "a dog"}),
    )
    .await;
    assert_eq!(st, 201, "{done}");
    let content = done["content"].as_str().unwrap_or_default();
    assert!(
        content.ends_with("drew: a dog]") && !content.contains("{{"),
        "{content}"
    );

    let (st, e) = post(
        &s,
        &format!("/api/chats/{chat}/messages"),
        json!({"content": "/imagine"}),
    )
    .await;
    assert_eq!(st, 400, "{e}");
}

#[tokio::test]
async fn the_tool_door_and_the_chat_binding() {
    let s = TestServer::start().await;
    let mock = MockImage::start().await.expect("mock");
    add_openai(&s, &mock, "main", KEY).await;
    let (st, _) = post(
        &s,
        "/api/images/connections",
        json!({"name": "gem", "platform": "gemini", "baseUrl": format!("{}/v1beta", mock.base()),
               "model": "gemini-2.5-flash-image", "apiKey": "g-key-0123456789abc"}),
    )
    .await;
    assert_eq!(st, 200);
    let chat = make_chat(&s.store, "bound");
    let mut c: Chat = s.store.get(ChatId(chat)).expect("read").expect("chat");
    c.extra.insert("image".into(), json!({"connection": "gem"}));
    s.store.update(&c, None).expect("bind");

    let (st, r) = post(
        &s,
        &format!("/api/ops/tavo_image_generate?chat={chat}"),
        json!({"prompt": "a fox", "options": {"aspectRatio": "16:9"}}),
    )
    .await;
    assert_eq!(st, 200, "{r}");
    assert_eq!(r["ok"], true);
    let path = r["result"]["path"].as_str().expect("stored");
    assert!(path.starts_with("files/chat/image-"), "{path}");
    let seen = mock.requests();
    let last = seen.last().expect("a request");
    assert!(
        last.path
            .ends_with("gemini-2.5-flash-image:generateContent"),
        "the chat's binding: {}",
        last.path
    );
    assert_eq!(
        last.body["generationConfig"]["imageConfig"]["aspectRatio"],
        "16:9"
    );

    let (st, r) = post(
        &s,
        &format!("/api/ops/tavo_image_generate?chat={chat}"),
        json!({"prompt": "a fox", "options": {"referenceImages": ["files/chat/missing.png"]}}),
    )
    .await;
    assert_eq!(
        (st, r["error"]["code"].clone()),
        (404, json!("resource_not_found")),
        "{r}"
    );
    let (st, r) = post(
        &s,
        &format!("/api/ops/tavo_image_generate?chat={chat}"),
        json!({"prompt": "same fox", "options": {"referenceImages": [path]}}),
    )
    .await;
    assert_eq!(st, 200, "{r}");
    let last = mock.requests().pop().expect("request");
    assert_eq!(
        last.body["contents"][0]["parts"][1]["inlineData"]["data"],
        PNG_BASE64
    );
}

#[tokio::test]
async fn image_connection_crud_keeps_keys_write_only() {
    let s = TestServer::start().await;
    let mock = MockImage::start().await.expect("mock");
    add_openai(&s, &mock, "a", KEY).await;
    let (st, e) = add_openai(&s, &mock, "a", KEY).await;
    assert_eq!(st, 409, "{e}");
    let (st, e) = post(
        &s,
        "/api/images/connections",
        json!({"name": "x", "platform": "midjourney", "model": "m"}),
    )
    .await;
    assert_eq!(
        (st, e["error"]["details"]["path"].clone()),
        (400, json!("platform")),
        "{e}"
    );
    let (st, e) = post(
        &s,
        "/api/images/connections",
        json!({"name": "x", "platform": "openai", "model": "m", "baseUrl": "ftp://x"}),
    )
    .await;
    assert_eq!(
        (st, e["error"]["details"]["path"].clone()),
        (400, json!("baseUrl")),
        "{e}"
    );

    let put = |name: &str, body: Value| {
        client()
            .put(s.url(&format!("/api/images/connections/{name}")))
            .json(&body)
            .send()
    };
    let (st, book) = json_of(
        put("a", json!({"name": "main", "model": "gpt-image-1"}))
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(st, 200, "{book}");
    assert_eq!(book["default"], "main", "the default follows the rename");
    assert_eq!(book["connections"][0]["model"], "gpt-image-1");
    assert_eq!(book["connections"][0]["hasKey"], true, "the key is kept");
    let (st, book) = json_of(put("main", json!({"apiKey": ""})).await.expect("send")).await;
    assert_eq!(
        (st, book["connections"][0]["hasKey"].clone()),
        (200, json!(false))
    );
    let (st, _) = json_of(put("zz", json!({})).await.expect("send")).await;
    assert_eq!(st, 404);

    let (st, list) = json_of(
        client()
            .get(s.url("/api/images/connections"))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(st, 200);
    assert_eq!(list["injectionTemplate"], "[生成了一张图片：{{prompt}}]");
    assert_eq!(list["platforms"].as_array().map(Vec::len), Some(4));
    let del = client()
        .delete(s.url("/api/images/connections/main"))
        .send()
        .await
        .expect("send");
    assert_eq!(del.status(), 200);
    let (_, list) = json_of(
        client()
            .get(s.url("/api/images/connections"))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(list["connections"], json!([]));
}
