//! Door consistency for variables (see `doors.rs`): `tavo var`, HTTP (`POST /api/ops/
//! tavo_variable_*` and the bubble bridge's `GET /api/chats/{id}/variables`) and a model tool
//! call all go through `tools::variables`, so they store the same values and refuse bad input
//! with the same error, storing nothing.

use std::path::Path;

use crate::support::{Http, as_cli, cli_error, ok, setup, tavo, tool_in};
use serde_json::{Value, json};
use tempfile::TempDir;

fn dir() -> TempDir {
    let d = tempfile::tempdir().expect("dir");
    setup(d.path());
    ok(tavo(d.path(), &["chat", "create", "--character", "1"]));
    d
}

/// `tavo var get NAME [flags]`, parsed.
fn var_get(data: &Path, name: &str, flags: &[&str]) -> Value {
    let mut args = vec!["var", "get", name];
    args.extend(flags);
    serde_json::from_str(&ok(tavo(data, &args))).expect("var get prints JSON")
}

#[test]
fn variable_writes_and_refusals_are_the_same_at_every_door() {
    let (cli, http, model) = (dir(), dir(), dir());
    let server = Http::start(http.path());

    // One write of a dotted path through each door: the same value stored.
    ok(tavo(
        cli.path(),
        &["var", "set", "status.hp", "3", "--chat", "1"],
    ));
    let args = json!({"name": "status.hp", "value": 3});
    let (status, answer) = server.post("/api/ops/tavo_variable_set?chat=1", &args);
    assert_eq!(status, 200, "{answer}");
    let envelope = tool_in(model.path(), "tavo_variable_set", &args, Some("1"));
    assert_eq!(envelope["ok"], true, "{envelope}");
    for d in [&cli, &http, &model] {
        assert_eq!(
            var_get(d.path(), "status", &["--chat", "1"]),
            json!({"hp": 3})
        );
    }
    let shown = server.get("/api/chats/1/variables").json();
    assert_eq!(shown["chat"], json!({"status": {"hp": 3}}), "{shown}");
    assert_eq!(shown["message"], Value::Null);

    // A name with an empty segment, and a chat that does not exist: one refusal each, worded
    // alike, and nothing stored.
    let bad_name = json!({"name": "status..hp", "value": 1});
    let said = cli_error(&tavo(
        cli.path(),
        &["var", "set", "status..hp", "1", "--chat", "1"],
    ));
    let (status, answer) = server.post("/api/ops/tavo_variable_set?chat=1", &bad_name);
    let envelope = tool_in(model.path(), "tavo_variable_set", &bad_name, Some("1"));
    assert_eq!(envelope["ok"], false, "{envelope}");
    assert_eq!(envelope["error"]["code"], "invalid_arguments");
    assert_eq!(envelope["error"]["details"]["path"], "name", "{envelope}");
    assert_eq!((status, &answer["error"]), (400, &envelope["error"]));
    assert_eq!(said, as_cli(&envelope["error"]));

    let said = cli_error(&tavo(cli.path(), &["var", "get", "x", "--chat", "9"]));
    let (status, answer) = server.post("/api/ops/tavo_variable_get?chat=9", &json!({"name": "x"}));
    let envelope = tool_in(
        model.path(),
        "tavo_variable_get",
        &json!({"name": "x"}),
        Some("9"),
    );
    assert_eq!(
        envelope["error"]["code"], "resource_not_found",
        "{envelope}"
    );
    assert_eq!((status, &answer["error"]), (404, &envelope["error"]));
    assert_eq!(said, as_cli(&envelope["error"]));
    let answer = server.get("/api/chats/9/variables").json();
    assert_eq!(
        answer["error"], envelope["error"],
        "the bubble bridge refuses alike"
    );

    for d in [&cli, &http, &model] {
        assert_eq!(
            var_get(d.path(), "status", &["--chat", "1"]),
            json!({"hp": 3})
        );
    }
}

#[test]
fn a_message_of_another_chat_holds_no_variables_of_this_one() {
    let cli = dir();
    ok(tavo(cli.path(), &["chat", "create", "--character", "1"]));
    // Chat 2's greeting is message 2: not a message of chat 1.
    let said = cli_error(&tavo(
        cli.path(),
        &[
            "var",
            "set",
            "seen",
            "true",
            "--scope",
            "message",
            "--chat",
            "1",
            "--message",
            "2",
        ],
    ));
    let envelope = tool_in(
        cli.path(),
        "tavo_variable_set",
        &json!({"name": "seen", "value": true, "scope": "message", "message": {"id": 2}}),
        Some("1"),
    );
    assert_eq!(
        envelope["error"]["details"]["path"], "message.id",
        "{envelope}"
    );
    assert_eq!(said, as_cli(&envelope["error"]));
    // By its id alone, the message is found in its own chat.
    ok(tavo(
        cli.path(),
        &[
            "var",
            "set",
            "seen",
            "true",
            "--scope",
            "message",
            "--message",
            "2",
        ],
    ));
    assert_eq!(
        var_get(cli.path(), "seen", &["--scope", "message", "--chat", "2"]),
        json!(true)
    );
}
