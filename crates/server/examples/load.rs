//! Load test of `tavo serve` against a timestamping mock provider on loopback.
//!
//! ```text
//! cargo build --release -p tavo
//! cargo run --release -p tavo-server --example load -- --tavo target/release/tavo
//! ```
//!
//! It starts `tavo serve` on a fresh data directory and measures, in order:
//! 1. start to first answered request (spawn → first `200` from `/api/health`);
//! 2. idle RSS (VmRSS of the server after start-up, before any work);
//! 3. N concurrent streaming replies (default 500): each POSTs a message and reads its SSE
//!    stream to `finished`; every error is counted;
//! 4. relay overhead: the mock writes its send time (ns) into each text delta; the client
//!    subtracts it from the arrival time of the `text_delta` carrying it. The same client code
//!    reading the mock directly gives the baseline; overhead = tavo path − direct path;
//! 5. reads per second of the latest 50-message page of a 100,000-message chat (imported).
//!
//! Everything listens on 127.0.0.1 only.

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Body;
use axum::response::Response;
use futures_util::StreamExt;
use serde_json::{Value, json};

struct Args {
    tavo: String,
    replies: usize,
    events: usize,
    interval_ms: u64,
    messages: usize,
    read_secs: u64,
    readers: usize,
}

fn parse_args() -> Args {
    let mut a = Args {
        tavo: "target/release/tavo".into(),
        replies: 500,
        events: 40,
        interval_ms: 25,
        messages: 100_000,
        read_secs: 5,
        readers: 16,
    };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i + 1 < argv.len() {
        let v = argv[i + 1].clone();
        let n = v.parse::<usize>().unwrap_or(0);
        match argv[i].as_str() {
            "--tavo" => a.tavo = v,
            "--replies" => a.replies = n,
            "--events" => a.events = n,
            "--interval-ms" => a.interval_ms = n as u64,
            "--messages" => a.messages = n,
            "--read-secs" => a.read_secs = n as u64,
            "--readers" => a.readers = n,
            other => eprintln!("ignoring unknown flag {other}"),
        }
        i += 2;
    }
    a
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// The mock provider: every chat completion streams `events` deltas, each carrying its send
/// time in nanoseconds followed by `|`.
async fn start_mock(events: usize, interval: Duration) -> std::io::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let app = Router::new().fallback(move || async move {
        let stream = futures_util::stream::unfold(0usize, move |i| async move {
            if i > events + 1 {
                return None;
            }
            if i > 0 && i <= events {
                tokio::time::sleep(interval).await;
            }
            let line = if i == 0 {
                json!({"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}).to_string()
            } else if i <= events {
                let text = format!("{}|", now_ns());
                json!({"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":text}}]}).to_string()
            } else {
                json!({"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}).to_string()
            };
            let mut frame = format!("data: {line}\n\n");
            if i == events + 1 {
                frame.push_str("data: [DONE]\n\n");
            }
            Some((Ok::<_, std::io::Error>(bytes::Bytes::from(frame)), i + 1))
        });
        Response::builder()
            .header("content-type", "text/event-stream")
            .body(Body::from_stream(stream))
            .unwrap_or_default()
    });
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            eprintln!("mock stopped: {e}");
        }
    });
    Ok(addr)
}

/// Reads an SSE response; calls `on_event(event, data)` per event until it returns false.
async fn read_sse(
    resp: reqwest::Response,
    mut on_event: impl FnMut(&str, &str) -> bool,
) -> Result<(), String> {
    let mut stream = resp.bytes_stream();
    let mut buf = String::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| e.to_string())?;
        buf.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buf.find("\n\n") {
            let block: String = buf.drain(..end + 2).collect();
            let mut event = "message";
            let mut data = String::new();
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("event:") {
                    event = if v.trim() == "text_delta" {
                        "text_delta"
                    } else if v.trim() == "finished" {
                        "finished"
                    } else {
                        "other"
                    };
                } else if let Some(v) = line.strip_prefix("data:") {
                    data.push_str(v.trim_start());
                }
            }
            if !on_event(event, &data) {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// Latencies (ns) of the timestamps carried by a stream of text pieces.
#[derive(Default)]
struct Stamps {
    pending: String,
    latencies: Vec<u64>,
}

impl Stamps {
    fn feed(&mut self, text: &str) {
        let arrived = now_ns();
        self.pending.push_str(text);
        while let Some(end) = self.pending.find('|') {
            let stamp: String = self.pending.drain(..=end).collect();
            if let Ok(sent) = stamp.trim_end_matches('|').parse::<u64>() {
                self.latencies.push(arrived.saturating_sub(sent));
            }
        }
    }
}

fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)] as f64 / 1e6
}

fn rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_or(0, |a| a.port())
}

struct Server(Child);
impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn big_chat(messages: usize) -> Vec<u8> {
    let mut out = String::with_capacity(messages * 120);
    out.push_str(
        &json!({"user_name": "User", "character_name": "Bench", "create_date": "2024-01-01"})
            .to_string(),
    );
    out.push('\n');
    for i in 0..messages {
        let line = json!({"name": if i % 2 == 0 { "User" } else { "Bench" }, "is_user": i % 2 == 0,
                          "send_date": "2024-01-01 10:00", "mes": format!("message number {i}: the quick brown fox jumps over the lazy dog")});
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out.into_bytes()
}

fn multipart(name: &str, bytes: &[u8]) -> (String, Vec<u8>) {
    let boundary = "----tavo-load-boundary";
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = parse_args();
    let dir = tempfile::tempdir()?;
    let interval = Duration::from_millis(args.interval_ms);
    let mock = start_mock(args.events, interval).await?;
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        "x-tavo-request",
        reqwest::header::HeaderValue::from_static("1"),
    );
    let http = reqwest::Client::builder()
        .default_headers(headers)
        .pool_max_idle_per_host(1024)
        .build()?;

    // 1. Start to first answered request.
    let started = Instant::now();
    let child = Command::new(&args.tavo)
        .args([
            "serve",
            "--addr",
            &format!("127.0.0.1:{port}"),
            "--data-dir",
        ])
        .arg(dir.path())
        .env("RUST_LOG", "error")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()?;
    let server = Server(child);
    let pid = server.0.id();
    let first_answer = loop {
        if let Ok(r) = http.get(format!("{base}/api/health")).send().await
            && r.status().is_success()
        {
            break started.elapsed();
        }
        if started.elapsed() > Duration::from_secs(20) {
            return Err("the server did not answer within 20 s".into());
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    };
    tokio::time::sleep(Duration::from_secs(1)).await;
    let idle_rss = rss_kb(pid);

    // Setup: the connection, one chat per reply, the big chat.
    let r = http
        .post(format!("{base}/api/connections"))
        .json(&json!({"name": "mock", "source": "custom", "protocol": "openai-chat",
                      "baseUrl": format!("http://{mock}/v1"), "model": "m", "apiKey": "sk-load-0123456789abcdef",
                      "parameters": {"stream": true}}))
        .send()
        .await?;
    if !r.status().is_success() {
        return Err(format!("adding the connection failed: {}", r.text().await?).into());
    }
    let mut chats = Vec::with_capacity(args.replies);
    for i in 0..args.replies {
        let r: Value = http
            .post(format!("{base}/api/library/chat"))
            .json(&json!({"name": format!("load {i}")}))
            .send()
            .await?
            .json()
            .await?;
        chats.push(r["id"].as_i64().ok_or("chat creation failed")?);
    }
    let bytes = big_chat(args.messages);
    let (ct, body) = multipart("big.jsonl", &bytes);
    let t = Instant::now();
    let imported: Value = http
        .post(format!("{base}/api/import"))
        .header("content-type", ct)
        .body(body)
        .send()
        .await?
        .json()
        .await?;
    let import_time = t.elapsed();
    let big = imported["results"][0]["chatId"]
        .as_i64()
        .ok_or_else(|| format!("import failed: {imported}"))?;

    // 3 + 4. Concurrent streaming replies through tavo.
    let errors = Arc::new(AtomicU64::new(0));
    let t = Instant::now();
    let mut tasks = Vec::new();
    for &chat in &chats {
        let http = http.clone();
        let base = base.clone();
        let errors = errors.clone();
        tasks.push(tokio::spawn(async move {
            let mut stamps = Stamps::default();
            let outcome: Result<(), String> = async {
                let r = http
                    .post(format!("{base}/api/chats/{chat}/messages"))
                    .json(&json!({"content": "go"}))
                    .send()
                    .await
                    .map_err(|e| e.to_string())?;
                if r.status().as_u16() != 202 {
                    return Err(format!("start: {}", r.status()));
                }
                let started: Value = r.json().await.map_err(|e| e.to_string())?;
                let reply = started["replyId"].as_str().unwrap_or_default().to_owned();
                let events = http
                    .get(format!("{base}/api/replies/{reply}/events"))
                    .send()
                    .await
                    .map_err(|e| e.to_string())?;
                let mut status = String::new();
                read_sse(events, |event, data| match event {
                    "text_delta" => {
                        let v: Value = serde_json::from_str(data).unwrap_or(Value::Null);
                        stamps.feed(v["text"].as_str().unwrap_or_default());
                        true
                    }
                    "finished" => {
                        let v: Value = serde_json::from_str(data).unwrap_or(Value::Null);
                        status = v["status"].as_str().unwrap_or_default().to_owned();
                        false
                    }
                    _ => true,
                })
                .await?;
                if status != "finished" {
                    return Err(format!("reply ended {status:?}"));
                }
                Ok(())
            }
            .await;
            if let Err(e) = outcome
                && errors.fetch_add(1, Ordering::Relaxed) < 5
            {
                eprintln!("reply error: {e}");
            }
            stamps.latencies
        }));
    }
    let mut via_tavo = Vec::new();
    for t in tasks {
        via_tavo.extend(t.await.unwrap_or_default());
    }
    let replies_time = t.elapsed();
    via_tavo.sort_unstable();

    // Baseline: the same client code reading the mock directly, same concurrency.
    let mut tasks = Vec::new();
    for _ in 0..args.replies {
        let http = http.clone();
        tasks.push(tokio::spawn(async move {
            let mut stamps = Stamps::default();
            if let Ok(r) = http
                .post(format!("http://{mock}/v1/chat/completions"))
                .json(&json!({"model": "m", "stream": true, "messages": []}))
                .send()
                .await
            {
                let _ = read_sse(r, |_, data| {
                    if data == "[DONE]" {
                        return false;
                    }
                    let v: Value = serde_json::from_str(data).unwrap_or(Value::Null);
                    stamps.feed(
                        v["choices"][0]["delta"]["content"]
                            .as_str()
                            .unwrap_or_default(),
                    );
                    true
                })
                .await;
            }
            stamps.latencies
        }));
    }
    let mut direct = Vec::new();
    for t in tasks {
        direct.extend(t.await.unwrap_or_default());
    }
    direct.sort_unstable();
    let busy_rss = rss_kb(pid);

    // 5. Reads of the big chat's latest page.
    let count = Arc::new(AtomicU64::new(0));
    let read_errors = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(args.read_secs);
    let mut tasks = Vec::new();
    for _ in 0..args.readers {
        let http = http.clone();
        let url = format!("{base}/api/chats/{big}/messages?limit=50");
        let count = count.clone();
        let read_errors = read_errors.clone();
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            while Instant::now() < deadline {
                let t = Instant::now();
                match http.get(&url).send().await {
                    Ok(r) if r.status().is_success() => {
                        if r.bytes().await.is_ok() {
                            count.fetch_add(1, Ordering::Relaxed);
                            lat.push(t.elapsed().as_nanos() as u64);
                        }
                    }
                    _ => {
                        read_errors.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            lat
        }));
    }
    let mut read_lat = Vec::new();
    for t in tasks {
        read_lat.extend(t.await.unwrap_or_default());
    }
    read_lat.sort_unstable();
    let reads = count.load(Ordering::Relaxed) as f64 / args.read_secs as f64;

    let (t50, t99) = (percentile(&via_tavo, 0.5), percentile(&via_tavo, 0.99));
    let (d50, d99) = (percentile(&direct, 0.5), percentile(&direct, 0.99));
    println!(
        "## tavo serve load ({} replies × {} events every {} ms)",
        args.replies, args.events, args.interval_ms
    );
    println!();
    println!("| measure | value |");
    println!("|---|---|");
    println!(
        "| start to first answered request | {:.1} ms |",
        first_answer.as_secs_f64() * 1000.0
    );
    println!("| idle RSS | {:.1} MB |", idle_rss as f64 / 1024.0);
    println!(
        "| RSS after the replies | {:.1} MB |",
        busy_rss as f64 / 1024.0
    );
    println!(
        "| {} concurrent streaming replies | {:.2} s, {} errors |",
        args.replies,
        replies_time.as_secs_f64(),
        errors.load(Ordering::Relaxed)
    );
    println!(
        "| provider → SSE client via tavo (p50 / p99) | {t50:.3} / {t99:.3} ms ({} events) |",
        via_tavo.len()
    );
    println!(
        "| provider → client directly (p50 / p99) | {d50:.3} / {d99:.3} ms ({} events) |",
        direct.len()
    );
    println!(
        "| relay overhead (p50 / p99, difference) | {:.3} / {:.3} ms |",
        t50 - d50,
        t99 - d99
    );
    println!(
        "| import of a {}-message chat (HTTP upload) | {:.2} s |",
        args.messages,
        import_time.as_secs_f64()
    );
    println!(
        "| latest 50-message page of that chat, {} readers | {reads:.0} reads/s, p50 {:.2} ms, p99 {:.2} ms, {} errors |",
        args.readers,
        percentile(&read_lat, 0.5),
        percentile(&read_lat, 0.99),
        read_errors.load(Ordering::Relaxed)
    );
    drop(server);
    Ok(())
}
