//! The preview is the request, tools included, at every door that has one: with an outside MCP
//! server enabled (its tools join the model's), the tools `tavo prompt --json --explain` shows
//! and the tools `GET /api/chats/{id}/prompt` shows are the tools the mock provider then
//! receives from `tavo reply` and from `POST /api/chats/{id}/replies`. (Tavo's MCP server has
//! no prompt preview tool, so MCP has nothing to compare.) Before the one engine builder,
//! `tavo prompt` built its engine without the outside servers and showed fewer tools than the
//! reply sent.

use std::path::Path;

use crate::support::{Http, ok, tavo};
use serde_json::{Value, json};
use tavo_testkit::{MockProvider, Script, Turn, Wire};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn fixture() -> String {
    format!(
        "{}/../engine/tests/fixtures/misbehaving_mcp_server.py",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// A character, a chat with a user message waiting for its answer, a default connection to
/// `mock`, tools on with every tool in the first request, and the fixture MCP server `fx`.
fn library(data: &Path, mock: &MockProvider) {
    let r = crate::support::tool(
        data,
        "tavo_character_import",
        &json!({"card": {"spec": "chara_card_v2", "spec_version": "2.0",
            "data": {"name": "Bot", "description": "A test bot.", "first_mes": "Hello."}}}),
    );
    assert_eq!(r["result"]["characterId"], 1, "{r}");
    let base = mock.base_url(Wire::OpenaiChat);
    ok(tavo(
        data,
        &[
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
        ],
    ));
    assert_eq!(
        ok(tavo(data, &["chat", "create", "--character", "1"])).trim(),
        "1"
    );
    ok(tavo(data, &["settings", "set", "tools.enabled", "true"]));
    ok(tavo(
        data,
        &["settings", "set", "tools.dynamicLoading", "false"],
    ));
    let script = fixture();
    ok(tavo(
        data,
        &[
            "mcp-server",
            "add",
            "fx",
            "--command",
            "python3",
            "--arg",
            &script,
        ],
    ));
    ok(tavo(
        data,
        &[
            "message",
            "append",
            "--chat",
            "1",
            "--role",
            "user",
            "--content",
            "hello?",
        ],
    ));
}

/// The tool names of an explain record (`tools: [{name, …}]`).
fn shown(explained: &Value) -> Vec<String> {
    explained["tools"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|t| t["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The tool names of an openai-chat request body.
fn sent(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn the_cli_preview_declares_the_tools_the_reply_sends() {
    let rt = runtime();
    let mock = rt
        .block_on(MockProvider::start(Script::new(vec![Turn::text("Hi.")])))
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    library(dir.path(), &mock);

    let explained: Value = serde_json::from_str(&ok(tavo(
        dir.path(),
        &["prompt", "--chat", "1", "--json", "--explain"],
    )))
    .unwrap_or_else(|e| panic!("{e}"));
    let preview = shown(&explained);
    assert!(
        preview.iter().any(|t| t == "mcp_fx_echo"),
        "the outside server's tools are in the preview: {preview:?}"
    );
    ok(tavo(
        dir.path(),
        &["reply", "--chat", "1", "--json", "--approve", "none"],
    ));
    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(sent(&requests[0].body), preview, "preview vs request");
    assert_eq!(requests[0].body["messages"], explained["messages"]);
}

#[test]
fn the_http_preview_declares_the_tools_the_reply_sends() {
    let rt = runtime();
    let mock = rt
        .block_on(MockProvider::start(Script::new(vec![Turn::text("Hi.")])))
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    library(dir.path(), &mock);
    let server = Http::start(dir.path());
    // The server connects outside servers in the background: wait until `fx` has (each look is
    // one request; no clock is asserted).
    let mut state = Value::Null;
    for _ in 0..200 {
        let list = server.get("/api/mcp-servers").json();
        state = list["servers"][0]["status"]["state"].clone();
        if state != "idle" {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(state, "connected");

    let answer = server.get("/api/chats/1/prompt");
    assert_eq!(answer.status, 200);
    let explained = answer.json();
    let preview = shown(&explained);
    assert!(
        preview.iter().any(|t| t == "mcp_fx_echo"),
        "the outside server's tools are in the preview: {preview:?}"
    );
    let (status, started) = server.post("/api/chats/1/replies", &json!({"type": "normal"}));
    assert_eq!(status, 202, "{started}");
    let id = started["replyId"].as_str().unwrap_or_default().to_owned();
    let mut status = Value::Null;
    for _ in 0..400 {
        status = server.get(&format!("/api/replies/{id}")).json()["status"].clone();
        if status != "running" {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    assert_eq!(status, "finished");
    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(sent(&requests[0].body), preview, "preview vs request");
    assert_eq!(requests[0].body["messages"], explained["messages"]);
}
