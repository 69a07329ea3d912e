//! The audit row of a `tavo_web_fetch` call keeps the page's metadata — final URL, status,
//! MIME, warnings and the content byte count (seed 000) — and never its text or cursor.

use std::io::{Read, Write};

use crate::support::lab;
use serde_json::json;
use tavo_engine::{ReplyRequest, ReplyStatus};
use tavo_testkit::{Script, Turn, Wire};
use tavo_tools::Services;

const BODY: &str = "A plain page about the audit.\n";

/// A loopback server answering every request with [`BODY`] as text/plain.
fn page_server() -> std::net::SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{BODY}",
                BODY.len()
            );
        }
    });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_web_fetch_audit_row_carries_the_content_byte_count() {
    let addr = page_server();
    let url = format!("http://{addr}/page.txt?q=1#part");
    let script = Script::new(vec![
        Turn::call("tavo_web_fetch", json!({ "url": url })),
        Turn::text("Read it."),
    ]);
    let lab = lab(Wire::OpenaiChat, script, &[("tools.enabled", json!(true))]).await;
    let engine = lab.engine(Services::default(), None).with_web();
    let handle = engine
        .start(ReplyRequest::normal(lab.chat, "read the page"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(handle.wait().await, ReplyStatus::Finished);
    let audit = lab
        .store
        .read(|tx| tx.audit_list(10, None))
        .unwrap_or_else(|e| panic!("{e}"));
    let row = audit
        .iter()
        .find(|a| a.action == "tool.tavo_web_fetch")
        .unwrap_or_else(|| panic!("no audit row of the fetch: {audit:?}"));
    let result = &row.details["result"]["result"];
    assert_eq!(row.details["result"]["ok"], true, "{row:?}");
    assert_eq!(result["contentBytes"], BODY.len(), "{row:?}");
    assert_eq!(result["status"], 200);
    assert_eq!(result["finalUrl"], format!("http://{addr}/page.txt?q=1"));
    assert!(result.get("markdown").is_none() && result.get("title").is_none());
    // The submitted URL, fragment included, stays in the arguments.
    assert_eq!(row.details["arguments"]["url"], url);
}
