//! Replies are admitted into their start a few at a time, so hundreds starting together do not
//! flood the executor that relays the others' events; a provider that does not answer must
//! not hold that gate.

use std::io::Read;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::support::lab;
use tavo_engine::{ReplyRequest, ReplyStatus, STARTING_CONCURRENCY};
use tavo_llm::connection::SETTINGS_KEY;
use tavo_llm::{Connection, ConnectionBook, Parameters, Protocol};
use tavo_model::Chat;
use tavo_testkit::{Script, Wire};
use tavo_tools::Services;

/// A provider that accepts connections, reads the requests and never answers. Returns its
/// address and the number of requests it has received.
fn silent_provider() -> (std::net::SocketAddr, Arc<AtomicUsize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
    let requests = Arc::new(AtomicUsize::new(0));
    let counted = requests.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let counted = counted.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                // The request line arrives first: count it, then hold the connection open.
                if stream.read(&mut buf).is_ok_and(|n| n > 0) {
                    counted.fetch_add(1, Ordering::SeqCst);
                }
                while stream.read(&mut buf).is_ok_and(|n| n > 0) {}
            });
        }
    });
    (addr, requests)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_that_never_answers_does_not_hold_up_other_starts() {
    let lab = lab(Wire::OpenaiChat, Script::new(vec![]), &[]).await;
    let (addr, requests) = silent_provider();
    let mut book = ConnectionBook::default();
    book.add(
        Connection {
            name: "silent".into(),
            source: "custom".into(),
            protocol: Protocol::OpenaiChat,
            base_url: format!("http://{addr}/v1"),
            model: "m".into(),
            api_key: Some("sk-test-secret-key-0123".into()),
            api_key_env: None,
            parameters: Parameters::default(),
        },
        true,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    lab.store
        .setting_set(SETTINGS_KEY, &book.to_setting())
        .unwrap_or_else(|e| panic!("{e}"));
    let engine = lab.engine(Services::default(), None);

    let replies = 4 * STARTING_CONCURRENCY;
    let mut handles = Vec::new();
    for i in 0..replies {
        let chat = lab
            .store
            .chat_create(&Chat {
                name: format!("chat {i}"),
                ..Chat::default()
            })
            .unwrap_or_else(|e| panic!("{e}"));
        let handle = engine
            .start(ReplyRequest::normal(chat, "hello?"))
            .unwrap_or_else(|e| panic!("{e}"));
        handles.push(handle);
    }
    // Had the first replies kept their places while waiting for an answer that never comes,
    // only STARTING_CONCURRENCY requests would ever reach the provider.
    let deadline = Instant::now() + Duration::from_secs(10);
    while requests.load(Ordering::SeqCst) < replies && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(requests.load(Ordering::SeqCst), replies);
    for h in &handles {
        h.cancel();
    }
    for h in &handles {
        assert_eq!(h.wait().await, ReplyStatus::Cancelled);
    }
}
