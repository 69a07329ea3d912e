//! Replies over HTTP against the loopback mock provider: start, stream, resume with
//! `Last-Event-ID`, cancel, and provider faults that end the reply with the mapped error while
//! the user's message stays stored.

use std::time::Duration;

use crate::support::{SseEvent, TestServer, bare_client, client, json_of, make_chat, read_sse};
use serde_json::{Value, json};
use tavo_llm::Timeouts;
use tavo_llm::retry::RetryPolicy;
use tavo_model::{ChatId, Role};
use tavo_server::{ServeConfig, Server};
use tavo_testkit::{MockProvider, Script, ScriptError, Turn, Wire};

/// A server whose provider client gives up fast (one retry, 10 ms backoff, 1.5 s idle).
async fn server_with_fast_client() -> TestServer {
    TestServer::start_custom(|config, store| async move {
        let retry = RetryPolicy {
            max_retries: 1,
            base_delay: Duration::from_millis(10),
            max_wait: Duration::from_secs(2),
        };
        let timeouts = Timeouts {
            connect: Duration::from_secs(2),
            headers: Duration::from_secs(5),
            idle: Duration::from_millis(1500),
        };
        let client = tavo_llm::Client::with(retry, timeouts).expect("client");
        Server::bind_with_client(config, store, client)
            .await
            .expect("bind")
    })
    .await
}

/// [`server_with_fast_client`] with tool use on and every tool declared from the first request.
async fn server_with_tools() -> TestServer {
    let s = server_with_fast_client().await;
    s.store
        .setting_set("tools.enabled", &json!(true))
        .expect("setting");
    s.store
        .setting_set("tools.dynamicLoading", &json!(false))
        .expect("setting");
    s
}

async fn add_connection(s: &TestServer, base_url: &str) {
    let r = client()
        .post(s.url("/api/connections"))
        .json(&json!({"name": "mock", "source": "custom", "protocol": "openai-chat",
                      "baseUrl": base_url, "model": "mock-model", "apiKey": "sk-mock-0123456789abcdef"}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
}

async fn send(s: &TestServer, chat: i64, text: &str) -> (i64, String) {
    let r = client()
        .post(s.url(&format!("/api/chats/{chat}/messages")))
        .json(&json!({"content": text}))
        .send()
        .await
        .expect("send");
    let (status, body) = json_of(r).await;
    assert_eq!(status, 202, "{body}");
    (
        body["messageId"].as_i64().expect("messageId"),
        body["replyId"].as_str().expect("replyId").to_owned(),
    )
}

async fn events(s: &TestServer, reply: &str, last_event_id: Option<&str>) -> Vec<SseEvent> {
    let mut req = bare_client().get(s.url(&format!("/api/replies/{reply}/events")));
    if let Some(id) = last_event_id {
        req = req.header("last-event-id", id);
    }
    let r = req.send().await.expect("send");
    assert_eq!(r.status(), 200);
    assert!(
        r.headers()
            .get("content-type")
            .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"))
    );
    read_sse(r, Duration::from_secs(20), |e| {
        e.event == "finished" || e.event == "reload"
    })
    .await
}

fn text_of(evs: &[SseEvent]) -> String {
    evs.iter()
        .filter(|e| e.event == "text_delta")
        .filter_map(|e| e.json()["text"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn a_message_starts_a_reply_whose_events_stream_and_resume() {
    let mock = MockProvider::start(Script::new(vec![Turn {
        chunk: Some(3),
        ..Turn::text("The lighthouse keeper waves back.")
    }]))
    .await
    .expect("mock");
    let s = server_with_fast_client().await;
    add_connection(&s, &mock.base_url(Wire::OpenaiChat)).await;
    let chat = make_chat(&s.store, "replies");
    let (message_id, reply) = send(&s, chat, "Hello there").await;
    assert!(reply.starts_with("rpl_"));

    let all = events(&s, &reply, None).await;
    let last = all.last().expect("events");
    assert_eq!(last.event, "finished", "{all:?}");
    assert_eq!(last.json()["status"], "finished");
    assert_eq!(text_of(&all), "The lighthouse keeper waves back.");
    // Ids are the engine's sequence numbers: 1, 2, 3, … without holes.
    let ids: Vec<u64> = all
        .iter()
        .filter_map(|e| e.id.as_deref()?.parse().ok())
        .collect();
    assert_eq!(ids, (1..=ids.len() as u64).collect::<Vec<_>>());
    assert!(all.iter().all(|e| e.json()["replyId"] == reply.as_str()));

    // Reconnecting with Last-Event-ID gets exactly what came after.
    let resumed = events(&s, &reply, Some("3")).await;
    assert_eq!(resumed.first().and_then(|e| e.id.as_deref()), Some("4"));
    assert_eq!(resumed.len(), all.len() - 3);

    // Both messages are stored; the reply is described as finished.
    let stored = s.store.messages_all(ChatId(chat)).expect("messages");
    assert_eq!(stored.len(), 2);
    assert_eq!(stored[0].id.map(|m| m.0), Some(message_id));
    assert_eq!(
        (stored[0].role, stored[0].content.as_str()),
        (Role::User, "Hello there")
    );
    assert_eq!(
        (stored[1].role, stored[1].content.as_str()),
        (Role::Assistant, "The lighthouse keeper waves back.")
    );
    let (status, described) = json_of(
        bare_client()
            .get(s.url(&format!("/api/replies/{reply}")))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(described["status"], "finished");
    assert_eq!(described["chatId"], chat);
    // The provider got the user's message.
    let seen = mock.requests();
    assert!(
        seen.last()
            .is_some_and(|r| r.body.to_string().contains("Hello there"))
    );
}

#[tokio::test]
async fn a_chat_has_one_live_reply_and_a_reply_can_be_cancelled() {
    let mock = MockProvider::start(Script::new(vec![Turn {
        delay_ms: 200,
        chunk: Some(2),
        ..Turn::text("slowly, very slowly")
    }]))
    .await
    .expect("mock");
    let s = server_with_fast_client().await;
    add_connection(&s, &mock.base_url(Wire::OpenaiChat)).await;
    let chat = make_chat(&s.store, "busy");
    let global = bare_client()
        .get(s.url("/api/events"))
        .send()
        .await
        .expect("send");
    let (_, reply) = send(&s, chat, "go").await;
    // A second message while the reply lives is refused and not stored.
    let r = client()
        .post(s.url(&format!("/api/chats/{chat}/messages")))
        .json(&json!({"content": "again"}))
        .send()
        .await
        .expect("send");
    let (status, err) = json_of(r).await;
    assert_eq!(status, 409);
    assert_eq!(err["error"]["code"], "busy");
    assert_eq!(err["error"]["details"]["replyId"], reply.as_str());
    let (_, live) = json_of(
        bare_client()
            .get(s.url("/api/replies"))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert!(
        live.as_array()
            .is_some_and(|l| l.iter().any(|r| r["replyId"] == reply.as_str()))
    );
    let r = client()
        .post(s.url(&format!("/api/replies/{reply}/cancel")))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 202);
    let evs = events(&s, &reply, None).await;
    assert_eq!(
        evs.last().map(|e| e.json()["status"].clone()),
        Some(json!("cancelled"))
    );
    let stored = s.store.messages_all(ChatId(chat)).expect("messages");
    assert_eq!(stored.iter().filter(|m| m.content == "again").count(), 0);
    assert_eq!(stored[0].content, "go");
    // The global stream reported the reply's status changes.
    let statuses = read_sse(global, Duration::from_secs(5), |e| {
        e.event == "reply" && e.json()["status"] == "cancelled"
    })
    .await;
    let replies: Vec<Value> = statuses
        .iter()
        .filter(|e| e.event == "reply")
        .map(SseEvent::json)
        .collect();
    assert!(
        replies
            .iter()
            .any(|r| r["status"] == "running" && r["chatId"] == chat),
        "{replies:?}"
    );
    assert!(
        replies.iter().any(|r| r["status"] == "cancelled"),
        "{replies:?}"
    );
}

#[tokio::test]
async fn starting_without_a_connection_keeps_nothing_half_done() {
    let s = server_with_fast_client().await;
    let chat = make_chat(&s.store, "no connection");
    let r = client()
        .post(s.url(&format!("/api/chats/{chat}/messages")))
        .json(&json!({"content": "hi"}))
        .send()
        .await
        .expect("send");
    let (status, err) = json_of(r).await;
    assert_eq!(status, 400, "{err}");
    assert!(
        err["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("connection"))
    );
    assert_eq!(s.store.message_count(ChatId(chat)).expect("count"), 0);
    let (status, _) = json_of(
        client()
            .post(s.url("/api/chats/424242/messages"))
            .json(&json!({"content": "hi"}))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(status, 404);
    let (status, _) = json_of(
        bare_client()
            .get(s.url("/api/replies/rpl_nope/events"))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(status, 404);
}

/// One provider fault: the reply must end failed with an error event, the user's message kept.
/// The event's text is the provider's message, or the transport's own for a transport failure
/// (`EventKind::Error`, `LlmError::message`): `expect_in_error` is that text (lower case).
async fn fault_case(name: &str, turn: Option<Turn>, expect_in_error: &str) {
    let mock = match &turn {
        Some(t) => Some(
            MockProvider::start(Script::new(vec![t.clone(), t.clone(), t.clone()]))
                .await
                .expect("mock"),
        ),
        None => None,
    };
    let base = match &mock {
        Some(m) => m.base_url(Wire::OpenaiChat),
        // Connection refused: a port nothing listens on.
        None => {
            let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
            let port = l.local_addr().expect("addr").port();
            drop(l);
            format!("http://127.0.0.1:{port}/v1")
        }
    };
    let s = server_with_fast_client().await;
    add_connection(&s, &base).await;
    let chat = make_chat(&s.store, name);
    let (_, reply) = send(&s, chat, "are you there?").await;
    let evs = events(&s, &reply, None).await;
    let last = evs.last().unwrap_or_else(|| panic!("{name}: no events"));
    assert_eq!(last.event, "finished", "{name}: {evs:?}");
    assert_eq!(last.json()["status"], "failed", "{name}: {evs:?}");
    let error = evs
        .iter()
        .find(|e| e.event == "error")
        .unwrap_or_else(|| panic!("{name}: no error event in {evs:?}"));
    let message = error.json()["message"]
        .as_str()
        .unwrap_or_default()
        .to_lowercase();
    assert!(
        message.contains(expect_in_error),
        "{name}: error {message:?} should say {expect_in_error:?}"
    );
    assert!(
        !message.contains("sk-mock"),
        "{name}: the key leaked into the error"
    );
    let stored = s.store.messages_all(ChatId(chat)).expect("messages");
    assert_eq!(
        stored.first().map(|m| m.content.as_str()),
        Some("are you there?"),
        "{name}"
    );
}

#[tokio::test]
async fn provider_faults_end_the_reply_with_the_mapped_error() {
    let error = |status: u16, retry_after: Option<u64>| Turn {
        error: Some(ScriptError {
            status,
            message: format!("mock status {status}"),
            retry_after,
        }),
        ..Turn::default()
    };
    fault_case("refused", None, "cannot reach http://127.0.0.1:").await;
    fault_case("429", Some(error(429, Some(1))), "mock status 429").await;
    fault_case("500", Some(error(500, None)), "mock status 500").await;
    fault_case("529", Some(error(529, None)), "mock status 529").await;
    fault_case(
        "cut",
        Some(Turn {
            fail_after: Some(3),
            chunk: Some(2),
            ..Turn::text("this answer is cut in the middle")
        }),
        "the connection broke during the answer",
    )
    .await;
    fault_case(
        "stalled",
        Some(Turn {
            delay_ms: 4000,
            ..Turn::text("too late")
        }),
        "the provider sent nothing for 1s during the answer",
    )
    .await;
}

async fn events_until(
    s: &TestServer,
    reply: &str,
    after: Option<&str>,
    stop: &[&str],
) -> Vec<SseEvent> {
    let mut req = bare_client().get(s.url(&format!("/api/replies/{reply}/events")));
    if let Some(id) = after {
        req = req.header("last-event-id", id);
    }
    let r = req.send().await.expect("send");
    assert_eq!(r.status(), 200);
    read_sse(r, Duration::from_secs(20), |e| {
        stop.contains(&e.event.as_str())
    })
    .await
}

#[tokio::test]
async fn questions_and_confirmations_are_answered_over_http() {
    use tavo_testkit::ScriptCall;
    let s = server_with_tools().await;
    let persona: tavo_model::Persona =
        serde_json::from_value(json!({"name": "Old me"})).expect("persona");
    let persona_id = s.store.create(&persona).expect("create").0;
    let ask = ScriptCall {
        id: Some("call_ask".into()),
        name: "tavo_ask_user".into(),
        arguments: json!({"question": "Which scope?", "options": ["chat", "global"], "allowOther": false}),
    };
    let delete = ScriptCall {
        id: Some("call_del".into()),
        name: "tavo_persona_delete".into(),
        arguments: json!({"id": persona_id}),
    };
    let mock = MockProvider::start(Script::new(vec![
        Turn {
            tool_calls: vec![ask],
            ..Turn::default()
        },
        Turn {
            tool_calls: vec![delete],
            ..Turn::default()
        },
        Turn::text("Done: chat scope, persona removed."),
    ]))
    .await
    .expect("mock");
    add_connection(&s, &mock.base_url(Wire::OpenaiChat)).await;
    let chat = make_chat(&s.store, "interactions");
    let (_, reply) = send(&s, chat, "tidy up").await;

    let first = events_until(&s, &reply, None, &["waiting", "finished"]).await;
    let waiting = first.last().expect("events");
    assert_eq!(waiting.event, "waiting", "{first:?}");
    let w = waiting.json();
    assert_eq!(w["interaction"], "question");
    let pending = w["pendingId"].as_u64().expect("pendingId");
    // The chat's badge shows the waiting reply and what it waits for.
    let (_, badge) = json_of(
        bare_client()
            .get(s.url(&format!("/api/chats/{chat}/reply")))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(badge["status"], "waiting");
    assert_eq!(badge["pending"]["pendingId"], pending);
    // A confirmation decision on a question, and an option that does not exist, are refused;
    // the reply keeps waiting.
    let url = |what: &str| s.url(&format!("/api/replies/{reply}/{what}"));
    let r = client()
        .post(url("confirm"))
        .json(&json!({"pendingId": pending, "decision": "allow"}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 400);
    let r = client()
        .post(url("answer"))
        .json(&json!({"pendingId": pending, "answer": {"kind": "option", "value": "nowhere"}}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 400);
    let r = client()
        .post(url("answer"))
        .json(&json!({"pendingId": pending, "answer": {"kind": "option", "value": "chat"}}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 202);
    // A stale id is a conflict.
    let r = client()
        .post(url("answer"))
        .json(&json!({"pendingId": pending, "answer": {"kind": "cancelled"}}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 409);

    let seen = waiting.id.clone();
    let second = events_until(&s, &reply, seen.as_deref(), &["waiting", "finished"]).await;
    assert!(second.iter().any(|e| e.event == "resumed"), "{second:?}");
    let confirm = second.last().expect("events");
    assert_eq!(confirm.event, "waiting", "{second:?}");
    let c = confirm.json();
    assert_eq!(c["interaction"], "confirmation");
    assert_eq!(c["tool"], "tavo_persona_delete");
    let pending = c["pendingId"].as_u64().expect("pendingId");
    let r = client()
        .post(url("confirm"))
        .json(&json!({"pendingId": pending, "decision": "allow", "remember": true}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 202);

    let rest = events_until(&s, &reply, confirm.id.as_deref(), &["finished"]).await;
    let last = rest.last().expect("events");
    assert_eq!(last.json()["status"], "finished", "{rest:?}");
    assert!(
        last.json()["text"]
            .as_str()
            .is_some_and(|t| t.contains("persona removed"))
    );
    assert!(
        s.store
            .get::<tavo_model::Persona>(persona_id.into())
            .expect("read")
            .is_none()
    );
    let policy = tavo_tools::ApprovalPolicy::load(&s.store).expect("policy");
    assert_eq!(
        policy.approval(
            Some(tavo_model::ChatId(chat)),
            "tavo_persona_delete",
            tavo_tools::Safety::Confirm
        ),
        tavo_tools::Approval::Allow
    );
    // Reconnecting after the final event is told to stop (204), not left hanging.
    let again = bare_client()
        .get(s.url(&format!("/api/replies/{reply}/events")))
        .header("last-event-id", last.id.clone().unwrap_or_default())
        .send()
        .await
        .expect("send");
    assert_eq!(again.status(), 204);
}

#[tokio::test]
async fn after_a_restart_the_stream_comes_from_the_stored_message() {
    let mock = MockProvider::start(Script::new(vec![Turn::text("Kept across restarts.")]))
        .await
        .expect("mock");
    let mut s = server_with_fast_client().await;
    add_connection(&s, &mock.base_url(Wire::OpenaiChat)).await;
    let chat = make_chat(&s.store, "restart");
    let (_, reply) = send(&s, chat, "remember this").await;
    let evs = events(&s, &reply, None).await;
    assert_eq!(
        evs.last().map(|e| e.json()["status"].clone()),
        Some(json!("finished"))
    );
    s.shutdown().await;
    let store = s.store.clone();
    let config = ServeConfig::local(s.dir.path());
    let second = Server::bind(config, store).await.expect("bind again");
    let addr = second.local_addr().expect("addr");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(second.run(async move {
        let _ = stopped.await;
    }));
    let r = bare_client()
        .get(format!("http://{addr}/api/replies/{reply}/events"))
        .header("last-event-id", "2")
        .send()
        .await
        .expect("send");
    let got = read_sse(r, Duration::from_secs(5), |e| e.event == "finished").await;
    let fin = got.last().expect("an event").json();
    assert_eq!(fin["source"], "stored");
    assert_eq!(fin["status"], "finished");
    assert_eq!(fin["text"], "Kept across restarts.");
    let (status, described) = json_of(
        bare_client()
            .get(format!("http://{addr}/api/replies/{reply}"))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(
        (status, described["status"].clone()),
        (200, json!("finished"))
    );
    let _ = stop.send(());
    let _ = task.await;
}

/// A tool's write inside a reply reaches the global stream as the operation door's does
/// (issue 30 item 14): the open app refreshes its lists.
#[tokio::test]
async fn a_tool_write_in_a_reply_is_a_library_event() {
    use tavo_testkit::ScriptCall;
    let s = server_with_tools().await;
    let create = ScriptCall {
        id: Some("call_p".into()),
        name: "tavo_persona_create".into(),
        arguments: json!({"persona": {"name": "Made by a tool", "description": "new"}}),
    };
    let mock = MockProvider::start(Script::new(vec![
        Turn {
            tool_calls: vec![create],
            ..Turn::default()
        },
        Turn::text("Made it."),
    ]))
    .await
    .expect("mock");
    add_connection(&s, &mock.base_url(Wire::OpenaiChat)).await;
    let chat = make_chat(&s.store, "tool writes");
    let stream = bare_client()
        .get(s.url("/api/events"))
        .send()
        .await
        .expect("events");
    let (_, reply) = send(&s, chat, "make a persona").await;
    let got = read_sse(stream, Duration::from_secs(10), |e| {
        e.event == "library" && e.json()["action"] == "persona.create"
    })
    .await;
    let ev = got.last().expect("a library event");
    assert_eq!(ev.json()["kind"], "operation", "{:?}", ev.data);
    assert_eq!(ev.json()["chat"], chat);
    let done = events_until(&s, &reply, None, &["finished"]).await;
    assert_eq!(done.last().map(|e| e.event.as_str()), Some("finished"));
}
