//! Limits hit on purpose, time-outs, waiting that outlasts a time-out, cancellation mid-stream
//! and a restart that finds a waiting reply.

use std::sync::Arc;
use std::time::Duration;
use tavo_model::ChatId;

use crate::support::{Answers, drive, final_status, lab, tool_results};
use serde_json::{Value, json};
use tavo_engine::{EventKind, ExtensionRunner, Limits, ReplyRecord, ReplyRequest, ReplyStatus};
use tavo_testkit::{Script, ScriptCall, Turn, Wire};
use tavo_tools::extension::ExtensionTool;
use tavo_tools::operation::BoxFuture;
use tavo_tools::{Approval, ApprovalPolicy, ExtensionSource, Services, ToolError, UserAnswer};

fn limits(recursion: u32, calls: u32, timeout_ms: u64) -> Limits {
    Limits {
        recursion_limit: recursion,
        max_calls: calls,
        call_timeout: Duration::from_millis(timeout_ms),
        page_call_timeout: Duration::from_millis(timeout_ms),
        reply_budget: tavo_tools::REPLY_LIMIT,
    }
}

/// An extension tool that takes `delay` and returns `{"slept": ms}`.
struct Sleeper(Duration);

impl ExtensionRunner for Sleeper {
    fn run(
        &self,
        _tool: &ExtensionTool,
        _chat: ChatId,
        _arguments: Value,
        _timeout: Duration,
    ) -> BoxFuture<Result<Value, ToolError>> {
        let d = self.0;
        Box::pin(async move {
            tokio::time::sleep(d).await;
            Ok(json!({"slept": d.as_millis() as u64}))
        })
    }
}

/// Services with `slow_tool`, a page tool of a page that shows `chat`.
fn sleeper_services(stealth: bool, chat: ChatId) -> Services {
    let services = Services::default();
    services.extensions.set_page_chat("p1", Some(chat));
    services
        .extensions
        .register(
            "slow_tool",
            None,
            "Takes its time.",
            json!({"type": "object", "properties": {}}),
            stealth,
            ExtensionSource::Page { id: "p1".into() },
        )
        .unwrap_or_else(|e| panic!("{e}"));
    services
}

const NO_DYNAMIC: [(&str, Value); 0] = [];

#[tokio::test]
async fn the_recursion_limit_forbids_calls_and_the_model_answers() {
    let search = || Turn::call("tavo_tool_search", json!({"query": "files"}));
    let script = Script::new(vec![search(), search(), Turn::text("giving up on tools")]);
    let lab = lab(
        Wire::OpenaiChat,
        script,
        &[
            ("tools.enabled", json!(true)),
            ("tools.recursionLimit", json!(2)),
        ],
    )
    .await;
    let engine = lab.engine(Services::default(), None);
    let handle = engine
        .start(ReplyRequest::normal(lab.chat, "loop"))
        .unwrap_or_else(|e| panic!("{e}"));
    let events = drive(&handle, &Answers::default()).await;
    assert_eq!(
        final_status(&events),
        (ReplyStatus::Finished, "giving up on tools".into())
    );
    let requests = lab.mock.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(
        requests[2].body["tool_choice"], "none",
        "the third round may not call tools"
    );
    assert!(
        requests[2].body.get("tools").is_some(),
        "tools stay declared while the history has calls"
    );
    assert!(
        requests[2].body.to_string().contains("You can call tools"),
        "seed 000: a round whose request carries tools gets the generic hint, also after the limit"
    );
    assert!(events.iter().any(|e| matches!(&e.kind, EventKind::Warning { message }
        if message == "stopped after 2 tool rounds (tools.recursionLimit): this round answers without running tools")));
}

#[tokio::test]
async fn a_model_that_keeps_calling_past_the_limit_is_stopped() {
    let search = || Turn::call("tavo_tool_search", json!({"query": "files"}));
    let lab = lab(
        Wire::Anthropic,
        Script::new(vec![search(), search()]),
        &[("tools.enabled", json!(true))],
    )
    .await;
    let engine = lab.engine(Services::default(), None);
    let req = ReplyRequest {
        limits: Some(limits(1, 50, 5_000)),
        ..ReplyRequest::normal(lab.chat, "loop")
    };
    let handle = engine.start(req).unwrap_or_else(|e| panic!("{e}"));
    let events = drive(&handle, &Answers::default()).await;
    assert_eq!(final_status(&events).0, ReplyStatus::Finished);
    assert!(events.iter().any(
        |e| matches!(&e.kind, EventKind::Warning { message } if message.contains("recursion limit"))
    ));
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.kind, EventKind::Warning { message }
            if message.starts_with("stopped after 1 tool round (tools.recursionLimit)"))),
        "the limit is in the reply's status"
    );
    let requests = lab.mock.requests();
    assert_eq!(requests.len(), 2, "no third round");
    // The round after the limit still declares its tools, so it carries the generic hint too.
    let hint = tavo_tools::exposure::TOOL_USE_HINT;
    for (i, r) in requests.iter().enumerate() {
        assert!(
            r.body.to_string().contains(&hint[..40]),
            "request {i} has the hint"
        );
    }
}

#[tokio::test]
async fn calls_beyond_the_call_limit_are_not_run() {
    let calls = (0..3)
        .map(|i| ScriptCall {
            id: Some(format!("c{i}")),
            name: "tavo_tool_search".into(),
            arguments: json!({"query": "x"}),
        })
        .collect();
    let script = Script::new(vec![
        Turn {
            tool_calls: calls,
            ..Turn::default()
        },
        Turn::text("done"),
    ]);
    let lab = lab(
        Wire::Gemini,
        script,
        &[("tools.enabled", json!(true)), ("tools.maxCalls", json!(2))],
    )
    .await;
    let engine = lab.engine(Services::default(), None);
    let handle = engine
        .start(ReplyRequest::normal(lab.chat, "many"))
        .unwrap_or_else(|e| panic!("{e}"));
    drive(&handle, &Answers::default()).await;
    let results = tool_results(Wire::Gemini, &lab.mock.requests()[1].body);
    assert_eq!(results.len(), 3);
    assert!(
        results[0].contains("\"ok\":true") && results[1].contains("\"ok\":true"),
        "{results:?}"
    );
    assert!(results[2].contains("limit_exceeded"), "{results:?}");
}

#[tokio::test]
async fn unknown_and_undiscovered_tools_and_bad_arguments_are_envelope_errors() {
    let calls = vec![
        ScriptCall {
            id: Some("a".into()),
            name: "tavo_file_save".into(),
            arguments: json!({"name": "x", "content": "y"}),
        },
        ScriptCall {
            id: Some("b".into()),
            name: "no_such_tool".into(),
            arguments: json!({}),
        },
        ScriptCall {
            id: Some("c".into()),
            name: "tavo_ask_user".into(),
            arguments: json!({"question": "q", "bogus": 1}),
        },
    ];
    let script = Script::new(vec![
        Turn {
            tool_calls: calls,
            ..Turn::default()
        },
        Turn::text("done"),
    ]);
    let lab = lab(Wire::OpenaiChat, script, &[("tools.enabled", json!(true))]).await;
    let engine = lab.engine(Services::default(), None);
    let handle = engine
        .start(ReplyRequest::normal(lab.chat, "x"))
        .unwrap_or_else(|e| panic!("{e}"));
    drive(&handle, &Answers::default()).await;
    let results = tool_results(Wire::OpenaiChat, &lab.mock.requests()[1].body);
    assert!(
        results[0].contains("unknown_tool") && results[0].contains("tavo_tool_search"),
        "{}",
        results[0]
    );
    assert!(results[1].contains("unknown_tool"), "{}", results[1]);
    assert!(
        results[2].contains("invalid_arguments") && results[2].contains("bogus"),
        "{}",
        results[2]
    );
}

#[tokio::test]
async fn a_tool_that_runs_too_long_times_out() {
    let script = Script::new(vec![Turn::call("slow_tool", json!({})), Turn::text("done")]);
    let lab = lab(
        Wire::OpenaiResponses,
        script,
        &[
            ("tools.enabled", json!(true)),
            ("tools.dynamicLoading", json!(false)),
        ],
    )
    .await;
    let engine = lab.engine(
        sleeper_services(false, lab.chat),
        Some(Arc::new(Sleeper(Duration::from_secs(5)))),
    );
    let req = ReplyRequest {
        limits: Some(limits(5, 50, 300)),
        ..ReplyRequest::normal(lab.chat, "slow")
    };
    let handle = engine.start(req).unwrap_or_else(|e| panic!("{e}"));
    let events = drive(&handle, &Answers::default()).await;
    assert_eq!(final_status(&events).0, ReplyStatus::Finished);
    let results = tool_results(Wire::OpenaiResponses, &lab.mock.requests()[1].body);
    assert!(results[0].contains("\"code\":\"timeout\""), "{results:?}");
}

#[tokio::test]
async fn waiting_for_a_confirmation_longer_than_the_time_out_is_fine() {
    let script = Script::new(vec![
        Turn::call("tavo_tool_search", json!({"query": "save a file"})),
        Turn::call(
            "tavo_file_save",
            json!({"name": "slow.txt", "content": "patience"}),
        ),
        Turn::text("saved"),
    ]);
    let lab = lab(Wire::Anthropic, script, &[("tools.enabled", json!(true))]).await;
    let mut policy = ApprovalPolicy::default();
    policy.remember(Some(lab.chat), "tavo_file_save", Approval::Ask);
    policy.save(&lab.store).unwrap_or_else(|e| panic!("{e}"));
    let engine = lab.engine(Services::default(), None);
    let req = ReplyRequest {
        // The time-out must be long enough for a file save on a loaded CI machine;
        // the confirmation below waits twice as long as it.
        limits: Some(limits(5, 50, 1_000)),
        ..ReplyRequest::normal(lab.chat, "save")
    };
    let handle = engine.start(req).unwrap_or_else(|e| panic!("{e}"));
    let answers = Answers {
        delay: Duration::from_millis(2_000),
        ..Answers::default()
    };
    let events = drive(&handle, &answers).await;
    assert_eq!(
        final_status(&events),
        (ReplyStatus::Finished, "saved".into())
    );
    let results = tool_results(Wire::Anthropic, &lab.mock.requests()[2].body);
    assert!(
        results[1].contains("true") && !results[1].contains("timeout"),
        "{results:?}"
    );
}

#[tokio::test]
async fn an_unanswered_question_waits_without_timing_out_until_cancelled() {
    let script = Script::new(vec![
        Turn::call("tavo_ask_user", json!({"question": "still there?"})),
        Turn::text("never"),
    ]);
    let lab = lab(Wire::OpenaiChat, script, &[("tools.enabled", json!(true))]).await;
    let engine = lab.engine(Services::default(), None);
    let req = ReplyRequest {
        limits: Some(limits(5, 50, 100)),
        ..ReplyRequest::normal(lab.chat, "ask")
    };
    let handle = engine.start(req).unwrap_or_else(|e| panic!("{e}"));
    let mut sub = handle.subscribe(0);
    while let Some(Ok(ev)) = sub.next().await {
        if matches!(ev.kind, EventKind::Waiting { .. }) {
            break;
        }
    }
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(
        handle.status(),
        ReplyStatus::Waiting,
        "waiting outlives the 100 ms call time-out"
    );
    let record = ReplyRecord::load(&lab.store, lab.chat).unwrap_or_default();
    assert_eq!(record.map(|r| r.status), Some(ReplyStatus::Waiting));
    handle.cancel();
    assert_eq!(handle.wait().await, ReplyStatus::Cancelled);
    assert_eq!(lab.mock.requests().len(), 1);
    let audit = lab
        .store
        .read(|tx| tx.audit_list(10, None))
        .unwrap_or_default();
    assert_eq!(audit[0].details["result"]["error"]["code"], "cancelled");
}

#[tokio::test]
async fn cancelling_mid_stream_keeps_the_partial_text() {
    let long = "word ".repeat(200);
    let turn = Turn {
        text: Some(long),
        delay_ms: 20,
        chunk: Some(5),
        ..Turn::default()
    };
    let lab = lab(Wire::Gemini, Script::new(vec![turn]), &[]).await;
    let engine = lab.engine(Services::default(), None);
    let handle = engine
        .start(ReplyRequest::normal(lab.chat, "talk"))
        .unwrap_or_else(|e| panic!("{e}"));
    let mut sub = handle.subscribe(0);
    let mut deltas = 0;
    while let Some(Ok(ev)) = sub.next().await {
        if matches!(ev.kind, EventKind::TextDelta { .. }) {
            deltas += 1;
            if deltas == 20 {
                handle.cancel();
            }
        }
        if let EventKind::Finished { status, text, .. } = &ev.kind {
            assert_eq!(*status, ReplyStatus::Cancelled);
            assert!(text.len() >= 100 && text.len() < 1000, "{}", text.len());
            break;
        }
    }
    let last = lab.messages().pop().unwrap_or_default();
    assert!(
        last.content.starts_with("word word"),
        "partial text persisted: {:?}",
        last.content
    );
    assert_eq!(last.extra["tavoReply"]["status"], "cancelled");
    assert!(
        engine.reply_for_chat(lab.chat).is_none(),
        "a finished reply leaves the live set"
    );
}

#[tokio::test]
async fn partial_text_is_checkpointed_while_streaming() {
    let turn = Turn {
        text: Some("abcdefghij".repeat(20)),
        delay_ms: 40,
        chunk: Some(10),
        ..Turn::default()
    };
    let lab = lab(Wire::OpenaiChat, Script::new(vec![turn]), &[]).await;
    let engine = lab.engine(Services::default(), None);
    let handle = engine
        .start(ReplyRequest::normal(lab.chat, "talk"))
        .unwrap_or_else(|e| panic!("{e}"));
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(handle.status(), ReplyStatus::Running);
    let partial = lab.messages().pop().unwrap_or_default();
    assert!(
        !partial.content.is_empty() && partial.content.len() < 200,
        "checkpoint: {:?}",
        partial.content
    );
    assert_eq!(partial.extra["tavoReply"]["status"], "running");
    assert_eq!(handle.wait().await, ReplyStatus::Finished);
    assert_eq!(lab.messages().pop().unwrap_or_default().content.len(), 200);
}

#[test]
fn a_restart_cancels_a_waiting_reply_and_never_replays_it() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let script = Script::new(vec![
        Turn::call("tavo_ask_user", json!({"question": "wait?"})),
        Turn::text("never sent"),
    ]);
    let lab = rt.block_on(lab(
        Wire::OpenaiChat,
        script,
        &[("tools.enabled", json!(true))],
    ));
    // The first "process": a reply reaches `waiting`, then the runtime dies with it.
    let engine = lab.engine(Services::default(), None);
    rt.block_on(async {
        let handle = engine
            .start(ReplyRequest::normal(lab.chat, "ask"))
            .unwrap_or_else(|e| panic!("{e}"));
        let mut sub = handle.subscribe(0);
        while let Some(Ok(ev)) = sub.next().await {
            if matches!(ev.kind, EventKind::Waiting { .. }) {
                break;
            }
        }
    });
    let requests_before = rt.block_on(async { lab.mock.requests().len() });
    let record = ReplyRecord::load(&lab.store, lab.chat)
        .unwrap_or_default()
        .unwrap_or_else(|| panic!("no record"));
    assert_eq!(record.status, ReplyStatus::Waiting);
    // The reply still lives in this test's process, which holds its chat; the next start of a
    // real restart finds it owned by a process that is gone (a reaped child's pid).
    let mut gone = std::process::Command::new("true")
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let dead = ReplyRecord {
        pid: gone.id(),
        // On PostgreSQL the record names this replica, which is alive; a record of a process
        // that is gone names none.
        replica: None,
        ..record.clone()
    };
    gone.wait().unwrap_or_else(|e| panic!("{e}"));
    lab.store
        .setting_set(
            &ReplyRecord::key(lab.chat),
            &serde_json::to_value(&dead).unwrap_or_default(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    // The next start: a fresh engine recovers.
    let fresh = lab.engine(Services::default(), None);
    let cancelled = fresh.recover().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(cancelled.len(), 1);
    assert_eq!(cancelled[0].id, record.id);
    let stored = ReplyRecord::load(&lab.store, lab.chat)
        .unwrap_or_default()
        .map(|r| r.status);
    assert_eq!(stored, Some(ReplyStatus::Cancelled));
    let message = lab.messages().pop().unwrap_or_default();
    assert_eq!(message.extra["tavoReply"]["status"], "cancelled");
    assert_eq!(
        fresh.recover().map(|v| v.len()).ok(),
        Some(0),
        "recovery is idempotent"
    );
    rt.block_on(async { tokio::time::sleep(Duration::from_millis(100)).await });
    assert_eq!(
        rt.block_on(async { lab.mock.requests().len() }),
        requests_before,
        "nothing replayed"
    );
    drop(engine);
    rt.shutdown_background();
}

/// One reply of `script` (OpenAI chat, tools on, all declared) with the page tool `slow_tool`
/// registered as stealth; answers the lab and the reply's events.
async fn stealth_run(
    script: Script,
    text: &str,
) -> (crate::support::Lab, Vec<tavo_engine::ReplyEvent>) {
    let lab = lab(
        Wire::OpenaiChat,
        script,
        &[
            ("tools.enabled", json!(true)),
            ("tools.dynamicLoading", json!(false)),
        ],
    )
    .await;
    let engine = lab.engine(
        sleeper_services(true, lab.chat),
        Some(Arc::new(Sleeper(Duration::from_millis(1)))),
    );
    let handle = engine
        .start(ReplyRequest::normal(lab.chat, text))
        .unwrap_or_else(|e| panic!("{e}"));
    let events = drive(&handle, &Answers::default()).await;
    (lab, events)
}

#[tokio::test]
async fn stealth_tools_stay_out_of_the_message_and_end_the_reply() {
    let script = Script::new(vec![
        Turn::call("slow_tool", json!({})),
        Turn::text("never asked"),
    ]);
    let (lab, events) = stealth_run(script, "roll").await;
    assert_eq!(final_status(&events).0, ReplyStatus::Finished);
    assert_eq!(
        lab.mock.requests().len(),
        1,
        "no follow-up generation after a stealth call"
    );
    let message = lab.messages().pop().unwrap_or_default();
    assert!(message.extra.get("toolCalls").is_none());
    let _ = NO_DYNAMIC;
}

#[tokio::test]
async fn continue_and_quiet_cannot_call_tools_but_see_earlier_calls() {
    let script = Script::new(vec![
        Turn::call("tavo_tool_search", json!({"query": "files"})),
        Turn::text("First answer."),
        Turn::text(" And more."),
        Turn::text("quiet summary"),
    ]);
    let lab = lab(Wire::Anthropic, script, &[("tools.enabled", json!(true))]).await;
    let engine = lab.engine(Services::default(), None);
    let h = engine
        .start(ReplyRequest::normal(lab.chat, "go"))
        .unwrap_or_else(|e| panic!("{e}"));
    drive(&h, &Answers::default()).await;
    let cont = ReplyRequest::new(lab.chat, tavo_engine::ReplyKind::Continue);
    let h = engine.start(cont).unwrap_or_else(|e| panic!("{e}"));
    drive(&h, &Answers::default()).await;
    let quiet = ReplyRequest::new(lab.chat, tavo_engine::ReplyKind::Quiet);
    let h = engine.start(quiet).unwrap_or_else(|e| panic!("{e}"));
    let events = drive(
        &h,
        &Answers {
            answer: UserAnswer::Cancelled,
            ..Answers::default()
        },
    )
    .await;
    assert_eq!(
        final_status(&events),
        (ReplyStatus::Finished, "quiet summary".into())
    );
    let requests = lab.mock.requests();
    for r in &requests[2..] {
        assert!(
            r.body.get("tools").is_none(),
            "continue/quiet offer no tools"
        );
        assert!(
            r.body.to_string().contains("tavo_tool_search"),
            "but still see the earlier call"
        );
    }
    let messages = lab.messages();
    assert_eq!(
        messages.last().map(|m| m.content.as_str()),
        Some("First answer. And more.")
    );
    assert_eq!(
        messages.len(),
        2,
        "user message and reply; continue appends, quiet stores nothing"
    );
}

/// Seed 001: in a round that mixes a stealth call with a normal one, the stealth call's card is
/// never shown (no event) and neither the call nor its result goes back to the model; the
/// normal call's result does.
#[tokio::test]
async fn a_stealth_call_in_a_mixed_round_stays_out_of_the_next_request() {
    let calls = vec![
        ScriptCall {
            id: Some("c_stealth".into()),
            name: "slow_tool".into(),
            arguments: json!({}),
        },
        ScriptCall {
            id: Some("c_normal".into()),
            name: "tavo_tool_search".into(),
            arguments: json!({"query": "files"}),
        },
    ];
    let script = Script::new(vec![
        Turn {
            tool_calls: calls,
            ..Turn::default()
        },
        Turn::text("done"),
    ]);
    let (lab, events) = stealth_run(script, "mixed").await;
    assert_eq!(final_status(&events).0, ReplyStatus::Finished);
    assert!(
        !events
            .iter()
            .any(|e| matches!(&e.kind, EventKind::ToolCall { call } if call.tool == "slow_tool")),
        "no card event for the stealth call"
    );
    let requests = lab.mock.requests();
    assert_eq!(
        requests.len(),
        2,
        "the normal call's result asks for a follow-up"
    );
    let second = requests[1].body.to_string();
    assert!(second.contains("c_normal"), "{second}");
    assert!(
        !second.contains("c_stealth"),
        "the stealth call and its result stay out: {second}"
    );
}
