//! `POST /api/messages/{id}/translate`: the request carries the template with the language and
//! the text, the answer is stored on the message beside the untouched original, and a template
//! without its placeholders, a missing message and an empty one are refused with nothing stored.

use crate::support::{TestServer, client, json_of, make_chat};
use serde_json::json;
use tavo_model::{ChatId, Message, MessageId, Role};
use tavo_testkit::{MockProvider, Script, Turn, Wire};

/// The default connection `mock`, to `mock`.
async fn connect(s: &TestServer, mock: &MockProvider) {
    let r = client()
        .post(s.url("/api/connections"))
        .json(&json!({"name": "mock", "source": "custom", "protocol": "openai-chat",
                      "baseUrl": mock.base_url(Wire::OpenaiChat), "model": "mock-model", "apiKey": "sk-mock-0123456789abcdef"}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn a_message_is_translated_and_the_translation_kept_beside_it() {
    let s = TestServer::start().await;
    let mock = MockProvider::start(Script::new(vec![Turn::text("Bonjour, voyageur.")]))
        .await
        .expect("mock");
    connect(&s, &mock).await;
    let chat = make_chat(&s.store, "translate");
    let id = s
        .store
        .message_append(
            ChatId(chat),
            &Message::new(Role::Assistant, "Hello, {{user}} traveller."),
        )
        .expect("append");
    let empty = s
        .store
        .message_append(ChatId(chat), &Message::new(Role::User, "  "))
        .expect("append");

    let url = |m: i64| s.url(&format!("/api/messages/{m}/translate"));
    let (st, t) = json_of(
        client()
            .post(url(id.0))
            .json(&json!({"language": "French"}))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(st, 200, "{t}");
    assert_eq!(
        (
            t["language"].clone(),
            t["text"].clone(),
            t["connection"].clone()
        ),
        (json!("French"), json!("Bonjour, voyageur."), json!("mock"))
    );
    let sent = mock.requests()[0].body["messages"][0]["content"].to_string();
    assert!(
        sent.contains("into French") && sent.contains("Hello, {{user}} traveller."),
        "{sent}"
    );
    let stored = s
        .store
        .message_get(MessageId(id.0))
        .expect("read")
        .expect("message");
    assert_eq!(
        stored.content, "Hello, {{user}} traveller.",
        "the original is untouched"
    );
    assert_eq!(stored.extra["translation"]["text"], "Bonjour, voyageur.");
    assert_eq!(stored.extra["translation"]["language"], "French");

    let (st, e) = json_of(
        client()
            .post(url(9999))
            .json(&json!({}))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(
        (st, e["error"]["code"].clone()),
        (404, json!("resource_not_found"))
    );
    let (st, _) = json_of(
        client()
            .post(url(empty.0))
            .json(&json!({}))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(st, 400);
    s.store
        .setting_set("translation.prompt", &json!("Translate this."))
        .expect("setting");
    let (st, e) = json_of(
        client()
            .post(url(id.0))
            .json(&json!({}))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(st, 400, "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("{{content}}"),
        "{e}"
    );
    assert_eq!(
        mock.requests().len(),
        1,
        "a refused translation sends nothing"
    );
}

#[tokio::test]
async fn the_translation_prompt_is_a_template_and_the_message_is_not() {
    let s = TestServer::start().await;
    let mock = MockProvider::start(Script::new(vec![
        Turn::text("Salut."),
        Turn::text("Salut encore."),
    ]))
    .await
    .expect("mock");
    connect(&s, &mock).await;
    let chat = make_chat(&s.store, "templated");
    s.store
        .var_set(tavo_store::VarScope::Chat(chat), "tone", &json!("warmly"))
        .expect("var");
    let id = s
        .store
        .message_append(
            ChatId(chat),
            &Message::new(Role::Assistant, "<%= 6 * 7 %> and {{getvar::tone}}"),
        )
        .expect("append");
    s.store
        .setting_set(
            "translation.prompt",
            &json!("<%- getvar('tone') %> <% if (true) { %>into {{language}}<% } %> ({{random::only}}): {{content}}"),
        )
        .expect("setting");
    let url = s.url(&format!("/api/messages/{}/translate", id.0));
    let send = || async {
        json_of(
            client()
                .post(&url)
                .json(&json!({"language": "French"}))
                .send()
                .await
                .expect("send"),
        )
        .await
    };
    let (st, t) = send().await;
    assert_eq!(st, 200, "{t}");
    let sent = mock.requests()[0].body["messages"][0]["content"].clone();
    assert_eq!(
        sent,
        json!("warmly into French (only): <%= 6 * 7 %> and {{getvar::tone}}"),
        "EJS and macros in the template, the message's text as written"
    );
    // The EJS switch off: the template's tags stay as written, macros still expand.
    s.store
        .setting_set("ejs.enabled", &json!(false))
        .expect("setting");
    let (st, t) = send().await;
    assert_eq!(st, 200, "{t}");
    let sent = mock.requests()[1].body["messages"][0]["content"].to_string();
    assert!(sent.contains("<%- getvar('tone') %>"), "{sent}");
}
