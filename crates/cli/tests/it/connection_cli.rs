//! `tavo connection update NAME --flag…` changes only the fields it names; the key is
//! write-only (masked in every output), and a refused update changes nothing.

use std::path::Path;
use std::process::Output;

use crate::support::tavo;
use serde_json::Value;

fn ok(out: Output) -> Output {
    assert!(out.status.success(), "{out:?}");
    out
}

fn show(data: &Path, name: &str) -> Value {
    let out = ok(tavo(data, &["connection", "show", name, "--json"]));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}"))
}

const KEY: &str = "sk-secret-0123456789abcdef";

#[test]
fn an_update_changes_the_named_fields_and_never_prints_the_key() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let data = dir.path();
    ok(tavo(
        data,
        &[
            "connection",
            "add",
            "local",
            "--protocol",
            "openai-chat",
            "--base-url",
            "http://127.0.0.1:8080/v1",
            "--model",
            "llama3",
            "--temperature",
            "0.5",
            "--top-k",
            "40",
            "--default",
        ],
    ));
    ok(tavo(
        data,
        &[
            "connection",
            "add",
            "other",
            "--protocol",
            "openai-chat",
            "--base-url",
            "http://127.0.0.1:9090/v1",
            "--model",
            "m",
        ],
    ));
    let out = ok(tavo(
        data,
        &[
            "connection",
            "update",
            "local",
            "--model",
            "qwen2.5",
            "--api-key",
            KEY,
            "--top-p",
            "0.9",
            "--unset",
            "top-k",
            "--json",
        ],
    ));
    let printed =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        !printed.contains(KEY),
        "the key is never printed: {printed}"
    );
    let c = show(data, "local");
    assert_eq!(c["model"], "qwen2.5");
    assert_eq!(c["baseUrl"], "http://127.0.0.1:8080/v1", "untouched");
    assert_eq!(c["apiKey"], "sk-…cdef");
    assert_eq!(c["parameters"]["temperature"], 0.5, "untouched");
    assert_eq!(c["parameters"]["topP"], 0.9);
    assert!(c["parameters"].get("topK").is_none(), "{c}");
    assert_eq!(c["default"], true);

    // Renaming the default keeps it the default; the list keeps its order.
    let out = ok(tavo(
        data,
        &["connection", "update", "local", "--rename", "main"],
    ));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "main");
    assert_eq!(show(data, "main")["default"], true);
    let list = ok(tavo(data, &["connection", "list"]));
    let list = String::from_utf8_lossy(&list.stdout).into_owned();
    assert!(list.starts_with("* main"), "{list}");
    assert!(!list.contains(KEY), "{list}");

    // Refused updates name the field and change nothing.
    let before = show(data, "main");
    for (args, want) in [
        (vec!["--base-url", "ftp://nowhere"], "baseUrl"),
        (vec!["--temperature", "7"], "parameters.temperature"),
        (vec!["--unset", "warmth"], "parameters.warmth"),
        (vec!["--rename", "other"], "already exists"),
        (vec!["--source", "no-such-source"], "--source"),
    ] {
        let mut full = vec!["connection", "update", "main"];
        full.extend(args);
        let out = tavo(data, &full);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{want}: {err}");
        assert_eq!(show(data, "main"), before, "{want}: nothing changed");
    }
    let missing = tavo(data, &["connection", "update", "nope", "--model", "x"]);
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no connection named `nope`"));

    // The key can move to an environment variable, or go.
    ok(tavo(
        data,
        &["connection", "update", "main", "--api-key-env", "MY_KEY"],
    ));
    let c = show(data, "main");
    assert!(c.get("apiKey").is_none(), "{c}");
    assert_eq!(c["apiKeyEnv"], "MY_KEY");
    ok(tavo(
        data,
        &["connection", "update", "main", "--no-api-key", "--default"],
    ));
    let c = show(data, "main");
    assert!(
        c.get("apiKey").is_none() && c.get("apiKeyEnv").is_none(),
        "{c}"
    );
}
