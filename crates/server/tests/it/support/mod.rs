//! Starts a real server on 127.0.0.1:0 over a fresh library, and talks to it with reqwest.

use std::net::SocketAddr;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::{Value, json};
use tavo_server::{ServeConfig, Server};
use tavo_store::Store;
use tavo_testkit::{MockProvider, Wire};
use tokio::sync::oneshot;

/// The token tests configure when they need one.
pub const TOKEN: &str = "test-token-0123456789";

/// A running server and its library.
pub struct TestServer {
    pub addr: SocketAddr,
    pub store: Store,
    pub dir: tempfile::TempDir,
    stop: Option<oneshot::Sender<()>>,
    pub done: Option<tokio::task::JoinHandle<()>>,
}

impl TestServer {
    /// A loopback server without a token.
    pub async fn start() -> Self {
        Self::start_with(|_| {}).await
    }

    /// A server whose configuration `tune` adjusts.
    pub async fn start_with(tune: impl FnOnce(&mut ServeConfig)) -> Self {
        Self::start_custom(|mut config, store| async move {
            tune(&mut config);
            Server::bind(config, store).await.expect("bind")
        })
        .await
    }

    /// A server built by `build` from a loopback configuration and a fresh library.
    pub async fn start_custom<F, Fut>(build: F) -> Self
    where
        F: FnOnce(ServeConfig, Store) -> Fut,
        Fut: std::future::Future<Output = Server>,
    {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = tavo_testkit::test_library(dir.path());
        let config = ServeConfig::local(dir.path());
        let server = build(config, store.clone()).await;
        let addr = server.local_addr().expect("addr");
        let (stop, stopped) = oneshot::channel::<()>();
        let done = tokio::spawn(async move {
            let signal = async {
                let _ = stopped.await;
            };
            if let Err(e) = server.run(signal).await {
                eprintln!("server stopped: {e}");
            }
        });
        TestServer {
            addr,
            store,
            dir,
            stop: Some(stop),
            done: Some(done),
        }
    }

    /// `http://127.0.0.1:PORT` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Asks the server to stop and waits for it.
    pub async fn shutdown(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(done) = self.done.take() {
            let _ = tokio::time::timeout(Duration::from_secs(15), done).await;
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

/// A client that sends the CSRF header on every request (a well-behaved program).
pub fn client() -> reqwest::Client {
    let mut headers = HeaderMap::new();
    headers.insert("x-tavo-request", HeaderValue::from_static("1"));
    reqwest::Client::builder()
        .default_headers(headers)
        .build()
        .expect("client")
}

/// A client with the bearer token.
pub fn bearer_client() -> reqwest::Client {
    let mut headers = HeaderMap::new();
    headers.insert(
        reqwest::header::AUTHORIZATION,
        HeaderValue::from_str(&format!("Bearer {TOKEN}")).expect("header"),
    );
    reqwest::Client::builder()
        .default_headers(headers)
        .build()
        .expect("client")
}

/// A client with no default headers.
pub fn bare_client() -> reqwest::Client {
    reqwest::Client::new()
}

/// Reads a JSON body (any status).
pub async fn json_of(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let text = response.text().await.expect("body");
    let value =
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON ({status}): {text}"));
    (status, value)
}

/// Creates a chat in the library and returns its id.
pub fn make_chat(store: &Store, name: &str) -> i64 {
    let chat: tavo_model::Chat = serde_json::from_value(json!({ "name": name })).expect("chat");
    store.chat_create(&chat).expect("create chat").0
}

/// A multipart/form-data body with the given file parts and text fields.
pub fn multipart(files: &[(&str, &[u8])], fields: &[(&str, &str)]) -> (String, Vec<u8>) {
    let boundary = "----tavo-test-boundary-7MA4YWxkTrZu0gW";
    let mut body = Vec::new();
    for (name, value) in fields {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
            )
            .as_bytes(),
        );
    }
    for (file, bytes) in files {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{file}\"\r\n\
                 Content-Type: application/octet-stream\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

/// `shared/corpus/<rel>`.
pub fn corpus(rel: &str) -> Vec<u8> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/corpus/").to_owned() + rel;
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// One parsed SSE event.
#[derive(Debug, Clone, Default)]
pub struct SseEvent {
    pub id: Option<String>,
    pub event: String,
    pub data: String,
}

impl SseEvent {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.data).unwrap_or(Value::Null)
    }
}

/// Reads SSE events from a response until `stop` says so, the stream ends, or `timeout`.
pub async fn read_sse(
    response: reqwest::Response,
    timeout: Duration,
    mut stop: impl FnMut(&SseEvent) -> bool,
) -> Vec<SseEvent> {
    use futures_util::StreamExt;
    let mut out = Vec::new();
    let mut buf = String::new();
    let mut stream = response.bytes_stream();
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let chunk = match tokio::time::timeout_at(deadline, stream.next()).await {
            Ok(Some(Ok(c))) => c,
            _ => return out,
        };
        buf.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buf.find("\n\n") {
            let block: String = buf.drain(..end + 2).collect();
            let mut ev = SseEvent::default();
            let mut data = Vec::new();
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("id:") {
                    ev.id = Some(v.trim().to_owned());
                } else if let Some(v) = line.strip_prefix("event:") {
                    ev.event = v.trim().to_owned();
                } else if let Some(v) = line.strip_prefix("data:") {
                    data.push(v.strip_prefix(' ').unwrap_or(v).to_owned());
                }
            }
            if ev.event.is_empty() && data.is_empty() {
                continue; // keep-alive comment
            }
            ev.data = data.join("\n");
            let last = stop(&ev);
            out.push(ev);
            if last {
                return out;
            }
        }
    }
}

/// Sends a request: its status and JSON answer.
pub async fn send(req: reqwest::RequestBuilder) -> (u16, Value) {
    json_of(req.send().await.expect("send")).await
}

/// `POST path` with a JSON body: the status and the JSON answer.
pub async fn post(s: &TestServer, path: &str, body: Value) -> (u16, Value) {
    json_of(
        client()
            .post(s.url(path))
            .json(&body)
            .send()
            .await
            .expect("send"),
    )
    .await
}

/// `GET path`: the status and the JSON answer.
pub async fn get(s: &TestServer, path: &str) -> (u16, Value) {
    json_of(client().get(s.url(path)).send().await.expect("send")).await
}

/// Makes the mock provider (OpenAI chat wire) the library's default connection.
pub fn connect(store: &tavo_store::Store, mock: &MockProvider) {
    store
        .setting_set(
            "llm.connections",
            &json!({"default": "mock", "connections": [{"name": "mock", "source": "custom",
                "protocol": "openai-chat", "baseUrl": mock.base_url(Wire::OpenaiChat),
                "model": "mock-model", "apiKey": "sk-server-test-key-0123"}]}),
        )
        .expect("connection");
}
