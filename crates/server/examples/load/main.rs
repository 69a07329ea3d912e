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
//! 3. one warm-up reply alone (the first prompt of a process loads the tokenizer), then N
//!    concurrent streaming replies (default 500): each POSTs a message and reads its SSE stream
//!    to `finished`; every error is counted;
//! 4. relay overhead: the mock writes its send time (ns) into each text delta just before it
//!    hands the frame to its socket (its pacing sleeps come before the stamp, so they are not
//!    measured); the client subtracts it from the arrival time of the `text_delta` carrying it.
//!    The same client code then reads the mock directly, and through the null relay (`relay.rs`:
//!    a separate process that passes the mock's bytes through unchanged), at the same
//!    concurrency. Overhead = tavo path − direct path, per percentile; the null relay's own
//!    overhead is what one more loopback hop costs on this machine, the floor for any HTTP
//!    relay, and tavo path − null relay path is what tavo adds beyond it. The TCP relay (a
//!    process that copies bytes both ways without parsing HTTP) measures the same for the least
//!    a relay process can do. `--timeline` adds the tavo path's latency per 100 ms window;
//! 5. reads per second of the latest 50-message page of a 100,000-message chat (imported);
//! 6. the server's memory: RSS idle, after the import, at its peak while replies stream, when
//!    they have ended and after `--settle-secs` of idleness, and its thread count.
//!
//! `--database postgres://…` runs the server on a PostgreSQL library (a fresh database is best:
//! the library is its `tavo` schema), for the same figures beside SQLite's.
//!
//! The mock runs on its own thread and runtime, the client on another (both single-threaded);
//! all of them (mock, client, the relay under test) still share the machine's cores, which the
//! figures include. Everything listens on 127.0.0.1 only.

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod measure;
mod mock;
mod relay;

use measure::{
    Stamps, cpu_secs, mb, percentile, proc_status, read_sse, rss_kb, sample_peaks, string_field,
    timeline,
};
use mock::start_mock;
use relay::RelayProcess;

struct Args {
    tavo: String,
    replies: usize,
    events: usize,
    interval_ms: u64,
    messages: usize,
    read_secs: u64,
    readers: usize,
    settle_secs: u64,
    timeline: bool,
    /// `--database URL`: the server keeps its library in PostgreSQL.
    database: Option<String>,
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
        settle_secs: 5,
        timeline: false,
        database: None,
    };
    let mut argv: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    if let Some(at) = argv.iter().position(|a| a == "--timeline") {
        a.timeline = true;
        argv.remove(at);
    }
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
            "--settle-secs" => a.settle_secs = n as u64,
            "--database" => a.database = Some(v),
            other => eprintln!("ignoring unknown flag {other}"),
        }
        i += 2;
    }
    a
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

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let argv: Vec<String> = std::env::args().collect();
    if argv.get(1).map(String::as_str) == Some("--null-relay") {
        let mock = argv.get(2).ok_or("--null-relay needs the mock's address")?;
        return relay::serve(mock.parse()?);
    }
    if argv.get(1).map(String::as_str) == Some("--tcp-relay") {
        let mock = argv.get(2).ok_or("--tcp-relay needs the mock's address")?;
        return relay::serve_tcp(mock.parse()?);
    }
    // The client runs on one thread, like the mock: the machine's cores are shared by the
    // server under test, the mock and this client, and a leaner client disturbs it less.
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(run(parse_args()))
}

async fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let interval = Duration::from_millis(args.interval_ms);
    let mock = start_mock(args.events, interval)?;
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
        .args(
            args.database
                .iter()
                .flat_map(|d| ["--database".to_owned(), d.clone()]),
        )
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
    // A chat has members: one character for all of them.
    let character: Value = http
        .post(format!("{base}/api/library/character"))
        .json(&json!({"name": "Bench", "firstMes": "Ready."}))
        .send()
        .await?
        .json()
        .await?;
    let member = character["id"]
        .as_i64()
        .ok_or("character creation failed")?;
    let mut chats = Vec::with_capacity(args.replies);
    for i in 0..args.replies {
        let r: Value = http
            .post(format!("{base}/api/chats"))
            .json(&json!({"name": format!("load {i}"), "characters": [member], "greeting": false}))
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
    let import_rss = rss_kb(pid);
    let big = imported["results"][0]["chatId"]
        .as_i64()
        .ok_or_else(|| format!("import failed: {imported}"))?;

    // Warm-up: one reply first. The first prompt a process builds loads the tokenizer
    // (≈ 45 MB, ≈ 250 ms of CPU, once per process); measured alone here so that it does not
    // land inside the burst below.
    let r: Value = http
        .post(format!("{base}/api/chats"))
        .json(&json!({"name": "warm-up", "characters": [member], "greeting": false}))
        .send()
        .await?
        .json()
        .await?;
    let warm_chat = r["id"].as_i64().ok_or("chat creation failed")?;
    let t = Instant::now();
    reply_through_tavo(&http, &base, warm_chat, &mut Stamps::default()).await?;
    let warm_up = t.elapsed();
    let warm_rss = rss_kb(pid);

    // 3 + 4. Concurrent streaming replies through tavo.
    eprintln!("load: {} replies starting", args.replies);
    let stop_sampling = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sampler = sample_peaks(pid, stop_sampling.clone());
    let errors = Arc::new(AtomicU64::new(0));
    let (server_cpu0, own_cpu0) = (cpu_secs(&pid.to_string()), cpu_secs("self"));
    let t = Instant::now();
    let mut tasks = Vec::new();
    for &chat in &chats {
        let http = http.clone();
        let base = base.clone();
        let errors = errors.clone();
        tasks.push(tokio::spawn(async move {
            let mut stamps = Stamps::default();
            let outcome = reply_through_tavo(&http, &base, chat, &mut stamps).await;
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
    let timeline = args.timeline.then(|| timeline(&via_tavo));
    let mut via_tavo: Vec<u64> = via_tavo.into_iter().map(|(_, l)| l).collect();
    let server_cpu = cpu_secs(&pid.to_string()) - server_cpu0;
    let own_cpu = cpu_secs("self") - own_cpu0;
    stop_sampling.store(true, Ordering::Relaxed);
    let (peak_rss, peak_threads) = sampler.join().unwrap_or((0, 0));
    let ended_rss = rss_kb(pid);
    via_tavo.sort_unstable();

    // Baselines: the same client code reading the mock directly, then through the null relay
    // (a pass-through process: what one more loopback hop costs), same concurrency.
    eprintln!("load: replies done; reading the mock directly");
    let direct = stream_mock_format(&http, &format!("http://{mock}"), args.replies).await;
    eprintln!("load: reading the mock through the null relay");
    let (relayed, relay_cpu) = through_relay(&http, mock, relay::Kind::Http, args.replies).await?;
    eprintln!("load: reading the mock through the TCP relay");
    let (copied, copy_cpu) = through_relay(&http, mock, relay::Kind::Tcp, args.replies).await?;
    tokio::time::sleep(Duration::from_secs(args.settle_secs)).await;
    let settled_rss = rss_kb(pid);
    let settled_threads = proc_status(pid, "Threads");

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

    let pct = |v: &[u64]| [0.5, 0.95, 0.99].map(|p| percentile(v, p));
    let (via, dir, null, tcp) = (pct(&via_tavo), pct(&direct), pct(&relayed), pct(&copied));
    let over = [0, 1, 2].map(|i| via[i] - dir[i]);
    let hop = [0, 1, 2].map(|i| null[i] - dir[i]);
    let tcp_hop = [0, 1, 2].map(|i| tcp[i] - dir[i]);
    let beyond = [0, 1, 2].map(|i| via[i] - null[i]);
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
    println!(
        "| first reply after start ({} events every {} ms; loads the tokenizer) | {:.2} s, RSS after it {:.1} MB |",
        args.events,
        args.interval_ms,
        warm_up.as_secs_f64(),
        mb(warm_rss)
    );
    println!(
        "| {} concurrent streaming replies | {:.2} s, {} errors |",
        args.replies,
        replies_time.as_secs_f64(),
        errors.load(Ordering::Relaxed)
    );
    println!(
        "| CPU during the replies: server / load client + mock (wall {:.2} s, 2 cores) | {server_cpu:.2} s / {own_cpu:.2} s |",
        replies_time.as_secs_f64()
    );
    println!(
        "| relay overhead provider → SSE client (p50 / p95 / p99) | {:.3} / {:.3} / {:.3} ms |",
        over[0], over[1], over[2]
    );
    println!(
        "| provider → SSE client via tavo (p50 / p95 / p99) | {:.3} / {:.3} / {:.3} ms ({} events) |",
        via[0],
        via[1],
        via[2],
        via_tavo.len()
    );
    println!(
        "| provider → client directly (p50 / p95 / p99) | {:.3} / {:.3} / {:.3} ms ({} events) |",
        dir[0],
        dir[1],
        dir[2],
        direct.len()
    );
    println!(
        "| provider → client through the null relay (p50 / p95 / p99) | {:.3} / {:.3} / {:.3} ms ({} events; relay CPU {relay_cpu:.2} s) |",
        null[0],
        null[1],
        null[2],
        relayed.len()
    );
    println!(
        "| null relay overhead: one more loopback hop (p50 / p95 / p99) | {:.3} / {:.3} / {:.3} ms |",
        hop[0], hop[1], hop[2]
    );
    println!(
        "| TCP relay overhead: bytes copied through one more process, no HTTP (p50 / p95 / p99) | {:.3} / {:.3} / {:.3} ms (relay CPU {copy_cpu:.2} s) |",
        tcp_hop[0], tcp_hop[1], tcp_hop[2]
    );
    println!(
        "| tavo beyond the null relay (p50 / p95 / p99) | {:.3} / {:.3} / {:.3} ms |",
        beyond[0], beyond[1], beyond[2]
    );
    println!(
        "| RSS idle / after import / peak during replies / replies ended / after {} s idle | {:.1} / {:.1} / {:.1} / {:.1} / {:.1} MB |",
        args.settle_secs,
        mb(idle_rss),
        mb(import_rss),
        mb(peak_rss),
        mb(ended_rss),
        mb(settled_rss)
    );
    println!(
        "| server threads: peak during replies / after {} s idle | {peak_threads} / {settled_threads} |",
        args.settle_secs
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
    if let Some(timeline) = timeline {
        println!();
        println!("{timeline}");
    }
    drop(server);
    Ok(())
}

/// One reply through tavo: posts a message to `chat`, reads the reply's event stream to its
/// end and feeds the stamps of its text deltas to `stamps`.
async fn reply_through_tavo(
    http: &reqwest::Client,
    base: &str,
    chat: i64,
    stamps: &mut Stamps,
) -> Result<(), String> {
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
            stamps.feed(string_field(data, "text").unwrap_or_default());
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

/// `replies` concurrent streams through a relay of `kind` in front of the mock: their sorted
/// latencies, and the CPU seconds the relay spent.
async fn through_relay(
    http: &reqwest::Client,
    mock: std::net::SocketAddr,
    kind: relay::Kind,
    replies: usize,
) -> Result<(Vec<u64>, f64), Box<dyn std::error::Error>> {
    let relay = RelayProcess::start(mock, kind)?;
    let pid = relay.pid().to_string();
    let cpu0 = cpu_secs(&pid);
    let latencies =
        stream_mock_format(http, &format!("http://127.0.0.1:{}", relay.port), replies).await;
    Ok((latencies, cpu_secs(&pid) - cpu0))
}

/// `replies` concurrent streams in the mock's own format from `base` (the mock, or the null
/// relay in front of it): the latencies of their stamps, sorted.
async fn stream_mock_format(http: &reqwest::Client, base: &str, replies: usize) -> Vec<u64> {
    let mut tasks = Vec::new();
    for _ in 0..replies {
        let http = http.clone();
        let url = format!("{base}/v1/chat/completions");
        tasks.push(tokio::spawn(async move {
            let mut stamps = Stamps::default();
            if let Ok(r) = http
                .post(url)
                .json(&json!({"model": "m", "stream": true, "messages": []}))
                .send()
                .await
            {
                let _ = read_sse(r, |_, data| {
                    if data == "[DONE]" {
                        return false;
                    }
                    stamps.feed(string_field(data, "content").unwrap_or_default());
                    true
                })
                .await;
            }
            stamps.latencies
        }));
    }
    let mut latencies = Vec::new();
    for t in tasks {
        latencies.extend(t.await.unwrap_or_default().into_iter().map(|(_, l)| l));
    }
    latencies.sort_unstable();
    latencies
}
