//! Page function tools (seed 001) end to end: a page attaches over `/api/pages/events`,
//! registers a tool, the mock model calls it, the engine sends the call to the page and the
//! page's answer reaches the model. Also: stealth calls end the reply without a follow-up, a
//! page that closes mid-call fails the call at once, a throwing action is a tool error, a tool
//! that never answers times out, a 10 MB answer is cut; with dynamic loading the model finds
//! the page's tool through `extension_tool_search`; the approval policy refuses a denied page
//! tool before the page sees it; the generation hooks, with exactly one terminal event each
//! (success, a sanitised `generation:error`, `generation:cancelled` with `partial`).

use std::time::Duration;

use crate::support::{self, TestServer, bare_client, client, json_of, make_chat, read_sse};
use futures_util::StreamExt;
use serde_json::{Value, json};
use tavo_testkit::{MockProvider, Script, ScriptCall, Turn, Wire};

/// What the fake page does with a `tool.call`.
#[derive(Clone, Copy)]
enum Behaviour {
    Answer,
    /// Answers tools, and rewrites the user text (prepare) and the reply (success).
    Hooks,
    /// Never answers a tool call (and stays attached).
    Never,
    /// Answers with a 10 MB string.
    Huge,
    Throw,
    CloseMidCall,
}

/// A page: attaches for `chat`, registers `roll_dice` (stealth or not), and handles calls.
async fn fake_page(
    s: &TestServer,
    chat: i64,
    stealth: bool,
    behaviour: Behaviour,
) -> tokio::task::JoinHandle<Vec<Value>> {
    let r = bare_client()
        .get(s.url(&format!("/api/pages/events?chat={chat}")))
        .send()
        .await
        .expect("attach");
    assert_eq!(r.status(), 200);
    let base = s.url("");
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    let task = tokio::spawn(async move {
        let mut ready = Some(ready_tx);
        let mut seen = Vec::new();
        let mut page = String::new();
        let mut buf = String::new();
        let mut stream = r.bytes_stream();
        while let Ok(Some(Ok(chunk))) =
            tokio::time::timeout(Duration::from_secs(20), stream.next()).await
        {
            buf.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = buf.find("\n\n") {
                let block: String = buf.drain(..end + 2).collect();
                let event = block
                    .lines()
                    .find_map(|l| l.strip_prefix("event:"))
                    .unwrap_or("")
                    .trim()
                    .to_owned();
                let data: Value = block
                    .lines()
                    .find_map(|l| l.strip_prefix("data:"))
                    .and_then(|d| serde_json::from_str(d.trim()).ok())
                    .unwrap_or(Value::Null);
                match event.as_str() {
                    "page" => {
                        page = data["id"].as_str().expect("page id").to_owned();
                        let tools = json!({"tools": [{
                            "name": "roll_dice", "displayName": "Roll", "description": "Roll a die with `sides` sides.",
                            "parameters": {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object",
                                           "properties": {"sides": {"type": "integer"}}, "required": ["sides"]},
                            "stealth": stealth
                        }]});
                        let (st, body) = json_of(
                            client()
                                .put(format!("{base}/api/pages/{page}/tools"))
                                .json(&tools)
                                .send()
                                .await
                                .expect("tools"),
                        )
                        .await;
                        assert_eq!(
                            (st, body["tools"][0]["registered"].clone()),
                            (200, json!(true)),
                            "{body}"
                        );
                        if let Some(tx) = ready.take() {
                            let _ = tx.send(());
                        }
                    }
                    "request" => {
                        let id = data["id"].as_str().expect("request id");
                        if data["method"] == "input.send" {
                            seen.push(data.clone());
                            let result = json!({"ok": false, "reason": "cancelled", "cancelledBy": "org.test.guard", "message": "not now"});
                            let r = client()
                                .post(format!("{base}/api/pages/{page}/answers/{id}"))
                                .json(&json!({"ok": true, "result": result}))
                                .send()
                                .await
                                .expect("answer");
                            assert_eq!(r.status(), 204);
                            continue;
                        }
                        if data["method"] == "hook" {
                            let kind = data["params"]["type"].as_str().unwrap_or("").to_owned();
                            let text = data["params"]["event"]["text"]
                                .as_str()
                                .unwrap_or("")
                                .to_owned();
                            let result = match (behaviour, kind.as_str()) {
                                (Behaviour::Hooks, "generation:prepare") => {
                                    json!({"text": format!("{text} (and make it a d20)")})
                                }
                                (Behaviour::Hooks, "generation:success") => {
                                    json!({"text": format!("[checked] {text}")})
                                }
                                _ => json!({}),
                            };
                            seen.push(data.clone());
                            let r = client()
                                .post(format!("{base}/api/pages/{page}/answers/{id}"))
                                .json(&json!({"ok": true, "result": result}))
                                .send()
                                .await
                                .expect("answer");
                            assert_eq!(r.status(), 204, "the server waits for every hook's answer");
                            continue;
                        }
                        seen.push(data.clone());
                        let answer = match behaviour {
                            Behaviour::Answer | Behaviour::Hooks => {
                                json!({"ok": true, "result": {"rolled": 4, "sides": data["params"]["arguments"]["sides"]}})
                            }
                            Behaviour::Throw => {
                                json!({"ok": false, "error": {"message": "dice fell off the table"}})
                            }
                            Behaviour::CloseMidCall => return seen,
                            Behaviour::Never => continue,
                            Behaviour::Huge => {
                                json!({"ok": true, "result": "x".repeat(10 * 1024 * 1024)})
                            }
                        };
                        let r = client()
                            .post(format!("{base}/api/pages/{page}/answers/{id}"))
                            .json(&answer)
                            .send()
                            .await
                            .expect("answer");
                        assert_eq!(r.status(), 204);
                    }
                    _ => {}
                }
            }
        }
        seen
    });
    ready_rx.await.expect("page registered its tool");
    task
}

async fn setup(turns: Vec<Turn>) -> (TestServer, MockProvider, i64) {
    let s = TestServer::start().await;
    s.store
        .setting_set("tools.enabled", &json!(true))
        .expect("setting");
    s.store
        .setting_set("tools.dynamicLoading", &json!(false))
        .expect("setting");
    let mock = MockProvider::start(Script::new(turns)).await.expect("mock");
    let r = client()
        .post(s.url("/api/connections"))
        .json(&json!({"name": "mock", "source": "custom", "protocol": "openai-chat",
                      "baseUrl": mock.base_url(Wire::OpenaiChat), "model": "mock-model", "apiKey": "sk-mock-0123456789abcdef"}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    let chat = make_chat(&s.store, "dice");
    (s, mock, chat)
}

fn roll() -> Turn {
    Turn {
        tool_calls: vec![ScriptCall {
            id: Some("call_roll".into()),
            name: "roll_dice".into(),
            arguments: json!({"sides": 6}),
        }],
        ..Turn::default()
    }
}

async fn reply(s: &TestServer, chat: i64) -> Vec<support::SseEvent> {
    let (st, body) = json_of(
        client()
            .post(s.url(&format!("/api/chats/{chat}/messages")))
            .json(&json!({"content": "roll for me"}))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(st, 202, "{body}");
    let reply = body["replyId"].as_str().expect("replyId").to_owned();
    let r = bare_client()
        .get(s.url(&format!("/api/replies/{reply}/events")))
        .send()
        .await
        .expect("events");
    read_sse(r, Duration::from_secs(30), |e| e.event == "finished").await
}

/// The tool message the model got back for `call_roll`, from its second request.
fn tool_result(mock: &MockProvider) -> String {
    let reqs = mock.requests();
    let second = reqs.get(1).expect("a second model request");
    second.body["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "tool"))
        .map(|m| m["content"].to_string())
        .unwrap_or_default()
}

#[tokio::test]
async fn the_page_runs_the_tool_and_its_answer_reaches_the_model() {
    let (s, mock, chat) = setup(vec![roll(), Turn::text("You rolled a 4.")]).await;
    let page = fake_page(&s, chat, false, Behaviour::Answer).await;
    let first = &mock.requests();
    assert!(first.is_empty());
    let evs = reply(&s, chat).await;
    assert!(evs.iter().any(|e| e.event == "finished"), "{evs:?}");
    let reqs = mock.requests();
    let offered: Vec<String> = reqs[0].body["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
        .collect();
    assert!(offered.contains(&"roll_dice".to_owned()), "{offered:?}");
    let result = tool_result(&mock);
    assert!(
        result.contains("rolled") && result.contains('4'),
        "{result}"
    );
    drop(page);
}

#[tokio::test]
async fn a_stealth_call_triggers_no_follow_up_generation() {
    let (s, mock, chat) = setup(vec![roll(), Turn::text("never requested")]).await;
    let _page = fake_page(&s, chat, true, Behaviour::Answer).await;
    reply(&s, chat).await;
    assert_eq!(
        mock.requests().len(),
        1,
        "a stealth tool's result must not start another model round"
    );
}

#[tokio::test]
async fn a_throwing_action_is_a_tool_error_the_model_sees() {
    let (s, mock, chat) = setup(vec![roll(), Turn::text("The dice fell.")]).await;
    let _page = fake_page(&s, chat, false, Behaviour::Throw).await;
    reply(&s, chat).await;
    let result = tool_result(&mock);
    assert!(result.contains("dice fell off the table"), "{result}");
}

#[tokio::test]
async fn a_page_that_closes_mid_call_fails_the_call_at_once() {
    let (s, mock, chat) = setup(vec![roll(), Turn::text("The page went away.")]).await;
    let page = fake_page(&s, chat, false, Behaviour::CloseMidCall).await;
    let started = std::time::Instant::now();
    reply(&s, chat).await;
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the call waited for the time-out"
    );
    let result = tool_result(&mock);
    assert!(
        result.contains("closed") && result.contains("unavailable"),
        "{result}"
    );
    let seen = page.await.expect("page");
    assert_eq!(
        seen.iter().filter(|r| r["method"] == "tool.call").count(),
        1
    );
    // The page is told how long the server waits (tools.pageCallTimeoutSeconds, default 120 s),
    // so its own timer never ends a call the server still waits for.
    let call = seen
        .iter()
        .find(|r| r["method"] == "tool.call")
        .expect("call");
    assert_eq!(call["params"]["timeoutMs"], json!(120_000), "{call}");
    // Its tool is gone: a page-less registry offers no roll_dice next time.
    let (_, ops) = json_of(client().get(s.url("/api/ops")).send().await.expect("ops")).await;
    assert!(!ops.to_string().contains("roll_dice"));
}

#[tokio::test]
async fn generation_hooks_rewrite_the_request_and_the_stored_reply_only() {
    let (s, mock, chat) = setup(vec![Turn::text("A plain answer.")]).await;
    let page = fake_page(&s, chat, false, Behaviour::Hooks).await;
    let evs = reply(&s, chat).await;
    let finished = evs
        .iter()
        .find(|e| e.event == "finished")
        .expect("finished")
        .json();
    assert_eq!(finished["text"], "[checked] A plain answer.");
    let req = &mock.requests()[0];
    let last_user = req.body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .expect("user")
        .clone();
    assert!(
        last_user["content"]
            .to_string()
            .contains("roll for me (and make it a d20)"),
        "{last_user}"
    );
    let msgs = s
        .store
        .read(|tx| tx.messages_all(tavo_model::ChatId(chat)))
        .expect("messages");
    assert_eq!(
        msgs.iter()
            .find(|m| m.role == tavo_model::Role::User)
            .expect("user")
            .content,
        "roll for me",
        "the stored user message is untouched"
    );
    assert_eq!(
        msgs.last().expect("reply").content,
        "[checked] A plain answer."
    );
    drop(s);
    let seen = page.await.expect("page");
    let kinds: Vec<&str> = seen
        .iter()
        .filter_map(|r| r["params"]["type"].as_str())
        .collect();
    assert_eq!(
        kinds,
        ["generation:prepare", "generation:success"],
        "exactly one terminal event"
    );
    assert_eq!(seen[0]["params"]["event"]["source"], "reply");
}

#[tokio::test]
async fn a_tool_that_never_answers_times_out_with_the_page_tool_time_out() {
    let (s, mock, chat) = setup(vec![roll(), Turn::text("It timed out.")]).await;
    s.store
        .setting_set("tools.pageCallTimeoutSeconds", &json!(1))
        .expect("setting");
    let _page = fake_page(&s, chat, false, Behaviour::Never).await;
    reply(&s, chat).await;
    let result = tool_result(&mock);
    assert!(result.contains("timeout"), "{result}");
}

#[tokio::test]
async fn a_10_mb_result_is_cut_to_the_result_budget() {
    let (s, mock, chat) = setup(vec![roll(), Turn::text("That was long.")]).await;
    let _page = fake_page(&s, chat, false, Behaviour::Huge).await;
    reply(&s, chat).await;
    let result = tool_result(&mock);
    assert!(
        result.len() < 80 * 1024,
        "{} bytes reached the model",
        result.len()
    );
    assert!(
        result.contains("xxxx"),
        "{}",
        &result[..result.len().min(300)]
    );
}

/// Calls an MCP tool on `POST /mcp` and answers the tool's JSON result.
async fn mcp_call(s: &TestServer, name: &str, arguments: Value) -> Value {
    tavo_engine::settings::set(&s.store, tavo_engine::settings::MCP_ENABLED, "true")
        .expect("enable");
    tavo_engine::settings::set(
        &s.store,
        tavo_engine::settings::MCP_TOKEN,
        "mcp-test-token-0123456789",
    )
    .expect("token");
    let r = bare_client()
        .post(s.url("/mcp"))
        .bearer_auth("mcp-test-token-0123456789")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .json(&json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": name, "arguments": arguments}}))
        .send()
        .await
        .expect("send");
    let body: Value = r.json().await.expect("json");
    let result = &body["result"];
    if !result["structuredContent"].is_null() {
        return result["structuredContent"].clone();
    }
    let text = result["content"][0]["text"].as_str().unwrap_or("null");
    serde_json::from_str(text)
        .unwrap_or_else(|_| json!({"text": text, "isError": result["isError"]}))
}

#[tokio::test]
async fn tavo_input_send_sends_the_draft_from_the_server_when_no_page_has_the_chat() {
    let (s, mock, chat) = setup(vec![Turn::text("Got it.")]).await;
    s.store
        .chat_state_set(
            tavo_model::ChatId(chat),
            "input.draft",
            &json!("from the draft"),
        )
        .expect("draft");
    let sent = mcp_call(&s, "tavo_input_send", json!({"chatId": chat})).await;
    assert_eq!(
        (sent["ok"].clone(), sent["via"].clone()),
        (json!(true), json!("server")),
        "{sent}"
    );
    let reply = sent["replyId"].as_str().expect("replyId").to_owned();
    let r = bare_client()
        .get(s.url(&format!("/api/replies/{reply}/events")))
        .send()
        .await
        .expect("events");
    read_sse(r, Duration::from_secs(30), |e| e.event == "finished").await;
    let msgs = s
        .store
        .read(|tx| tx.messages_all(tavo_model::ChatId(chat)))
        .expect("messages");
    assert_eq!(msgs[0].content, "from the draft");
    assert_eq!(mock.requests().len(), 1);
    let draft = s
        .store
        .chat_state_get(tavo_model::ChatId(chat), "input.draft")
        .expect("draft");
    assert_eq!(draft, Some(json!("")), "a sent draft is cleared");
}

#[tokio::test]
async fn tavo_input_send_goes_through_the_open_page_whose_plugin_may_cancel_it() {
    let (s, mock, chat) = setup(vec![Turn::text("never")]).await;
    let page = fake_page(&s, chat, false, Behaviour::Answer).await;
    let sent = mcp_call(
        &s,
        "tavo_input_send",
        json!({"chatId": chat, "text": "hello"}),
    )
    .await;
    assert_eq!(
        sent,
        json!({"ok": false, "reason": "cancelled", "cancelledBy": "org.test.guard", "message": "not now"})
    );
    assert!(mock.requests().is_empty());
    drop(s);
    let seen = page.await.expect("page");
    assert_eq!(
        seen[0]["params"],
        json!({"text": "hello", "source": "mcp", "chatId": chat})
    );
}

/// Sends "roll for me" and answers the reply's id.
async fn start(s: &TestServer, chat: i64) -> String {
    let (st, body) = json_of(
        client()
            .post(s.url(&format!("/api/chats/{chat}/messages")))
            .json(&json!({"content": "roll for me"}))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(st, 202, "{body}");
    body["replyId"].as_str().expect("replyId").to_owned()
}

/// The reply's events until `stop` (or its end).
async fn events_until(
    s: &TestServer,
    reply: &str,
    stop: impl FnMut(&support::SseEvent) -> bool,
) -> Vec<support::SseEvent> {
    let r = bare_client()
        .get(s.url(&format!("/api/replies/{reply}/events")))
        .send()
        .await
        .expect("events");
    read_sse(r, Duration::from_secs(30), stop).await
}

/// The hook requests the page saw, after the terminal notice (sent without waiting) arrived.
async fn hooks_seen(s: TestServer, page: tokio::task::JoinHandle<Vec<Value>>) -> Vec<Value> {
    tokio::time::sleep(Duration::from_millis(700)).await;
    drop(s);
    page.await
        .expect("page")
        .into_iter()
        .filter(|r| r["method"] == "hook")
        .collect()
}

fn kinds(seen: &[Value]) -> Vec<String> {
    seen.iter()
        .filter_map(|r| r["params"]["type"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn a_failed_generation_ends_with_one_sanitised_generation_error() {
    let (s, _mock, chat) = setup(vec![Turn::error(
        400,
        "provider body with secret-context-0123",
    )])
    .await;
    let page = fake_page(&s, chat, false, Behaviour::Hooks).await;
    let reply = start(&s, chat).await;
    let evs = events_until(&s, &reply, |e| e.event == "finished").await;
    assert!(evs.iter().any(|e| e.event == "error"), "{evs:?}");
    let seen = hooks_seen(s, page).await;
    assert_eq!(
        kinds(&seen),
        ["generation:prepare", "generation:error"],
        "exactly one terminal event, and no success"
    );
    let event = &seen[1]["params"]["event"];
    assert_eq!(event["error"]["code"], "generation_failed", "{event}");
    assert!(event["error"]["message"].is_string(), "{event}");
    assert_eq!(event["source"], "reply");
    assert_eq!(event["generationId"], reply);
    assert_eq!(event["chatId"], chat);
    assert!(
        !event.to_string().contains("sk-mock"),
        "no key in the notice: {event}"
    );
}

#[tokio::test]
async fn a_cancelled_generation_ends_with_generation_cancelled_and_says_whether_part_was_saved() {
    let slow = Turn {
        text: Some("one two three four five six seven eight nine ten eleven twelve".into()),
        delay_ms: 150,
        chunk: Some(4),
        ..Turn::default()
    };
    let (s, _mock, chat) = setup(vec![slow]).await;
    let page = fake_page(&s, chat, false, Behaviour::Hooks).await;
    let reply = start(&s, chat).await;
    events_until(&s, &reply, |e| e.event == "text_delta").await;
    let r = client()
        .post(s.url(&format!("/api/replies/{reply}/cancel")))
        .send()
        .await
        .expect("cancel");
    assert!(r.status().is_success(), "{}", r.status());
    let evs = events_until(&s, &reply, |e| e.event == "finished").await;
    let finished = evs
        .iter()
        .find(|e| e.event == "finished")
        .expect("finished")
        .json();
    assert_eq!(finished["status"], "cancelled", "{finished}");
    let stored = s
        .store
        .read(|tx| tx.messages_all(tavo_model::ChatId(chat)))
        .expect("messages");
    let partial_saved = stored
        .iter()
        .any(|m| m.role != tavo_model::Role::User && !m.content.is_empty());
    let seen = hooks_seen(s, page).await;
    assert_eq!(
        kinds(&seen),
        ["generation:prepare", "generation:cancelled"],
        "exactly one terminal event"
    );
    assert_eq!(
        seen[1]["params"]["event"]["partial"],
        json!(partial_saved),
        "partial says whether a partial message was saved ({stored:?})"
    );
    assert!(partial_saved, "text had streamed before the cancel");
}

#[tokio::test]
async fn with_dynamic_loading_a_page_tool_is_offered_from_the_first_request() {
    // Seed 001: a page's registered tool is on every prompt; dynamic loading (seed 000, the
    // default) governs the built-ins, which still start with tavo_tool_search.
    let (s, mock, chat) = setup(vec![roll(), Turn::text("You rolled a 4.")]).await;
    s.store
        .setting_set("tools.dynamicLoading", &json!(true))
        .expect("setting");
    let _page = fake_page(&s, chat, false, Behaviour::Answer).await;
    let evs = reply(&s, chat).await;
    let finished = evs
        .iter()
        .find(|e| e.event == "finished")
        .expect("finished")
        .json();
    assert_eq!(finished["text"], "You rolled a 4.", "{finished}");
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 2);
    let offered: Vec<String> = reqs[0].body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    assert!(
        offered.contains(&"roll_dice".to_owned())
            && offered.contains(&"tavo_tool_search".to_owned()),
        "the page tool at once, the built-ins behind the search: {offered:?}"
    );
    let result = reqs[1].body["messages"]
        .as_array()
        .and_then(|m| {
            m.iter()
                .rfind(|m| m["role"] == "tool")
                .map(|m| m["content"].to_string())
        })
        .unwrap_or_default();
    assert!(result.contains("rolled"), "{result}");
}

#[tokio::test]
async fn the_approval_policy_applies_to_page_tools() {
    let (s, mock, chat) = setup(vec![roll(), Turn::text("It was refused.")]).await;
    let mut policy = tavo_tools::ApprovalPolicy::default();
    policy.remember(None, "roll_dice", tavo_tools::Approval::Deny);
    policy.save(&s.store).expect("policy");
    let page = fake_page(&s, chat, false, Behaviour::Answer).await;
    reply(&s, chat).await;
    let result = tool_result(&mock);
    assert!(
        result.contains("does not allow roll_dice"),
        "the model is told the user does not allow it: {result}"
    );
    drop(s);
    let seen = page.await.expect("page");
    assert!(
        !seen.iter().any(|r| r["method"] == "tool.call"),
        "a denied tool never reaches the page: {seen:?}"
    );
}

#[tokio::test]
async fn a_reply_never_sees_or_runs_the_tools_of_another_chats_page() {
    // Issue 30 item 6: the page shows chat B; a reply in chat A is offered none of its tools,
    // and a call the model makes anyway is refused without reaching the page.
    let (s, mock, chat_a) = setup(vec![roll(), Turn::text("No dice here.")]).await;
    let chat_b = make_chat(&s.store, "other");
    let page = fake_page(&s, chat_b, false, Behaviour::Answer).await;
    let evs = reply(&s, chat_a).await;
    assert!(evs.iter().any(|e| e.event == "finished"), "{evs:?}");
    let reqs = mock.requests();
    let offered = reqs[0].body["tools"].to_string();
    assert!(!offered.contains("roll_dice"), "{offered}");
    let result = tool_result(&mock);
    assert!(
        result.contains("unavailable") && result.contains("does not show this chat"),
        "{result}"
    );
    drop(s);
    let seen = page.await.expect("page");
    assert!(
        seen.iter().all(|r| r["method"] != "tool.call"),
        "the other chat's page ran nothing: {seen:?}"
    );
}
