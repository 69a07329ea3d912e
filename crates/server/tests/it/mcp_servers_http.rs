//! The outside MCP servers over HTTP, as the app's Settings → MCP uses them: add a real stdio
//! server (the engine's hand-written fixture), its tools listed, a tool's standing approval set
//! and shown in `approvals`, the names the approval route refuses, disable, remove.

use crate::support::{TestServer, client, send};
use serde_json::json;

fn fixture() -> String {
    format!(
        "{}/../engine/tests/fixtures/misbehaving_mcp_server.py",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[tokio::test]
async fn add_list_approve_disable_remove() {
    let s = TestServer::start().await;
    let c = client();
    let (status, added) = send(c.post(s.url("/api/mcp-servers")).json(
        &json!({"name": "fx", "command": "python3", "args": [fixture()], "env": {"KEY": "secret-value"}}),
    ))
    .await;
    assert_eq!(status, 201, "{added}");
    assert_eq!(added["state"], "connected", "{added}");
    assert!(
        added["tools"]
            .as_array()
            .is_some_and(|t| t.iter().any(|x| x == "mcp_fx_echo")),
        "{added}"
    );

    let (_, list) = send(c.get(s.url("/api/mcp-servers"))).await;
    let row = &list["servers"][0];
    assert_eq!(row["env"]["KEY"], "(hidden)");
    assert!(!list.to_string().contains("secret-value"));
    assert_eq!(
        row["approvals"],
        json!({}),
        "no choice made yet: every tool asks"
    );

    let (status, body) = send(
        c.put(s.url("/api/mcp-servers/fx/tools/mcp_fx_echo/approval"))
            .json(&json!({"approval": "allow"})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body, json!({"tool": "mcp_fx_echo", "approval": "allow"}));
    let (status, _) = send(
        c.put(s.url("/api/mcp-servers/fx/tools/mcp_fx_hang/approval"))
            .json(&json!({"approval": "deny"})),
    )
    .await;
    assert_eq!(status, 200);
    let (_, list) = send(c.get(s.url("/api/mcp-servers"))).await;
    assert_eq!(
        list["servers"][0]["approvals"],
        json!({"mcp_fx_echo": "allow", "mcp_fx_hang": "deny"})
    );
    let policy = s
        .store
        .setting_get("tools.approval")
        .expect("read")
        .expect("saved");
    assert_eq!(policy["tools"]["mcp_fx_echo"], "allow", "{policy}");

    // Not one of the server's tools, an unknown server, an unknown choice.
    let (status, body) = send(
        c.put(s.url("/api/mcp-servers/fx/tools/tavo_character_delete/approval"))
            .json(&json!({"approval": "allow"})),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("mcp_fx_")),
        "{body}"
    );
    let (status, _) = send(
        c.put(s.url("/api/mcp-servers/nope/tools/mcp_nope_x/approval"))
            .json(&json!({"approval": "allow"})),
    )
    .await;
    assert_eq!(status, 404);
    let (status, _) = send(
        c.put(s.url("/api/mcp-servers/fx/tools/mcp_fx_echo/approval"))
            .json(&json!({"approval": "always"})),
    )
    .await;
    // Not one of allow|ask|deny: the body does not deserialize, 422 (routes::json_errors).
    assert_eq!(status, 422, "{status}");

    let (status, state) = send(
        c.put(s.url("/api/mcp-servers/fx/enabled"))
            .json(&json!({"enabled": false})),
    )
    .await;
    assert_eq!(status, 200, "{state}");
    let (_, list) = send(c.get(s.url("/api/mcp-servers"))).await;
    assert_eq!(list["servers"][0]["enabled"], false);

    let (status, body) = send(c.delete(s.url("/api/mcp-servers/fx"))).await;
    assert_eq!((status, body), (200, json!({"removed": "fx"})));
    let (_, list) = send(c.get(s.url("/api/mcp-servers"))).await;
    assert_eq!(list["servers"], json!([]));
}
