//! One approval policy at every door. A user's `deny` refuses the same write whichever door a
//! program calls it through — `tavo tool call`, `POST /api/ops/{name}` (the app and its
//! bubbles), MCP over stdio (`tavo mcp`) and MCP over HTTP (`POST /mcp`) — and nothing is
//! changed. A policy that cannot be read refuses every call (it fails closed). Every direct
//! write, and every refusal, is in the audit log with the door it came through.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::{Http, messages, ok, setup, tavo, tool_in};
use serde_json::{Value, json};

const MCP_TOKEN: &str = "approval-doors-token-0123";

/// A library with chat 1 (Bob's greeting, plus one message of the user's, whose id it answers)
/// and `policy` stored as `tools.approval`.
fn library(data: &Path, policy: &Value) -> i64 {
    setup(data);
    assert_eq!(
        ok(tavo(data, &["chat", "create", "--character", "1"])).trim(),
        "1"
    );
    let r = tool_in(
        data,
        "tavo_message_append",
        &json!({"message": {"role": "user", "content": "Hello."}}),
        Some("1"),
    );
    assert_eq!(r["ok"], true, "{r}");
    ok(tavo(data, &["settings", "set", "mcp.enabled", "true"]));
    ok(tavo(
        data,
        &["settings", "set", "mcp.token", &format!("\"{MCP_TOKEN}\"")],
    ));
    let store = tavo_store::Store::open(data).expect("store");
    store
        .setting_set("tools.approval", policy)
        .expect("store the policy");
    r["result"]["id"]
        .as_i64()
        .unwrap_or_else(|| panic!("the appended message's id: {r}"))
}

/// JSON-RPC requests to `tavo mcp` on its stdin, one line each; the answers by id.
fn mcp_stdio(data: &Path, calls: &[(u64, &str, Value)]) -> Vec<Value> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tavo"))
        .arg("mcp")
        .env("TAVO_DATA_DIR", data)
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start tavo mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut send = |v: Value| {
        writeln!(stdin, "{v}").expect("write");
        stdin.flush().expect("flush");
    };
    send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "approval-doors", "version": "1"}}}),
    );
    let init: Value =
        serde_json::from_str(&lines.next().expect("an answer").expect("read")).expect("JSON");
    assert_eq!(init["result"]["serverInfo"]["name"], "tavo", "{init}");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let mut answers = Vec::new();
    for (id, name, arguments) in calls {
        send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}));
        let answer: Value =
            serde_json::from_str(&lines.next().expect("an answer").expect("read")).expect("JSON");
        assert_eq!(answer["id"], json!(id), "{answer}");
        answers.push(answer["result"].clone());
    }
    drop(stdin);
    let _ = child.wait();
    answers
}

/// One `tools/call` on `POST /mcp`.
fn mcp_http(server: &Http, id: u64, name: &str, arguments: Value) -> Value {
    let auth = format!("Bearer {MCP_TOKEN}");
    let a = server.request(
        "POST",
        "/mcp",
        Some(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}})),
        &[
            ("Accept", "application/json, text/event-stream"),
            ("mcp-protocol-version", "2025-06-18"),
            ("Authorization", &auth),
        ],
    );
    assert_eq!(a.status, 200, "{}", String::from_utf8_lossy(&a.body));
    a.json()["result"].clone()
}

/// The error code of an MCP tool result (`isError` with the envelope's error as text).
fn mcp_error_code(result: &Value) -> String {
    assert_eq!(result["isError"], true, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    let parsed: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    parsed["error"]["code"]
        .as_str()
        .or_else(|| parsed["code"].as_str())
        .map(str::to_owned)
        .unwrap_or_else(|| panic!("no error code in {result}"))
}

fn chat_exists(data: &Path) -> bool {
    tavo(data, &["show", "chat", "1", "--json"])
        .status
        .success()
}

fn audit(data: &Path) -> Vec<Value> {
    let out = ok(tavo(data, &["audit", "list", "--json"]));
    let page: Value = serde_json::from_str(&out).expect("JSON");
    page["entries"].as_array().cloned().unwrap_or_default()
}

#[test]
fn a_deny_refuses_the_same_write_at_every_door() {
    let dir = tempfile::tempdir().expect("dir");
    let data = dir.path();
    let user_message = library(
        data,
        &json!({"tools": {"tavo_message_delete": "deny", "tavo_chat_delete": "deny"}}),
    );
    let before = messages(data, 1);
    let args = json!({"id": user_message});

    // The CLI, with the user's own --yes: the policy still wins.
    let r = tool_in(data, "tavo_message_delete", &args, Some("1"));
    assert_eq!(r["error"]["code"], "permission_denied", "{r}");

    let server = Http::start(data);
    // HTTP ops (the app and its bubbles), even confirmed.
    let (status, r) = server.post("/api/ops/tavo_message_delete?chat=1&confirm=true", &args);
    assert_eq!(
        (status, r["error"]["code"].clone()),
        (403, json!("permission_denied")),
        "{r}"
    );
    // MCP over HTTP: the message write, and the chat delete that used to slip past.
    let with_chat = json!({"chatId": 1, "id": user_message});
    let r = mcp_http(&server, 1, "tavo_message_delete", with_chat.clone());
    assert_eq!(mcp_error_code(&r), "permission_denied");
    let r = mcp_http(&server, 2, "tavo_chat_delete", json!({"id": 1}));
    assert_eq!(mcp_error_code(&r), "permission_denied");
    // A dry run is refused where the write would be: it tells the truth about the write.
    let r = mcp_http(
        &server,
        3,
        "tavo_chat_delete",
        json!({"id": 1, "dryRun": true}),
    );
    assert_eq!(mcp_error_code(&r), "permission_denied");
    drop(server);

    // MCP over stdio.
    let answers = mcp_stdio(
        data,
        &[
            (1, "tavo_message_delete", with_chat),
            (2, "tavo_chat_delete", json!({"id": 1})),
        ],
    );
    for r in &answers {
        assert_eq!(mcp_error_code(r), "permission_denied");
    }

    assert!(chat_exists(data), "the chat is still there");
    assert_eq!(messages(data, 1), before, "no message was deleted");

    // Every refusal is in the audit log, with its door.
    let doors: Vec<(String, String)> = audit(data)
        .iter()
        .map(|e| {
            (
                e["action"].as_str().unwrap_or_default().to_owned(),
                e["details"]["door"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    for (action, door) in [
        ("tool.tavo_message_delete", "cli"),
        ("tool.tavo_message_delete", "http"),
        ("tool.tavo_message_delete", "mcp"),
        ("tool.tavo_chat_delete", "mcp"),
    ] {
        assert!(
            doors.contains(&(action.to_owned(), door.to_owned())),
            "{action} through {door} is audited: {doors:?}"
        );
    }
}

#[test]
fn an_unreadable_policy_refuses_at_every_door() {
    let dir = tempfile::tempdir().expect("dir");
    let data = dir.path();
    // Not a policy: damaged, or edited by hand.
    let user_message = library(data, &json!("deny everything"));
    let before = messages(data, 1);

    let r = tool_in(
        data,
        "tavo_message_delete",
        &json!({"id": user_message}),
        Some("1"),
    );
    assert_eq!(r["error"]["code"], "internal_error", "{r}");
    let message = r["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("approval policy cannot be read"),
        "{message}"
    );

    let server = Http::start(data);
    let (status, r) = server.post(
        "/api/ops/tavo_message_delete?chat=1&confirm=true",
        &json!({"id": user_message}),
    );
    assert_eq!(
        (status, r["error"]["code"].clone()),
        (500, json!("internal_error")),
        "{r}"
    );
    let r = mcp_http(&server, 1, "tavo_chat_delete", json!({"id": 1}));
    assert_eq!(mcp_error_code(&r), "internal_error");
    // A read is refused too: the policy governs every tool.
    let r = mcp_http(&server, 2, "tavo_chat_get", json!({"id": 1}));
    assert_eq!(mcp_error_code(&r), "internal_error");
    // The way back: reset the policy, and the same call runs.
    let (status, _) = server.delete("/api/approvals");
    assert_eq!(status, 200);
    let r = mcp_http(&server, 3, "tavo_chat_get", json!({"id": 1}));
    assert_ne!(r["isError"], true, "{r}");
    drop(server);

    let answers = mcp_stdio(data, &[]);
    assert!(answers.is_empty());
    assert!(chat_exists(data));
    assert_eq!(messages(data, 1), before);
}

#[test]
fn a_direct_write_is_audited_with_its_door() {
    let dir = tempfile::tempdir().expect("dir");
    let data = dir.path();
    library(data, &json!({}));
    let server = Http::start(data);
    let r = mcp_http(
        &server,
        1,
        "tavo_chat_copy",
        json!({"id": 1, "name": "Branch"}),
    );
    assert_ne!(r["isError"], true, "{r}");
    let (status, r) = server.post(
        "/api/ops/tavo_variable_set?chat=1",
        &json!({"name": "mood", "value": "calm"}),
    );
    assert_eq!(status, 200, "{r}");
    // A read leaves no entry: only writes and refusals are kept.
    let (status, _) = server.post(
        "/api/ops/tavo_variable_get?chat=1",
        &json!({"name": "mood"}),
    );
    assert_eq!(status, 200);
    drop(server);
    let entries = audit(data);
    let copy = entries
        .iter()
        .find(|e| e["action"] == "tool.tavo_chat_copy")
        .unwrap_or_else(|| panic!("the MCP write is audited: {entries:?}"));
    assert_eq!(copy["details"]["door"], "mcp");
    assert_eq!(copy["details"]["status"], "ok");
    assert_eq!(copy["details"]["arguments"]["name"], "Branch");
    let set = entries
        .iter()
        .find(|e| e["action"] == "tool.tavo_variable_set")
        .unwrap_or_else(|| panic!("the HTTP write is audited: {entries:?}"));
    assert_eq!(
        (set["details"]["door"].clone(), set["target"].clone()),
        (json!("http"), json!("chat:1"))
    );
    assert!(
        !entries
            .iter()
            .any(|e| e["action"] == "tool.tavo_variable_get"),
        "{entries:?}"
    );
}
