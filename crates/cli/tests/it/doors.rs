//! Door consistency: one operation, the same input through the CLI's own command, HTTP
//! (`tavo serve`'s routes) and a model tool call (`tavo tool call`, the model's exact path),
//! each against a fresh library set up identically, gives the same stored result — and for bad
//! input the same error code and message (HTTP and the tool: the same whole error object).
//! The harness is `common/mod.rs`, shared with `doors_library.rs`.

use std::path::Path;

use crate::support::{Http, cli_error, messages, ok, setup, show, strip, tavo, tool};
use serde_json::{Value, json};

#[test]
fn chat_create_is_the_same_at_every_door() {
    let (cli, http, model) = (
        tempfile::tempdir().expect("dir"),
        tempfile::tempdir().expect("dir"),
        tempfile::tempdir().expect("dir"),
    );
    for d in [&cli, &http, &model] {
        setup(d.path());
    }
    // The same chat: Bob, the second lorebook named explicitly, a name.
    assert_eq!(
        ok(tavo(
            cli.path(),
            &[
                "chat",
                "create",
                "--character",
                "1",
                "--lorebook",
                "2",
                "--name",
                "Trip"
            ]
        ))
        .trim(),
        "1"
    );
    let server = Http::start(http.path());
    let (status, created) = server.post(
        "/api/library/chat",
        &json!({"characters": [1], "lorebooks": [2], "name": "Trip"}),
    );
    assert_eq!(
        (status, created["id"].clone()),
        (201, json!(1)),
        "{created}"
    );
    let r = tool(
        model.path(),
        "tavo_chat_create",
        &json!({"chat": {"characters": [1], "lorebooks": [2], "name": "Trip"}}),
    );
    assert_eq!(r["result"]["id"], 1, "{r}");

    let chats: Vec<Value> = [&cli, &http, &model]
        .iter()
        .map(|d| strip(show(d.path(), "chat", "1")))
        .collect();
    assert_eq!(chats[0], chats[1], "CLI and HTTP store the same chat");
    assert_eq!(chats[0], chats[2], "CLI and the tool store the same chat");
    // The card's own lorebook first, then the one named; its regex group; the greeting.
    let ids = |list: &Value| -> Vec<i64> {
        list.as_array()
            .map(|a| a.iter().filter_map(|v| v["id"].as_i64()).collect())
            .unwrap_or_default()
    };
    assert_eq!(ids(&chats[0]["lorebooks"]), [1, 2]);
    assert_eq!(ids(&chats[0]["regexes"]), [1]);
    let cli_messages = messages(cli.path(), 1);
    assert_eq!(cli_messages.len(), 1);
    assert_eq!(cli_messages[0]["swipes"], json!(["Yo, User.", "Hey."]));
    assert_eq!(cli_messages, messages(http.path(), 1));
    assert_eq!(cli_messages, messages(model.path(), 1));

    // Bad input: the same refusal everywhere, and nothing stored.
    for (flags, body) in [
        (
            vec!["--character", "1", "--lorebook", "7"],
            json!({"characters": [1], "lorebooks": [7]}),
        ),
        (
            vec!["--character", "1", "--character", "99"],
            json!({"characters": [1, 99]}),
        ),
        (
            vec!["--lorebook", "2"],
            json!({"characters": [], "lorebooks": [2]}),
        ),
        (
            vec!["--character", "1", "--preset", "4"],
            json!({"characters": [1], "preset": 4}),
        ),
    ] {
        let mut args = vec!["chat", "create"];
        args.extend(flags.iter().copied());
        let said = cli_error(&tavo(cli.path(), &args));
        let (status, answer) = server.post("/api/library/chat", &body);
        let envelope = tool(model.path(), "tavo_chat_create", &json!({"chat": body}));
        assert_eq!(envelope["ok"], false, "{envelope}");
        assert_eq!(
            answer["error"], envelope["error"],
            "HTTP and the tool: {body}"
        );
        let e = &envelope["error"];
        let code = e["code"].as_str().unwrap_or_default();
        assert_eq!(
            said,
            format!(
                "error: {code}: {}",
                e["message"].as_str().unwrap_or_default()
            ),
            "the CLI: {body}"
        );
        assert_eq!(
            status,
            if code == "invalid_arguments" {
                400
            } else {
                404
            }
        );
        assert!(e["details"]["path"].is_string(), "{e}");
    }
    for d in [&cli, &model] {
        let list = ok(tavo(d.path(), &["list", "chats", "--json"]));
        let list: Value = serde_json::from_str(&list).expect("json");
        assert_eq!(
            list.as_array().map(Vec::len),
            Some(1),
            "nothing stored: {list}"
        );
    }
}

#[test]
fn character_and_persona_writes_are_the_same_at_every_door() {
    let (cli, http) = (
        tempfile::tempdir().expect("dir"),
        tempfile::tempdir().expect("dir"),
    );
    let server = Http::start(http.path());
    // A character with CCv3 names: over HTTP and through the tool (the CLI's door to it).
    let zed = json!({"name": "Zed", "first_mes": "Yo", "alternate_greetings": ["Hey"], "creator_notes": "n"});
    let (status, created) = server.post("/api/library/character", &zed);
    assert_eq!(status, 201, "{created}");
    let r = tool(
        cli.path(),
        "tavo_character_create",
        &json!({"character": zed}),
    );
    assert_eq!(r["result"]["id"], 1, "{r}");
    let a = strip(show(http.path(), "character", "1"));
    let b = strip(show(cli.path(), "character", "1"));
    assert_eq!(a, b);
    assert_eq!(a["firstMes"], "Yo");
    assert_eq!(a["creatorNotes"], "n");
    assert!(
        a.get("first_mes").is_none() && a.get("creator_notes").is_none(),
        "{a}"
    );
    assert!(a["avatar"].is_null(), "avatar is always present: {a}");

    for bad in [
        json!({"name": "OnlyName"}),
        json!({"name": "Z", "firstMes": "a", "first_mes": "b"}),
        json!({"name": "  ", "firstMes": "a"}),
    ] {
        let (status, answer) = server.post("/api/library/character", &bad);
        assert_eq!(status, 400, "{answer}");
        let envelope = tool(
            cli.path(),
            "tavo_character_create",
            &json!({"character": bad}),
        );
        assert_eq!(answer["error"], envelope["error"], "{bad}");
    }

    // A persona through `tavo persona create`, HTTP and the tool.
    let model = tempfile::tempdir().expect("dir");
    assert_eq!(
        ok(tavo(
            cli.path(),
            &[
                "persona",
                "create",
                "--name",
                "Ann",
                "--description",
                "A detective."
            ]
        ))
        .trim(),
        "1"
    );
    let p = json!({"name": "Ann", "description": "A detective."});
    let (status, _) = server.post("/api/library/persona", &p);
    assert_eq!(status, 201);
    let r = tool(model.path(), "tavo_persona_create", &json!({"persona": p}));
    assert_eq!(r["result"]["id"], 1, "{r}");
    let stored: Vec<Value> = [&cli, &http, &model]
        .iter()
        .map(|d| strip(show(d.path(), "persona", "1")))
        .collect();
    assert_eq!(stored[0], stored[1]);
    assert_eq!(stored[0], stored[2]);
    // No description: the same refusal.
    let said = cli_error(&tavo(
        cli.path(),
        &["persona", "create", "--name", "Bo", "--description", ""],
    ));
    let (_, answer) = server.post(
        "/api/library/persona",
        &json!({"name": "Bo", "description": ""}),
    );
    let envelope = tool(
        model.path(),
        "tavo_persona_create",
        &json!({"persona": {"name": "Bo", "description": ""}}),
    );
    assert_eq!(answer["error"], envelope["error"]);
    assert_eq!(
        said,
        format!(
            "error: {}: {}",
            envelope["error"]["code"].as_str().unwrap_or_default(),
            envelope["error"]["message"].as_str().unwrap_or_default()
        )
    );
    // `tavo persona update` changes only what it is given.
    ok(tavo(
        cli.path(),
        &["persona", "update", "1", "--description", "Retired."],
    ));
    let p = show(cli.path(), "persona", "1");
    assert_eq!(
        (p["name"].clone(), p["description"].clone()),
        (json!("Ann"), json!("Retired."))
    );
}

#[test]
fn chat_clone_and_update_from_the_cli() {
    let dir = tempfile::tempdir().expect("dir");
    setup(dir.path());
    ok(tavo(
        dir.path(),
        &["chat", "create", "--character", "1", "--name", "Trip"],
    ));
    assert_eq!(ok(tavo(dir.path(), &["chat", "clone", "1"])).trim(), "2");
    let copy = show(dir.path(), "chat", "2");
    assert_eq!(copy["name"], "Trip (copy)");
    assert_eq!(messages(dir.path(), 2), messages(dir.path(), 1));
    let said = cli_error(&tavo(dir.path(), &["chat", "clone", "9"]));
    assert!(said.starts_with("error: resource_not_found: "), "{said}");
    // Unbind the card's own lorebook, keep its regex group.
    ok(tavo(dir.path(), &["chat", "update", "1", "--no-lorebooks"]));
    let chat = show(dir.path(), "chat", "1");
    assert_eq!(chat["lorebooks"], json!([]));
    assert_eq!(chat["regexes"][0]["id"], 1);
    // Deleting the character removes it from both chats.
    ok(tavo(dir.path(), &["delete", "character", "1"]));
    for id in ["1", "2"] {
        assert_eq!(show(dir.path(), "chat", id)["characters"], json!([]));
    }
}

#[test]
fn message_appends_are_the_same_at_every_door() {
    let (cli, http, model) = (
        tempfile::tempdir().expect("dir"),
        tempfile::tempdir().expect("dir"),
        tempfile::tempdir().expect("dir"),
    );
    for d in [&cli, &http, &model] {
        setup(d.path());
        // Bob's chat (his greeting, his card's regex script `x` → `y` on the model's output).
        ok(tavo(d.path(), &["chat", "create", "--character", "1"]));
    }
    let said = ok(tavo(
        cli.path(),
        &[
            "message",
            "append",
            "--chat",
            "1",
            "--role",
            "assistant",
            "--content",
            "x marks the spot",
        ],
    ));
    assert_eq!(said.trim(), "2");
    let server = Http::start(http.path());
    let args = json!({"message": {"role": "assistant", "content": "x marks the spot"}});
    let (status, answer) = server.post("/api/ops/tavo_message_append?chat=1", &args);
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["ok"], true, "{answer}");
    let out = tavo(
        model.path(),
        &[
            "tool",
            "call",
            "tavo_message_append",
            &args.to_string(),
            "--chat",
            "1",
            "--yes",
        ],
    );
    let envelope: Value = serde_json::from_slice(&out.stdout).expect("the envelope");
    assert_eq!(envelope["ok"], true, "{envelope}");
    assert_eq!(
        answer["result"], envelope["result"],
        "HTTP and the tool answer the same"
    );

    let stored = messages(cli.path(), 1);
    assert_eq!(stored.len(), 2);
    assert_eq!(
        stored[1]["content"], "y marks the spot",
        "the card's regex rewrote it"
    );
    assert_eq!(
        stored,
        messages(http.path(), 1),
        "CLI and HTTP store the same"
    );
    assert_eq!(
        stored,
        messages(model.path(), 1),
        "CLI and the tool store the same"
    );

    // Bad input: the same refusal at every door, and nothing stored.
    for (chat, character) in [("9", None), ("1", Some("99"))] {
        let mut flags = vec![
            "message",
            "append",
            "--chat",
            chat,
            "--role",
            "assistant",
            "--content",
            "hi",
        ];
        let mut message = json!({"role": "assistant", "content": "hi"});
        if let Some(c) = character {
            flags.extend(["--character", c]);
            message["characterId"] = json!(c.parse::<i64>().unwrap_or_default());
        }
        let args = json!({ "message": message });
        let said = cli_error(&tavo(cli.path(), &flags));
        let (status, answer) =
            server.post(&format!("/api/ops/tavo_message_append?chat={chat}"), &args);
        let out = tavo(
            model.path(),
            &[
                "tool",
                "call",
                "tavo_message_append",
                &args.to_string(),
                "--chat",
                chat,
                "--yes",
            ],
        );
        let envelope: Value = serde_json::from_slice(&out.stdout).expect("the envelope");
        assert_eq!(envelope["ok"], false, "{envelope}");
        assert_eq!(
            answer["error"], envelope["error"],
            "HTTP and the tool: {args}"
        );
        let e = &envelope["error"];
        let code = e["code"].as_str().unwrap_or_default();
        assert_eq!(
            said,
            format!(
                "error: {code}: {}",
                e["message"].as_str().unwrap_or_default()
            ),
            "the CLI: {args}"
        );
        assert_eq!(
            status,
            if code == "invalid_arguments" {
                400
            } else {
                404
            },
            "{answer}"
        );
    }
    for d in [&cli, &http, &model] {
        assert_eq!(messages(d.path(), 1).len(), 2, "nothing stored");
    }
}

#[test]
fn message_edits_are_the_same_at_every_door() {
    let (cli, http, model) = (
        tempfile::tempdir().expect("dir"),
        tempfile::tempdir().expect("dir"),
        tempfile::tempdir().expect("dir"),
    );
    for d in [&cli, &http, &model] {
        setup(d.path());
        ok(tavo(d.path(), &["chat", "create", "--character", "1"]));
    }
    let server = Http::start(http.path());
    let call = |data: &Path, args: &Value| -> Value {
        let out = tavo(
            data,
            &[
                "tool",
                "call",
                "tavo_message_update",
                &args.to_string(),
                "--chat",
                "1",
                "--yes",
            ],
        );
        serde_json::from_slice(&out.stdout).expect("the envelope")
    };
    // The greeting (message 1) edited.
    ok(tavo(
        cli.path(),
        &[
            "message",
            "edit",
            "--chat",
            "1",
            "--id",
            "1",
            "--content",
            "Yo again.",
        ],
    ));
    let args = json!({"message": {"id": 1, "content": "Yo again."}});
    let (status, answer) = server.post("/api/ops/tavo_message_update?chat=1", &args);
    assert_eq!(
        (status, answer["ok"].clone()),
        (200, json!(true)),
        "{answer}"
    );
    let envelope = call(model.path(), &args);
    assert_eq!(envelope["ok"], true, "{envelope}");
    assert_eq!(
        answer["result"], envelope["result"],
        "HTTP and the tool answer the same"
    );
    let stored = messages(cli.path(), 1);
    assert_eq!(stored[0]["content"], "Yo again.");
    assert_eq!(
        stored,
        messages(http.path(), 1),
        "CLI and HTTP store the same"
    );
    assert_eq!(
        stored,
        messages(model.path(), 1),
        "CLI and the tool store the same"
    );

    // A message that does not exist: the same refusal everywhere.
    let said = cli_error(&tavo(
        cli.path(),
        &[
            "message",
            "edit",
            "--chat",
            "1",
            "--id",
            "99",
            "--content",
            "x",
        ],
    ));
    let args = json!({"message": {"id": 99, "content": "x"}});
    let (status, answer) = server.post("/api/ops/tavo_message_update?chat=1", &args);
    let envelope = call(model.path(), &args);
    assert_eq!(envelope["ok"], false, "{envelope}");
    assert_eq!(answer["error"], envelope["error"], "HTTP and the tool");
    let e = &envelope["error"];
    assert_eq!(e["code"], "resource_not_found", "{e}");
    assert_eq!(
        said,
        format!(
            "error: resource_not_found: {}",
            e["message"].as_str().unwrap_or_default()
        )
    );
    assert_eq!(status, 404);
}
