//! Door consistency, continued (see `doors.rs`): message deletes and hiding, lorebook / preset /
//! regex updates and deletes, and exports. The same input through the CLI's own command, HTTP
//! (`tavo serve`'s routes) and a model tool call (`tavo tool call`, the model's exact path), each
//! against a fresh library set up identically, gives the same stored result; bad input gets the
//! same refusal (HTTP and the tool: the same whole error object; the CLI: `error: code: message`)
//! and stores nothing.

use std::path::Path;

use crate::support::{
    Http, as_cli, cli_error, messages, ok, setup, show, strip, tavo, tool, tool_in,
};
use serde_json::{Value, json};
use tempfile::TempDir;

fn dir() -> TempDir {
    tempfile::tempdir().expect("dir")
}

/// What a failed envelope carries, after checking it failed.
#[track_caller]
fn refusal(envelope: &Value) -> Value {
    assert_eq!(envelope["ok"], false, "{envelope}");
    envelope["error"].clone()
}

/// The HTTP status every door's error code maps to.
fn status_of(error: &Value) -> u16 {
    match error["code"].as_str().unwrap_or_default() {
        "invalid_arguments" => 400,
        "resource_not_found" => 404,
        "conflict" => 409,
        "permission_denied" => 403,
        other => panic!("unexpected code {other}: {error}"),
    }
}

/// `tavo list KIND --json`, without the times.
fn list(data: &Path, kind: &str) -> Value {
    let mut rows: Value =
        serde_json::from_str(&ok(tavo(data, &["list", kind, "--json"]))).expect("list prints JSON");
    for row in rows.as_array_mut().into_iter().flatten() {
        if let Value::Object(o) = row {
            o.shift_remove("createdAt");
            o.shift_remove("updatedAt");
        }
    }
    rows
}

/// Bob's chat (his greeting `Yo, User.` as message 1), then a user message (2) and one of his (3).
fn chat_with_messages(data: &Path) {
    setup(data);
    ok(tavo(data, &["chat", "create", "--character", "1"]));
    for (role, content) in [("user", "Hi Bob."), ("assistant", "Hi.")] {
        ok(tavo(
            data,
            &[
                "message",
                "append",
                "--chat",
                "1",
                "--role",
                role,
                "--content",
                content,
            ],
        ));
    }
    assert_eq!(messages(data, 1).len(), 3);
}

#[test]
fn message_deletes_are_the_same_at_every_door() {
    let (cli, http, model) = (dir(), dir(), dir());
    for d in [&cli, &http, &model] {
        chat_with_messages(d.path());
    }
    let server = Http::start(http.path());

    ok(tavo(
        cli.path(),
        &["message", "delete", "--chat", "1", "--id", "2"],
    ));
    // A delete asks first: without `confirm=true` HTTP refuses it and deletes nothing.
    let (status, answer) = server.post("/api/ops/tavo_message_delete?chat=1", &json!({"id": 2}));
    assert_eq!(status, 403, "{answer}");
    assert_eq!(answer["error"]["code"], "permission_denied", "{answer}");
    assert_eq!(messages(http.path(), 1).len(), 3, "nothing deleted");
    let (status, answer) = server.post(
        "/api/ops/tavo_message_delete?chat=1&confirm=true",
        &json!({"id": 2}),
    );
    assert_eq!(
        (status, answer["ok"].clone()),
        (200, json!(true)),
        "{answer}"
    );
    let envelope = tool_in(
        model.path(),
        "tavo_message_delete",
        &json!({"id": 2}),
        Some("1"),
    );
    assert_eq!(envelope["ok"], true, "{envelope}");
    assert_eq!(answer["result"], envelope["result"], "the same answer");
    assert_eq!(envelope["result"], json!({"id": 2}));

    let stored = messages(cli.path(), 1);
    let contents: Vec<&Value> = stored.iter().map(|m| &m["content"]).collect();
    assert_eq!(contents, [&json!("Yo, User."), &json!("Hi.")]);
    let floors: Vec<&Value> = stored.iter().map(|m| &m["floor"]).collect();
    assert_eq!(floors, [&json!(0), &json!(1)], "later messages moved up");
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

    // Bad input: a message deleted already, one that never was, a chat that does not exist.
    for (chat, id) in [("1", "2"), ("1", "99"), ("9", "1")] {
        let said = cli_error(&tavo(
            cli.path(),
            &["message", "delete", "--chat", chat, "--id", id],
        ));
        let args = json!({"id": id.parse::<i64>().unwrap_or_default()});
        let (status, answer) = server.post(
            &format!("/api/ops/tavo_message_delete?chat={chat}&confirm=true"),
            &args,
        );
        let e = refusal(&tool_in(
            model.path(),
            "tavo_message_delete",
            &args,
            Some(chat),
        ));
        assert_eq!(
            answer["error"], e,
            "HTTP and the tool: chat {chat}, message {id}"
        );
        assert_eq!(said, as_cli(&e), "the CLI: chat {chat}, message {id}");
        assert_eq!(e["code"], "resource_not_found", "{e}");
        assert_eq!(status, status_of(&e));
    }
    for d in [&cli, &http, &model] {
        assert_eq!(messages(d.path(), 1), stored, "nothing more deleted");
    }
}

#[test]
fn message_hide_and_unhide_are_the_same_at_every_door() {
    let (cli, http, model) = (dir(), dir(), dir());
    for d in [&cli, &http, &model] {
        chat_with_messages(d.path());
    }
    let server = Http::start(http.path());
    // The model and HTTP hide with `tavo_message_update` (the seed's `message.update` takes the
    // content whole; hidden is one of its fields): the greeting, its text unchanged.
    for hidden in [true, false] {
        let verb = if hidden { "hide" } else { "unhide" };
        ok(tavo(
            cli.path(),
            &["message", verb, "--chat", "1", "--id", "1"],
        ));
        let args = json!({"message": {"id": 1, "content": "Yo, User.", "hidden": hidden}});
        let (status, answer) = server.post("/api/ops/tavo_message_update?chat=1", &args);
        assert_eq!(
            (status, answer["ok"].clone()),
            (200, json!(true)),
            "{answer}"
        );
        let envelope = tool_in(model.path(), "tavo_message_update", &args, Some("1"));
        assert_eq!(envelope["ok"], true, "{envelope}");
        assert_eq!(
            answer["result"], envelope["result"],
            "{verb}: the same answer"
        );

        let stored = messages(cli.path(), 1);
        assert_eq!(stored[0]["hidden"], hidden, "{verb}: {}", stored[0]);
        assert_eq!(stored[0]["content"], "Yo, User.");
        assert_eq!(
            stored[0]["swipes"],
            json!(["Yo, User.", "Hey."]),
            "swipes kept"
        );
        assert_eq!(stored.len(), 3);
        assert_eq!(stored, messages(http.path(), 1), "{verb}: CLI and HTTP");
        assert_eq!(
            stored,
            messages(model.path(), 1),
            "{verb}: CLI and the tool"
        );
        // The model sees what the CLI did.
        let found = tool_in(
            cli.path(),
            "tavo_message_find",
            &json!({"filter": {"hidden": true}}),
            Some("1"),
        );
        let expected = if hidden { 1 } else { 0 };
        assert_eq!(
            found["result"].as_array().map(Vec::len),
            Some(expected),
            "{found}"
        );
    }
    let stored = messages(cli.path(), 1);

    // Bad input: a message that does not exist, a chat that does not exist.
    for (chat, id) in [("1", 99), ("9", 1)] {
        let (c, i) = (chat.to_owned(), id.to_string());
        let said = cli_error(&tavo(
            cli.path(),
            &["message", "hide", "--chat", &c, "--id", &i],
        ));
        let args = json!({"message": {"id": id, "content": "Yo, User.", "hidden": true}});
        let (status, answer) =
            server.post(&format!("/api/ops/tavo_message_update?chat={chat}"), &args);
        let e = refusal(&tool_in(
            model.path(),
            "tavo_message_update",
            &args,
            Some(chat),
        ));
        assert_eq!(
            answer["error"], e,
            "HTTP and the tool: chat {chat}, message {id}"
        );
        assert_eq!(said, as_cli(&e), "the CLI: chat {chat}, message {id}");
        assert_eq!(e["code"], "resource_not_found", "{e}");
        assert_eq!(status, status_of(&e));
        let said = cli_error(&tavo(
            cli.path(),
            &["message", "unhide", "--chat", &c, "--id", &i],
        ));
        assert_eq!(said, as_cli(&e), "unhide: chat {chat}, message {id}");
    }
    for d in [&cli, &http, &model] {
        assert_eq!(messages(d.path(), 1), stored, "nothing changed");
    }
}

/// The library of the asset tests: [`setup`], a preset (1) and Bob's chat bound to the
/// second lorebook and the preset.
fn library(data: &Path) {
    setup(data);
    let r = tool(
        data,
        "tavo_preset_create",
        &json!({"preset": {"name": "Mini"}}),
    );
    assert_eq!(r["result"]["id"], 1, "{r}");
    ok(tavo(
        data,
        &[
            "chat",
            "create",
            "--character",
            "1",
            "--lorebook",
            "2",
            "--preset",
            "1",
        ],
    ));
}

/// One asset's change per kind: its id and the fields written (entries with their own
/// identifiers, so two libraries store the same).
fn changes() -> Vec<(&'static str, i64, Value)> {
    vec![
        (
            "lorebook",
            2,
            json!({"name": "Docks", "entries": [
                {"identifier": "d1", "name": "docks", "keywords": ["dock"], "content": "The docks smell of tar."}
            ]}),
        ),
        (
            "preset",
            1,
            json!({"name": "Terse", "basicPrompts": {"chatStart": "[Start]"}}),
        ),
        (
            "regex",
            1,
            json!({"name": "Swaps", "entries": [
                {"identifier": "r1", "name": "swap", "findRegex": "/a/g", "replaceString": "b"}
            ]}),
        ),
    ]
}

#[test]
fn asset_updates_are_the_same_over_http_and_the_tool() {
    for (kind, id, change) in changes() {
        // `tavo` has no update command for these kinds: its door is `tavo tool call`.
        let (http, model) = (dir(), dir());
        for d in [&http, &model] {
            library(d.path());
        }
        let server = Http::start(http.path());
        let path = format!("/api/library/{kind}/{id}");
        let read = server.get(&path);
        assert_eq!(read.status, 200);
        let before = read.json();
        let revision = before["revision"].as_u64().expect("a revision");
        assert_eq!(
            read.header("etag"),
            Some(format!("\"{revision}\"").as_str())
        );
        let mut body = before.clone();
        for (k, v) in change.as_object().into_iter().flatten() {
            body[k] = v.clone();
        }
        let (status, written) = server.put(&path, &body);
        assert_eq!(status, 200, "{kind}: {written}");
        let mut patch = change.clone();
        patch["id"] = json!(id);
        let envelope = tool(
            model.path(),
            &format!("tavo_{kind}_update"),
            &json!({ kind: patch }),
        );
        assert_eq!(envelope["ok"], true, "{kind}: {envelope}");
        assert_eq!(written, envelope["result"], "{kind}: the same answer");
        assert_eq!(written["revision"], revision + 1, "{kind}: {written}");

        let stored = strip(show(http.path(), kind, &id.to_string()));
        assert_eq!(
            stored,
            strip(show(model.path(), kind, &id.to_string())),
            "{kind}: HTTP and the tool store the same"
        );
        for (k, v) in change.as_object().into_iter().flatten() {
            if k == "entries" {
                assert_eq!(stored[k][0]["identifier"], v[0]["identifier"], "{kind}");
                assert_eq!(stored[k].as_array().map(Vec::len), Some(1), "{kind}");
            } else if k == "basicPrompts" {
                assert_eq!(stored[k]["chatStart"], "[Start]", "{kind}");
            } else {
                assert_eq!(&stored[k], v, "{kind}.{k}");
            }
        }

        // A write onto the revision read before is a lost update: 409, nothing stored; the
        // same with the stale revision in `If-Match`; and no revision at all is 428.
        let mut stale = before.clone();
        stale["name"] = json!("Stale");
        let (status, answer) = server.put(&path, &stale);
        assert_eq!(status, 409, "{kind}: {answer}");
        assert_eq!(answer["error"]["code"], "conflict", "{answer}");
        assert_eq!(
            answer["error"]["details"]["revision"],
            revision + 1,
            "{answer}"
        );
        assert_eq!(
            answer["error"]["details"]["expectedRevision"], revision,
            "{answer}"
        );
        if let Value::Object(o) = &mut stale {
            o.shift_remove("revision");
        }
        let a = server.request(
            "PUT",
            &path,
            Some(&stale),
            &[("If-Match", &format!("\"{revision}\""))],
        );
        assert_eq!(a.status, 409, "{kind}: If-Match");
        assert_eq!(a.json()["error"], answer["error"], "{kind}: If-Match");
        let (status, answer) = server.put(&path, &stale);
        assert_eq!(status, 428, "{kind}: {answer}");
        assert_eq!(answer["error"]["code"], "revision_required", "{answer}");
        assert_eq!(
            strip(show(http.path(), kind, &id.to_string())),
            stored,
            "{kind}: nothing stored"
        );

        // Invalid fields: the same refusal over HTTP (at the current revision) and from the tool.
        // Lorebook and preset entries need their own identifiers; a regex entry's depths
        // must be in order.
        let entries = match kind {
            "regex" => {
                json!([{"identifier": "r2", "name": "a", "findRegex": "x", "minDepth": 3, "maxDepth": 1}])
            }
            _ => {
                json!([{"identifier": "same", "name": "a", "content": "x"}, {"identifier": "same", "name": "b", "content": "y"}])
            }
        };
        for bad in [json!({"name": "  "}), json!({ "entries": entries })] {
            let mut body = show(http.path(), kind, &id.to_string());
            for (k, v) in bad.as_object().into_iter().flatten() {
                body[k] = v.clone();
            }
            let (status, answer) = server.put(&path, &body);
            let mut patch = bad.clone();
            patch["id"] = json!(id);
            let e = refusal(&tool(
                model.path(),
                &format!("tavo_{kind}_update"),
                &json!({ kind: patch }),
            ));
            assert_eq!(answer["error"], e, "{kind}: {bad}");
            assert_eq!(e["code"], "invalid_arguments", "{kind}: {e}");
            assert!(e["details"]["path"].is_string(), "{kind}: {e}");
            assert_eq!(status, 400, "{kind}: {bad}");
        }
        // An asset that does not exist.
        let mut body = change.clone();
        body["revision"] = json!(1);
        let (status, answer) = server.put(&format!("/api/library/{kind}/99"), &body);
        let mut patch = change.clone();
        patch["id"] = json!(99);
        let e = refusal(&tool(
            model.path(),
            &format!("tavo_{kind}_update"),
            &json!({ kind: patch }),
        ));
        assert_eq!(answer["error"], e, "{kind} 99");
        assert_eq!(e["code"], "resource_not_found", "{kind}: {e}");
        assert_eq!(status, 404);
        for d in [&http, &model] {
            assert_eq!(
                strip(show(d.path(), kind, &id.to_string())),
                stored,
                "{kind}: nothing stored"
            );
            assert_eq!(
                list(d.path(), kind).as_array().map(Vec::len),
                Some(if kind == "lorebook" { 2 } else { 1 }),
                "{kind}: nothing created"
            );
        }
    }
}

#[test]
fn asset_deletes_are_the_same_at_every_door() {
    for (kind, id, _) in changes() {
        let (cli, http, model) = (dir(), dir(), dir());
        for d in [&cli, &http, &model] {
            library(d.path());
        }
        let server = Http::start(http.path());
        let id_text = id.to_string();
        ok(tavo(cli.path(), &["delete", kind, &id_text]));
        let (status, answer) = server.delete(&format!("/api/library/{kind}/{id}"));
        assert_eq!(status, 204, "{kind}: {answer}");
        let envelope = tool(
            model.path(),
            &format!("tavo_{kind}_delete"),
            &json!({"id": id}),
        );
        assert_eq!(envelope["result"], json!({"id": id}), "{kind}: {envelope}");

        let left = list(cli.path(), kind);
        assert_eq!(
            left.as_array().map(Vec::len),
            Some(if kind == "lorebook" { 1 } else { 0 }),
            "{kind}: {left}"
        );
        let chat = strip(show(cli.path(), "chat", "1"));
        for d in [&http, &model] {
            assert_eq!(list(d.path(), kind), left, "{kind}: the same left");
            assert_eq!(
                strip(show(d.path(), "chat", "1")),
                chat,
                "{kind}: the chat that bound it is the same"
            );
        }

        // Deleting it again, and an id that never was: the same refusal everywhere.
        for missing in [id, 99] {
            let m = missing.to_string();
            let said = cli_error(&tavo(cli.path(), &["delete", kind, &m]));
            let (status, answer) = server.delete(&format!("/api/library/{kind}/{missing}"));
            let e = refusal(&tool(
                model.path(),
                &format!("tavo_{kind}_delete"),
                &json!({"id": missing}),
            ));
            assert_eq!(answer["error"], e, "HTTP and the tool: {kind} {missing}");
            assert_eq!(said, as_cli(&e), "the CLI: {kind} {missing}");
            assert_eq!(e["code"], "resource_not_found", "{e}");
            assert_eq!(status, 404);
        }
        for d in [&cli, &http, &model] {
            assert_eq!(list(d.path(), kind), left, "{kind}: nothing else deleted");
        }
    }
}

/// `tavo export KIND ID [--format F] -o -`.
fn export_cli(data: &Path, kind: &str, id: &str, format: Option<&str>) -> std::process::Output {
    let mut args = vec!["export", kind, id, "-o", "-"];
    if let Some(f) = format {
        args.extend(["--format", f]);
    }
    tavo(data, &args)
}

#[test]
fn exports_are_the_same_from_the_cli_and_http() {
    let lib = dir();
    library(lib.path());
    let server = Http::start(lib.path());
    for (kind, id, format, mime) in [
        ("character", "1", Some("png"), "image/png"),
        ("character", "1", Some("ccv3-json"), "application/json"),
        ("character", "1", None, "image/png"),
        ("lorebook", "1", Some("st"), "application/json"),
        ("lorebook", "2", None, "application/json"),
        ("preset", "1", Some("st"), "application/json"),
        ("preset", "1", None, "application/json"),
    ] {
        let file = ok_bytes(export_cli(lib.path(), kind, id, format));
        let query = format.map(|f| format!("?format={f}")).unwrap_or_default();
        let got = server.get(&format!("/api/export/{kind}/{id}{query}"));
        assert_eq!(got.status, 200, "{kind} {format:?}");
        assert!(
            got.header("content-type")
                .is_some_and(|t| t.starts_with(mime)),
            "{kind} {format:?}: {:?}",
            got.header("content-type")
        );
        assert!(
            got.header("content-disposition")
                .is_some_and(|d| d.starts_with("attachment; filename=")),
            "{kind} {format:?}"
        );
        assert!(!file.is_empty(), "{kind} {format:?}");
        assert!(
            file == got.body,
            "{kind} {format:?}: the CLI wrote {} bytes, HTTP sent {}",
            file.len(),
            got.body.len()
        );
    }

    // Refusals: an unknown format, a format of another kind, an asset that does not exist.
    for (kind, id, format, code, exit) in [
        ("character", "1", "bogus", "invalid_arguments", 2),
        ("lorebook", "1", "png", "invalid_arguments", 2),
        ("preset", "1", "ccv3", "invalid_arguments", 2),
        ("character", "9", "png", "resource_not_found", 1),
    ] {
        let out = export_cli(lib.path(), kind, id, Some(format));
        assert_eq!(out.status.code(), Some(exit), "{kind} {format}: {out:?}");
        assert!(out.stdout.is_empty(), "{kind} {format}: nothing written");
        let got = server.get(&format!("/api/export/{kind}/{id}?format={format}"));
        let e = got.json()["error"].clone();
        assert_eq!(e["code"], code, "{kind} {format}: {e}");
        assert_eq!(got.status, status_of(&e), "{kind} {format}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr).trim(),
            as_cli(&e),
            "the CLI: {kind} {format}"
        );
    }
}

fn ok_bytes(out: std::process::Output) -> Vec<u8> {
    assert!(
        out.status.success(),
        "exit {:?}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}
