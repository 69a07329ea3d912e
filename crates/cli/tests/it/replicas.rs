//! Two `tavo serve` replicas on one PostgreSQL database, each with a data folder of its own (no
//! shared disk), behave as one server: a reply started on A is followed from B with
//! `Last-Event-ID` (its events reach B through the database), B refuses a second reply in the
//! busy chat, a cancel sent to B stops the reply on A, and after A is killed with `kill -9`
//! mid-reply, B marks the reply interrupted within seconds, keeps its partial text and frees
//! the chat — nothing replayed.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tavo_testkit::{MockProvider, Script, Turn, Wire};

use crate::support::{ok, runtime, tavo};

/// A `tavo serve` child process on `database`; killed when dropped.
struct Replica {
    child: Child,
    addr: String,
}

impl Replica {
    fn start(data: &Path, database: &str) -> Self {
        Self::start_with(data, database, &[])
    }

    fn start_with(data: &Path, database: &str, extra: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tavo"))
            .args(["--database", database, "serve", "--addr", "127.0.0.1:0"])
            .args(extra)
            .env("TAVO_DATA_DIR", data)
            .env_remove("RUST_LOG")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start tavo serve: {e}"));
        let mut line = String::new();
        let stdout = child.stdout.take().unwrap_or_else(|| panic!("stdout"));
        BufReader::new(stdout)
            .read_line(&mut line)
            .unwrap_or_else(|e| panic!("{e}"));
        let addr = line
            .trim()
            .strip_prefix("http://")
            .unwrap_or_else(|| panic!("tavo serve printed {line:?}"))
            .to_owned();
        Replica { child, addr }
    }

    /// One request; the status and the body.
    fn request(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        extra: &str,
    ) -> (u16, String) {
        let body = body.map(Value::to_string).unwrap_or_default();
        let mut s = TcpStream::connect(&self.addr).unwrap_or_else(|e| panic!("{e}"));
        s.set_read_timeout(Some(Duration::from_secs(60))).ok();
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nx-tavo-request: 1\r\nConnection: close\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n{extra}\r\n",
            self.addr,
            body.len()
        );
        s.write_all(head.as_bytes())
            .unwrap_or_else(|e| panic!("{e}"));
        s.write_all(body.as_bytes())
            .unwrap_or_else(|e| panic!("{e}"));
        let mut raw = Vec::new();
        let _ = s.read_to_end(&mut raw);
        let text = String::from_utf8_lossy(&raw).into_owned();
        let status = text
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let body = text
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_owned())
            .unwrap_or_default();
        (status, body)
    }

    fn json(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
        self.json_as(method, path, body, "")
    }

    /// [`Replica::json`] with extra header lines (`Cookie: …\r\n`).
    fn json_as(&self, method: &str, path: &str, body: Option<&Value>, extra: &str) -> (u16, Value) {
        let (status, text) = self.request(method, path, body, extra);
        // Bodies of JSON answers are small enough to come unchunked, or in one chunk.
        let start = text.find(['{', '[']).unwrap_or(0);
        let end = text.rfind(['}', ']']).map_or(text.len(), |e| e + 1);
        (
            status,
            serde_json::from_str(&text[start..end.max(start)]).unwrap_or(Value::Null),
        )
    }

    /// The reply's SSE events after `last_event_id` until the stream ends: `(id, name, data)`.
    fn events(&self, reply: &str, last_event_id: u64) -> Vec<(Option<u64>, String, Value)> {
        let (status, body) = self.request(
            "GET",
            &format!("/api/replies/{reply}/events"),
            None,
            &format!("Last-Event-ID: {last_event_id}\r\n"),
        );
        assert_eq!(status, 200, "{body}");
        parse_sse(&body)
    }

    fn kill(&mut self) {
        // SIGKILL: no shutdown, no final write.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        self.kill();
    }
}

/// SSE frames of a (possibly chunked) body.
fn parse_sse(body: &str) -> Vec<(Option<u64>, String, Value)> {
    let mut out = Vec::new();
    for block in body.split("\n\n") {
        let mut id = None;
        let mut name = None;
        let mut data = None;
        for line in block.lines() {
            if let Some(v) = line.strip_prefix("id: ") {
                id = v.trim().parse().ok();
            } else if let Some(v) = line.strip_prefix("event: ") {
                name = Some(v.trim().to_owned());
            } else if let Some(v) = line.strip_prefix("data: ") {
                data = serde_json::from_str(v).ok();
            }
        }
        if let (Some(name), Some(data)) = (name, data) {
            out.push((id, name, data));
        }
    }
    out
}

fn library(data: &Path, database: &str, mock: &MockProvider) {
    let db = |args: &[&str]| {
        let mut all = vec!["--database", database];
        all.extend_from_slice(args);
        ok(tavo(data, &all))
    };
    let card = data.with_file_name("card.json");
    std::fs::create_dir_all(data).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        &card,
        json!({"spec": "chara_card_v2", "spec_version": "2.0",
               "data": {"name": "Bot", "description": "A test bot.", "first_mes": "Hello."}})
        .to_string(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    db(&["import", &card.to_string_lossy()]);
    db(&[
        "connection",
        "add",
        "mock",
        "--protocol",
        "openai-chat",
        "--base-url",
        &mock.base_url(Wire::OpenaiChat),
        "--model",
        "gpt-4o",
        "--api-key",
        "sk-test-0123456789abcdef",
    ]);
    assert_eq!(db(&["chat", "create", "--character", "1"]).trim(), "1");
}

/// A slow reply: `words` chunks, `delay_ms` apart.
fn slow(words: usize, delay_ms: u64) -> Turn {
    let text: String = (0..words).map(|i| format!("w{i} ")).collect();
    let mut turn = Turn::text(text);
    turn.delay_ms = delay_ms;
    turn
}

/// The object with `"id": id` anywhere in `v`.
fn find_id(v: &Value, id: i64) -> Option<Value> {
    match v {
        Value::Object(o) if o.get("id").and_then(Value::as_i64) == Some(id) => Some(v.clone()),
        Value::Object(o) => o.values().find_map(|x| find_id(x, id)),
        Value::Array(a) => a.iter().find_map(|x| find_id(x, id)),
        _ => None,
    }
}

fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) -> Duration {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
    started.elapsed()
}

#[test]
fn two_replicas_on_one_database_behave_as_one_server() {
    let Some(database) = tavo_testkit::library::fresh_database() else {
        return;
    };
    let rt = runtime();
    let mock = rt
        .block_on(MockProvider::start(Script::new(vec![
            slow(30, 60),
            slow(200, 60),
            slow(400, 50),
            Turn::text("After the failover."),
        ])))
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let data_a = dir.path().join("a");
    let data_b = dir.path().join("b");
    library(&data_a, &database, &mock);
    let mut a = Replica::start(&data_a, &database);
    let b = Replica::start(&data_b, &database);

    // 1. A reply on A, followed from B after event 2, ends with the same events as on A.
    let (status, started) = a.json(
        "POST",
        "/api/chats/1/replies",
        Some(&json!({"type": "normal", "message": "hi"})),
    );
    assert_eq!(status, 202, "{started}");
    let reply = started["replyId"].as_str().unwrap_or_default().to_owned();
    // B refuses a second reply in the chat A runs one in.
    let (status, busy) = b.json(
        "POST",
        "/api/chats/1/replies",
        Some(&json!({"type": "regenerate"})),
    );
    assert_eq!(status, 409, "{busy}");
    let on_b = b.events(&reply, 2);
    let on_a = a.events(&reply, 0);
    assert!(on_a.len() > 10, "{on_a:?}");
    assert_eq!(on_b.first().and_then(|e| e.0), Some(3), "{on_b:?}");
    assert_eq!(on_b.last().map(|e| e.1.as_str()), Some("finished"));
    assert_eq!(
        on_b.iter().map(|e| (e.0, e.2.clone())).collect::<Vec<_>>(),
        on_a[2..]
            .iter()
            .map(|e| (e.0, e.2.clone()))
            .collect::<Vec<_>>(),
        "B relays exactly A's events after Last-Event-ID"
    );

    // 2. A cancel sent to B stops the reply running on A.
    let (status, started) = a.json(
        "POST",
        "/api/chats/1/replies",
        Some(&json!({"type": "normal", "message": "again"})),
    );
    assert_eq!(status, 202, "{started}");
    let reply = started["replyId"].as_str().unwrap_or_default().to_owned();
    std::thread::sleep(Duration::from_millis(500));
    let (status, cancelled) = b.json("POST", &format!("/api/replies/{reply}/cancel"), None);
    assert_eq!(status, 202, "{cancelled}");
    let end = b.events(&reply, 0);
    let last = end.last().unwrap_or_else(|| panic!("no events"));
    assert_eq!(last.1, "finished");
    assert_eq!(last.2["status"], "cancelled", "{last:?}");

    // 3. kill -9 of A mid-reply: B frees the chat within seconds, the partial text is kept.
    let (status, started) = a.json(
        "POST",
        "/api/chats/1/replies",
        Some(&json!({"type": "normal", "message": "long"})),
    );
    assert_eq!(status, 202, "{started}");
    let reply = started["replyId"].as_str().unwrap_or_default().to_owned();
    let message = wait_until("the reply streams", Duration::from_secs(10), || {
        let (_, r) = b.json("GET", &format!("/api/replies/{reply}"), None);
        r["messageId"].is_i64()
    });
    let _ = message;
    std::thread::sleep(Duration::from_millis(1500));
    a.kill();
    let killed = Instant::now();
    let freed = wait_until("B frees the chat", Duration::from_secs(15), || {
        let (_, r) = b.json("GET", &format!("/api/replies/{reply}"), None);
        r["status"] == "cancelled"
    });
    eprintln!(
        "failover: chat free on B {:?} after kill -9",
        killed.elapsed()
    );
    assert!(freed < Duration::from_secs(10), "{freed:?}");
    let (_, record) = b.json("GET", &format!("/api/replies/{reply}"), None);
    let message_id = record["messageId"].as_i64().unwrap_or_default();
    let (_, listed) = b.json("GET", "/api/chats/1/messages", None);
    let stored = find_id(&listed, message_id).unwrap_or_else(|| panic!("{listed}"));
    let text = stored["content"].as_str().unwrap_or_default();
    assert!(
        text.starts_with("w0 w1 "),
        "the partial text is kept: {stored}"
    );
    // Following the dead reply from B ends with the stored record's `finished`.
    let tail = b.events(&reply, 0);
    assert_eq!(
        tail.last().map(|e| e.2["status"].clone()),
        Some(json!("cancelled"))
    );
    // The chat is free: B starts the next reply at once, and nothing was replayed (the mock
    // served each scripted turn once).
    let (status, next) = b.json(
        "POST",
        "/api/chats/1/replies",
        Some(&json!({"type": "normal", "message": "next"})),
    );
    assert_eq!(status, 202, "{next}");
    let next = next["replyId"].as_str().unwrap_or_default().to_owned();
    let done = b.events(&next, 0);
    assert_eq!(
        done.last().map(|e| e.2["text"].clone()),
        Some(json!("After the failover."))
    );
}

#[test]
fn a_session_opened_on_one_replica_works_on_the_others() {
    let Some(database) = tavo_testkit::library::fresh_database() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (data_a, data_b) = (dir.path().join("a"), dir.path().join("b"));
    // The user is added through A's folder; the registry is in the database, so B's empty
    // folder knows them too.
    let mut add = Command::new(env!("CARGO_BIN_EXE_tavo"))
        .args(["--database", &database, "user", "add", "ann", "--admin"])
        .env("TAVO_DATA_DIR", &data_a)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    add.stdin
        .take()
        .unwrap_or_else(|| panic!("stdin"))
        .write_all(b"password-ann\n")
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(add.wait().unwrap_or_else(|e| panic!("{e}")).success());
    let a = Replica::start_with(&data_a, &database, &["--accounts"]);
    let b = Replica::start_with(&data_b, &database, &["--accounts"]);
    let (status, head) = {
        let (status, text) = a.request(
            "POST",
            "/api/session",
            Some(&json!({"name": "ann", "password": "password-ann"})),
            "",
        );
        (status, text)
    };
    assert_eq!(status, 200, "{head}");
    let (_, raw) = {
        // The cookie is in the answer's head, which `request` drops: ask again, keeping it.
        let mut s = TcpStream::connect(&a.addr).unwrap_or_else(|e| panic!("{e}"));
        let body = json!({"name": "ann", "password": "password-ann"}).to_string();
        let req = format!(
            "POST /api/session HTTP/1.1\r\nHost: {}\r\nx-tavo-request: 1\r\nConnection: close\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            a.addr,
            body.len()
        );
        s.write_all(req.as_bytes())
            .unwrap_or_else(|e| panic!("{e}"));
        let mut raw = String::new();
        let _ = s.read_to_string(&mut raw);
        (0, raw)
    };
    let cookie = raw
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("set-cookie").then(|| {
                value
                    .trim()
                    .split(';')
                    .next()
                    .unwrap_or_default()
                    .to_owned()
            })
        })
        .unwrap_or_else(|| panic!("no cookie: {raw}"));
    let header = format!("Cookie: {cookie}\r\n");
    // The session A opened works on B, and a persona made through B is seen through A.
    let (status, me) = b.json_as("GET", "/api/session", None, &header);
    assert_eq!(status, 200, "{me}");
    assert_eq!(me["user"]["name"], "ann", "{me}");
    let (status, made) = b.json_as(
        "POST",
        "/api/library/persona",
        Some(&json!({"name": "Made on B", "description": "x"})),
        &header,
    );
    assert!(status == 200 || status == 201, "{status} {made}");
    let (_, listed) = a.json_as("GET", "/api/library/persona", None, &header);
    assert!(listed.to_string().contains("Made on B"), "{listed}");
    // Logging out on A ends the session on B.
    let (status, _) = a.request("DELETE", "/api/session", None, &header);
    assert!(status < 300, "{status}");
    let (status, _) = b.json_as("GET", "/api/library/persona", None, &header);
    assert_eq!(status, 401);
}
