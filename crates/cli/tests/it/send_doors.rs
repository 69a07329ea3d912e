//! One send at every composer door — `tavo chat`, `tavo reply --message`, `POST
//! /api/chats/{id}/messages` and `tavo_input_send` over `/mcp` — through the engine's
//! `send`: `/imagine <prompt>` makes an image message (against the image mock) and no reply
//! at each of them, and a send with nothing in it is refused with the same code and message.
//! Before, `tavo chat` and `tavo_input_send` sent `/imagine …` to the model as text.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::support::{Http, cli_error, messages, ok, setup, tavo};
use serde_json::{Value, json};
use tavo_testkit::image::MockImage;

const MCP_TOKEN: &str = "mcp-send-token-0123456789";

/// `tavo chat CHAT` with `lines` typed on its standard input.
fn chat_session(data: &Path, chat: &str, lines: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tavo"))
        .args(["chat", chat])
        .env("TAVO_DATA_DIR", data)
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("run tavo chat: {e}"));
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(lines.as_bytes())
            .unwrap_or_else(|e| panic!("type into tavo chat: {e}"));
    }
    child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("wait for tavo chat: {e}"))
}

/// The common library, a chat of Bob's, an image connection to `mock`, and `/mcp` switched on.
fn library(data: &Path, mock: &MockImage) {
    setup(data);
    assert_eq!(
        ok(tavo(data, &["chat", "create", "--character", "1"])).trim(),
        "1"
    );
    let base = format!("{}/v1", mock.base());
    ok(tavo(
        data,
        &[
            "image",
            "connection",
            "add",
            "main",
            "--platform",
            "openai",
            "--model",
            "dall-e-3",
            "--base-url",
            &base,
            "--api-key",
            "sk-send-image-0123456789abcdef",
            "--default",
        ],
    ));
    ok(tavo(data, &["settings", "set", "mcp.enabled", "true"]));
    ok(tavo(data, &["settings", "set", "mcp.token", MCP_TOKEN]));
}

/// `tools/call NAME ARGS` on `POST /mcp`: the tool's JSON answer, or for a refusal its error
/// object (`{code, message, details}`).
fn mcp_call(server: &Http, name: &str, arguments: &Value) -> Value {
    let auth = format!("Bearer {MCP_TOKEN}");
    let answer = server.request(
        "POST",
        "/mcp",
        Some(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}})),
        &[
            ("Authorization", &auth),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", "2025-06-18"),
        ],
    );
    assert_eq!(answer.status, 200);
    let body = answer.json();
    let result = &body["result"];
    if !result["structuredContent"].is_null() {
        return result["structuredContent"].clone();
    }
    let text = result["content"][0]["text"].as_str().unwrap_or("null");
    serde_json::from_str(text)
        .unwrap_or_else(|_| json!({"text": text, "isError": result["isError"]}))
}

/// The last stored message of chat 1.
fn last_message(data: &Path) -> Value {
    messages(data, 1).pop().unwrap_or_default()
}

/// An image message of `prompt`: the rendered injection template, the image in `extra`.
fn assert_imagined(message: &Value, prompt: &str, door: &str) {
    assert_eq!(
        message["content"],
        format!("[生成了一张图片：{prompt}]"),
        "{door}: {message}"
    );
    assert_eq!(message["extra"]["title"], prompt, "{door}: {message}");
    assert!(
        message["extra"]["image"]
            .as_str()
            .is_some_and(|p| p.starts_with("files/chat/image-")),
        "{door}: {message}"
    );
}

#[test]
fn imagine_makes_an_image_at_every_door() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let mock = rt
        .block_on(MockImage::start())
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let data = dir.path();
    library(data, &mock);

    // `tavo chat`: the typed line makes the image (no chat connection exists, so a reply
    // could not even start).
    let out = chat_session(data, "1", "/imagine a red barn\n/quit\n");
    let stdout = ok(out);
    assert!(stdout.contains("[生成了一张图片：a red barn]"), "{stdout}");
    assert_imagined(&last_message(data), "a red barn", "tavo chat");
    assert_eq!(mock.requests().len(), 1);

    // `tavo reply --message`.
    let out = ok(tavo(
        data,
        &["reply", "--chat", "1", "--message", "/imagine a blue barn"],
    ));
    assert!(out.contains("[生成了一张图片：a blue barn]"), "{out}");
    assert_imagined(&last_message(data), "a blue barn", "tavo reply");

    // HTTP: the composer's send route.
    let server = Http::start(data);
    let (status, done) = server.post(
        "/api/chats/1/messages",
        &json!({"content": "/imagine a green barn"}),
    );
    assert_eq!(status, 201, "{done}");
    assert_imagined(&last_message(data), "a green barn", "HTTP");

    // MCP: tavo_input_send, with no page open, sends from the server.
    let sent = mcp_call(
        &server,
        "tavo_input_send",
        &json!({"chatId": 1, "text": "/imagine a grey barn"}),
    );
    assert_eq!(
        (sent["ok"].clone(), sent["via"].clone()),
        (json!(true), json!("server")),
        "{sent}"
    );
    assert_eq!(sent["image"]["prompt"], "a grey barn", "{sent}");
    assert_imagined(&last_message(data), "a grey barn", "MCP");
    assert_eq!(mock.requests().len(), 4, "one image per door");
    // Greeting plus four images: no user message was stored and no reply ran.
    assert_eq!(messages(data, 1).len(), 5);
}

#[test]
fn an_empty_send_is_refused_the_same_way_at_every_door() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let data = dir.path();
    setup(data);
    ok(tavo(data, &["chat", "create", "--character", "1"]));
    ok(tavo(data, &["settings", "set", "mcp.enabled", "true"]));
    ok(tavo(data, &["settings", "set", "mcp.token", MCP_TOKEN]));
    let before = messages(data, 1);

    let said = cli_error(&tavo(data, &["reply", "--chat", "1", "--message", "  "]));
    let server = Http::start(data);
    let (status, answer) = server.post("/api/chats/1/messages", &json!({"content": " "}));
    assert_eq!(status, 400, "{answer}");
    let refusal = &answer["error"];
    assert_eq!(refusal["code"], "invalid_arguments", "{answer}");
    assert_eq!(said, crate::support::as_cli(refusal), "the CLI and HTTP");
    let sent = mcp_call(
        &server,
        "tavo_input_send",
        &json!({"chatId": 1, "text": ""}),
    );
    assert_eq!(&sent, refusal, "MCP and HTTP: the same error object");
    // `tavo chat`: the empty line is refused with the same words, and the session goes on.
    let out = chat_session(data, "1", "\n/quit\n");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(stderr.contains(&said), "tavo chat: {stderr}");
    // The reply kinds: a speaker for a swipe, a message for a continue, refused by the door.
    let said = cli_error(&tavo(
        data,
        &["reply", "--chat", "1", "--kind", "swipe", "--speaker", "1"],
    ));
    assert!(
        said.starts_with(
            "error: invalid_arguments: --speaker: expected no speaker for a swipe reply"
        ),
        "{said}"
    );
    let said = cli_error(&tavo(
        data,
        &[
            "reply",
            "--chat",
            "1",
            "--kind",
            "continue",
            "--message",
            "go",
        ],
    ));
    assert!(said.contains("only a normal reply sends one"), "{said}");
    assert_eq!(messages(data, 1), before, "nothing was written");
}
