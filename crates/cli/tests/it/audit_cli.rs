//! `tavo audit list|clear` as a user runs them against a library with a few audit rows.

use std::process::Output;

use crate::support::tavo;
use serde_json::{Value, json};

fn json_out(out: &Output) -> Value {
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"))
}

#[test]
fn the_audit_log_is_listed_newest_first_and_cleared() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    {
        // The rows a reply's tool calls would have written.
        let store = tavo_store::Store::open(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        for i in 0..3 {
            store
                .audit_append("tool.tavo_file_save", Some("chat:1"), &json!({ "n": i }))
                .unwrap_or_else(|e| panic!("{e}"));
        }
    }
    let data = dir.path();
    let page = json_out(&tavo(data, &["audit", "list", "--limit", "2", "--json"]));
    assert_eq!(page["entries"][0]["details"]["n"], 2);
    assert_eq!(page["entries"][0]["action"], "tool.tavo_file_save");
    let next = page["nextBefore"]
        .as_i64()
        .unwrap_or_else(|| panic!("{page}"));

    let lines = tavo(data, &["audit", "list", "--before", &next.to_string()]);
    assert!(lines.status.success(), "{lines:?}");
    let text = String::from_utf8_lossy(&lines.stdout);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.contains("\ttool.tavo_file_save\tchat:1"), "{text}");

    let bad = tavo(data, &["audit", "list", "--limit", "0"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("limit"),
        "{bad:?}"
    );

    let cleared = json_out(&tavo(data, &["audit", "clear", "--json"]));
    assert_eq!(cleared, json!({"removed": 3}));
    let empty = json_out(&tavo(data, &["audit", "list", "--json"]));
    assert_eq!(empty["entries"], json!([]));
}
