//! The loopback mock provider: an axum server that answers every generation request with the
//! next turn of its script, in the protocol the request path names, and records what it got.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::Value;
use tokio::sync::oneshot;

use crate::render::{self, Ctx, Frame, Wire, error_body};
use crate::script::{Script, Turn};

/// One request the mock received.
#[derive(Debug, Clone, Serialize)]
pub struct RecordedRequest {
    /// Path and query.
    pub path: String,
    /// The protocol the path names; `None` for a path the mock does not serve (answered 404).
    pub protocol: Option<Wire>,
    /// Whether a stream was asked for: `"stream": true` in the body, or Gemini's stream path.
    pub stream: bool,
    /// Header names are lower-case.
    pub headers: BTreeMap<String, String>,
    /// The JSON body; a body that is not JSON is kept as a JSON string.
    pub body: Value,
}

/// A callback that sees every recorded request (the binary logs them).
pub type RequestHook = Box<dyn Fn(&RecordedRequest) + Send + Sync>;

struct Shared {
    script: Script,
    next: AtomicUsize,
    requests: Mutex<Vec<RecordedRequest>>,
    /// Called with every recorded request (the binary logs them).
    on_request: Option<RequestHook>,
}

/// A running mock provider. Dropping it stops the server.
pub struct MockProvider {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<oneshot::Sender<()>>,
}

impl MockProvider {
    /// Starts on a free loopback port.
    pub async fn start(script: Script) -> std::io::Result<Self> {
        Self::start_on(0, script, None).await
    }

    /// Starts on `port` (0 = any free one) of 127.0.0.1; `on_request` sees every request.
    pub async fn start_on(
        port: u16,
        script: Script,
        on_request: Option<RequestHook>,
    ) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            script,
            next: AtomicUsize::new(0),
            requests: Mutex::new(Vec::new()),
            on_request,
        });
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(async {
                let _ = stopped.await;
            });
            if let Err(e) = serve.await {
                eprintln!("mock provider stopped: {e}");
            }
        });
        Ok(MockProvider {
            addr,
            shared,
            stop: Some(stop),
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL a connection of this protocol should use (OpenAI paths under `/v1`).
    pub fn base_url(&self, wire: Wire) -> String {
        match wire {
            Wire::OpenaiChat | Wire::OpenaiResponses => format!("http://{}/v1", self.addr),
            Wire::Anthropic | Wire::Gemini => format!("http://{}", self.addr),
        }
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared
            .requests
            .lock()
            .map(|r| r.clone())
            .unwrap_or_default()
    }
}

impl Drop for MockProvider {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

fn json_response(status: StatusCode, v: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        v.to_string(),
    )
        .into_response()
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri
        .path_and_query()
        .map_or_else(|| uri.path().to_owned(), |p| p.as_str().to_owned());
    if method == Method::GET {
        return json_response(
            StatusCode::OK,
            &serde_json::json!({"object": "list", "data": [{"id": "mock", "object": "model"}]}),
        );
    }
    let parsed: Value = serde_json::from_slice(&body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()));
    let route = Wire::from_path(&path);
    let stream = match route {
        Some((Wire::Gemini, s)) => s,
        Some(_) => parsed.get("stream").and_then(Value::as_bool) == Some(true),
        None => false,
    };
    let rec = RecordedRequest {
        path: path.clone(),
        protocol: route.map(|r| r.0),
        stream,
        headers: headers
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_owned(),
                    v.to_str().unwrap_or_default().to_owned(),
                )
            })
            .collect(),
        body: parsed.clone(),
    };
    if let Some(f) = &shared.on_request {
        f(&rec);
    }
    if let Ok(mut r) = shared.requests.lock() {
        r.push(rec);
    }
    let Some((wire, _)) = route else {
        return json_response(
            StatusCode::NOT_FOUND,
            &serde_json::json!({"error": {"message": format!("no route {path}")}}),
        );
    };
    let turn_no = shared.next.fetch_add(1, Ordering::SeqCst);
    let turn = match shared.script.turns.get(turn_no) {
        Some(t) => t.clone(),
        None if shared.script.repeat_last && !shared.script.turns.is_empty() => {
            shared.script.turns[shared.script.turns.len() - 1].clone()
        }
        None => {
            let body = error_body(
                wire,
                500,
                &format!("mock script exhausted: no turn {turn_no}"),
            );
            return json_response(StatusCode::INTERNAL_SERVER_ERROR, &body);
        }
    };
    answer(
        wire,
        stream,
        &turn,
        turn_no,
        parsed
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or("mock"),
    )
}

fn answer(wire: Wire, stream: bool, turn: &Turn, turn_no: usize, model: &str) -> Response {
    if let Some(e) = &turn.error {
        let status = StatusCode::from_u16(e.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut resp = json_response(status, &error_body(wire, e.status, &e.message));
        if let Some(v) = e
            .retry_after
            .and_then(|s| HeaderValue::from_str(&s.to_string()).ok())
        {
            resp.headers_mut().insert(header::RETRY_AFTER, v);
        }
        return resp;
    }
    let stamped;
    let turn = if turn.stamp {
        stamped = Turn {
            text: turn
                .text
                .as_ref()
                .map(|t| STAMP_SLOT.to_string().repeat(t.chars().count())),
            ..turn.clone()
        };
        &stamped
    } else {
        turn
    };
    let c = Ctx {
        turn,
        turn_no,
        model,
    };
    if !stream {
        let body = match wire {
            Wire::OpenaiChat => render::openai_chat::body(&c),
            Wire::OpenaiResponses => render::responses::body(&c),
            Wire::Anthropic => render::anthropic::body(&c),
            Wire::Gemini => render::gemini::body(&c),
        };
        if turn.stamp {
            return (
                StatusCode::OK,
                [(header::CONTENT_TYPE, "application/json")],
                fill_stamps(&body.to_string(), now_ns()),
            )
                .into_response();
        }
        return json_response(StatusCode::OK, &body);
    }
    let frames = match wire {
        Wire::OpenaiChat => render::openai_chat::frames(&c),
        Wire::OpenaiResponses => render::responses::frames(&c),
        Wire::Anthropic => render::anthropic::frames(&c),
        Wire::Gemini => render::gemini::frames(&c),
    };
    let mut all: Vec<Frame> = frames.body;
    if !turn.truncate {
        all.extend(frames.tail);
    }
    let crlf = wire == Wire::Gemini;
    let fail_after = turn.fail_after;
    let delay = Duration::from_millis(turn.delay_ms);
    let state = Pump {
        frames: all.into_iter(),
        sent: 0,
        fail_after,
        delay,
        stamp: turn.stamp,
        done: false,
    };
    let events = futures_util::stream::unfold(state, move |mut p| async move {
        if p.done {
            return None;
        }
        if p.fail_after.is_some_and(|n| p.sent >= n) {
            // An error item makes hyper abort the connection mid-body; the pause lets the
            // frames before it reach the client first, as they would from a real provider.
            p.done = true;
            tokio::time::sleep(Duration::from_millis(50)).await;
            let err = std::io::Error::new(
                std::io::ErrorKind::ConnectionReset,
                "scripted mid-stream failure",
            );
            return Some((Err(err), p));
        }
        let mut frame = p.frames.next()?;
        if !p.delay.is_zero() {
            tokio::time::sleep(p.delay).await;
        }
        if p.stamp {
            frame.data = fill_stamps(&frame.data, now_ns());
        }
        p.sent += 1;
        Some((
            Ok::<Bytes, std::io::Error>(Bytes::from(frame.to_bytes(crlf))),
            p,
        ))
    });
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(events))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// Where a streamed answer is.
struct Pump {
    frames: std::vec::IntoIter<Frame>,
    sent: usize,
    fail_after: Option<usize>,
    delay: Duration,
    /// Fill the stamp slots of each frame with its send time ([`Turn::stamp`]).
    stamp: bool,
    done: bool,
}

/// The character a stamped turn's text is made of before it is sent: every piece of the text
/// is a run of it, replaced by one `<t:NANOS>` when its frame is written. A private-use code
/// point, which JSON carries unescaped.
const STAMP_SLOT: char = '\u{E000}';

/// Nanoseconds since the Unix epoch, by the wall clock.
fn now_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

/// `s` with every run of [`STAMP_SLOT`] replaced by `<t:NANOS>` (19 digits, zero-padded).
fn fill_stamps(s: &str, nanos: u128) -> String {
    if !s.contains(STAMP_SLOT) {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len() + 24);
    let mut in_slot = false;
    for ch in s.chars() {
        if ch == STAMP_SLOT {
            if !in_slot {
                out.push_str(&format!("<t:{nanos:019}>"));
            }
            in_slot = true;
        } else {
            in_slot = false;
            out.push(ch);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stamp inside `<t:NANOS>`, when `s` is exactly one.
    fn stamp_of(s: &str) -> Option<u128> {
        let digits = s.strip_prefix("<t:")?.strip_suffix('>')?;
        (digits.len() == 19 && digits.bytes().all(|b| b.is_ascii_digit()))
            .then(|| digits.parse().ok())
            .flatten()
    }

    #[test]
    fn stamp_slots_become_one_stamp_per_run() {
        let s = format!("a{0}{0}{0}b{0}", STAMP_SLOT);
        assert_eq!(
            fill_stamps(&s, 42),
            "a<t:0000000000000000042>b<t:0000000000000000042>"
        );
        assert_eq!(fill_stamps("plain", 1), "plain");
    }

    #[tokio::test]
    async fn stamped_text_deltas_carry_increasing_send_times() {
        let turn = Turn {
            chunk: Some(3),
            delay_ms: 2,
            stamp: true,
            ..Turn::text("abcdefghij")
        };
        let script = Script {
            turns: vec![turn],
            repeat_last: true,
        };
        let mock = MockProvider::start(script).await.expect("mock");
        let http = reqwest::Client::new();
        let body = serde_json::json!({"model": "m", "stream": true, "max_tokens": 16,
                                      "messages": [{"role": "user", "content": "go"}],
                                      "input": "go", "contents": []});
        let cases = [
            (
                Wire::OpenaiChat,
                "/chat/completions",
                "/choices/0/delta/content",
            ),
            (Wire::OpenaiResponses, "/responses", "/delta"),
            (Wire::Anthropic, "/v1/messages", "/delta/text"),
            (
                Wire::Gemini,
                "/v1beta/models/m:streamGenerateContent?alt=sse",
                "/candidates/0/content/parts/0/text",
            ),
        ];
        for (wire, path, pointer) in cases {
            let before = now_ns();
            let text = http
                .post(format!("{}{path}", mock.base_url(wire)))
                .json(&body)
                .send()
                .await
                .expect("send")
                .text()
                .await
                .expect("body");
            let after = now_ns();
            let deltas: Vec<String> = text
                .lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .filter_map(|d| serde_json::from_str::<Value>(d).ok())
                .filter_map(|v| v.pointer(pointer)?.as_str().map(str::to_owned))
                .filter(|t| !t.is_empty())
                .collect();
            let stamps: Vec<u128> = deltas.iter().filter_map(|d| stamp_of(d)).collect();
            assert_eq!(stamps.len(), 4, "{wire:?}: one stamp per piece: {deltas:?}");
            assert_eq!(deltas.len(), 4, "{wire:?}: only stamps: {deltas:?}");
            assert!(
                stamps.windows(2).all(|w| w[0] < w[1]),
                "{wire:?}: increasing: {stamps:?}"
            );
            assert!(
                before <= stamps[0] && stamps[3] <= after,
                "{wire:?}: {before} ≤ {stamps:?} ≤ {after}"
            );
        }
        let plain: Value = http
            .post(format!(
                "{}/chat/completions",
                mock.base_url(Wire::OpenaiChat)
            ))
            .json(&serde_json::json!({"model": "m", "messages": []}))
            .send()
            .await
            .expect("send")
            .json()
            .await
            .expect("json");
        let content = plain
            .pointer("/choices/0/message/content")
            .and_then(Value::as_str)
            .unwrap_or_default();
        assert!(stamp_of(content).is_some(), "non-streamed: {content}");
    }
}
