//! `tavo migrate`: a library copied from SQLite into PostgreSQL and back is the same library —
//! every asset and chat exports to the same bytes before and after, the connection's API key
//! and the chat's files come along — and `tavo --database URL` then works on it as on SQLite.

use std::path::Path;

use crate::support::{json, ok, tavo};

const CARD: &str = "cards/st-default_Seraphina.png";
const CHAT: &str = "chats/stbackload-kitten-reasoning-swipes.jsonl";
const PRESET: &str = "presets/atelier-v4.json";

fn corpus(rel: &str) -> String {
    format!(
        "{}/../../../shared/corpus/{rel}",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// Every asset and chat of the library, exported in Tavo's own format (lossless) and, for a
/// character, as the PNG card: `(what, bytes)`, in id order.
fn export_all(data: &Path, database: Option<&str>) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let with_db = |args: &[&str]| -> Vec<String> {
        let mut all: Vec<String> = database
            .map(|d| vec!["--database".to_owned(), d.to_owned()])
            .unwrap_or_default();
        all.extend(args.iter().map(|a| (*a).to_owned()));
        all
    };
    for kind in [
        "character",
        "persona",
        "preset",
        "lorebook",
        "regex",
        "chat",
    ] {
        let args = with_db(&["list", kind, "--json"]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let listed = json(tavo(data, &args));
        for item in listed.as_array().cloned().unwrap_or_default() {
            let id = item["id"].as_i64().unwrap_or_default().to_string();
            let formats: &[&str] = if kind == "character" {
                &["tavo", "png"]
            } else {
                &["tavo"]
            };
            for format in formats {
                let args = with_db(&["export", kind, &id, "--format", format, "--output", "-"]);
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                let bytes = tavo(data, &args);
                assert!(
                    bytes.status.success(),
                    "{kind} {id}: {}",
                    String::from_utf8_lossy(&bytes.stderr)
                );
                out.push((format!("{kind} {id} {format}"), bytes.stdout));
            }
        }
    }
    out
}

#[test]
fn a_library_moves_to_postgres_and_back_byte_for_byte() {
    let Some(url) = tavo_testkit::library::fresh_database() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let data = dir.path().join("data");
    for file in [CARD, CHAT, PRESET] {
        ok(tavo(&data, &["import", &corpus(file)]));
    }
    ok(tavo(
        &data,
        &[
            "persona",
            "create",
            "--name",
            "Mira",
            "--description",
            "a traveller",
        ],
    ));
    ok(tavo(
        &data,
        &[
            "connection",
            "add",
            "main",
            "--protocol",
            "openai-chat",
            "--model",
            "m",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--api-key",
            "sk-migrate-0123456789",
        ],
    ));
    let before = export_all(&data, None);
    assert!(before.len() >= 6, "{}", before.len());

    let moved = ok(tavo(
        &data,
        &[
            "migrate",
            "--from",
            data.to_str().unwrap_or_default(),
            "--to",
            &url,
        ],
    ));
    assert!(
        moved.contains("rows") && moved.contains("1 keys"),
        "{moved}"
    );
    let on_postgres = export_all(&data, Some(&url));
    assert_eq!(names(&before), names(&on_postgres));
    for ((what, a), (_, b)) in before.iter().zip(&on_postgres) {
        assert!(a == b, "{what} differs after the move to PostgreSQL");
    }
    // The key came along (shown masked), and a second move into a full library is refused.
    let connections = ok(tavo(&data, &["--database", &url, "connection", "list"]));
    assert!(connections.contains("main"), "{connections}");
    let again = tavo(
        &data,
        &[
            "migrate",
            "--from",
            data.to_str().unwrap_or_default(),
            "--to",
            &url,
        ],
    );
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("--yes"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );

    // And back into a new folder.
    let back = dir.path().join("back");
    ok(tavo(
        &data,
        &[
            "migrate",
            "--from",
            &url,
            "--to",
            back.to_str().unwrap_or_default(),
        ],
    ));
    let after = export_all(&back, None);
    assert_eq!(names(&before), names(&after));
    for ((what, a), (_, b)) in before.iter().zip(&after) {
        assert!(a == b, "{what} differs after the way back");
    }
    let key_back = ok(tavo(&back, &["connection", "list"]));
    assert_eq!(key_back, ok(tavo(&data, &["connection", "list"])));
}

fn names(exports: &[(String, Vec<u8>)]) -> Vec<&str> {
    exports.iter().map(|(n, _)| n.as_str()).collect()
}
