//! `tavo tool list` and `tavo tool call` against a temporary library.

use std::process::Output;

use crate::support::tavo;
use serde_json::{Value, json};

fn envelope(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

#[test]
fn list_prints_every_tool_with_its_schema() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out = tavo(dir.path(), &["tool", "list", "--json"]);
    assert!(out.status.success());
    let list = envelope(&out);
    let names: Vec<&str> = list
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"tavo_file_save") && names.contains(&"tavo_theme_import"),
        "{names:?}"
    );
    assert!(list[0]["parameters"]["type"] == json!("object"));
    let human = tavo(dir.path(), &["tool", "list"]);
    assert!(
        String::from_utf8_lossy(&human.stdout)
            .lines()
            .any(|l| l.starts_with("tavo_ask_user"))
    );
}

#[test]
fn call_prints_the_envelope_and_exits_by_outcome() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let save = tavo(
        dir.path(),
        &[
            "tool",
            "call",
            "tavo_file_save",
            r#"{"name":"g.txt","content":"hi","options":{"scope":"global"}}"#,
        ],
    );
    assert!(
        save.status.success(),
        "{}",
        String::from_utf8_lossy(&save.stderr)
    );
    assert_eq!(
        envelope(&save)["result"]["path"],
        json!("files/global/g.txt")
    );
    let load = tavo(
        dir.path(),
        &[
            "tool",
            "call",
            "file.load",
            r#"{"name":"g.txt","options":{"scope":"global"}}"#,
        ],
    );
    assert_eq!(envelope(&load)["result"]["content"], json!("hi"));
    let bad = tavo(
        dir.path(),
        &[
            "tool",
            "call",
            "tavo_file_save",
            r#"{"name":"x.txt","content":"x","bogus":1}"#,
        ],
    );
    assert_eq!(bad.status.code(), Some(1));
    let env = envelope(&bad);
    assert_eq!(env["error"]["code"], json!("invalid_arguments"));
    assert_eq!(env["error"]["details"]["path"], json!("bogus"));
    let not_json = tavo(dir.path(), &["tool", "call", "tavo_file_save", "{oops"]);
    assert_eq!(not_json.status.code(), Some(2));
    let unknown = tavo(dir.path(), &["tool", "call", "tavo_nope", "{}"]);
    assert_eq!(envelope(&unknown)["error"]["code"], json!("unknown_tool"));
}

#[test]
fn confirmed_writes_need_yes() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let args = r#"{"character":{"name":"Alice","firstMes":"Hi."}}"#;
    let refused = tavo(dir.path(), &["tool", "call", "tavo_character_create", args]);
    assert_eq!(refused.status.code(), Some(1));
    assert_eq!(
        envelope(&refused)["error"]["code"],
        json!("permission_denied")
    );
    let listed = tavo(dir.path(), &["tool", "call", "tavo_character_all"]);
    assert_eq!(
        envelope(&listed)["result"],
        json!([]),
        "nothing was written"
    );
    let done = tavo(
        dir.path(),
        &["tool", "call", "tavo_character_create", args, "--yes"],
    );
    assert!(done.status.success());
    assert!(envelope(&done)["result"]["id"].as_i64().is_some());
}

#[test]
fn ask_user_without_a_terminal_is_cancelled() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out = tavo(
        dir.path(),
        &[
            "tool",
            "call",
            "tavo_ask_user",
            r#"{"question":"Which?","options":["a","b"]}"#,
        ],
    );
    assert_eq!(envelope(&out)["result"], json!({"status": "cancelled"}));
}
