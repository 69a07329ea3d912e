//! `tavo serve --accounts` over real sockets: sessions (fixation, expiry, logout everywhere,
//! CSRF, throttling, a disabled user's open event stream), and the isolation suite generated
//! from the OpenAPI document: for every route, user B's answers are the same whether user A's
//! library is empty or full of objects named with a marker, never contain that marker, and
//! leave A's library as it was.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::{Value, json};
use tavo_accounts::{Accounts, SessionToken};
use tavo_server::{AccountsServer, ServeConfig};
use tokio::sync::oneshot;

use crate::support::{SseEvent, read_sse};

/// What A's objects are named with; B must never see it.
const MARKER: &str = "zq-secret-of-ann-7f3";

pub(crate) struct AccountsLab {
    addr: SocketAddr,
    pub(crate) accounts: Arc<Accounts>,
    _dir: tempfile::TempDir,
    _stop: oneshot::Sender<()>,
}

impl AccountsLab {
    pub(crate) async fn start() -> Self {
        Self::start_with(tavo_server::UserLimits::default()).await
    }

    async fn start_with(limits: tavo_server::UserLimits) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let accounts = Arc::new(Accounts::open(dir.path()).expect("accounts"));
        accounts.add("ann", "password-ann", true).expect("ann");
        accounts.add("bob", "password-bob", false).expect("bob");
        let mut config = ServeConfig::local(dir.path());
        config.accounts = true;
        config.user_limits = limits;
        let client = tavo_llm::Client::new().expect("client");
        let server = AccountsServer::bind(config, accounts.clone(), client)
            .await
            .expect("bind");
        let addr = server.local_addr().expect("addr");
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = server
                .run(async {
                    let _ = stopped.await;
                })
                .await;
        });
        AccountsLab {
            addr,
            accounts,
            _dir: dir,
            _stop: stop,
        }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Logs in; returns the session cookie's value, or the error answer.
    pub(crate) async fn login(
        &self,
        name: &str,
        password: &str,
    ) -> Result<String, (u16, Value, HeaderMap)> {
        self.login_with(name, password, None).await
    }

    async fn login_with(
        &self,
        name: &str,
        password: &str,
        planted: Option<&str>,
    ) -> Result<String, (u16, Value, HeaderMap)> {
        let mut req = reqwest::Client::new()
            .post(self.url("/api/session"))
            .header("x-tavo-request", "1")
            .json(&json!({"name": name, "password": password}));
        if let Some(p) = planted {
            req = req.header("cookie", format!("tavo_account={p}"));
        }
        let r = req.send().await.expect("login");
        let status = r.status().as_u16();
        let headers = r.headers().clone();
        let body: Value = r.json().await.unwrap_or(Value::Null);
        if status != 200 {
            return Err((status, body, headers));
        }
        let cookie = headers
            .get("set-cookie")
            .and_then(|v| v.to_str().ok())
            .expect("set-cookie")
            .to_owned();
        assert!(
            cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
            "{cookie}"
        );
        Ok(cookie
            .split(';')
            .next()
            .and_then(|kv| kv.split_once('='))
            .map(|(_, v)| v.to_owned())
            .expect("cookie value"))
    }
}

/// A client that sends `cookie` and the CSRF header.
pub(crate) fn as_user(cookie: &str) -> reqwest::Client {
    let mut headers = HeaderMap::new();
    headers.insert("x-tavo-request", HeaderValue::from_static("1"));
    headers.insert(
        "cookie",
        HeaderValue::from_str(&format!("tavo_account={cookie}")).expect("cookie header"),
    );
    reqwest::Client::builder()
        .default_headers(headers)
        .timeout(Duration::from_secs(20))
        .build()
        .expect("client")
}

async fn status_of(r: reqwest::RequestBuilder) -> u16 {
    r.send().await.expect("send").status().as_u16()
}

#[tokio::test]
async fn sessions_are_fresh_expire_end_everywhere_and_resist_csrf_and_guessing() {
    let lab = AccountsLab::start().await;
    let anon = reqwest::Client::new();
    assert_eq!(status_of(anon.get(lab.url("/api/characters"))).await, 401);
    assert_eq!(
        status_of(anon.get(lab.url("/"))).await,
        200,
        "the login page"
    );
    let health: Value = anon
        .get(lab.url("/api/health"))
        .send()
        .await
        .expect("health")
        .json()
        .await
        .expect("json");
    assert_eq!(
        (health["accounts"].clone(), health["authRequired"].clone()),
        (json!(true), json!(true))
    );

    // Fixation: a cookie planted before the login is replaced, and never becomes a session.
    let planted = "planted-by-an-attacker";
    let ann = lab
        .login_with("ann", "password-ann", Some(planted))
        .await
        .expect("login");
    assert_ne!(ann, planted);
    assert_eq!(
        status_of(as_user(planted).get(lab.url("/api/characters"))).await,
        401
    );
    let me: Value = as_user(&ann)
        .get(lab.url("/api/session"))
        .send()
        .await
        .expect("me")
        .json()
        .await
        .expect("json");
    assert_eq!(me["user"]["name"], "ann");

    // CSRF: a write without the header, or from another site, changes nothing.
    let bare = reqwest::Client::new();
    let r = bare
        .post(lab.url("/api/library/character"))
        .header("cookie", format!("tavo_account={ann}"))
        .json(&json!({"name": "Forged"}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status().as_u16(), 403);
    let r = as_user(&ann)
        .post(lab.url("/api/library/character"))
        .header("origin", "https://evil.example")
        .json(&json!({"name": "Forged"}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status().as_u16(), 403);
    let list: Value = as_user(&ann)
        .get(lab.url("/api/library/character"))
        .send()
        .await
        .expect("list")
        .json()
        .await
        .expect("json");
    assert!(!list.to_string().contains("Forged"), "{list}");

    // Logout everywhere ends every session of the user.
    let second = lab.login("ann", "password-ann").await.expect("login");
    let r = as_user(&second)
        .delete(lab.url("/api/session?everywhere=true"))
        .send()
        .await
        .expect("logout");
    assert_eq!(r.status().as_u16(), 204);
    assert_eq!(
        status_of(as_user(&ann).get(lab.url("/api/characters"))).await,
        401
    );
    assert_eq!(
        status_of(as_user(&second).get(lab.url("/api/characters"))).await,
        401
    );

    // Idle expiry.
    let third = lab.login("ann", "password-ann").await.expect("login");
    lab.accounts
        .age_session(
            &SessionToken::from_cookie(&third),
            60,
            tavo_accounts::IDLE_EXPIRY.as_secs() as i64 + 5,
        )
        .expect("age");
    assert_eq!(
        status_of(as_user(&third).get(lab.url("/api/characters"))).await,
        401
    );

    // Throttling: after five wrong passwords the account waits, with a clear answer.
    for _ in 0..5 {
        let e = lab.login("bob", "wrong-password").await.expect_err("wrong");
        assert_eq!(e.0, 401);
    }
    let (status, body, headers) = lab.login("bob", "password-bob").await.expect_err("held");
    assert_eq!(status, 429, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("too many failed logins; try again in ")),
        "{body}"
    );
    assert!(headers.get("retry-after").is_some());
}

#[tokio::test]
async fn a_disabled_users_open_event_stream_closes_and_their_session_ends() {
    let lab = AccountsLab::start().await;
    let ann = lab.login("ann", "password-ann").await.expect("ann");
    let bob = lab.login("bob", "password-bob").await.expect("bob");
    let stream = as_user(&bob)
        .get(lab.url("/api/events"))
        .send()
        .await
        .expect("events");
    assert_eq!(stream.status().as_u16(), 200);
    let reading = tokio::spawn(read_sse(
        stream,
        Duration::from_secs(30),
        |_e: &SseEvent| false,
    ));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = std::time::Instant::now();
    let r = as_user(&ann)
        .put(lab.url("/api/admin/users/bob"))
        .json(&json!({"disabled": true}))
        .send()
        .await
        .expect("disable");
    assert_eq!(r.status().as_u16(), 200);
    reading.await.expect("stream read");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the stream ended when bob was disabled, not at the read time-out"
    );
    assert_eq!(
        status_of(as_user(&bob).get(lab.url("/api/characters"))).await,
        401
    );
    let e = lab
        .login("bob", "password-bob")
        .await
        .expect_err("disabled");
    assert_eq!(e.0, 403, "{}", e.1);
}

/// The value each path parameter takes in the suite. A route with a parameter not named here
/// fails the suite: a new route needs its isolation case.
fn param_value(route: &str, param: &str) -> Option<&'static str> {
    Some(match param {
        "id" if route.starts_with("/api/replies/") => "ann-reply",
        "id" if route.starts_with("/api/plugins/") => "test.ann-plugin",
        "id" | "character" | "message" => "1",
        "kind" if route.starts_with("/api/tts/bindings/") => "character",
        "kind" => "character",
        "name" if route.contains("/files/") || route.starts_with("/api/files/") => "secret.txt",
        "name" if route.starts_with("/api/tts/audio/") => "cached.mp3",
        "name" => "annconn",
        "key" => "tools.enabled",
        "page" => "page-1-x",
        "request" => "r1",
        "scope" => "chat",
        "tool" => "tavo_file_save",
        "path" => "index.js",
        _ => return None,
    })
}

/// Fills a route's parameters.
fn fill(route: &str) -> String {
    let mut out = String::new();
    let mut rest = route;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let end = rest[start..]
            .find('}')
            .map(|e| start + e)
            .expect("closing brace");
        let param = rest[start + 1..end].trim_start_matches('*');
        let value = param_value(route, param).unwrap_or_else(|| {
            panic!(
                "route {route}: parameter {{{param}}} has no isolation case; add it to param_value"
            )
        });
        out.push_str(value);
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

/// Routes the front door answers itself (the session, health) or that are streams without end
/// (read for a moment instead).
const DOOR_ROUTES: [&str; 2] = ["/api/session", "/api/health"];

struct Answer {
    status: u16,
    code: String,
    body: String,
}

async fn ask(client: &reqwest::Client, lab: &AccountsLab, method: &str, path: &str) -> Answer {
    let url = lab.url(path);
    let req = match method {
        "get" => client.get(&url),
        "post" => client.post(&url).json(&json!({})),
        "put" => client.put(&url).json(&json!({})),
        "delete" => client.delete(&url),
        other => panic!("method {other}"),
    };
    let r = req
        .timeout(Duration::from_secs(3))
        .send()
        .await
        .expect("send");
    let status = r.status().as_u16();
    let body = match tokio::time::timeout(Duration::from_millis(1500), r.text()).await {
        Ok(Ok(t)) => t,
        // An event stream: what arrived in the moment is what counts.
        _ => String::new(),
    };
    let code = serde_json::from_str::<Value>(&body)
        .ok()
        .and_then(|v| v["error"]["code"].as_str().map(str::to_owned))
        .unwrap_or_default();
    Answer { status, code, body }
}

const ANN_MCP: &str = "ann-mcp-token-0123456789";
const BOB_MCP: &str = "bob-mcp-token-0123456789";

/// One JSON-RPC request to `POST /mcp` with `token`: the status and the answer.
async fn mcp(lab: &AccountsLab, token: &str, method: &str, params: Value) -> (u16, Value) {
    let r = reqwest::Client::new()
        .post(lab.url("/mcp"))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .expect("mcp");
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// Bob calls one MCP tool naming ann's ids (`id` 1, chat 1, her file's name).
async fn mcp_tool_call(lab: &AccountsLab, tool: &str) -> String {
    let args = json!({"id": 1, "chatId": 1, "chat": 1, "name": "secret.txt", "query": "zq"});
    let (status, body) = mcp(
        lab,
        BOB_MCP,
        "tools/call",
        json!({"name": tool, "arguments": args}),
    )
    .await;
    format!("{status} {body}")
}

/// What decides whether two MCP answers are the same: status, error or not, the error code.
fn mcp_outcome(answer: &str) -> (String, bool, String) {
    let (status, body) = answer.split_once(' ').unwrap_or((answer, ""));
    let v: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let result = &v["result"];
    let code = result["structuredContent"]["error"]["code"]
        .as_str()
        .or_else(|| v["error"]["code"].as_i64().map(|_| "rpc"))
        .unwrap_or("")
        .to_owned();
    (
        status.to_owned(),
        result["isError"].as_bool().unwrap_or(false),
        code,
    )
}

/// Ann's library, everything named with the marker.
async fn fill_anns_library(ann: &reqwest::Client, lab: &AccountsLab) {
    let ok = |v: &Value| assert!(v.get("error").is_none(), "{v}");
    let post = |path: &str, body: Value| {
        let url = lab.url(path);
        let ann = ann.clone();
        async move {
            let r = ann.post(url).json(&body).send().await.expect("send");
            let v: Value = r.json().await.unwrap_or(Value::Null);
            v
        }
    };
    ok(&post(
        "/api/library/character",
        json!({"name": format!("Char {MARKER}"), "firstMes": format!("Hello {MARKER}")}),
    )
    .await);
    let chat = post(
        "/api/chats",
        json!({"characters": [1], "name": format!("Chat {MARKER}")}),
    )
    .await;
    ok(&chat);
    for (op, args) in [
        (
            "tavo_message_append",
            json!({"message": {"content": format!("Message {MARKER}")}}),
        ),
        (
            "tavo_persona_create",
            json!({"persona": {"name": format!("Persona {MARKER}"), "description": "the user"}}),
        ),
        (
            "tavo_lorebook_create",
            json!({"lorebook": {"name": format!("Book {MARKER}")}}),
        ),
        (
            "tavo_theme_create",
            json!({"theme": {"name": format!("Theme {MARKER}")}}),
        ),
        (
            "tavo_file_save",
            json!({"name": "secret.txt", "content": format!("File {MARKER}")}),
        ),
        (
            "tavo_variable_set",
            json!({"name": "secret", "value": MARKER}),
        ),
    ] {
        let v = post(&format!("/api/ops/{op}?chat=1"), args).await;
        assert_eq!(v["ok"], json!(true), "{op}: {v}");
    }
    let v = post(
        "/api/connections",
        json!({"name": "annconn", "source": "custom", "protocol": "openai-chat", "baseUrl": "http://127.0.0.1:9/v1",
               "model": format!("model-{MARKER}"), "apiKey": "sk-ann-0123456789abcdef"}),
    )
    .await;
    ok(&v);
}

/// What ann's library holds, as ann reads it (compared before and after bob's suite).
async fn anns_view(ann: &reqwest::Client, lab: &AccountsLab) -> Vec<String> {
    let mut out = Vec::new();
    for path in [
        "/api/library/character",
        "/api/library/persona",
        "/api/library/lorebook",
        "/api/chats",
        "/api/chats/1/messages",
        "/api/chats/1/variables",
        "/api/connections",
        "/api/chats/1/files/chat/secret.txt",
    ] {
        let r = ann.get(lab.url(path)).send().await.expect("send");
        out.push(format!(
            "{path} {} {}",
            r.status(),
            r.text().await.unwrap_or_default()
        ));
    }
    out
}

#[tokio::test]
async fn isolation_every_route_of_the_openapi_document_for_user_b() {
    let lab = AccountsLab::start().await;
    let ann = as_user(&lab.login("ann", "password-ann").await.expect("ann"));
    let bob = as_user(&lab.login("bob", "password-bob").await.expect("bob"));
    let doc: Value = ann
        .get(lab.url("/api/openapi.json"))
        .send()
        .await
        .expect("doc")
        .json()
        .await
        .expect("json");
    let mut with_params: Vec<(String, String)> = Vec::new();
    let mut without: Vec<(String, String)> = Vec::new();
    for (route, ops) in doc["paths"].as_object().expect("paths") {
        if DOOR_ROUTES.contains(&route.as_str()) {
            continue;
        }
        for method in ops.as_object().expect("ops").keys() {
            let case = (method.clone(), route.clone());
            if route.contains('{') {
                with_params.push(case);
            } else {
                without.push(case);
            }
        }
    }
    let ops: Value = ann
        .get(lab.url("/api/ops"))
        .send()
        .await
        .expect("ops")
        .json()
        .await
        .expect("json");
    let op_names: Vec<String> = ops
        .as_array()
        .or_else(|| ops["operations"].as_array())
        .expect("operation list")
        .iter()
        .filter_map(|o| o["name"].as_str().or(o["tool"].as_str()).map(str::to_owned))
        .collect();
    assert!(op_names.len() > 50, "{} operations", op_names.len());

    // Bob's answers while ann's library is empty, then while it is full: the same, route by
    // route, so nothing bob gets depends on ann's objects existing.
    let requests = |ops: &[String]| -> Vec<(String, String)> {
        let mut r: Vec<(String, String)> = Vec::new();
        for (method, route) in &with_params {
            if route == "/api/ops/{name}" {
                for op in ops {
                    r.push((method.clone(), format!("/api/ops/{op}?chat=1")));
                }
            } else {
                r.push((method.clone(), fill(route)));
            }
        }
        r
    };
    let cases = requests(&op_names);
    // Each library's MCP server on, with its own token, before the first pass.
    for (client, token) in [(&ann, ANN_MCP), (&bob, BOB_MCP)] {
        for (key, value) in [("mcp.enabled", json!(true)), ("mcp.token", json!(token))] {
            let r = client
                .put(lab.url(&format!("/api/settings/{key}")))
                .json(&json!({ "value": value }))
                .send()
                .await
                .expect("setting");
            assert_eq!(r.status().as_u16(), 200);
        }
    }
    let listed = mcp(&lab, BOB_MCP, "tools/list", json!({})).await.1;
    let listed = listed["result"]["tools"]
        .as_array()
        .expect("tools/list")
        .clone();
    // Reads are compared before and after; writes (which change bob's own library) are made
    // once, at the end, and must show nothing of ann's.
    let names = |read: bool| -> Vec<String> {
        listed
            .iter()
            .filter(|t| t["annotations"]["readOnlyHint"].as_bool() == Some(read))
            .filter_map(|t| t["name"].as_str().map(str::to_owned))
            .collect()
    };
    let (mcp_tools, mcp_writes) = (names(true), names(false));
    assert!(
        mcp_tools.len() > 10 && mcp_writes.len() > 10,
        "{} reads / {} writes among {} MCP tools",
        mcp_tools.len(),
        mcp_writes.len(),
        listed.len()
    );
    let mut before = Vec::with_capacity(cases.len());
    for (method, path) in &cases {
        before.push(ask(&bob, &lab, method, path).await);
    }
    let mut mcp_before = Vec::with_capacity(mcp_tools.len());
    for tool in &mcp_tools {
        mcp_before.push(mcp_tool_call(&lab, tool).await);
    }
    fill_anns_library(&ann, &lab).await;
    let view = anns_view(&ann, &lab).await;
    assert!(view.iter().any(|v| v.contains(MARKER)));
    let mut compared = 0;
    for ((method, path), was) in cases.iter().zip(&before) {
        let now = ask(&bob, &lab, method, path).await;
        assert!(
            !now.body.contains(MARKER),
            "{method} {path} showed ann's data: {}",
            now.body
        );
        assert_eq!(
            (now.status, &now.code),
            (was.status, &was.code),
            "{method} {path}: bob's answer changed when ann's library filled ({})",
            now.body
        );
        compared += 1;
    }
    // Every MCP tool through bob's token: the same answers, never ann's data.
    for (tool, was) in mcp_tools.iter().zip(&mcp_before) {
        let now = mcp_tool_call(&lab, tool).await;
        assert!(!now.contains(MARKER), "MCP {tool} showed ann's data: {now}");
        assert_eq!(
            &mcp_outcome(&now),
            &mcp_outcome(was),
            "MCP {tool}: bob's answer changed: {now}"
        );
        compared += 1;
    }
    for tool in &mcp_writes {
        let now = mcp_tool_call(&lab, tool).await;
        assert!(!now.contains(MARKER), "MCP {tool} showed ann's data: {now}");
        compared += 1;
    }
    // Bob was answered as himself, not refused at the door.
    assert!(
        before.iter().all(|a| a.status != 401),
        "bob's session must hold through the suite"
    );
    // Routes without parameters: bob's lists and his own writes never show ann's rows.
    let mut answered = 0;
    for (method, route) in &without {
        let a = ask(&bob, &lab, method, route).await;
        assert!(
            !a.body.contains(MARKER),
            "{method} {route} showed ann's data: {}",
            a.body
        );
        assert_ne!(a.status, 401, "{method} {route}");
        answered += usize::from((200..300).contains(&a.status));
        compared += 1;
    }
    assert!(
        answered >= 15,
        "only {answered} of bob's list routes answered 2xx"
    );
    // Per-user MCP: each library's MCP server has its own switch and token; a token reaches
    // its owner's library only.
    let search = json!({"name": "tavo_character_search", "arguments": {}});
    let (status, text) = mcp(&lab, ANN_MCP, "tools/call", search.clone()).await;
    assert!(
        status == 200 && text.to_string().contains(MARKER),
        "{status} {text}"
    );
    let (status, text) = mcp(&lab, BOB_MCP, "tools/call", search.clone()).await;
    assert!(
        status == 200 && !text.to_string().contains(MARKER),
        "{status} {text}"
    );
    let (status, _) = mcp(&lab, "nobodys-mcp-token-0123456789", "tools/call", search).await;
    assert_eq!(status, 401);

    // A signed file URL names its library; moved to another user's prefix it opens nothing.
    let signed: Value = ann
        .post(lab.url("/api/chats/1/files/sign"))
        .json(&json!({"files": [{"name": "secret.txt"}]}))
        .send()
        .await
        .expect("sign")
        .json()
        .await
        .expect("json");
    let url = signed["urls"][0]["url"].as_str().expect("url").to_owned();
    assert!(url.starts_with("/u/1/api/signed/"), "{url}");
    let anon = reqwest::Client::new();
    let r = anon.get(lab.url(&url)).send().await.expect("signed");
    assert_eq!(r.status().as_u16(), 200);
    assert!(r.text().await.unwrap_or_default().contains(MARKER));
    let moved = url.replacen("/u/1/", "/u/2/", 1);
    let r = anon.get(lab.url(&moved)).send().await.expect("moved");
    assert_eq!(r.status().as_u16(), 403, "the signature covers the library");

    let after = anns_view(&ann, &lab).await;
    assert_eq!(view, after, "bob's requests changed ann's library");
    eprintln!(
        "isolation: {} routes × methods, {} operations, {} MCP tools, {compared} requests compared",
        with_params.len() + without.len(),
        op_names.len(),
        mcp_tools.len() + mcp_writes.len()
    );
}

#[tokio::test]
async fn the_operators_limits_refuse_before_anything_is_written() {
    use tavo_testkit::{MockProvider, Script, Turn, Wire};
    let lab = AccountsLab::start_with(tavo_server::UserLimits {
        max_replies: 1,
        quota_bytes: None,
    })
    .await;
    let bob = as_user(&lab.login("bob", "password-bob").await.expect("bob"));
    let slow = Turn {
        delay_ms: 150,
        chunk: Some(4),
        ..Turn::text("A long and slow answer that takes a while to arrive.")
    };
    let mock = MockProvider::start(Script::new(vec![slow.clone(), slow]))
        .await
        .expect("mock");
    let r = bob
        .post(lab.url("/api/connections"))
        .json(&json!({"name": "mine", "source": "custom", "protocol": "openai-chat",
                      "baseUrl": mock.base_url(Wire::OpenaiChat), "model": "m", "apiKey": "sk-bob-0123456789abcdef"}))
        .send()
        .await
        .expect("connection");
    assert_eq!(r.status().as_u16(), 200);
    let c: Value = bob
        .post(lab.url("/api/library/character"))
        .json(&json!({"name": "Slowpoke", "firstMes": "Hi."}))
        .send()
        .await
        .expect("character")
        .json()
        .await
        .expect("json");
    let chat: Value = bob
        .post(lab.url("/api/chats"))
        .json(&json!({"characters": [c["id"]], "greeting": false}))
        .send()
        .await
        .expect("chat")
        .json()
        .await
        .expect("json");
    let other: Value = bob
        .post(lab.url("/api/chats"))
        .json(&json!({"characters": [c["id"]], "greeting": false}))
        .send()
        .await
        .expect("chat")
        .json()
        .await
        .expect("json");
    let send = |chat: &Value| {
        bob.post(lab.url(&format!("/api/chats/{}/messages", chat["id"])))
            .json(&json!({"content": "go"}))
            .send()
    };
    let first = send(&chat).await.expect("first");
    let status = first.status().as_u16();
    assert_eq!(
        status,
        202,
        "{chat} {}",
        first.text().await.unwrap_or_default()
    );
    let second = send(&other).await.expect("second");
    assert_eq!(second.status().as_u16(), 429);
    let body: Value = second.json().await.expect("json");
    assert_eq!(body["error"]["code"], "limit_exceeded", "{body}");
    let msgs: Value = bob
        .get(lab.url(&format!("/api/chats/{}/messages", other["id"])))
        .send()
        .await
        .expect("messages")
        .json()
        .await
        .expect("json");
    assert!(
        !msgs.to_string().contains("\"go\""),
        "nothing half-written: {msgs}"
    );
}

#[tokio::test]
async fn a_library_over_its_quota_refuses_writes_but_reads_and_deletes() {
    let lab = AccountsLab::start_with(tavo_server::UserLimits {
        max_replies: 4,
        quota_bytes: Some(1),
    })
    .await;
    let bob = as_user(&lab.login("bob", "password-bob").await.expect("bob"));
    let r = bob
        .post(lab.url("/api/library/character"))
        .json(&json!({"name": "Too much"}))
        .send()
        .await
        .expect("write");
    assert_eq!(r.status().as_u16(), 507);
    let body: Value = r.json().await.expect("json");
    assert_eq!(body["error"]["code"], "quota_exceeded", "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("delete"),
        "{body}"
    );
    let list = bob
        .get(lab.url("/api/library/character"))
        .send()
        .await
        .expect("read");
    assert_eq!(list.status().as_u16(), 200);
    assert!(!list.text().await.unwrap_or_default().contains("Too much"));
}
