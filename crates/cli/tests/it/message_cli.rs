//! `tavo message append|edit|hide|unhide|delete`: the shared message operations, with the
//! chat's regex rules by timing (receive on append, editAndReceive on edit).

use std::path::Path;

use crate::support::{ok, tavo};
use serde_json::{Value, json};

fn messages(data: &Path, chat: &str) -> Vec<Value> {
    let out = ok(tavo(data, &["message", "list", "--chat", chat, "--json"]));
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

#[test]
fn append_edit_hide_and_delete_share_the_message_operations() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let data = dir.path().join("data");
    let card = dir.path().join("card.json");
    let body = json!({"spec": "chara_card_v2", "spec_version": "2.0",
        "data": {"name": "Bot", "description": "d", "first_mes": "Hello."}});
    std::fs::write(&card, body.to_string()).unwrap_or_else(|e| panic!("{e}"));
    ok(tavo(&data, &["import", &card.to_string_lossy()]));
    // SillyTavern scripts: a plain one (receive) and one with runOnEdit (editAndReceive).
    let regex = dir.path().join("regex.json");
    let scripts = json!([
        {"scriptName": "cat", "findRegex": "/cat/g", "replaceString": "CAT", "placement": [1, 2],
         "disabled": false, "markdownOnly": false, "promptOnly": false, "runOnEdit": false, "substituteRegex": 0},
        {"scriptName": "dog", "findRegex": "/dog/g", "replaceString": "DOG", "placement": [1, 2],
         "disabled": false, "markdownOnly": false, "promptOnly": false, "runOnEdit": true, "substituteRegex": 0}
    ]);
    std::fs::write(&regex, scripts.to_string()).unwrap_or_else(|e| panic!("{e}"));
    ok(tavo(&data, &["import", &regex.to_string_lossy()]));
    let chat = ok(tavo(
        &data,
        &[
            "chat",
            "create",
            "--character",
            "1",
            "--regex",
            "1",
            "--no-greeting",
        ],
    ));

    let id = ok(tavo(
        &data,
        &[
            "message",
            "append",
            "--chat",
            &chat,
            "--role",
            "user",
            "--content",
            "cat dog",
        ],
    ));
    assert_eq!(messages(&data, &chat)[0]["content"], json!("CAT DOG"));

    let edited = ok(tavo(
        &data,
        &[
            "message",
            "edit",
            "--chat",
            &chat,
            "--id",
            &id,
            "--content",
            "cat dog",
        ],
    ));
    let edited: Value = serde_json::from_str(&edited).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        edited["content"],
        json!("cat DOG"),
        "only runOnEdit runs on edit"
    );
    assert_eq!(messages(&data, &chat)[0]["content"], json!("cat DOG"));

    ok(tavo(
        &data,
        &["message", "hide", "--chat", &chat, "--id", &id],
    ));
    assert_eq!(messages(&data, &chat)[0]["hidden"], json!(true));
    ok(tavo(
        &data,
        &["message", "unhide", "--chat", &chat, "--id", &id],
    ));
    assert_eq!(messages(&data, &chat)[0]["hidden"], json!(false));

    // A message of another chat is not found through this one.
    let other = ok(tavo(
        &data,
        &["chat", "create", "--character", "1", "--no-greeting"],
    ));
    let out = tavo(&data, &["message", "delete", "--chat", &other, "--id", &id]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&format!("message {id} does not exist")),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    ok(tavo(
        &data,
        &["message", "delete", "--chat", &chat, "--id", &id],
    ));
    assert!(messages(&data, &chat).is_empty());
}
