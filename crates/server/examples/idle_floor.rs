//! The floor under `tavo serve`'s idle memory: the same runtime and libraries doing the least a
//! server can — the multi-thread tokio runtime, the library opened (SQLite, migrations), the
//! provider client built (reqwest with rustls), one axum route — and nothing of tavo's own.
//! `scripts/serve-rss.py` measures it beside the real binary, so the idle-RSS figure in
//! BENCHMARKS.md comes with what the machine and the dependencies cost before tavo adds
//! anything.
//!
//! Usage (the arguments `tavo serve` takes, so the same script drives both):
//! `cargo run --release -p tavo-server --example idle_floor -- serve --addr 127.0.0.1:0 --data-dir DIR`

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;

use axum::Json;
use axum::routing::get;

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let addr: SocketAddr = arg(&args, "--addr")
        .unwrap_or_else(|| "127.0.0.1:0".into())
        .parse()?;
    let data = PathBuf::from(arg(&args, "--data-dir").ok_or("--data-dir DIR is required")?);
    std::fs::create_dir_all(&data)?;
    let store = tavo_store::Store::open(&data)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let client = tavo_llm::Client::new()?;
        let app = axum::Router::new().route(
            "/api/health",
            get(move || {
                // Both stay alive for the process's life, as the server's do.
                let _held = (&store, &client);
                async { Json(serde_json::json!({"status": "ok"})) }
            }),
        );
        let listener = tokio::net::TcpListener::bind(addr).await?;
        println!("http://{}", listener.local_addr()?);
        std::io::stdout().flush()?;
        axum::serve(listener, app).await?;
        Ok(())
    })
}
