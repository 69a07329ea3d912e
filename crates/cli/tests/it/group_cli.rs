//! Group chats as a user runs them: `tavo chat create … --reply-mode`, `tavo chat mute|unmute`,
//! `tavo chat update --reply-mode` and `tavo reply --chat ID [--speaker CID]` — the real binary
//! and the scripted mock provider on loopback.

use std::path::Path;

use crate::support::{json, ok, tavo};
use serde_json::{Value, json};
use tavo_testkit::{MockProvider, Script, Turn, Wire};

fn messages(data: &Path, chat: &str) -> Vec<Value> {
    json(tavo(data, &["message", "list", "--chat", chat, "--json"]))
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn speakers(msgs: &[Value]) -> Vec<i64> {
    msgs.iter()
        .filter(|m| m["role"] == "assistant")
        .filter_map(|m| m["characterId"].as_i64())
        .collect()
}

#[test]
fn a_group_chat_replies_by_mode_mutes_and_quick_speech() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let mock = rt
        .block_on(MockProvider::start(Script::new(
            ["ann one", "bo one", "ann two", "bo chosen", "designated cy"]
                .map(Turn::text)
                .to_vec(),
        )))
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let data = dir.path().join("data");
    for name in ["Ann", "Bo", "Cy"] {
        let card = dir.path().join(format!("{name}.json"));
        let body = json!({"spec": "chara_card_v2", "spec_version": "2.0",
            "data": {"name": name, "description": format!("{name} is here."),
                     "first_mes": format!("Hello, I am {name}.")}});
        std::fs::write(&card, body.to_string()).unwrap_or_else(|e| panic!("{e}"));
        ok(tavo(&data, &["import", &card.to_string_lossy()]));
    }
    ok(tavo(
        &data,
        &[
            "connection",
            "add",
            "mock",
            "--protocol",
            "openai-chat",
            "--base-url",
            &mock.base_url(Wire::OpenaiChat),
            "--model",
            "gpt-4o",
            "--api-key",
            "sk-cli-test-0123456789abcdef",
        ],
    ));
    let g = ok(tavo(
        &data,
        &[
            "chat",
            "create",
            "--character",
            "1",
            "--character",
            "2",
            "--reply-mode",
            "all",
        ],
    ));
    let chat = json(tavo(&data, &["show", "chat", &g, "--json"]));
    assert_eq!(chat["replyMode"], "all", "{chat}");
    // Every member greets a new group chat.
    let greeted = messages(&data, &g);
    assert_eq!(speakers(&greeted), [1, 2]);
    assert_eq!(greeted[1]["content"], "Hello, I am Bo.");

    // The acceptance check: one user message, one reply, one answer per member.
    ok(tavo(
        &data,
        &[
            "message",
            "append",
            "--chat",
            &g,
            "--role",
            "user",
            "--content",
            "hi both",
        ],
    ));
    let before = messages(&data, &g).len();
    let out = ok(tavo(&data, &["reply", "--chat", &g, "--json"]));
    let after = messages(&data, &g);
    assert_eq!(after.len() - before, 2);
    assert_eq!(speakers(&after[before..]), [1, 2]);
    let events: Vec<Value> = out
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let turns: Vec<(i64, String)> = events
        .iter()
        .filter(|e| e["type"] == "speaker")
        .map(|e| {
            (
                e["characterId"].as_i64().unwrap_or_default(),
                e["name"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert_eq!(turns, [(1, "Ann".to_owned()), (2, "Bo".to_owned())]);
    let last = events.last().cloned().unwrap_or_default();
    assert_eq!(last["type"], "finished");
    assert_eq!(last["text"], "ann one\n\nbo one");

    // Muted, Bo no longer answers…
    ok(tavo(&data, &["chat", "mute", &g, "--character", "2"]));
    let chat = json(tavo(&data, &["show", "chat", &g, "--json"]));
    assert_eq!(chat["mutedCharacterIds"], json!([2]));
    ok(tavo(&data, &["reply", "--chat", &g, "--message", "again"]));
    let now = messages(&data, &g);
    assert_eq!(speakers(&now[after.len()..]), [1]);
    // …unless chosen (quick group speech).
    let out = ok(tavo(
        &data,
        &["reply", "--chat", &g, "--message", "Bo?", "--speaker", "2"],
    ));
    assert_eq!(out, "bo chosen");
    assert_eq!(speakers(&messages(&data, &g)).last(), Some(&2));
    ok(tavo(&data, &["chat", "unmute", &g, "--character", "2"]));
    let chat = json(tavo(&data, &["show", "chat", &g, "--json"]));
    assert!(chat.get("mutedCharacterIds").is_none(), "{chat}");

    // Members and modes change with `chat update`; a non-member is refused with the members.
    ok(tavo(
        &data,
        &[
            "chat",
            "update",
            &g,
            "--character",
            "1",
            "--character",
            "2",
            "--character",
            "3",
            "--reply-mode",
            "designated",
        ],
    ));
    let count = messages(&data, &g).len();
    let out = tavo(&data, &["reply", "--chat", &g, "--message", "anyone?"]);
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("nobody was addressed"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        messages(&data, &g).len(),
        count + 1,
        "only the user's message"
    );
    ok(tavo(
        &data,
        &["reply", "--chat", &g, "--message", "@Cy hello"],
    ));
    assert_eq!(speakers(&messages(&data, &g)).last(), Some(&3));
    let refused = tavo(&data, &["chat", "mute", &g, "--character", "99"]);
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("not a member") && err.contains("3 (Cy)"),
        "{err}"
    );
    let refused = tavo(
        &data,
        &["reply", "--chat", &g, "--message", "x", "--speaker", "99"],
    );
    assert!(!refused.status.success());
    let bad = tavo(&data, &["chat", "update", &g, "--reply-mode", "pooled"]);
    assert!(!bad.status.success());
    assert_eq!(mock.requests().len(), 5);
}
