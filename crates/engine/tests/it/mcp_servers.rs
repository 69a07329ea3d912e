//! Outside MCP servers in the chat loop, against a server of our own that misbehaves on request
//! (tests/fixtures/misbehaving_mcp_server.py): tools namespaced and registered, calls through
//! the one dispatcher (approval asked, budgets, envelope), and each fault — a hang, a flood, a
//! line of garbage, a crash, a changed tool list, a server that never starts — a clear error or
//! status while the rest keeps working.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tavo_engine::mcp_servers::{McpServerConfig, McpServers, config};
use tavo_store::Store;
use tavo_tools::extension::ExtensionRegistry;
use tavo_tools::{
    CallScope, Dispatcher, ExtensionRunner, Services, ToolCall, ToolSettings, UnattendedDoor,
};

fn server(name: &str, command: &str, args: &[&str]) -> McpServerConfig {
    McpServerConfig {
        name: name.into(),
        command: Some(command.into()),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        env: BTreeMap::new(),
        url: None,
        headers: BTreeMap::new(),
        enabled: true,
    }
}

fn fixture() -> String {
    format!(
        "{}/tests/fixtures/misbehaving_mcp_server.py",
        env!("CARGO_MANIFEST_DIR")
    )
}

struct Setup {
    _dir: tempfile::TempDir,
    store: Store,
    extensions: ExtensionRegistry,
    servers: McpServers,
}

async fn setup() -> Setup {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path()).expect("store");
    config::add(&store, server("bad", "python3", &[&fixture()])).expect("add");
    config::add(&store, server("ghost", "/nonexistent/mcp-server", &[])).expect("add");
    let extensions = ExtensionRegistry::default();
    let servers = McpServers::new(store.clone(), extensions.clone());
    servers.connect_enabled().await;
    Setup {
        _dir: dir,
        store,
        extensions,
        servers,
    }
}

async fn run(s: &Setup, tool: &str, args: Value) -> Result<Value, tavo_tools::ToolError> {
    let t = s.extensions.get(tool).expect("registered");
    s.servers
        .run(
            &t,
            tavo_model::ChatId(1),
            args,
            std::time::Duration::from_secs(60),
        )
        .await
}

#[tokio::test]
async fn tools_are_namespaced_and_a_server_that_cannot_start_is_a_status() {
    let s = setup().await;
    let status = s.servers.status().await;
    let bad = status.iter().find(|x| x.name == "bad").expect("bad");
    assert_eq!(bad.state, "connected", "{bad:?}");
    assert!(bad.tools.contains(&"mcp_bad_echo".to_owned()));
    let ghost = status.iter().find(|x| x.name == "ghost").expect("ghost");
    assert_eq!(ghost.state, "failed");
    assert!(
        ghost
            .last_error
            .as_deref()
            .is_some_and(|e| e.contains("cannot start")),
        "{ghost:?}"
    );
    assert_eq!(
        run(&s, "mcp_bad_echo", json!({"text": "hi"})).await.ok(),
        Some(json!("hi"))
    );
    let failed = run(&s, "mcp_bad_fail", json!({}))
        .await
        .expect_err("tool error");
    assert_eq!(failed.code.as_str(), "unavailable");
    assert!(failed.message.contains("disk full"), "{}", failed.message);
}

#[tokio::test]
async fn a_hang_a_flood_and_garbage_leave_the_server_usable() {
    let s = setup().await;
    let hung = tokio::time::timeout(
        Duration::from_millis(500),
        run(&s, "mcp_bad_hang", json!({})),
    )
    .await;
    assert!(hung.is_err(), "the caller's time-out ends a hanging call");
    let big = run(&s, "mcp_bad_huge", json!({})).await.expect("huge");
    assert_eq!(big.as_str().map(str::len), Some(1024 * 1024));
    // Garbage on the wire is skipped or ends the connection; either way the next call answers.
    let _ = run(&s, "mcp_bad_garbage", json!({})).await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(
        run(&s, "mcp_bad_echo", json!({"text": "still here"}))
            .await
            .ok(),
        Some(json!("still here"))
    );
}

#[tokio::test]
async fn a_crash_is_an_error_and_the_server_is_restarted_after_a_backoff() {
    let s = setup().await;
    let crashed = run(&s, "mcp_bad_crash", json!({}))
        .await
        .expect_err("crash");
    assert_eq!(crashed.code.as_str(), "unavailable");
    let status = s.servers.status().await;
    assert_eq!(
        status.iter().find(|x| x.name == "bad").map(|x| x.state),
        Some("failed")
    );
    // Within the backoff the call says so at once; after it the server is started again.
    let early = run(&s, "mcp_bad_echo", json!({"text": "x"}))
        .await
        .expect_err("backoff");
    assert!(
        early.message.contains("tries it again"),
        "{}",
        early.message
    );
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(
        run(&s, "mcp_bad_echo", json!({"text": "back"})).await.ok(),
        Some(json!("back"))
    );
}

#[tokio::test]
async fn a_changed_tool_list_is_listed_again() {
    let s = setup().await;
    assert!(s.extensions.get("mcp_bad_late").is_none());
    run(&s, "mcp_bad_change", json!({})).await.expect("change");
    for _ in 0..50 {
        if s.extensions.get("mcp_bad_late").is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        run(&s, "mcp_bad_late", json!({"text": "new"})).await.ok(),
        Some(json!("new"))
    );
}

#[tokio::test]
async fn outside_tools_ask_first_and_their_results_keep_the_budgets() {
    let s = setup().await;
    let registry = tavo_tools::builtin_registry().expect("registry");
    let services = Arc::new(Services {
        extensions: s.extensions.clone(),
        ..Default::default()
    });
    let dispatcher = Dispatcher::new(
        s.store.clone(),
        registry,
        services,
        tavo_tools::Gate::default(),
    )
    .with_extensions(Some(Arc::new(s.servers.clone())));
    let settings = ToolSettings::default();
    // Nobody consented: an outside tool asks by default, so it is refused here.
    let refusing = UnattendedDoor {
        confirmed: false,
        refusal: |tool| tavo_tools::ToolError::denied(format!("{tool} needs the user's consent")),
    };
    let mut scope = CallScope::direct(Some(tavo_model::ChatId(1)), &settings);
    let done = dispatcher
        .call(
            &mut scope,
            &ToolCall::new("c1", "mcp_bad_echo", json!({"text": "hi"})),
            &refusing,
        )
        .await;
    assert_eq!(
        done.completed.envelope["error"]["code"],
        "permission_denied"
    );
    // Allowed: the answer comes back in the envelope; a 1 MiB answer is cut to the budget.
    let allowing = UnattendedDoor {
        confirmed: true,
        refusal: |_| tavo_tools::ToolError::internal("x"),
    };
    let done = dispatcher
        .call(
            &mut scope,
            &ToolCall::new("c2", "mcp_bad_echo", json!({"text": "hi"})),
            &allowing,
        )
        .await;
    assert_eq!(done.completed.envelope, json!({"ok": true, "result": "hi"}));
    let done = dispatcher
        .call(
            &mut scope,
            &ToolCall::new("c3", "mcp_bad_huge", json!({})),
            &allowing,
        )
        .await;
    assert!(done.completed.truncated, "{}", done.completed.envelope);
    assert_eq!(done.completed.envelope["ok"], true);
    assert!(done.completed.envelope.to_string().len() <= tavo_tools::RESULT_LIMIT + 1024);
    // A bad argument is refused before the server sees it.
    let done = dispatcher
        .call(
            &mut scope,
            &ToolCall::new("c4", "mcp_bad_echo", json!({"text": 5})),
            &allowing,
        )
        .await;
    assert_eq!(
        done.completed.envelope["error"]["code"],
        "invalid_arguments"
    );
}

/// Every key of `schema`, at any depth (names of properties included).
fn keys_in(schema: &Value, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            for (k, v) in map {
                out.push(k.clone());
                keys_in(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| keys_in(v, out)),
        _ => {}
    }
}

#[tokio::test]
async fn an_outside_tools_draft_07_schema_is_adapted_for_every_protocol() {
    use tavo_llm::protocol::Protocol;
    use tavo_llm::request::{ChatRequest, Message, Role};
    let s = setup().await;
    let registry = tavo_tools::builtin_registry().expect("registry");
    let mut exposed = tavo_tools::ExposedSet::default();
    exposed.expose(["mcp_bad_draft07".to_owned()]);
    // The engine's own declaration path, as a reply's round builds it.
    let tools = tavo_engine::prompt::declarations(
        &registry,
        &s.extensions,
        &exposed,
        tavo_model::ChatId(1),
    );
    assert_eq!(tools.len(), 1, "the outside tool is declared");
    let original = tools[0].parameters.clone();
    assert_eq!(
        original["$schema"],
        "http://json-schema.org/draft-07/schema#"
    );
    let mut req = ChatRequest::new("m".to_owned(), vec![Message::text(Role::User, "draw")]);
    req.tools = tools;
    let bodies: Vec<(Protocol, Value)> = [
        Protocol::OpenaiChat,
        Protocol::OpenaiResponses,
        Protocol::Anthropic,
        Protocol::Gemini,
    ]
    .into_iter()
    .map(|p| (p, tavo_llm::encode(p, &req).expect("encodes").body))
    .collect();
    for (protocol, body) in &bodies {
        let declared = match protocol {
            Protocol::OpenaiChat => body["tools"][0]["function"]["parameters"].clone(),
            Protocol::OpenaiResponses => body["tools"][0]["parameters"].clone(),
            Protocol::Anthropic => body["tools"][0]["input_schema"].clone(),
            Protocol::Gemini => body["tools"][0]["functionDeclarations"][0]["parameters"].clone(),
        };
        assert!(declared.is_object(), "{protocol:?}: {body}");
        let mut keys = Vec::new();
        keys_in(&declared, &mut keys);
        match protocol {
            // Gemini takes an OpenAPI subset: references resolved inline, the rest dropped
            // or rewritten, so the request is not refused with "Unknown name …".
            Protocol::Gemini => {
                for refused in [
                    "$schema",
                    "$ref",
                    "definitions",
                    "additionalProperties",
                    "const",
                    "exclusiveMinimum",
                ] {
                    assert!(
                        !keys.iter().any(|k| k == refused),
                        "{refused} sent to Gemini: {declared}"
                    );
                }
                assert_eq!(
                    declared["properties"]["at"]["properties"]["x"]["type"], "number",
                    "{declared}"
                );
                assert!(
                    declared["properties"]["label"]["type"].is_string(),
                    "{declared}"
                );
            }
            // JSON Schema providers get the tool's own schema: the arguments it validates
            // are the ones the server checks.
            _ => assert_eq!(declared, original, "{protocol:?}"),
        }
    }
    // The model's call goes back to the server with its arguments intact.
    let args = json!({"at": {"x": 1, "y": 2}, "zoom": 2.5, "label": null, "mode": "fast"});
    let answer = run(&s, "mcp_bad_draft07", args.clone())
        .await
        .expect("call");
    let echoed: Value = serde_json::from_str(answer.as_str().expect("text")).expect("json");
    assert_eq!(echoed, args);
}
