//! `POST /api/messages/{id}/describe-image` (image sending): the image a message carries goes to
//! the connection with the description prompt, the description is stored beside the untouched
//! text, and a message without a readable image or a missing message is refused with nothing
//! stored.

use crate::support::{TestServer, client, json_of, make_chat};
use serde_json::json;
use tavo_model::{ChatId, Message, MessageId, Role};
use tavo_testkit::{MockProvider, Script, Turn, Wire};

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

#[tokio::test]
async fn a_message_image_is_described_and_the_description_kept_beside_it() {
    let s = TestServer::start().await;
    let mock = MockProvider::start(Script::new(vec![Turn::text("A red pixel.")]))
        .await
        .expect("mock");
    let r = client()
        .post(s.url("/api/connections"))
        .json(&json!({"name": "vision", "source": "custom", "protocol": "openai-chat",
                      "baseUrl": mock.base_url(Wire::OpenaiChat), "model": "mock-model", "apiKey": "sk-mock-0123456789abcdef"}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    let chat = make_chat(&s.store, "images");
    // A chat file, as a door that stores a sent image keeps it.
    let png = base64_decode(PNG);
    s.store
        .files()
        .save(tavo_store::FileScope::Chat(chat), "sent.png", &png)
        .expect("save");
    let mut m = Message::new(Role::User, "Look.");
    m.extra
        .insert("extra".into(), json!({"image": "files/chat/sent.png"}));
    let id = s.store.message_append(ChatId(chat), &m).expect("append");
    let plain = s
        .store
        .message_append(ChatId(chat), &Message::new(Role::User, "No picture."))
        .expect("append");

    let url = |m: i64| s.url(&format!("/api/messages/{m}/describe-image"));
    let (st, d) = json_of(client().post(url(id.0)).send().await.expect("send")).await;
    assert_eq!(st, 200, "{d}");
    assert_eq!(d["text"], "A red pixel.");
    assert_eq!(d["injected"], "[发送了一张图片：A red pixel.]");
    assert_eq!(d["connection"], "vision");
    let sent = mock.requests()[0].body["messages"][0]["content"].to_string();
    assert!(sent.contains("image_url") && sent.contains(PNG), "{sent}");
    let stored = s
        .store
        .message_get(MessageId(id.0))
        .expect("read")
        .expect("message");
    assert_eq!(stored.content, "Look.", "the text is untouched");
    assert_eq!(stored.extra["imageDescription"]["text"], "A red pixel.");

    let (st, e) = json_of(client().post(url(plain.0)).send().await.expect("send")).await;
    assert_eq!(
        (st, e["error"]["code"].clone()),
        (400, json!("invalid_arguments")),
        "{e}"
    );
    let (st, e) = json_of(client().post(url(9999)).send().await.expect("send")).await;
    assert_eq!(
        (st, e["error"]["code"].clone()),
        (404, json!("resource_not_found"))
    );
    let (st, e) = json_of(
        client()
            .post(url(id.0))
            .json(&json!({"connection": "nope"}))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(st, 400, "{e}");
    assert_eq!(mock.requests().len(), 1, "refusals ask nothing");
}

fn base64_decode(s: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(s)
        .expect("base64")
}
