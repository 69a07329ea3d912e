//! The CLI tests' harness: the `tavo` binary and what its output is read with, `tavo tool call`
//! (the model's exact path), a `tavo serve` on a thread of its own with a few raw HTTP/1.1
//! helpers, and the library every door test starts from.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

/// Runs `tavo ARGS` over the library in `data` and waits for it. The environment that would
/// change what it does is taken away: the developer's log filter, and a server address or token
/// that would send a command to another library.
pub fn tavo(data: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tavo"))
        .args(args)
        .env("TAVO_DATA_DIR", data)
        .env_remove("RUST_LOG")
        .env_remove("TAVO_TOKEN")
        .env_remove("TAVO_ADDR")
        .env_remove("TAVO_DATABASE")
        .output()
        .unwrap_or_else(|e| panic!("cannot run tavo: {e}"))
}

/// The stdout of a command that succeeded, trimmed (an id, a line of JSON); fails the test with
/// the exit code and both streams otherwise.
pub fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// The JSON a command that succeeded printed.
pub fn json(out: Output) -> Value {
    let text = ok(out);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// What a command printed on stderr.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A runtime for the mock servers a test starts beside the binary it runs.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// `tavo tool call NAME ARGS --yes`, the envelope it prints.
pub fn tool(data: &Path, name: &str, args: &Value) -> Value {
    tool_in(data, name, args, None)
}

/// `tavo tool call NAME ARGS [--chat CHAT] --yes`, the envelope it prints.
pub fn tool_in(data: &Path, name: &str, args: &Value, chat: Option<&str>) -> Value {
    let args = args.to_string();
    let mut argv = vec!["tool", "call", name, &args];
    if let Some(chat) = chat {
        argv.extend(["--chat", chat]);
    }
    argv.push("--yes");
    let out = tavo(data, &argv);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{name}: stdout is not JSON ({e}): {} / {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

pub fn show(data: &Path, kind: &str, id: &str) -> Value {
    let text = ok(tavo(data, &["show", kind, id, "--json"]));
    serde_json::from_str(&text).expect("show prints JSON")
}

/// The stored messages of a chat, without ids and times.
pub fn messages(data: &Path, chat: i64) -> Vec<Value> {
    let store = tavo_store::Store::open(data).expect("open");
    store
        .messages_all(tavo_model::ChatId(chat))
        .expect("messages")
        .into_iter()
        .map(|m| {
            let mut v = serde_json::to_value(m).unwrap_or(Value::Null);
            if let Value::Object(o) = &mut v {
                o.shift_remove("id");
                o.shift_remove("sendDate");
            }
            v
        })
        .collect()
}

/// Drops what legitimately differs between two libraries: times.
pub fn strip(mut v: Value) -> Value {
    if let Value::Object(o) = &mut v {
        for k in ["creationDate", "modificationDate"] {
            o.shift_remove(k);
        }
    }
    v
}

/// A card with its own lorebook and regex script, and a second lorebook: the same ids in
/// every library (character 1, lorebooks 1 and 2, regex group 1).
#[allow(dead_code)]
pub fn setup(data: &Path) {
    let card = json!({"spec": "chara_card_v3", "spec_version": "3.0", "data": {
        "name": "Bob", "first_mes": "Yo, {{user}}.", "alternate_greetings": ["Hey."],
        "description": "", "personality": "", "scenario": "", "mes_example": "",
        "character_book": {"name": "Bob's world", "entries": [{"keys": ["city"], "content": "A harbour city.", "enabled": true, "insertion_order": 0}]},
        "extensions": {"regex_scripts": [{"scriptName": "tidy", "findRegex": "/x/g", "replaceString": "y", "placement": [2]}]}
    }});
    let r = tool(data, "tavo_character_import", &json!({"card": card}));
    assert_eq!(r["result"]["characterId"], 1, "{r}");
    let r = tool(
        data,
        "tavo_lorebook_create",
        &json!({"lorebook": {"name": "Extra"}}),
    );
    assert_eq!(r["result"]["id"], 2, "{r}");
}

/// An HTTP answer: the status, the headers (names lower-cased) and the body's bytes.
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Answer {
    /// The first header of that (lower-case) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON; an empty body is `null`.
    pub fn json(&self) -> Value {
        if self.body.is_empty() {
            return Value::Null;
        }
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "not a JSON body ({e}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }
}

/// A `tavo serve` over a library, on a thread of its own; stops when dropped.
pub struct Http {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Http {
    pub fn start(data: &Path) -> Self {
        let data = data.to_path_buf();
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let store = tavo_store::Store::open(&data).expect("store");
                let config = tavo_server::ServeConfig::local(&data);
                let server = tavo_server::Server::bind(config, store)
                    .await
                    .expect("bind");
                addr_tx.send(server.local_addr().expect("addr")).ok();
                let signal = async {
                    let _ = stopped.await;
                };
                let _ = server.run(signal).await;
            });
        });
        let addr = addr_rx.recv().expect("the server started");
        Http {
            addr,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// One request (`METHOD path`, an optional JSON body, extra header lines) and its answer.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        extra: &[(&str, &str)],
    ) -> Answer {
        let body = body.map(Value::to_string).unwrap_or_default();
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nx-tavo-request: 1\r\nConnection: close\r\n",
            self.addr
        );
        if !body.is_empty() {
            head.push_str("Content-Type: application/json\r\n");
        }
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        for (name, value) in extra {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        let mut s = TcpStream::connect(self.addr).expect("connect");
        s.write_all(head.as_bytes()).expect("send");
        s.write_all(body.as_bytes()).expect("send");
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).expect("read");
        let split = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("an HTTP answer");
        let head = String::from_utf8_lossy(&raw[..split]).into_owned();
        let rest = raw[split + 4..].to_vec();
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|c| c.parse().ok())
            .expect("status");
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        let chunked = headers
            .iter()
            .any(|(n, v)| n == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"));
        let body = if chunked { dechunk(&rest) } else { rest };
        Answer {
            status,
            headers,
            body,
        }
    }

    /// `POST path` with a JSON body: the status and the JSON answer.
    pub fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let a = self.request("POST", path, Some(body), &[]);
        (a.status, a.json())
    }

    /// `PUT path` with a JSON body: the status and the JSON answer.
    pub fn put(&self, path: &str, body: &Value) -> (u16, Value) {
        let a = self.request("PUT", path, Some(body), &[]);
        (a.status, a.json())
    }

    /// `DELETE path`: the status and the JSON answer (`null` for an empty one).
    pub fn delete(&self, path: &str) -> (u16, Value) {
        let a = self.request("DELETE", path, None, &[]);
        (a.status, a.json())
    }

    /// `GET path`: the whole answer.
    pub fn get(&self, path: &str) -> Answer {
        self.request("GET", path, None, &[])
    }
}

/// A `Transfer-Encoding: chunked` body, decoded.
fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = raw.windows(2).position(|w| w == b"\r\n") {
        let size = String::from_utf8_lossy(&raw[..end]);
        let size = size.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size, 16).expect("a chunk size");
        if size == 0 {
            break;
        }
        let start = end + 2;
        out.extend_from_slice(&raw[start..start + size]);
        raw = &raw[start + size + 2..];
    }
    out
}

impl Drop for Http {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The error a CLI command printed: `error: <code>: <message>` on stderr, exit 1.
#[allow(dead_code)]
pub fn cli_error(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    String::from_utf8_lossy(&out.stderr).trim().to_owned()
}

/// `error: <code>: <message>` of an error object (the tool envelope's, HTTP's): what the CLI
/// prints for the same refusal.
pub fn as_cli(error: &Value) -> String {
    format!(
        "error: {}: {}",
        error["code"].as_str().unwrap_or_default(),
        error["message"].as_str().unwrap_or_default()
    )
}

/// Text a command printed, read as JSON.
pub fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}
