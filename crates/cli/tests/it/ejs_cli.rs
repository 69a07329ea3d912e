//! EJS templates at the door (issue 19.1): a card's description is rendered before its macros
//! in `tavo prompt --json`, a failing field falls back whole with a diagnostic in `--explain`,
//! the greeting is a template too, a user message is not, `--record` keeps the template's
//! variable writes, and `ejs.enabled false` sends the tags as written.

use std::path::Path;

use crate::support::{json_of, ok, tavo};
use serde_json::json;

/// Imports a card and creates a chat with one user message; returns the chat id.
fn chat_with(dir: &Path, data: &Path, name: &str, description: &str) -> String {
    let card = dir.join(format!("{name}.json"));
    let body = json!({
        "spec": "chara_card_v3",
        "spec_version": "3.0",
        "data": {"name": name, "description": description,
                 "first_mes": format!("I am {name}, <%= 6 * 7 %>."), "extensions": {}}
    });
    std::fs::write(&card, body.to_string()).unwrap_or_else(|e| panic!("{e}"));
    let imported = json_of(&ok(tavo(
        data,
        &["import", &card.to_string_lossy(), "--json"],
    )));
    let first = imported
        .as_array()
        .and_then(|a| a.first())
        .unwrap_or(&imported);
    let id = first["characterId"].to_string();
    let chat = ok(tavo(data, &["chat", "create", "--character", &id]));
    let chat = chat.lines().last().unwrap_or_default().trim().to_owned();
    ok(tavo(
        data,
        &[
            "message",
            "append",
            "--chat",
            &chat,
            "--role",
            "user",
            "--content",
            "hi <%= 1 %>",
        ],
    ));
    chat
}

#[test]
fn cards_are_templates_before_macros_and_a_broken_one_falls_back_whole() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let data = dir.path().join("data");
    let a = chat_with(
        dir.path(),
        &data,
        "Ejsa",
        "Sum is <%= 40 + 2 %> for {{user}}.<% setvar('seen', 'yes') %>",
    );
    let text = ok(tavo(&data, &["prompt", "--chat", &a, "--json"]));
    assert!(text.contains("Sum is 42 for User."), "{text}");
    assert!(text.contains("I am Ejsa, 42."), "the greeting: {text}");
    assert!(
        text.contains("hi <%= 1 %>"),
        "a message is not a template: {text}"
    );
    assert_eq!(text.matches("<%").count(), 1, "{text}");
    // A preview writes nothing; --record keeps the template's write.
    assert_eq!(
        ok(tavo(&data, &["var", "get", "seen", "--chat", &a])),
        "null"
    );
    ok(tavo(&data, &["prompt", "--chat", &a, "--record"]));
    assert_eq!(
        ok(tavo(&data, &["var", "get", "seen", "--chat", &a])),
        "\"yes\""
    );

    let b = chat_with(
        dir.path(),
        &data,
        "Broken",
        "Kept <%= nosuchfn() %> as {{char}}.",
    );
    let text = ok(tavo(&data, &["prompt", "--chat", &b, "--json"]));
    assert!(text.contains("Kept <%= nosuchfn() %> as Broken."), "{text}");
    let explained = json_of(&ok(tavo(
        &data,
        &["prompt", "--chat", &b, "--json", "--explain"],
    )));
    let diagnostics = explained["diagnostics"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let d = diagnostics
        .iter()
        .find(|d| d["location"] == "character.description")
        .unwrap_or_else(|| panic!("{diagnostics:?}"));
    assert_eq!(d["text"], "<%= nosuchfn() %>");
    assert!(
        d["message"]
            .as_str()
            .is_some_and(|m| m.contains("nosuchfn")),
        "{d}"
    );
    let human = tavo(&data, &["prompt", "--chat", &b, "--explain"]);
    assert!(
        String::from_utf8_lossy(&human.stdout).contains("diagnostic character.description: EJS"),
        "{}",
        String::from_utf8_lossy(&human.stdout)
    );

    ok(tavo(&data, &["settings", "set", "ejs.enabled", "false"]));
    let text = ok(tavo(&data, &["prompt", "--chat", &a, "--json"]));
    assert!(text.contains("Sum is <%= 40 + 2 %> for User."), "{text}");
}
