//! `tavo memory` and `tavo backup` / `tavo restore` as a user runs them: the real binary, the
//! scripted mock provider on loopback, libraries in scratch directories.

use std::path::Path;

use crate::support::{json, ok, runtime, stderr, tavo};
use serde_json::json;
use tavo_testkit::{MockProvider, Script, Turn, Wire};

/// A library with a character, a chat of 12 messages and a connection to `mock`.
fn library(root: &Path, mock: &MockProvider) -> std::path::PathBuf {
    let card = root.join("card.json");
    let body = json!({"spec": "chara_card_v2", "spec_version": "2.0",
        "data": {"name": "Keeper", "description": "Keeps a lighthouse.", "first_mes": "Hello."}});
    std::fs::write(&card, body.to_string()).unwrap_or_else(|e| panic!("{e}"));
    let data = root.join("data");
    ok(tavo(&data, &["import", &card.to_string_lossy()]));
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
    ok(tavo(&data, &["chat", "create", "--character", "1"]));
    for i in 0..12 {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        ok(tavo(
            &data,
            &[
                "message",
                "append",
                "--chat",
                "1",
                "--role",
                role,
                "--content",
                &format!("Fact {i}: the cat is named Biscuit."),
            ],
        ));
    }
    data
}

#[test]
fn memory_is_shown_extracted_edited_and_injected() {
    let rt = runtime();
    let mock = rt
        .block_on(MockProvider::start(Script::new(vec![
            Turn::text("- The cat is named Biscuit.\n- The user lives in a lighthouse."),
            Turn::text(r#"["the cat is named biscuit"]"#),
        ])))
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let data = library(dir.path(), &mock);

    let shown = json(tavo(&data, &["memory", "show", "--chat", "1", "--json"]));
    assert_eq!(shown["enabled"], json!(false));
    assert_eq!(shown["memories"], json!([]));
    assert!(shown["id"].is_i64());

    let out = ok(tavo(&data, &["memory", "extract", "--chat", "1"]));
    assert_eq!(
        out,
        "+ The cat is named Biscuit.\n+ The user lives in a lighthouse."
    );
    let again = json(tavo(&data, &["memory", "extract", "--chat", "1", "--json"]));
    assert_eq!(again["added"], json!([]));
    assert_eq!(again["duplicates"], json!(1));

    ok(tavo(
        &data,
        &["memory", "append", "--chat", "1", "Prefers tea."],
    ));
    let set = json(tavo(
        &data,
        &["memory", "set", "--chat", "1", "--enable", "--json"],
    ));
    assert_eq!(set["enabled"], json!(true));
    assert_eq!(set["memories"].as_array().map(Vec::len), Some(3));
    let explain = ok(tavo(&data, &["prompt", "--chat", "1", "--explain"]));
    assert!(
        explain.contains("[Long-term memory]\n- The cat is named Biscuit."),
        "{explain}"
    );
    assert!(
        explain.contains("memory     3 long-term memories injected"),
        "{explain}"
    );

    let file = dir.path().join("list.txt");
    std::fs::write(&file, "[\"Only this\"]").unwrap_or_else(|e| panic!("{e}"));
    let replaced = json(tavo(
        &data,
        &[
            "memory",
            "set",
            "--chat",
            "1",
            "--file",
            &file.to_string_lossy(),
            "--json",
        ],
    ));
    assert_eq!(replaced["memories"], json!(["Only this"]));
    let empty = tavo(&data, &["memory", "append", "--chat", "1", " "]);
    assert_eq!(empty.status.code(), Some(1));
    let nothing = tavo(&data, &["memory", "set", "--chat", "1"]);
    assert_eq!(nothing.status.code(), Some(1));
    let missing = tavo(&data, &["memory", "extract", "--chat", "9"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(stderr(&missing).contains("chat 9 not found"));

    let prompt = ok(tavo(&data, &["memory", "prompt"]));
    assert!(prompt.contains("{{messages}}"));
    ok(tavo(
        &data,
        &["memory", "prompt", "--set", "Remember {{messages}}"],
    ));
    assert_eq!(
        ok(tavo(&data, &["memory", "prompt"])),
        "Remember {{messages}}"
    );
    ok(tavo(&data, &["memory", "prompt", "--reset"]));
    assert_eq!(ok(tavo(&data, &["memory", "prompt"])), prompt);
}

#[test]
fn a_backup_restores_into_an_empty_library_and_keys_need_the_passphrase() {
    let rt = runtime();
    let mock = rt
        .block_on(MockProvider::start(Script::new(vec![])))
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let data = library(dir.path(), &mock);
    let plain = dir.path().join("lib.tavobackup");
    let out = tavo(&data, &["backup", "-o", &plain.to_string_lossy()]);
    assert!(out.status.success(), "{out:?}");
    assert!(stderr(&out).contains("1 API keys left out"), "{out:?}");

    let fresh = dir.path().join("fresh");
    let restored = tavo(&fresh, &["restore", &plain.to_string_lossy()]);
    assert!(restored.status.success(), "{restored:?}");
    assert_eq!(
        json(tavo(&fresh, &["list", "chat", "--json"])),
        json(tavo(&data, &["list", "chat", "--json"]))
    );
    let messages = json(tavo(&fresh, &["message", "list", "--chat", "1", "--json"]));
    assert_eq!(messages.as_array().map(Vec::len), Some(13));
    let connections = ok(tavo(&fresh, &["connection", "list"]));
    assert!(connections.contains("mock"), "{connections}");

    // Not empty now: refused without --yes, nothing changed.
    ok(tavo(&fresh, &["chat", "create", "--character", "1"]));
    let refused = tavo(&fresh, &["restore", &plain.to_string_lossy()]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(stderr(&refused).contains("--yes"), "{refused:?}");
    let chats = json(tavo(&fresh, &["list", "chat", "--json"]));
    assert_eq!(chats.as_array().map(Vec::len), Some(2));

    // With keys.
    let pass = dir.path().join("pass.txt");
    std::fs::write(&pass, "a long passphrase\n").unwrap_or_else(|e| panic!("{e}"));
    let keyed = dir.path().join("keys.tavobackup");
    let needs = tavo(
        &data,
        &["backup", "-o", &keyed.to_string_lossy(), "--with-keys"],
    );
    assert_eq!(
        needs.status.code(),
        Some(2),
        "--with-keys needs a passphrase file"
    );
    ok(tavo(
        &data,
        &[
            "backup",
            "-o",
            &keyed.to_string_lossy(),
            "--with-keys",
            "--passphrase-file",
            &pass.to_string_lossy(),
        ],
    ));
    let manifest = json(tavo(
        &fresh,
        &["restore", &keyed.to_string_lossy(), "--check"],
    ));
    assert_eq!(manifest["withKeys"], json!(true));
    let wrong = dir.path().join("wrong.txt");
    std::fs::write(&wrong, "not it").unwrap_or_else(|e| panic!("{e}"));
    let denied = tavo(
        &fresh,
        &[
            "restore",
            &keyed.to_string_lossy(),
            "--yes",
            "--passphrase-file",
            &wrong.to_string_lossy(),
        ],
    );
    assert_eq!(denied.status.code(), Some(1));
    assert!(stderr(&denied).contains("wrong passphrase"), "{denied:?}");
    ok(tavo(
        &fresh,
        &[
            "restore",
            &keyed.to_string_lossy(),
            "--yes",
            "--passphrase-file",
            &pass.to_string_lossy(),
        ],
    ));
    let shown = json(tavo(&fresh, &["connection", "show", "mock", "--json"]));
    assert!(
        shown.to_string().contains("sk-…cdef"),
        "the key is back (masked): {shown}"
    );

    // A cut-short backup: refused, the library stays.
    let bytes = std::fs::read(&plain).unwrap_or_else(|e| panic!("{e}"));
    let cut = dir.path().join("cut.tavobackup");
    std::fs::write(&cut, &bytes[..bytes.len() / 3]).unwrap_or_else(|e| panic!("{e}"));
    let broken = tavo(&fresh, &["restore", &cut.to_string_lossy(), "--yes"]);
    assert_eq!(broken.status.code(), Some(1));
    assert!(
        stderr(&broken).contains("not a usable tavo backup"),
        "{broken:?}"
    );
    let after = json(tavo(&fresh, &["list", "chat", "--json"]));
    assert_eq!(after.as_array().map(Vec::len), Some(1));
}
