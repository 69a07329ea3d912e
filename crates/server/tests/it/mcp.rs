//! Tavo's MCP server at `POST /mcp`: its own door (off by default, 405, 401, the server's token
//! opens nothing here), JSON-RPC over streamable HTTP answered as plain JSON, and the write
//! safety every write has (dryRun, clientRequestId, expectedRevision). The official Python SDK
//! drives the same server in `../shared/checks/mcp`; these tests speak the wire format
//! directly so that they fail on a wrong status or shape.

use crate::support::{TOKEN, TestServer, bare_client};
use serde_json::{Value, json};
use tavo_engine::settings;

const MCP_TOKEN: &str = "mcp-test-token-0123456789";

async fn rpc(
    s: &TestServer,
    token: Option<&str>,
    id: u64,
    method: &str,
    params: Value,
) -> (u16, Value) {
    let mut req = bare_client()
        .post(s.url("/mcp"))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .json(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let r = req.send().await.expect("send");
    let status = r.status().as_u16();
    let text = r.text().await.expect("body");
    // A JSON answer, or (should the server choose SSE) the last `data:` line of the stream.
    let body = serde_json::from_str(&text).unwrap_or_else(|_| {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .next_back()
            .unwrap_or(Value::Null)
    });
    (status, body)
}

async fn enabled() -> TestServer {
    let s = TestServer::start().await;
    settings::set(&s.store, settings::MCP_ENABLED, "true").expect("enable");
    settings::set(&s.store, settings::MCP_TOKEN, MCP_TOKEN).expect("token");
    s
}

async fn initialised(s: &TestServer) {
    let (status, init) = rpc(
        s,
        Some(MCP_TOKEN),
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}),
    )
    .await;
    assert_eq!(status, 200, "{init}");
    assert_eq!(init["result"]["serverInfo"]["name"], "tavo");
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
}

async fn call(s: &TestServer, id: u64, name: &str, arguments: Value) -> Value {
    let (status, body) = rpc(
        s,
        Some(MCP_TOKEN),
        id,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body["result"].clone()
}

fn characters(s: &TestServer) -> Vec<String> {
    s.store
        .asset_summaries(tavo_store::AssetKind::Character)
        .expect("list")
        .into_iter()
        .map(|c| c.name)
        .collect()
}

#[tokio::test]
async fn the_door_is_off_by_default_then_wants_post_and_its_own_token() {
    let s = TestServer::start().await;
    let (status, body) = rpc(&s, None, 1, "tools/list", json!({})).await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (404, json!("mcp_disabled"))
    );
    // Enabling without a token generates one, which `get` never shows.
    settings::set(&s.store, settings::MCP_ENABLED, "true").expect("enable");
    let generated = settings::secret(&s.store, settings::MCP_TOKEN)
        .expect("read")
        .expect("generated");
    assert!(generated.len() >= 32);
    assert_eq!(
        settings::get(&s.store, settings::MCP_TOKEN).expect("get"),
        json!(settings::HIDDEN)
    );
    let get = bare_client().get(s.url("/mcp")).send().await.expect("send");
    assert_eq!(get.status().as_u16(), 405);
    assert_eq!(get.headers()["allow"], "POST");
    let (status, _) = rpc(&s, None, 1, "tools/list", json!({})).await;
    assert_eq!(status, 401);
    let (status, _) = rpc(
        &s,
        Some("wrong-token-0123456789"),
        1,
        "tools/list",
        json!({}),
    )
    .await;
    assert_eq!(status, 401);
    let (status, body) = rpc(&s, Some(&generated), 1, "initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})).await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn the_server_token_does_not_open_mcp_and_the_mcp_token_opens_nothing_else() {
    let s = TestServer::start_with(|c| c.token = Some(TOKEN.into())).await;
    settings::set(&s.store, settings::MCP_ENABLED, "true").expect("enable");
    settings::set(&s.store, settings::MCP_TOKEN, MCP_TOKEN).expect("token");
    let (status, _) = rpc(&s, Some(TOKEN), 1, "tools/list", json!({})).await;
    assert_eq!(status, 401, "the API token is not the MCP token");
    let api = bare_client()
        .get(s.url("/api/library/character"))
        .bearer_auth(MCP_TOKEN)
        .send()
        .await
        .expect("send");
    assert_eq!(
        api.status().as_u16(),
        401,
        "the MCP token is not an API token"
    );
}

#[tokio::test]
async fn tools_resources_and_write_safety_over_http() {
    let s = enabled().await;
    initialised(&s).await;
    let (_, list) = rpc(&s, Some(MCP_TOKEN), 2, "tools/list", json!({})).await;
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for want in [
        "tavo_status",
        "tavo_character_create",
        "tavo_character_search",
        "tavo_lorebook_entry_upsert",
        "tavo_regex_test",
        "tavo_preset_set_active",
        "tavo_chat_reset",
        "tavo_message_find",
        "tavo_memory_append",
    ] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    let card = json!({"name": "Ada", "description": "made over MCP", "first_mes": "Hello."});

    // dryRun: the diff, nothing saved.
    let mut dry = card.clone();
    dry["dryRun"] = json!(true);
    let r = call(&s, 3, "tavo_character_create", dry).await;
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(r["structuredContent"]["dryRun"], true);
    assert_eq!(
        r["structuredContent"]["diff"][0]["after"]["firstMes"],
        "Hello."
    );
    assert!(characters(&s).is_empty(), "a dry run saved a character");

    // clientRequestId: a retry answers the same and writes once.
    let mut once = card.clone();
    once["clientRequestId"] = json!("req-1");
    let first = call(&s, 4, "tavo_character_create", once.clone()).await;
    let again = call(&s, 5, "tavo_character_create", once).await;
    assert_eq!(first["structuredContent"], again["structuredContent"]);
    assert_eq!(characters(&s), ["Ada"]);
    let id = first["structuredContent"]["id"].as_i64().expect("id");
    // The same id with other arguments is refused, naming the field.
    let mut reused = card.clone();
    reused["name"] = json!("Other");
    reused["clientRequestId"] = json!("req-1");
    let r = call(&s, 6, "tavo_character_create", reused).await;
    assert_eq!(r["isError"], true);
    assert_eq!(r["structuredContent"]["details"]["path"], "clientRequestId");

    // A read shows the revision and the card in CCv3 snake_case; a stale write is a conflict.
    let got = call(&s, 7, "tavo_character_get", json!({"id": id})).await;
    assert_eq!(got["structuredContent"]["data"]["first_mes"], "Hello.");
    let revision = got["structuredContent"]["revision"]
        .as_u64()
        .expect("revision");
    let ok = call(
        &s,
        8,
        "tavo_character_update",
        json!({"id": id, "scenario": "A lab.", "expectedRevision": revision}),
    )
    .await;
    assert_eq!(ok["isError"], false, "{ok}");
    let stale = call(
        &s,
        9,
        "tavo_character_update",
        json!({"id": id, "scenario": "Lost.", "expectedRevision": revision}),
    )
    .await;
    assert_eq!(stale["isError"], true);
    assert_eq!(stale["structuredContent"]["code"], "conflict");
    let found = call(
        &s,
        10,
        "tavo_character_search",
        json!({"query": "ad", "match": "prefix"}),
    )
    .await;
    assert_eq!(found["structuredContent"]["items"][0]["name"], "Ada");
    assert_eq!(
        found["structuredContent"]["items"][0]["revision"],
        revision + 1
    );

    // A bad argument names its path; an unknown tool is a protocol error.
    let bad = call(&s, 11, "tavo_character_search", json!({"match": "fuzzy"})).await;
    assert_eq!(bad["structuredContent"]["details"]["path"], "match");
    let (_, unknown) = rpc(
        &s,
        Some(MCP_TOKEN),
        12,
        "tools/call",
        json!({"name": "tavo_nope", "arguments": {}}),
    )
    .await;
    assert!(unknown["error"]["code"].is_i64(), "{unknown}");

    // Resources: the docs, the schemas and one object by template.
    let (_, resources) = rpc(&s, Some(MCP_TOKEN), 13, "resources/list", json!({})).await;
    let uris: Vec<&str> = resources["result"]["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .filter_map(|r| r["uri"].as_str())
        .collect();
    assert!(
        uris.contains(&"tavo://docs/write-safety")
            && uris.contains(&"tavo://schemas/lorebook-entry")
    );
    let (_, read) = rpc(
        &s,
        Some(MCP_TOKEN),
        14,
        "resources/read",
        json!({"uri": format!("tavo://characters/{id}")}),
    )
    .await;
    let text = read["result"]["contents"][0]["text"]
        .as_str()
        .expect("text");
    assert!(text.contains("A lab."), "{text}");
    let (_, missing) = rpc(
        &s,
        Some(MCP_TOKEN),
        15,
        "resources/read",
        json!({"uri": "tavo://nothing"}),
    )
    .await;
    assert!(missing["error"].is_object());
}

#[tokio::test]
async fn entries_chats_and_messages_through_the_same_operations() {
    let s = enabled().await;
    initialised(&s).await;
    let book = call(&s, 2, "tavo_lorebook_create", json!({"name": "World"})).await;
    let book = book["structuredContent"]["id"].as_i64().expect("id");
    let missing = call(
        &s,
        3,
        "tavo_lorebook_entry_upsert",
        json!({"lorebookId": book, "entry": {"identifier": "e1"}}),
    )
    .await;
    assert_eq!(
        missing["structuredContent"]["details"]["path"],
        "entry.name"
    );
    let entry = json!({"identifier": "e1", "name": "Moon", "content": "The moon is red.", "strategy": "constant"});
    call(
        &s,
        4,
        "tavo_lorebook_entry_upsert",
        json!({"lorebookId": book, "entry": entry}),
    )
    .await;
    call(
        &s,
        5,
        "tavo_lorebook_entry_upsert",
        json!({"lorebookId": book, "entry": {"identifier": "e1", "content": "The moon is blue."}}),
    )
    .await;
    let got = call(&s, 6, "tavo_lorebook_get", json!({"id": book})).await;
    let entries = got["structuredContent"]["entries"]
        .as_array()
        .expect("entries");
    assert_eq!(entries.len(), 1);
    assert_eq!(
        (entries[0]["name"].clone(), entries[0]["content"].clone()),
        (json!("Moon"), json!("The moon is blue."))
    );

    let ch = call(
        &s,
        7,
        "tavo_character_create",
        json!({"name": "Zed", "description": "d", "first_mes": "Hi, {{user}}."}),
    )
    .await;
    let ch = ch["structuredContent"]["id"].as_i64().expect("id");
    let chat = call(
        &s,
        8,
        "tavo_chat_create",
        json!({"characterIds": [ch], "lorebookIds": [book]}),
    )
    .await;
    assert_eq!(chat["isError"], false, "{chat}");
    let chat = chat["structuredContent"]["id"].as_i64().expect("chat id");
    let appended = call(
        &s,
        9,
        "tavo_message_append",
        json!({"chatId": chat, "message": {"role": "user", "content": "Hello"}}),
    )
    .await;
    assert_eq!(appended["isError"], false, "{appended}");
    let count = call(&s, 10, "tavo_message_count", json!({"chatId": chat})).await;
    assert_eq!(count["structuredContent"]["count"], 2, "{count}");
    let last = call(
        &s,
        11,
        "tavo_message_get",
        json!({"chatId": chat, "index": -1}),
    )
    .await;
    assert_eq!(last["structuredContent"]["content"], "Hello");
    let reset = call(&s, 12, "tavo_chat_reset", json!({"id": chat})).await;
    assert_eq!(reset["structuredContent"]["deletedMessages"], 2);
    let count = call(&s, 13, "tavo_message_count", json!({"chatId": chat})).await;
    assert_eq!(
        count["structuredContent"]["count"], 1,
        "the greeting starts the chat again"
    );
    let tested = call(
        &s,
        14,
        "tavo_regex_test",
        json!({"findRegex": "/(\\w+)@/g", "replaceString": "<$1>", "input": "a@ b@"}),
    )
    .await;
    assert_eq!(tested["structuredContent"]["output"], "<a> <b>");
}
