//! The chat's `receive` regex rules on the messages a reply stores: the user's message the
//! reply starts with, and the reply's final text (the `finished` event carries it too);
//! streamed deltas stay as the model sent them.

use crate::support::{Answers, drive, final_status, lab};
use serde_json::json;
use tavo_engine::{EventKind, ReplyRequest, ReplyStatus};
use tavo_model::{RegexEntry, RegexGroup, RegexPlacement, RegexTiming, Role, Summary};
use tavo_testkit::{Script, Turn, Wire};
use tavo_tools::Services;

fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

fn rule(placement: RegexPlacement, timing: RegexTiming, find: &str, replace: &str) -> RegexEntry {
    RegexEntry {
        identifier: find.into(),
        name: find.into(),
        find_regex: find.into(),
        replace_string: replace.into(),
        placements: vec![placement],
        timing,
        enabled: true,
        ..RegexEntry::default()
    }
}

#[tokio::test]
async fn a_reply_stores_both_messages_through_the_receive_rules() {
    let script = Script::new(vec![Turn::text("I see a cat and a fox.")]);
    let lab = lab(Wire::OpenaiChat, script, &[]).await;
    let group = ok(lab.store.create(&RegexGroup {
        name: "rules".into(),
        entries: vec![
            rule(
                RegexPlacement::User,
                RegexTiming::Receive,
                "/hello/g",
                "HELLO",
            ),
            rule(
                RegexPlacement::Char,
                RegexTiming::Receive,
                "/cat/g",
                "{{char}}'s CAT",
            ),
            rule(RegexPlacement::Char, RegexTiming::Display, "/fox/g", "FOX"),
        ],
        ..RegexGroup::default()
    }));
    let mut chat = ok(lab.store.chat_get(lab.chat)).unwrap_or_else(|| panic!("chat"));
    chat.regexes.push(Summary {
        id: group,
        name: "rules".into(),
    });
    ok(lab.store.update(&chat, None));

    let engine = lab.engine(Services::default(), None);
    let handle = ok(engine.start(ReplyRequest::normal(lab.chat, "hello there")));
    let events = drive(&handle, &Answers::default()).await;
    let (status, text) = final_status(&events);
    assert_eq!(status, ReplyStatus::Finished, "{events:?}");
    assert_eq!(text, "I see a Bot's CAT and a fox.");
    let streamed: String = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(streamed, "I see a cat and a fox.");

    let messages = lab.messages();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0].role, Role::User);
    assert_eq!(messages[0].content, "HELLO there");
    assert_eq!(messages[1].content, "I see a Bot's CAT and a fox.");
    // The prompt carried the stored (rewritten) user message.
    let body = &lab.mock.requests()[0].body;
    let last = body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .unwrap_or_default();
    assert_eq!(last["content"], json!("HELLO there"), "{body}");
}
