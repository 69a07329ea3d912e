//! Image sending (Tavo §14.4): with `imageSending.enabled`, a reply first has the image of a
//! recent user message described by the image-description connection — one request carrying
//! the description prompt and the image, in each protocol's own image shape — stores the
//! description on the message, and sends the injection prompt with it in the reply's prompt.
//! Off, nothing is described and the reply's requests are the same as ever.

use crate::support::{self, lab};
use serde_json::{Value, json};
use tavo_engine::{ReplyRequest, ReplyStatus};
use tavo_model::{ChatId, Message, MessageId, Role};
use tavo_testkit::{Script, Turn, Wire};
use tavo_tools::Services;

fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

/// A 1×1 PNG as SillyTavern stores a sent image: a data URL in `extra.image`.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

fn image_message(store: &tavo_store::Store, chat: ChatId) -> MessageId {
    let mut m = Message::new(Role::User, "Look at this.");
    m.extra.insert(
        "extra".into(),
        json!({"image": format!("data:image/png;base64,{PNG}")}),
    );
    ok(store.message_append(chat, &m))
}

/// Where each protocol carries an image, and the base64 in it.
fn image_in(wire: Wire, body: &Value) -> bool {
    let text = body.to_string();
    let shape = match wire {
        Wire::OpenaiChat => text.contains("\"image_url\""),
        Wire::OpenaiResponses => text.contains("\"input_image\""),
        Wire::Anthropic => text.contains("\"type\":\"image\""),
        Wire::Gemini => text.contains("inline_data") || text.contains("inlineData"),
    };
    shape && text.contains(PNG)
}

#[tokio::test]
async fn a_reply_describes_a_sent_image_first_and_carries_the_description() {
    for wire in [
        Wire::OpenaiChat,
        Wire::OpenaiResponses,
        Wire::Anthropic,
        Wire::Gemini,
    ] {
        let lab = lab(
            wire,
            Script::new(vec![
                Turn::text("A single red pixel."),
                Turn::text("A tiny picture!"),
                Turn::text("Still tiny."),
            ]),
            &[("imageSending.enabled", json!(true))],
        )
        .await;
        let image = image_message(&lab.store, lab.chat);
        let engine = lab.engine(Services::default(), None);
        let reply = ok(engine.start(ReplyRequest::normal(lab.chat, "What do you see?")));
        assert_eq!(reply.wait().await, ReplyStatus::Finished, "{wire:?}");

        let requests = lab.mock.requests();
        assert_eq!(
            requests.len(),
            2,
            "{wire:?}: the description, then the reply"
        );
        assert!(
            image_in(wire, &requests[0].body),
            "{wire:?}: {}",
            requests[0].body
        );
        assert!(
            requests[0].body.to_string().contains("Describe this image"),
            "{wire:?}"
        );
        assert!(
            !image_in(wire, &requests[1].body),
            "the reply sends the text, not the image"
        );
        assert!(
            requests[1]
                .body
                .to_string()
                .contains("Look at this.\\n[发送了一张图片：A single red pixel.]"),
            "{wire:?}: {}",
            requests[1].body
        );
        let stored = ok(lab.store.message_get(image));
        let d = stored
            .map(|m| m.extra["imageDescription"].clone())
            .unwrap_or_default();
        assert_eq!(d["text"], "A single red pixel.", "{wire:?}");
        assert_eq!(d["connection"], "mock");
        assert_eq!(
            stored_content(&lab, image),
            "Look at this.",
            "the stored text never changes"
        );

        // Described once: the next reply asks nothing more.
        let again = ok(engine.start(ReplyRequest::normal(lab.chat, "And now?")));
        assert_eq!(again.wait().await, ReplyStatus::Finished);
        assert_eq!(lab.mock.requests().len(), 3, "{wire:?}");
    }
}

fn stored_content(lab: &support::Lab, id: MessageId) -> String {
    ok(lab.store.message_get(id))
        .map(|m| m.content)
        .unwrap_or_default()
}

#[tokio::test]
async fn off_nothing_is_described_and_a_failed_description_is_only_a_warning() {
    // Off (the default): one request, the reply's, and no description.
    let lab = lab(Wire::OpenaiChat, Script::new(vec![Turn::text("Hi.")]), &[]).await;
    let image = image_message(&lab.store, lab.chat);
    let engine = lab.engine(Services::default(), None);
    let reply = ok(engine.start(ReplyRequest::normal(lab.chat, "See?")));
    assert_eq!(reply.wait().await, ReplyStatus::Finished);
    assert_eq!(lab.mock.requests().len(), 1);
    let stored = ok(lab.store.message_get(image));
    assert!(stored.is_some_and(|m| !m.extra.contains_key("imageDescription")));

    // On, but the image is a file that does not exist: a warning, and the reply goes on.
    let lab = lab_with_missing_file().await;
    let engine = lab.engine(Services::default(), None);
    let reply = ok(engine.start(ReplyRequest::normal(lab.chat, "See?")));
    assert_eq!(reply.wait().await, ReplyStatus::Finished);
    assert_eq!(lab.mock.requests().len(), 1, "only the reply");
    let events = format!("{:?}", reply.events_since(0));
    assert!(
        events.contains("was not described") && events.contains("gone.png"),
        "{events}"
    );

    // The explicit door names what is wrong and stores nothing.
    let err = engine
        .describe_image(MessageId(999), None)
        .await
        .err()
        .map(|e| e.code());
    assert_eq!(err, Some("resource_not_found"));
}

async fn lab_with_missing_file() -> support::Lab {
    let lab = lab(
        Wire::OpenaiChat,
        Script::new(vec![Turn::text("Hi.")]),
        &[("imageSending.enabled", json!(true))],
    )
    .await;
    let mut m = Message::new(Role::User, "Look.");
    m.extra
        .insert("extra".into(), json!({"image": "files/chat/gone.png"}));
    ok(lab.store.message_append(lab.chat, &m));
    lab
}

#[tokio::test]
async fn a_message_sent_with_an_image_file_keeps_it_and_bad_images_store_nothing() {
    use base64::Engine as _;
    use tavo_store::FileScope;
    let lab = lab(
        Wire::OpenaiChat,
        Script::new(vec![Turn::text("A red pixel."), Turn::text("Nice.")]),
        &[("imageSending.enabled", json!(true))],
    )
    .await;
    let png = ok(base64::engine::general_purpose::STANDARD.decode(PNG));
    ok(lab
        .store
        .files()
        .save(FileScope::Chat(lab.chat.get()), "dot.png", &png));
    ok(lab
        .store
        .files()
        .save(FileScope::Chat(lab.chat.get()), "notes.txt", b"hello"));
    let engine = lab.engine(Services::default(), None);
    let before = ok(lab.store.message_count(lab.chat));
    let with = |image: &str, text: Option<&str>| {
        let message = tavo_engine::UserMessage::new(text.unwrap_or(""), Some(image.to_owned()))
            .unwrap_or_else(|e| panic!("{e}"));
        ReplyRequest::new(
            lab.chat,
            tavo_engine::ReplyKind::Normal {
                message: Some(message),
                speaker: None,
            },
        )
    };

    // Refused, naming the field, with nothing stored and nothing sent.
    for (image, code) in [
        ("data:image/png;base64,AAAA", "invalid_arguments"),
        ("files/chat/gone.png", "resource_not_found"),
        ("files/chat/notes.txt", "invalid_arguments"),
        ("/etc/passwd", "invalid_arguments"),
    ] {
        let err = engine.start(with(image, Some("See?"))).err();
        let Some(tavo_engine::EngineError::Operation(e)) = err else {
            panic!("{image}: {err:?}");
        };
        assert_eq!(e.code.as_str(), code, "{image}: {e:?}");
        if code == "invalid_arguments" {
            assert_eq!(
                e.details.as_ref().map(|d| d["path"].clone()),
                Some(json!("image")),
                "{image}"
            );
        }
    }
    assert_eq!(ok(lab.store.message_count(lab.chat)), before);
    assert!(lab.mock.requests().is_empty());

    // A file of the chat, and no words: the message keeps it and the reply describes it.
    let reply = ok(engine.start(with("files/chat/dot.png", None)));
    assert_eq!(reply.wait().await, ReplyStatus::Finished);
    let requests = lab.mock.requests();
    assert_eq!(requests.len(), 2);
    assert!(image_in(Wire::OpenaiChat, &requests[0].body));
    assert!(requests[1].body.to_string().contains("A red pixel."));
    let last = ok(lab.store.messages_last(lab.chat, 2));
    let sent = &last[0];
    assert_eq!(sent.role, Role::User);
    assert_eq!(sent.content, "");
    assert_eq!(sent.extra["extra"]["image"], "files/chat/dot.png");
    assert!(sent.extra.contains_key("imageDescription"));
}
