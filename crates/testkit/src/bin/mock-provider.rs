//! `mock-provider --port N --script FILE [--log FILE]`: the scripted provider as a process, for
//! manual runs and load tests. Every request is logged as one JSON line (to --log, else stderr).

use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

use anyhow::Context;
use clap::Parser;
use tavo_testkit::{MockProvider, RecordedRequest, Script};

#[derive(Parser)]
#[command(
    about = "A scripted LLM provider on 127.0.0.1 speaking OpenAI Chat, Responses, Anthropic and Gemini"
)]
struct Args {
    /// Port on 127.0.0.1 (0 = any free port; the chosen one is printed).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// JSON script: {"turns": [{"text": ...}, {"toolCalls": [...]}, ...], "repeatLast": false}
    #[arg(long)]
    script: PathBuf,
    /// Append one JSON line per request received here instead of stderr.
    #[arg(long)]
    log: Option<PathBuf>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let text = std::fs::read_to_string(&args.script)
        .with_context(|| format!("reading the script {}", args.script.display()))?;
    let script: Script = serde_json::from_str(&text)
        .with_context(|| format!("parsing the script {}", args.script.display()))?;
    let sink: Box<dyn Write + Send> = match &args.log {
        Some(p) => Box::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .with_context(|| format!("opening the log {}", p.display()))?,
        ),
        None => Box::new(std::io::stderr()),
    };
    let sink = Mutex::new(sink);
    let log = move |r: &RecordedRequest| {
        if let (Ok(line), Ok(mut w)) = (serde_json::to_string(r), sink.lock()) {
            let _ = writeln!(w, "{line}");
        }
    };
    let mock = MockProvider::start_on(args.port, script, Some(Box::new(log)))
        .await
        .with_context(|| format!("binding 127.0.0.1:{}", args.port))?;
    println!("http://{}", mock.addr());
    tokio::signal::ctrl_c()
        .await
        .context("waiting for Ctrl-C")?;
    drop(mock);
    Ok(())
}
