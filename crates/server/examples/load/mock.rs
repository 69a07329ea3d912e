//! The mock provider: an OpenAI-style streaming endpoint that stamps each text delta with
//! the time it hands the frame to its socket.

use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Body;
use axum::response::Response;

pub fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// The mock provider: every chat completion streams `events` deltas, each carrying its send
/// time in nanoseconds followed by `|`.
/// Runs on its own thread and single-threaded runtime, so the load client's work does not
/// delay its frames (both still share the machine's cores).
pub fn start_mock(events: usize, interval: Duration) -> std::io::Result<SocketAddr> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    std::thread::spawn(move || {
        runtime.block_on(async move {
            match tokio::net::TcpListener::from_std(listener) {
                Ok(listener) => serve_mock(listener, events, interval).await,
                Err(e) => eprintln!("mock cannot listen: {e}"),
            }
        });
    });
    Ok(addr)
}

pub async fn serve_mock(listener: tokio::net::TcpListener, events: usize, interval: Duration) {
    let app = Router::new().fallback(move || async move {
        let stream = futures_util::stream::unfold(0usize, move |i| async move {
            if i > events + 1 {
                return None;
            }
            if i > 0 && i <= events {
                tokio::time::sleep(interval).await;
            }
            // Written out rather than built with serde: the mock shares the cores with the
            // server it measures, so it spends as little as it can per frame.
            let line = if i == 0 {
                r#"{"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#.to_owned()
            } else if i <= events {
                format!(
                    r#"{{"id":"c","object":"chat.completion.chunk","model":"m","choices":[{{"index":0,"delta":{{"content":"{}|"}}}}]}}"#,
                    now_ns()
                )
            } else {
                r#"{"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#.to_owned()
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
    if let Err(e) = axum::serve(listener, app).await {
        eprintln!("mock stopped: {e}");
    }
}
