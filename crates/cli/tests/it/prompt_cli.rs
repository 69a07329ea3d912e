//! `tavo prompt` is the request the next reply sends: its `--json` messages equal what the
//! mock provider receives, with tools on and a tool call in the chat's history; its
//! `--explain` tools, model and parameters are the request's; the history cut is reported.

use std::path::Path;

use crate::support::{json_of, ok, runtime, tavo};
use serde_json::{Value, json};
use tavo_testkit::{MockProvider, Script, Turn, Wire};

/// A library with one character, a chat, and a default openai-chat connection to `mock`
/// (`extra` flags are added to `connection add`).
fn library(dir: &Path, mock: &MockProvider, extra: &[&str]) -> String {
    let card = dir.join("card.json");
    let body = json!({
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": {"name": "Bot", "description": "A test bot.", "first_mes": "Hello, {{user}}."}
    });
    std::fs::write(&card, body.to_string()).unwrap_or_else(|e| panic!("{e}"));
    let data = dir.join("data");
    ok(tavo(&data, &["import", &card.to_string_lossy()]));
    let base = mock.base_url(Wire::OpenaiChat);
    let mut args = vec![
        "connection",
        "add",
        "mock",
        "--protocol",
        "openai-chat",
        "--base-url",
        &base,
        "--model",
        "mock-model",
        "--api-key",
        "sk-test-0123456789abcdef",
        "--default",
    ];
    args.extend_from_slice(extra);
    ok(tavo(&data, &args));
    ok(tavo(&data, &["chat", "create", "--character", "1"]))
}

#[test]
fn the_prompt_is_the_request_the_next_reply_sends() {
    let rt = runtime();
    let script = Script::new(vec![
        Turn::call(
            "tavo_file_save",
            json!({"name": "note.txt", "content": "from the model"}),
        ),
        Turn::text("Saved it."),
        Turn::text("Next answer."),
    ]);
    let mock = rt
        .block_on(MockProvider::start(script))
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let data = dir.path().join("data");
    let chat = library(dir.path(), &mock, &["--temperature", "0.4"]);
    ok(tavo(&data, &["settings", "set", "tools.enabled", "true"]));
    ok(tavo(
        &data,
        &["settings", "set", "tools.dynamicLoading", "false"],
    ));

    // A first reply leaves a tool call in the history.
    ok(tavo(
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
    assert_eq!(mock.requests().len(), 2);
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
            "and now?",
        ],
    ));

    let preview = json_of(&ok(tavo(&data, &["prompt", "--chat", &chat, "--json"])));
    let explained = json_of(&ok(tavo(
        &data,
        &["prompt", "--chat", &chat, "--json", "--explain"],
    )));
    assert_eq!(explained["messages"], preview);
    // The earlier reply's call and its result, not a summary line.
    let shown = preview.to_string();
    assert!(
        shown.contains("\"toolCalls\"")
            && shown.contains("\"toolResults\"")
            && shown.contains("note.txt")
            && !shown.contains("[tool calls:"),
        "the earlier tool call: {preview}"
    );

    // The next reply (no new message: it answers "and now?") sends exactly that.
    ok(tavo(
        &data,
        &["reply", "--chat", &chat, "--json", "--approve", "all"],
    ));
    let requests = mock.requests();
    assert_eq!(requests.len(), 3);
    let body = &requests[2].body;
    // Role by role and text by text what the request sends; the calls in OpenAI's shape.
    let project = |ms: &Value| -> Vec<(String, String)> {
        ms.as_array()
            .map(|a| {
                a.iter()
                    .map(|m| {
                        (
                            m["role"].as_str().unwrap_or("").to_owned(),
                            m["content"].as_str().unwrap_or("").to_owned(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(
        project(&body["messages"]),
        project(&preview),
        "prompt vs request"
    );
    let sent = body["messages"].to_string();
    assert!(
        sent.contains("\"tool_calls\"") && sent.contains("\"tool_call_id\""),
        "{sent}"
    );
    let sent_tools: Vec<&str> = body["tools"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|t| t["function"]["name"].as_str())
                .collect()
        })
        .unwrap_or_default();
    let shown_tools: Vec<&str> = explained["tools"]
        .as_array()
        .map(|a| a.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    assert!(sent_tools.contains(&"tavo_file_save"), "{body}");
    assert_eq!(sent_tools, shown_tools);
    assert_eq!(explained["model"], json!("mock-model"));
    assert_eq!(body["model"], json!("mock-model"));
    assert_eq!(body["temperature"], json!(0.4));
    let temperature = explained["parameters"]
        .as_array()
        .and_then(|a| a.iter().find(|p| p["name"] == "temperature").cloned())
        .unwrap_or_default();
    assert_eq!(temperature["source"], json!("connection"), "{explained}");
}

#[test]
fn a_cut_history_is_reported_by_the_prompt_and_the_reply() {
    let rt = runtime();
    let mock = rt
        .block_on(MockProvider::start(Script::new(vec![Turn::text("Short.")])))
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let data = dir.path().join("data");
    // A context so small that the history cannot all fit.
    let chat = library(
        dir.path(),
        &mock,
        &["--context-length", "400", "--max-output-tokens", "100"],
    );
    let long = "word ".repeat(60);
    for _ in 0..6 {
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
                &long,
            ],
        ));
    }
    let out = tavo(&data, &["prompt", "--chat", &chat, "--json", "--explain"]);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let explained = json_of(&ok(out));
    assert_eq!(explained["tokens"]["budget"], json!(300));
    assert!(stderr.contains("chat history was cut"), "{stderr}");

    let out = tavo(
        &data,
        &["reply", "--chat", &chat, "--json", "--approve", "all"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let stdout = ok(out);
    assert!(
        stderr.contains("warning: the chat history was cut"),
        "{stderr}"
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("\"warning\"") && l.contains("history was cut")),
        "{stdout}"
    );
}

#[test]
fn a_presets_samplers_and_context_reach_the_request_unless_switched_off() {
    let rt = runtime();
    let mock = rt
        .block_on(MockProvider::start(Script::new(vec![Turn::text("Fine.")])))
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let data = dir.path().join("data");
    library(
        dir.path(),
        &mock,
        &["--temperature", "0.2", "--context-length", "8000"],
    );
    let preset = dir.path().join("preset.json");
    let body = json!({
        "temperature": 0.9, "top_p": 0.8, "top_k": 0, "frequency_penalty": 0.3,
        "presence_penalty": 0, "openai_max_context": 150000, "openai_max_tokens": 500,
        "prompts": [
            {"identifier": "main", "name": "Main Prompt", "system_prompt": true, "role": "system",
             "content": "Be {{char}}."},
            {"identifier": "chatHistory", "name": "Chat History", "system_prompt": true, "marker": true}
        ],
        "prompt_order": [{"character_id": 100001, "order": [
            {"identifier": "main", "enabled": true}, {"identifier": "chatHistory", "enabled": true}
        ]}]
    });
    std::fs::write(&preset, body.to_string()).unwrap_or_else(|e| panic!("{e}"));
    ok(tavo(&data, &["import", &preset.to_string_lossy()]));
    let chat = ok(tavo(
        &data,
        &["chat", "create", "--character", "1", "--preset", "1"],
    ));
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
            "hi",
        ],
    ));
    let explained = json_of(&ok(tavo(
        &data,
        &["prompt", "--chat", &chat, "--json", "--explain"],
    )));
    assert_eq!(explained["tokens"]["budget"], json!(149_500), "{explained}");
    let param = |name: &str| {
        explained["parameters"]
            .as_array()
            .and_then(|a| a.iter().find(|p| p["name"] == name).cloned())
            .unwrap_or_default()
    };
    assert_eq!(param("temperature")["value"], json!(0.9));
    assert_eq!(param("temperature")["source"], json!("preset"));
    assert_eq!(
        param("contextLength")["presetKey"],
        json!("openai_max_context")
    );
    assert_eq!(param("frequencyPenalty")["value"], json!(0.3));
    assert_eq!(param("topK"), Value::Null, "ST top_k 0 is off");
    let text = ok(tavo(&data, &["prompt", "--chat", &chat, "--explain"]));
    assert!(
        text.contains("temperature") && text.contains("(preset temperature)"),
        "{text}"
    );

    ok(tavo(
        &data,
        &["reply", "--chat", &chat, "--json", "--approve", "all"],
    ));
    let sent = &mock.requests()[0].body;
    assert_eq!(sent["temperature"], json!(0.9));
    assert_eq!(sent["top_p"], json!(0.8));
    assert_eq!(sent["max_tokens"], json!(500));
    assert_eq!(sent["frequency_penalty"], json!(0.3));
    assert!(sent.get("presence_penalty").is_none());
    assert!(sent.get("top_k").is_none());

    ok(tavo(
        &data,
        &["settings", "set", "prompt.presetSamplers", "false"],
    ));
    let explained = json_of(&ok(tavo(
        &data,
        &["prompt", "--chat", &chat, "--json", "--explain"],
    )));
    assert_eq!(explained["tokens"]["budget"], json!(8000 - 1024));
    assert_eq!(
        param_of(&explained, "temperature")["source"],
        json!("connection")
    );
}

fn param_of(explained: &Value, name: &str) -> Value {
    explained["parameters"]
        .as_array()
        .and_then(|a| a.iter().find(|p| p["name"] == name).cloned())
        .unwrap_or_default()
}
