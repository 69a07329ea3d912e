//! The null relay: the least any relay between a provider and a browser must do, as a
//! separate process beside `tavo serve`, so the load test can tell what tavo costs from what
//! one more loopback hop costs on the same machine.
//!
//! It accepts the client's request, opens the same streaming request to the mock provider and
//! passes the provider's bytes through unchanged: no decoding, no event log, no store, no
//! re-encoding. It runs on tokio's default multi-threaded runtime and sets `TCP_NODELAY` on
//! accepted connections, as `tavo serve` does. Whatever latency it adds over the direct path
//! is the floor for any HTTP relay on this machine under this load.
//!
//! The TCP relay (`serve_tcp`) is lower still: it does not even parse HTTP, it copies each
//! connection's bytes both ways to the mock on one thread. Nothing that relays through a
//! process of its own can do less.

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt;

#[derive(Clone)]
struct Relay {
    http: reqwest::Client,
    upstream: String,
}

/// Binds a loopback port and prints it as the process's first line of output, which is how
/// [`RelayProcess::start`] learns where the relay listens.
async fn listen() -> std::io::Result<tokio::net::TcpListener> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("{}", listener.local_addr()?.port());
    Ok(listener)
}

/// Serves the null relay in front of the mock at `mock` until the process is killed; prints
/// the port it listens on as its first line of output.
pub fn serve(mock: SocketAddr) -> Result<(), Box<dyn std::error::Error>> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = listen().await?;
        let relay = Relay {
            http: reqwest::Client::builder()
                .pool_max_idle_per_host(1024)
                .build()?,
            upstream: format!("http://{mock}/v1/chat/completions"),
        };
        let app = Router::new().fallback(forward).with_state(relay);
        let listener = listener.tap_io(|stream| {
            let _ = stream.set_nodelay(true);
        });
        axum::serve(listener, app).await?;
        Ok(())
    })
}

async fn forward(State(relay): State<Relay>, body: Bytes) -> Response {
    let upstream = relay
        .http
        .post(&relay.upstream)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await;
    match upstream {
        Ok(r) => Response::builder()
            .header("content-type", "text/event-stream")
            .body(Body::from_stream(r.bytes_stream()))
            .unwrap_or_default(),
        Err(e) => (StatusCode::BAD_GATEWAY, e.to_string()).into_response(),
    }
}

/// Serves the TCP relay in front of the mock at `mock` until the process is killed; prints the
/// port it listens on as its first line of output.
pub fn serve_tcp(mock: SocketAddr) -> Result<(), Box<dyn std::error::Error>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = listen().await?;
        loop {
            let (mut client, _) = listener.accept().await?;
            tokio::spawn(async move {
                let _ = client.set_nodelay(true);
                if let Ok(mut upstream) = tokio::net::TcpStream::connect(mock).await {
                    let _ = upstream.set_nodelay(true);
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
                }
            });
        }
    })
}

/// Which relay runs in front of the mock.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// HTTP in, HTTP out (hyper and reqwest), bytes passed through.
    Http,
    /// Bytes copied both ways, no HTTP.
    Tcp,
}

/// A relay running as a child process of the load test.
pub struct RelayProcess {
    child: Child,
    pub port: u16,
}

impl RelayProcess {
    /// Starts `load --null-relay MOCK` (or `--tcp-relay`) and reads the port it prints.
    pub fn start(mock: SocketAddr, kind: Kind) -> Result<RelayProcess, Box<dyn std::error::Error>> {
        let flag = match kind {
            Kind::Http => "--null-relay",
            Kind::Tcp => "--tcp-relay",
        };
        let mut child = Command::new(std::env::current_exe()?)
            .args([flag, &mock.to_string()])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let mut line = String::new();
        if let Some(out) = child.stdout.take() {
            std::io::BufRead::read_line(&mut std::io::BufReader::new(out), &mut line)?;
        }
        let port = line.trim().parse().map_err(|_| {
            let _ = child.kill();
            format!("the null relay did not report its port: {line:?}")
        })?;
        Ok(RelayProcess { child, port })
    }

    /// The relay's process id (its CPU time is read from `/proc`).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for RelayProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
