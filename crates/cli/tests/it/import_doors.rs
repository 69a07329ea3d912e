//! Door consistency of import: the same file imported through `tavo import`, `POST /api/import`
//! (a real `tavo serve`) and the model's `tavo_*_import` tools (`POST /api/ops/…`) lands as the
//! same rows, with the same ids under the same keys and the same warnings; a refused file is
//! the same error envelope and changes nothing at any door.
//!
//! Each door gets a fresh library, so equal ids mean equal results; rows are compared as
//! `tavo show KIND ID --json` prints them, without what legitimately differs between two
//! imports (row times, generated entry identifiers).

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::support::tavo;
use serde_json::{Map, Value, json};

fn corpus(rel: &str) -> PathBuf {
    let root = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/corpus"
    ));
    assert!(
        root.is_dir(),
        "the shared corpus is missing at {}; these tests need it",
        root.display()
    );
    root.join(rel)
}

/// A `tavo serve` on a loopback port of its own, stopped when dropped.
struct Serve {
    child: Child,
    addr: String,
}

impl Serve {
    fn start(data: &Path) -> Serve {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tavo"))
            .args(["serve", "--addr", "127.0.0.1:0"])
            .env("TAVO_DATA_DIR", data)
            .env_remove("RUST_LOG")
            .env_remove("TAVO_TOKEN")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start tavo serve");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("stdout");
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read the address");
        let addr = line
            .trim()
            .strip_prefix("http://")
            .unwrap_or_else(|| panic!("tavo serve printed {line:?}"))
            .to_owned();
        Serve { child, addr }
    }

    /// One request; the answer's status and JSON body.
    fn request(&self, method: &str, path: &str, content_type: &str, body: &[u8]) -> (u16, Value) {
        let mut stream = TcpStream::connect(&self.addr).expect("connect");
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nX-Tavo-Request: 1\r\nContent-Type: {content_type}\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n",
            self.addr,
            body.len()
        );
        stream.write_all(head.as_bytes()).expect("send");
        stream.write_all(body).expect("send");
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).expect("receive");
        let split = answer
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("a header block");
        let head = String::from_utf8_lossy(&answer[..split]).to_ascii_lowercase();
        let status: u16 = head
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .expect("a status");
        let mut body = answer[split + 4..].to_vec();
        if head.contains("transfer-encoding: chunked") {
            body = unchunk(&body);
        }
        let value = serde_json::from_slice(&body).unwrap_or_else(|e| {
            panic!(
                "{method} {path}: not JSON ({e}): {}",
                String::from_utf8_lossy(&body)
            )
        });
        (status, value)
    }

    fn import(&self, file_name: &str, bytes: &[u8]) -> Value {
        let boundary = "tavo-door-test-boundary";
        let mut body = Vec::new();
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{file_name}\"\r\n\
                 Content-Type: application/octet-stream\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(bytes);
        body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
        let (status, out) = self.request(
            "POST",
            "/api/import",
            &format!("multipart/form-data; boundary={boundary}"),
            &body,
        );
        assert_eq!(status, 200, "{out}");
        out["results"][0].clone()
    }

    fn tool(&self, name: &str, args: &Value) -> (u16, Value) {
        self.request(
            "POST",
            &format!("/api/ops/{name}?confirm=true"),
            "application/json",
            args.to_string().as_bytes(),
        )
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn unchunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = body.windows(2).position(|w| w == b"\r\n") {
        let size = usize::from_str_radix(String::from_utf8_lossy(&body[..eol]).trim(), 16)
            .expect("a chunk size");
        if size == 0 {
            break;
        }
        out.extend_from_slice(&body[eol + 2..eol + 2 + size]);
        body = &body[eol + 4 + size..];
    }
    out
}

/// `value` without the keys named (at any depth).
fn without(value: &Value, keys: &[&str]) -> Value {
    match value {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !keys.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), without(v, keys)))
                .collect::<Map<_, _>>(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|v| without(v, keys)).collect()),
        other => other.clone(),
    }
}

/// What differs between two imports of the same file into two libraries.
const VOLATILE: &[&str] = &[
    "creationDate",
    "modificationDate",
    "createdAt",
    "updatedAt",
    "identifier",
];

/// Every stored row a result created, as `tavo show` prints it.
fn rows(data: &Path, result: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    for (key, kind) in [
        ("characterId", "character"),
        ("personaId", "persona"),
        ("presetId", "preset"),
        ("lorebookId", "lorebook"),
        ("regexId", "regex"),
        ("chatId", "chat"),
    ] {
        if let Some(id) = result[key].as_i64() {
            let shown = tavo(data, &["show", kind, &id.to_string(), "--json"]);
            assert!(shown.status.success(), "show {kind} {id}");
            let row: Value = serde_json::from_slice(&shown.stdout).expect("show --json");
            out.push(json!({"kind": kind, "row": without(&row, VOLATILE)}));
        }
    }
    out
}

/// The seed's id keys a result carries, present or `null`.
fn id_keys(result: &Value) -> Vec<String> {
    result
        .as_object()
        .map(|m| m.keys().filter(|k| k.ends_with("Id")).cloned().collect())
        .unwrap_or_default()
}

#[test]
fn the_same_file_lands_the_same_through_cli_http_and_tools() {
    let root = tempfile::tempdir().expect("dir");
    let (cli_dir, http_dir, tool_dir) = (
        root.path().join("cli"),
        root.path().join("http"),
        root.path().join("tool"),
    );
    let http = Serve::start(&http_dir);
    let tools = Serve::start(&tool_dir);
    // (file, the tool, its argument, whether the file names its object)
    let cases = [
        (
            "cards/lide-ai-v3.json",
            "tavo_character_import",
            "card",
            true,
        ),
        (
            "presets/st-openai-Default.json",
            "tavo_preset_import",
            "preset",
            false,
        ),
        (
            "lorebooks/st-Eldoria.json",
            "tavo_lorebook_import",
            "lorebook",
            false,
        ),
        (
            "regex/weyland-regex-trim.json",
            "tavo_regex_import",
            "regex",
            true,
        ),
    ];
    for (file, tool, field, named) in cases {
        let path = corpus(file);
        let bytes = std::fs::read(&path).expect("read");
        let shown = path.file_name().and_then(|n| n.to_str()).expect("name");

        let cli = tavo(
            &cli_dir,
            &["import", "--json", path.to_str().expect("path")],
        );
        assert!(
            cli.status.success(),
            "{file}: {}",
            String::from_utf8_lossy(&cli.stderr)
        );
        let cli: Value = serde_json::from_slice(&cli.stdout).expect("one JSON line");
        let over_http = http.import(shown, &bytes);
        let value: Value = serde_json::from_slice(&bytes).expect("JSON file");
        let (status, envelope) = tools.tool(tool, &json!({ field: value }));
        assert_eq!(status, 200, "{file}: {envelope}");
        assert_eq!(envelope["ok"], true, "{file}: {envelope}");
        let by_tool = envelope["result"].clone();

        // One result object: the CLI adds `path`, HTTP `file` and `ok`, the tool nothing.
        let cli_result = without(&cli, &["path"]);
        let http_result = without(&over_http, &["file", "ok"]);
        assert_eq!(cli_result, http_result, "{file}: CLI vs HTTP");
        assert!(
            !id_keys(&cli_result).is_empty(),
            "{file}: ids under the seed's keys: {cli_result}"
        );
        // A file that does not name its object is named after the file (CLI, HTTP) or with
        // the seed's default (the tool has no file name); everything else is the same.
        let name_free = |v: &Value| {
            if named {
                v.clone()
            } else {
                without(v, &["name"])
            }
        };
        assert_eq!(
            name_free(&cli_result),
            name_free(&by_tool),
            "{file}: CLI vs tool"
        );
        assert!(cli_result["warnings"].is_array(), "{file}");

        let cli_rows = rows(&cli_dir, &cli_result);
        assert!(!cli_rows.is_empty(), "{file}");
        assert_eq!(
            cli_rows,
            rows(&http_dir, &http_result),
            "{file}: rows, CLI vs HTTP"
        );
        assert_eq!(
            cli_rows.iter().map(name_free).collect::<Vec<_>>(),
            rows(&tool_dir, &by_tool)
                .iter()
                .map(name_free)
                .collect::<Vec<_>>(),
            "{file}: rows, CLI vs tool"
        );
        if !named {
            assert_eq!(
                by_tool["name"]
                    .as_str()
                    .map(str::to_ascii_lowercase)
                    .as_deref(),
                Some(field),
                "{file}: the seed's default name"
            );
        }
    }
}

#[test]
fn a_refused_file_is_the_same_envelope_and_changes_nothing_at_every_door() {
    let root = tempfile::tempdir().expect("dir");
    let (cli_dir, http_dir, tool_dir) = (
        root.path().join("cli"),
        root.path().join("http"),
        root.path().join("tool"),
    );
    let http = Serve::start(&http_dir);
    let tools = Serve::start(&tool_dir);
    let card = json!({"spec": "chara_card_v3", "spec_version": "3.0",
        "data": {"name": "X", "first_mes": "hi", "character_book": {"entries": [{"keys": 5}]}}});
    let bad = root.path().join("wrongtype.json");
    std::fs::write(&bad, card.to_string()).expect("write");

    let cli = tavo(&cli_dir, &["import", bad.to_str().expect("path")]);
    assert_eq!(cli.status.code(), Some(1));
    let cli_err = String::from_utf8_lossy(&cli.stderr).into_owned();
    let over_http = http.import("wrongtype.json", card.to_string().as_bytes());
    let (status, by_tool) = tools.tool("tavo_character_import", &json!({ "card": card }));
    assert_eq!(status, 400, "{by_tool}");

    let http_err = &over_http["error"];
    let tool_err = &by_tool["error"];
    assert_eq!(over_http["ok"], false);
    assert_eq!(http_err["code"], "invalid_arguments", "{over_http}");
    assert_eq!(tool_err["code"], http_err["code"]);
    let path = "data.character_book.entries[0].keys";
    assert_eq!(http_err["details"]["path"], path);
    assert_eq!(http_err["details"]["file"], "wrongtype.json");
    assert_eq!(tool_err["details"]["path"], format!("card.{path}"));
    // The same problem, in the same words, at every door.
    let problem = http_err["details"]["problem"].as_str().expect("problem");
    assert_eq!(tool_err["details"]["expected"], problem);
    let message = http_err["message"].as_str().expect("message");
    assert!(
        cli_err.starts_with("error: ") && cli_err.contains(message),
        "CLI: {cli_err} / HTTP: {message}"
    );
    for dir in [&cli_dir, &http_dir, &tool_dir] {
        for kind in ["character", "lorebook", "regex"] {
            let listed = tavo(dir, &["list", kind, "--json"]);
            assert_eq!(
                String::from_utf8_lossy(&listed.stdout).trim(),
                "[]",
                "{kind} in {}",
                dir.display()
            );
        }
    }
}

/// A SillyTavern chat of an imported card binds the card's own lorebook (ST's "character
/// lore") at both file doors, and says so in the same warning.
#[test]
fn an_imported_chat_binds_its_cards_lore_through_cli_and_http() {
    let root = tempfile::tempdir().expect("dir");
    let (cli_dir, http_dir) = (root.path().join("cli"), root.path().join("http"));
    let http = Serve::start(&http_dir);
    let mut results = Vec::new();
    for file in [
        "cards/st-default_Seraphina.png",
        "chats/kepler-seraphina-2023-unused-names.jsonl",
    ] {
        let path = corpus(file);
        let cli = tavo(
            &cli_dir,
            &["import", "--json", path.to_str().expect("path")],
        );
        assert!(cli.status.success(), "{file}");
        let cli: Value = serde_json::from_slice(&cli.stdout).expect("one JSON line");
        let shown = path.file_name().and_then(|n| n.to_str()).expect("name");
        let over_http = http.import(shown, &std::fs::read(&path).expect("read"));
        assert_eq!(
            without(&cli, &["path"]),
            without(&over_http, &["file", "ok"]),
            "{file}"
        );
        results.push(without(&cli, &["path"]));
    }
    let (card, chat) = (&results[0], &results[1]);
    let book = card["lorebookId"]
        .as_i64()
        .expect("Seraphina's card has a lorebook");
    assert!(
        chat["warnings"].to_string().contains("chat.card-lore"),
        "{chat}"
    );
    let rows_cli = rows(&cli_dir, chat);
    assert_eq!(rows_cli, rows(&http_dir, chat));
    let bound: Vec<i64> = rows_cli[0]["row"]["lorebooks"]
        .as_array()
        .expect("lorebooks")
        .iter()
        .filter_map(|b| b["id"].as_i64())
        .collect();
    assert_eq!(bound, [book]);
}
