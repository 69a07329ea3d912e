//! A reply's overhead before its first request leaves, in a fresh process: the first reply
//! after start (which used to load the tokenizer on its path) against the
//! next ones. Measured from `Engine::start` to the mock provider receiving the request, so it
//! includes the library reads, the prompt build, the stored reply row, the request encoding
//! and the loopback connection.
//!
//! `cargo run --release -p tavo-engine --example first_reply [MODEL] [MESSAGES]`
//! (defaults `gpt-4o`, 20 history messages; `--warm` first calls `Engine::warm_tokenizers`,
//! as `tavo serve` does at start, and waits 8 s).
//!
//! `--floor` measures the machine's floor instead, in the same kind of fresh process: the same
//! messages sent as a ready `ChatRequest` straight through a new `tavo_llm::Client` (no
//! engine: no library reads, no prompt, no reply row) — what encoding, the loopback connection
//! and the mock's parsing cost alone, first request and later ones.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tavo_engine::{Engine, ReplyRequest};
use tavo_llm::connection::SETTINGS_KEY;
use tavo_llm::retry::RetryPolicy;
use tavo_llm::{Client, Connection, ConnectionBook, Parameters, Protocol, Timeouts};
use tavo_model::{Character, CharacterSummary, Chat, Message, Role};
use tavo_store::Store;
use tavo_testkit::{MockProvider, RecordedRequest, Script, Turn, Wire};
use tavo_tools::{Services, builtin_registry};

const REPLIES: usize = 6;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let warm = args.iter().any(|a| a == "--warm");
    let floor = args.iter().any(|a| a == "--floor");
    let mut positional = args.iter().filter(|a| !a.starts_with("--"));
    let model = positional
        .next()
        .cloned()
        .unwrap_or_else(|| "gpt-4o".into());
    let history: usize = positional.next().and_then(|n| n.parse().ok()).unwrap_or(20);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(run(model, history, warm, floor))
}

async fn run(
    model: String,
    history: usize,
    warm: bool,
    floor: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let store = Store::open(dir.path())?;
    let chat = store.write(|tx| {
        let id = tx.create(&Character {
            name: "Sera".into(),
            description: "A guardian of the forest.".into(),
            first_mes: "Hello.".into(),
            ..Character::default()
        })?;
        tx.chat_create(&Chat {
            name: "bench".into(),
            characters: vec![CharacterSummary {
                id,
                name: "Sera".into(),
                avatar: None,
            }],
            ..Chat::default()
        })
    })?;
    let messages: Vec<Message> = (0..history)
        .map(|i| {
            let role = if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            };
            Message::new(
                role,
                format!("message {i}: the quick brown fox jumps over the lazy dog"),
            )
        })
        .collect();
    store.messages_append(chat, &messages)?;
    let arrived: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let hook = {
        let arrived = arrived.clone();
        Box::new(move |_: &RecordedRequest| {
            if let Ok(mut a) = arrived.lock() {
                a.push(Instant::now());
            }
        })
    };
    let script = Script::new((0..REPLIES).map(|_| Turn::text("ok")).collect());
    let mock = MockProvider::start_on(0, script, Some(hook)).await?;
    let mut book = ConnectionBook::default();
    book.add(
        Connection {
            name: "mock".into(),
            source: "custom".into(),
            protocol: Protocol::OpenaiChat,
            base_url: mock.base_url(Wire::OpenaiChat),
            model: model.clone(),
            api_key: Some("sk-bench-0000000000000000".into()),
            api_key_env: None,
            parameters: Parameters::default(),
        },
        true,
    )?;
    store.setting_set(SETTINGS_KEY, &book.to_setting())?;
    if floor {
        return pass_through(&mock, &model, &messages, &arrived).await;
    }
    let retry = RetryPolicy {
        max_retries: 0,
        base_delay: Duration::from_millis(10),
        max_wait: Duration::from_secs(1),
    };
    let engine = Engine::with_client(
        store.clone(),
        builtin_registry()?,
        Arc::new(Services::default()),
        Client::with(retry, Timeouts::default())?,
        None,
    );
    if warm {
        engine.warm_tokenizers();
        tokio::time::sleep(Duration::from_secs(8)).await;
    }
    println!("model {model}, {history} history messages, warm start: {warm}");
    for i in 0..REPLIES {
        let start = Instant::now();
        let handle = engine.start(ReplyRequest::normal(chat, "hello?"))?;
        handle.wait().await;
        let at = arrived
            .lock()
            .ok()
            .and_then(|a| a.get(i).copied())
            .ok_or("the mock provider saw no request")?;
        let label = if i == 0 { "first reply" } else { "later reply" };
        println!(
            "{label} {}: {:.2} ms from start to the request at the provider",
            i + 1,
            at.duration_since(start).as_secs_f64() * 1000.0
        );
    }
    Ok(())
}

/// The floor: the same messages (plus the user's `hello?`) as one ready request, sent
/// [`REPLIES`] times through a fresh client, timed like the replies.
async fn pass_through(
    mock: &MockProvider,
    model: &str,
    history: &[Message],
    arrived: &Mutex<Vec<Instant>>,
) -> Result<(), Box<dyn std::error::Error>> {
    let endpoint = tavo_llm::Endpoint {
        protocol: Protocol::OpenaiChat,
        base_url: mock.base_url(Wire::OpenaiChat),
        api_key: Some("sk-bench-0000000000000000".into()),
    };
    let mut messages: Vec<tavo_llm::Message> = history
        .iter()
        .map(|m| {
            let role = match m.role {
                Role::User => tavo_llm::Role::User,
                _ => tavo_llm::Role::Assistant,
            };
            tavo_llm::Message::text(role, m.content.clone())
        })
        .collect();
    messages.push(tavo_llm::Message::text(tavo_llm::Role::User, "hello?"));
    let request = tavo_llm::ChatRequest::new(model, messages);
    let client = Client::with(RetryPolicy::none(), Timeouts::default())?;
    println!(
        "model {model}, {} history messages, floor (no engine)",
        history.len()
    );
    for i in 0..REPLIES {
        let start = Instant::now();
        client.complete(&endpoint, &request).await?;
        let at = arrived
            .lock()
            .ok()
            .and_then(|a| a.get(i).copied())
            .ok_or("the mock provider saw no request")?;
        let label = if i == 0 {
            "first request"
        } else {
            "later request"
        };
        println!(
            "{label} {}: {:.2} ms from the call to the request at the provider",
            i + 1,
            at.duration_since(start).as_secs_f64() * 1000.0
        );
    }
    Ok(())
}
