//! `tavo connection`, `tavo settings`, `tavo prompt`, `tavo reply` and `tavo llm` end to end:
//! the real binary against the scripted mock provider on loopback.

use std::path::Path;
use std::process::Command;

use crate::support::{ok, runtime, tavo};
use serde_json::{Value, json};
use tavo_testkit::{MockProvider, Script, Turn, Wire};

fn lines(text: &str) -> Vec<Value> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// A library with one character and a chat, and a default connection to `mock`.
fn library(dir: &Path, mock: &MockProvider, wire: Wire, protocol: &str) -> String {
    let card = dir.join("card.json");
    let body = json!({
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": {"name": "Bot", "description": "A test bot.", "first_mes": "Hello, {{user}}."}
    });
    std::fs::write(&card, body.to_string()).unwrap_or_else(|e| panic!("{e}"));
    let data = dir.join("data");
    ok(tavo(&data, &["import", &card.to_string_lossy()]));
    ok(tavo(
        &data,
        &[
            "connection",
            "add",
            "mock",
            "--protocol",
            protocol,
            "--base-url",
            &mock.base_url(wire),
            "--model",
            "gpt-4o",
            "--api-key",
            "sk-test-0123456789abcdef",
        ],
    ));
    ok(tavo(&data, &["chat", "create", "--character", "1"]))
}

#[test]
fn a_reply_with_a_tool_round_streams_events_and_is_stored() {
    let rt = runtime();
    let script = Script::new(vec![
        Turn::call("tavo_tool_search", json!({"query": "save a file"})),
        Turn::call(
            "tavo_file_save",
            json!({"name": "note.txt", "content": "from the model"}),
        ),
        Turn::text("Saved it."),
    ]);
    let mock = rt
        .block_on(MockProvider::start(script))
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let data = dir.path().join("data");
    let chat = library(dir.path(), &mock, Wire::Anthropic, "anthropic");
    assert_eq!(chat, "1");

    // Tools are off by default; the setting turns them on.
    assert_eq!(
        ok(tavo(&data, &["settings", "get", "tools.enabled"])),
        "false"
    );
    ok(tavo(&data, &["settings", "set", "tools.enabled", "true"]));
    assert_eq!(
        ok(tavo(&data, &["settings", "get", "tools.enabled"])),
        "true"
    );

    let out = ok(tavo(
        &data,
        &[
            "reply",
            "--chat",
            &chat,
            "--message",
            "please save a note",
            "--json",
            "--approve",
            "all",
        ],
    ));
    let events = lines(&out);
    let types: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(types.first(), Some(&"started"), "{types:?}");
    assert!(types.contains(&"tool_call"), "{types:?}");
    let last = events.last().unwrap_or_else(|| panic!("no events"));
    assert_eq!(last["type"], "finished");
    assert_eq!(last["status"], "finished");
    assert_eq!(last["text"], "Saved it.");
    let seqs: Vec<u64> = events.iter().filter_map(|e| e["seq"].as_u64()).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");

    // The file the tool wrote is there, and the chat holds greeting, question and answer.
    let load = ok(tavo(
        &data,
        &[
            "tool",
            "call",
            "tavo_file_load",
            r#"{"name":"note.txt"}"#,
            "--chat",
            &chat,
        ],
    ));
    assert!(load.contains("from the model"), "{load}");
    let listed: Value = serde_json::from_str(&ok(tavo(
        &data,
        &["message", "list", "--chat", &chat, "--json"],
    )))
    .unwrap_or_else(|e| panic!("{e}"));
    let contents: Vec<&str> = listed
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert!(
        contents.first().is_some_and(|c| c.starts_with("Hello, ")),
        "{contents:?}"
    );
    assert!(contents.contains(&"please save a note"), "{contents:?}");
    assert_eq!(contents.last(), Some(&"Saved it."));

    // Three requests reached the provider, and the key never appears in what we print.
    assert_eq!(mock.requests().len(), 3);
    let shown = ok(tavo(&data, &["connection", "show", "mock", "--json"]));
    assert!(!shown.contains("0123456789abcdef"), "{shown}");
}

#[test]
fn a_provider_error_fails_the_reply_with_exit_1_and_keeps_the_user_message() {
    let rt = runtime();
    let script = Script::new(vec![Turn::error(500, "upstream exploded")]);
    let mock = rt
        .block_on(MockProvider::start(script))
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let data = dir.path().join("data");
    let chat = library(dir.path(), &mock, Wire::OpenaiChat, "openai-chat");
    let out = tavo(
        &data,
        &["reply", "--chat", &chat, "--message", "hello?", "--json"],
    );
    assert_eq!(out.status.code(), Some(1));
    let events = lines(&String::from_utf8_lossy(&out.stdout));
    let last = events.last().unwrap_or_else(|| panic!("no events"));
    assert_eq!(last["type"], "finished");
    assert_eq!(last["status"], "failed");
    let listed = ok(tavo(&data, &["message", "list", "--chat", &chat, "--json"]));
    assert!(listed.contains("hello?"), "{listed}");
}

#[test]
fn prompt_json_shows_the_messages_that_would_be_sent_and_changes_nothing() {
    let rt = runtime();
    let mock = rt
        .block_on(MockProvider::start(Script::new(Vec::new())))
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let data = dir.path().join("data");
    let chat = library(dir.path(), &mock, Wire::OpenaiChat, "openai-chat");
    ok(tavo(
        &data,
        &[
            "message",
            "append",
            "--chat",
            &chat,
            "--role",
            "user",
            "--content",
            "Hi there",
        ],
    ));
    let prompt = [
        "prompt",
        "--chat",
        &chat,
        "--json",
        "--explain",
        "--seed",
        "1",
    ];
    let out = ok(tavo(&data, &prompt));
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let messages = v["messages"].as_array().cloned().unwrap_or_default();
    assert!(
        messages.iter().any(|m| m["content"]
            .as_str()
            .is_some_and(|c| c.contains("A test bot."))),
        "{out}"
    );
    assert_eq!(
        messages.last().and_then(|m| m["content"].as_str()),
        Some("Hi there")
    );
    for key in [
        "activatedEntries",
        "skippedEntries",
        "regexApplied",
        "tokens",
    ] {
        assert!(v.get(key).is_some(), "missing {key}: {out}");
    }
    // Twice the same seed, the same prompt.
    let again = ok(tavo(&data, &prompt));
    assert_eq!(out, again);
    assert!(
        mock.requests().is_empty(),
        "prompt must not call the provider"
    );
}

#[test]
fn llm_decode_reads_a_stream_from_stdin() {
    use std::io::Write;
    let file = tavo_testkit::provider_fixtures().join("anthropic/docs-stream-text.sse");
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_tavo"))
        .arg("--data-dir")
        .arg(dir.path())
        .args(["llm", "decode", "--protocol", "anthropic", "--stream"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{e}"));
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(&bytes).unwrap_or_else(|e| panic!("{e}"));
    }
    let out = ok(child.wait_with_output().unwrap_or_else(|e| panic!("{e}")));
    assert!(!out.is_empty(), "no events decoded from {}", file.display());
    let decoded: Vec<Value> = if out.starts_with('[') {
        serde_json::from_str::<Vec<Value>>(&out).unwrap_or_else(|e| panic!("{e}"))
    } else {
        lines(&out)
    };
    assert!(!decoded.is_empty());
}

#[test]
fn reply_image_saves_a_picture_from_disk_and_the_reply_sees_its_description() {
    use base64::Engine as _;
    let rt = runtime();
    let script = Script::new(vec![
        Turn::text("A small black square."),
        Turn::text("What a tiny picture!"),
    ]);
    let mock = rt
        .block_on(MockProvider::start(script))
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let data = dir.path().join("data");
    let chat = library(dir.path(), &mock, Wire::OpenaiChat, "openai-chat");
    ok(tavo(
        &data,
        &["settings", "set", "imageSending.enabled", "true"],
    ));
    let png = tavo_testkit::image::png();
    let picture = dir.path().join("dot 1.png");
    std::fs::write(&picture, &png).unwrap_or_else(|e| panic!("{e}"));

    // Not a picture, and not a file at all: refused before anything is stored or sent.
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "hello").unwrap_or_else(|e| panic!("{e}"));
    for bad in [notes.to_string_lossy().into_owned(), "nowhere.png".into()] {
        let out = tavo(&data, &["reply", "--chat", &chat, "--image", &bad]);
        assert!(!out.status.success());
        assert!(String::from_utf8_lossy(&out.stderr).contains("--image"));
    }
    assert!(mock.requests().is_empty());

    let out = ok(tavo(
        &data,
        &[
            "reply",
            "--chat",
            &chat,
            "--image",
            &picture.to_string_lossy(),
            "--json",
        ],
    ));
    let last = lines(&out).pop().unwrap_or_else(|| panic!("no events"));
    assert_eq!(last["text"], "What a tiny picture!", "{last}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "one description, one reply");
    let encoded = base64::engine::general_purpose::STANDARD.encode(&png);
    assert!(requests[0].body.to_string().contains(&encoded));
    let reply = requests[1].body.to_string();
    assert!(reply.contains("A small black square."), "{reply}");
    assert!(
        !reply.contains(&encoded),
        "the reply does not carry the image"
    );

    // The message keeps a file of the chat, under a name made from the picture's.
    let listed = ok(tavo(
        &data,
        &["tool", "call", "tavo_file_list", "{}", "--chat", &chat],
    ));
    let listed: Value = serde_json::from_str(&listed).unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = listed["result"]["files"]
        .as_array()
        .map(|a| a.iter().filter_map(|f| f["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(names.len(), 1, "{listed}");
    assert!(
        names[0].starts_with("upload-") && names[0].ends_with("-dot-1.png"),
        "{names:?}"
    );
}
