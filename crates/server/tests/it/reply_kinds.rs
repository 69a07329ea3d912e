//! `POST /api/chats/{id}/replies` parses its wire body into the engine's reply kinds at the
//! door: a field the type does not take (`message` for anything but a normal reply, `speaker`
//! for anything but normal and regenerate) is refused with its path before anything starts,
//! where the engine used to ignore the message and refuse the speaker only at run time.

use crate::support::{TestServer, client, json_of, make_chat};
use serde_json::json;

#[tokio::test]
async fn a_field_the_reply_type_does_not_take_is_refused_with_its_path() {
    let s = TestServer::start().await;
    let chat = make_chat(&s.store, "kinds");
    for (body, path) in [
        (json!({"type": "swipe", "speaker": 1}), "speaker"),
        (json!({"type": "quiet", "speaker": 1}), "speaker"),
        (json!({"type": "continue", "message": "go on"}), "message"),
        (json!({"type": "impersonate", "message": "me"}), "message"),
    ] {
        let (status, answer) = json_of(
            client()
                .post(s.url(&format!("/api/chats/{chat}/replies")))
                .json(&body)
                .send()
                .await
                .expect("send"),
        )
        .await;
        assert_eq!(status, 400, "{body}: {answer}");
        assert_eq!(answer["error"]["code"], "invalid_arguments", "{answer}");
        assert_eq!(answer["error"]["details"]["path"], path, "{body}: {answer}");
    }
    // A normal reply's empty message is the composer's refusal, not a reply.
    let (status, answer) = json_of(
        client()
            .post(s.url(&format!("/api/chats/{chat}/replies")))
            .json(&json!({"type": "normal", "message": "  "}))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(
        answer["error"]["details"]["reason"], "empty_message",
        "{answer}"
    );
    let messages =
        tavo_tools::reads::last_messages(&s.store, tavo_model::ChatId(chat), 10).expect("messages");
    assert!(messages.is_empty(), "nothing was written: {messages:?}");
}
