//! Standing tool approvals over HTTP (`/api/approvals`): set for any tool, read back with the
//! per-chat choices, dropped; bad names and values refused without a change; the engine's
//! policy is what the routes wrote.

use crate::support::{TestServer, client, send};
use serde_json::json;
use tavo_tools::approval::{Approval, ApprovalPolicy};

#[tokio::test]
async fn set_read_and_drop_a_standing_choice() {
    let s = TestServer::start().await;
    let c = client();
    let (status, body) = send(c.get(s.url("/api/approvals"))).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body, json!({"tools": {}, "chats": {}}));

    // A page tool not registered yet, and a built-in.
    let (status, body) = send(
        c.put(s.url("/api/approvals/flip_coin"))
            .json(&json!({"approval": "ask"})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body, json!({"tool": "flip_coin", "approval": "ask"}));
    let (status, _) = send(
        c.put(s.url("/api/approvals/tavo_character_delete"))
            .json(&json!({"approval": "deny"})),
    )
    .await;
    assert_eq!(status, 200);
    let policy = ApprovalPolicy::load(&s.store).expect("policy");
    assert_eq!(policy.tools.get("flip_coin"), Some(&Approval::Ask));
    assert_eq!(
        policy.tools.get("tavo_character_delete"),
        Some(&Approval::Deny)
    );

    // Refused without a change: an unknown value, an over-long name.
    let (status, _) = send(
        c.put(s.url("/api/approvals/flip_coin"))
            .json(&json!({"approval": "sometimes"})),
    )
    .await;
    assert!(
        (400..500).contains(&status),
        "an unknown approval is refused: {status}"
    );
    let long = "x".repeat(129);
    let (status, body) = send(
        c.put(s.url(&format!("/api/approvals/{long}")))
            .json(&json!({"approval": "allow"})),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    let (_, body) = send(c.get(s.url("/api/approvals"))).await;
    assert_eq!(
        body["tools"],
        json!({"flip_coin": "ask", "tavo_character_delete": "deny"})
    );

    let (status, body) = send(c.delete(s.url("/api/approvals/flip_coin"))).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body, json!({"tools": {"tavo_character_delete": "deny"}}));
    let (status, body) = send(c.delete(s.url("/api/approvals/never_set"))).await;
    assert_eq!(status, 200, "dropping what is not set is no error: {body}");
}
