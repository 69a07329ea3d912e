//! `tavo migrate`: a library copied from SQLite into PostgreSQL and back is the same library —
//! every asset and chat exports to the same bytes before and after, the connection's API key
//! and the library's files (a chat file, a global file, a charx card's own files) come along
//! byte for byte — and `tavo --database URL` then works on it as on SQLite, where the files are
//! in the database, not in the folder.

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
    let charx = dir.path().join("cat.charx");
    write_charx(&charx);
    ok(tavo(&data, &["import", charx.to_str().unwrap_or_default()]));
    let chat = json(tavo(&data, &["list", "chat", "--json"]))[0]["id"]
        .as_i64()
        .unwrap_or_default()
        .to_string();
    for (name, scope, bytes) in [
        ("notes.bin", "chat", "AAEC/f7/bm90ZXM="),
        ("logo.bin", "global", "iVBORw0KGgoAAAANSUhEUgAA"),
    ] {
        let call = format!(
            r#"{{"name":"{name}","content":"{bytes}","options":{{"scope":"{scope}","encoding":"base64"}}}}"#
        );
        ok(tavo(
            &data,
            &["tool", "call", "tavo_file_save", &call, "--chat", &chat],
        ));
    }
    let files_before = files_of(&data, None, &chat);
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
    let charx_export = |data: &Path, database: Option<&str>| -> Vec<(String, Vec<u8>)> {
        let mut args: Vec<String> = database
            .map(|d| vec!["--database".to_owned(), d.to_owned()])
            .unwrap_or_default();
        let listed = {
            let mut a = args.clone();
            a.extend(["list", "character", "--json"].map(str::to_owned));
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            json(tavo(data, &a))
        };
        let id = listed
            .as_array()
            .and_then(|l| l.iter().find(|c| c["name"] == "Charx Cat"))
            .and_then(|c| c["id"].as_i64())
            .unwrap_or_default()
            .to_string();
        args.extend(
            [
                "export",
                "character",
                &id,
                "--format",
                "charx",
                "--output",
                "-",
            ]
            .map(str::to_owned),
        );
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = tavo(data, &args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        charx_members(&out.stdout)
    };
    let charx_before = charx_export(&data, None);
    assert!(
        charx_before.iter().any(|(n, _)| n == "x_meta/smile.json")
            && charx_before
                .iter()
                .any(|(n, _)| n == "assets/other/image/smile.png"),
        "the card's own files are in its charx export: {:?}",
        charx_before.iter().map(|(n, _)| n).collect::<Vec<_>>()
    );

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
    // The files are in the database: byte-equal through the tools, and none in the folder.
    assert_eq!(files_of(&data, Some(&url), &chat), files_before);
    assert!(
        charx_export(&data, Some(&url)) == charx_before,
        "the charx card's files differ on PostgreSQL"
    );
    let empty = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        files_of(empty.path(), Some(&url), &chat),
        files_before,
        "read from the database, not from a folder"
    );
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
    assert_eq!(files_of(&back, None, &chat), files_before);
    assert!(
        charx_export(&back, None) == charx_before,
        "the charx card's files differ after the way back"
    );
    let on_disk = |rel: &str| std::fs::read(back.join("files").join(rel)).unwrap_or_default();
    assert_eq!(
        on_disk(&format!("chat/{chat}/notes.bin")),
        [0, 1, 2, 253, 254, 255, b'n', b'o', b't', b'e', b's']
    );
    assert_eq!(names(&before), names(&after));
    for ((what, a), (_, b)) in before.iter().zip(&after) {
        assert!(a == b, "{what} differs after the way back");
    }
    let key_back = ok(tavo(&back, &["connection", "list"]));
    assert_eq!(key_back, ok(tavo(&data, &["connection", "list"])));
}

/// A charx card holding two files of its own besides `card.json`; written to `path`.
fn write_charx(path: &Path) {
    use std::io::Write as _;
    let file = std::fs::File::create(path).unwrap_or_else(|e| panic!("{e}"));
    let mut zip = zip::ZipWriter::new(file);
    let card = serde_json::json!({
        "spec": "chara_card_v3",
        "spec_version": "3.0",
        "data": {"name": "Charx Cat", "first_mes": "mew", "assets": []},
    });
    let members: [(&str, Vec<u8>); 3] = [
        ("card.json", serde_json::to_vec(&card).unwrap_or_default()),
        ("x_meta/smile.json", br#"{"type":"png"}"#.to_vec()),
        // Bytes no text codec would keep: every byte value, twice.
        (
            "assets/other/image/smile.png",
            (0..=255u8).chain(0..=255u8).collect(),
        ),
    ];
    for (name, bytes) in members {
        zip.start_file(name, zip::write::SimpleFileOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
        zip.write_all(&bytes).unwrap_or_else(|e| panic!("{e}"));
    }
    zip.finish().unwrap_or_else(|e| panic!("{e}"));
}

/// The library's files as the tools see them: the chat file and the global file (base64 of
/// `tavo_file_load`), and every card's export as charx (its own files inside).
fn files_of(data: &Path, database: Option<&str>, chat: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (name, scope) in [("notes.bin", "chat"), ("logo.bin", "global")] {
        let mut args: Vec<String> = database
            .map(|d| vec!["--database".to_owned(), d.to_owned()])
            .unwrap_or_default();
        let call =
            format!(r#"{{"name":"{name}","options":{{"scope":"{scope}","encoding":"base64"}}}}"#);
        args.extend(
            ["tool", "call", "file.load", &call, "--chat", chat]
                .iter()
                .map(|a| (*a).to_owned()),
        );
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let loaded = json(tavo(data, &args));
        let content = loaded["result"]["content"].as_str().unwrap_or_default();
        assert!(!content.is_empty(), "{name}: {loaded}");
        out.push((name.to_owned(), content.to_owned()));
    }
    out
}

/// The members of a charx file but `card.json`, sorted: the card's own files.
fn charx_members(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    use std::io::Read as _;
    let mut zip =
        zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap_or_else(|e| panic!("{e}"));
    let mut out = Vec::new();
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).unwrap_or_else(|e| panic!("{e}"));
        let name = entry.name().map(|n| n.into_owned()).unwrap_or_default();
        let mut data = Vec::new();
        entry
            .read_to_end(&mut data)
            .unwrap_or_else(|e| panic!("{e}"));
        if name != "card.json" {
            out.push((name, data));
        }
    }
    out.sort();
    out
}

fn names(exports: &[(String, Vec<u8>)]) -> Vec<&str> {
    exports.iter().map(|(n, _)| n.as_str()).collect()
}
