//! End to end against the mock provider, for each of the four protocols: a model that searches
//! for a tool, writes a file after confirmation, reads it back, asks the user, and answers.

use crate::support::{Answers, WIRES, drive, final_status, lab, offered, tool_results};
use serde_json::{Value, json};
use tavo_engine::{CallStatus, EventKind, ReplyRequest, ReplyStatus};
use tavo_testkit::{Script, ScriptCall, Turn, Wire};
use tavo_tools::{Approval, ApprovalPolicy, Services, UserAnswer};

fn loop_script(wire: Wire) -> Script {
    let mut save = Turn::call(
        "tavo_file_save",
        json!({"name": "note.txt", "content": "hello from the loop", "options": {"scope": "chat", "encoding": "utf8"}}),
    );
    if wire == Wire::Gemini {
        // Gemini 3 refuses a call sent back without its thoughtSignature.
        save.signature = Some("sig-gemini-save".into());
    }
    Script::new(vec![
        Turn::call(
            "tavo_tool_search",
            json!({"query": "save a file", "limit": 5}),
        ),
        save,
        Turn::call("tavo_file_load", json!({"name": "note.txt"})),
        Turn::call(
            "tavo_ask_user",
            json!({"question": "Which scope?", "options": [{"value": "chat", "label": "This chat"}, "global"], "allowOther": false}),
        ),
        Turn::text("Saved and checked the note."),
    ])
}

#[tokio::test]
async fn the_full_loop_runs_on_every_protocol() {
    for wire in WIRES {
        let lab = lab(wire, loop_script(wire), &[("tools.enabled", json!(true))]).await;
        // The file save is confirmed first: the user set it to "ask".
        let mut policy = ApprovalPolicy::default();
        policy.remember(None, "tavo_file_save", Approval::Ask);
        policy.save(&lab.store).unwrap_or_else(|e| panic!("{e}"));
        let engine = lab.engine(Services::default(), None);
        let handle = engine
            .start(ReplyRequest::normal(lab.chat, "Please save a note."))
            .unwrap_or_else(|e| panic!("{wire:?}: {e}"));
        let answers = Answers {
            answer: UserAnswer::Option {
                value: "chat".into(),
            },
            ..Answers::default()
        };
        let events = drive(&handle, &answers).await;
        let (status, text) = final_status(&events);
        assert_eq!(status, ReplyStatus::Finished, "{wire:?}: {events:?}");
        assert_eq!(text, "Saved and checked the note.", "{wire:?}");

        let requests = lab.mock.requests();
        assert_eq!(requests.len(), 5, "{wire:?}");
        let first = offered(wire, &requests[0].body);
        assert!(
            first.contains(&"tavo_tool_search".to_owned())
                && first.contains(&"tavo_ask_user".to_owned()),
            "{wire:?}: {first:?}"
        );
        assert!(
            !first.contains(&"tavo_file_save".to_owned()),
            "{wire:?}: dynamic loading offers only resident tools first"
        );
        assert!(
            offered(wire, &requests[1].body).contains(&"tavo_file_save".to_owned()),
            "{wire:?}: search exposes the tool next round"
        );
        let results = tool_results(wire, &requests[4].body);
        assert_eq!(results.len(), 4, "{wire:?}: {results:?}");
        assert!(
            results[2].contains("hello from the loop"),
            "{wire:?}: the model reads what it wrote: {}",
            results[2]
        );
        assert!(
            results[3].contains("answered") && results[3].contains("option"),
            "{wire:?}: {}",
            results[3]
        );
        if wire == Wire::Gemini {
            assert!(
                requests[2].body.to_string().contains("sig-gemini-save"),
                "thoughtSignature sent back"
            );
        }
        let body = requests[0].body.to_string();
        assert!(
            body.contains("You can call tools"),
            "{wire:?}: the tool-use hint goes with a round that has tools"
        );

        // Waiting was announced and resumed twice: the confirmation and the question.
        let waits = events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::Waiting { .. }))
            .count();
        let resumes = events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::Resumed { .. }))
            .count();
        assert_eq!((waits, resumes), (2, 2), "{wire:?}");
        let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
        assert_eq!(
            seqs,
            (1..=events.len() as u64).collect::<Vec<_>>(),
            "{wire:?}: sequence numbers are dense"
        );

        // The message keeps compact cards only; the audit log has the arguments and results.
        let messages = lab.messages();
        let reply = messages
            .last()
            .unwrap_or_else(|| panic!("no reply message"));
        assert_eq!(reply.content, "Saved and checked the note.");
        let stored = Value::Object(reply.extra.clone()).to_string();
        assert!(
            !stored.contains("hello from the loop"),
            "{wire:?}: message keeps no arguments or results: {stored}"
        );
        assert_eq!(reply.extra["toolCalls"].as_array().map(Vec::len), Some(4));
        assert_eq!(reply.extra["tavoReply"]["status"], "finished");
        let audit = lab
            .store
            .read(|tx| tx.audit_list(50, None))
            .unwrap_or_default();
        let save = audit
            .iter()
            .find(|a| a.action == "tool.tavo_file_save")
            .unwrap_or_else(|| panic!("no audit of the save"));
        assert_eq!(save.details["arguments"]["content"], "hello from the loop");
        assert!(save.details["waitedMs"].is_u64());
        assert!(
            !format!("{events:?}").contains("sk-test-secret-key"),
            "the API key never appears in events"
        );
    }
}

#[tokio::test]
async fn a_denied_confirmation_is_permission_denied_and_remembered_denials_never_ask() {
    let script = Script::new(vec![
        Turn::call("tavo_tool_search", json!({"query": "save a file"})),
        Turn::call("tavo_file_save", json!({"name": "a.txt", "content": "x"})),
        Turn::call("tavo_file_save", json!({"name": "b.txt", "content": "y"})),
        Turn::text("ok"),
    ]);
    let lab = lab(Wire::OpenaiChat, script, &[("tools.enabled", json!(true))]).await;
    let mut policy = ApprovalPolicy::default();
    policy.remember(None, "tavo_file_save", Approval::Ask);
    policy.save(&lab.store).unwrap_or_else(|e| panic!("{e}"));
    let engine = lab.engine(Services::default(), None);
    let handle = engine
        .start(ReplyRequest::normal(lab.chat, "save"))
        .unwrap_or_else(|e| panic!("{e}"));
    // Deny the first ask and remember it for the chat: the second call is refused without asking.
    let mut sub = handle.subscribe(0);
    let mut asked = 0;
    while let Some(Ok(ev)) = sub.next().await {
        if let EventKind::Waiting { pending_id, .. } = ev.kind {
            asked += 1;
            handle
                .respond(pending_id, tavo_engine::Response::Deny { remember: true })
                .unwrap_or_else(|e| panic!("{e}"));
        }
        if ev.is_final() {
            break;
        }
    }
    assert_eq!(asked, 1);
    let requests = lab.mock.requests();
    let results = tool_results(Wire::OpenaiChat, &requests[3].body);
    assert!(
        results[1].contains("permission_denied") && results[2].contains("permission_denied"),
        "{results:?}"
    );
    let policy = ApprovalPolicy::load(&lab.store).unwrap_or_default();
    assert_eq!(
        policy
            .chats
            .get(&lab.chat)
            .and_then(|m| m.get("tavo_file_save")),
        Some(&Approval::Deny)
    );
}

#[tokio::test]
async fn calls_of_one_response_run_in_the_providers_order() {
    let calls = vec![
        ScriptCall {
            id: Some("c1".into()),
            name: "tavo_ask_user".into(),
            arguments: json!({"question": "first?"}),
        },
        ScriptCall {
            id: Some("c2".into()),
            name: "tavo_ask_user".into(),
            arguments: json!({"question": "second?"}),
        },
    ];
    let script = Script::new(vec![
        Turn {
            tool_calls: calls,
            ..Turn::default()
        },
        Turn::text("done"),
    ]);
    let lab = lab(Wire::Anthropic, script, &[("tools.enabled", json!(true))]).await;
    let engine = lab.engine(Services::default(), None);
    let handle = engine
        .start(ReplyRequest::normal(lab.chat, "ask twice"))
        .unwrap_or_else(|e| panic!("{e}"));
    let events = drive(
        &handle,
        &Answers {
            answer: UserAnswer::Custom { text: "yes".into() },
            ..Answers::default()
        },
    )
    .await;
    let asked: Vec<String> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Waiting {
                interaction: tavo_engine::Interaction::Question { question, .. },
                ..
            } => Some(question.question.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(asked, ["first?", "second?"]);
    let cards: Vec<(String, CallStatus)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolCall { call } if call.status == CallStatus::Ok => {
                Some((call.call_id.clone(), call.status))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        cards.iter().map(|c| c.0.as_str()).collect::<Vec<_>>(),
        ["c1", "c2"]
    );
}

#[tokio::test]
async fn tools_off_means_no_tools_and_no_hint() {
    let lab = lab(
        Wire::OpenaiChat,
        Script::new(vec![Turn::text("plain answer")]),
        &[],
    )
    .await;
    let engine = lab.engine(Services::default(), None);
    let handle = engine
        .start(ReplyRequest::normal(lab.chat, "hi"))
        .unwrap_or_else(|e| panic!("{e}"));
    let events = drive(&handle, &Answers::default()).await;
    assert_eq!(
        final_status(&events),
        (ReplyStatus::Finished, "plain answer".into())
    );
    let body = &lab.mock.requests()[0].body;
    assert!(body.get("tools").is_none(), "{body}");
    assert!(!body.to_string().contains("You can call tools"));
}

#[tokio::test]
async fn without_dynamic_loading_every_tool_goes_in_the_first_request() {
    let lab = lab(
        Wire::OpenaiResponses,
        Script::new(vec![Turn::text("ok")]),
        &[
            ("tools.enabled", json!(true)),
            ("tools.dynamicLoading", json!(false)),
        ],
    )
    .await;
    let engine = lab.engine(Services::default(), None);
    let handle = engine
        .start(ReplyRequest::normal(lab.chat, "hi"))
        .unwrap_or_else(|e| panic!("{e}"));
    drive(&handle, &Answers::default()).await;
    let names = offered(Wire::OpenaiResponses, &lab.mock.requests()[0].body);
    assert!(
        names.contains(&"tavo_file_save".to_owned())
            && names.contains(&"tavo_character_find".to_owned()),
        "{names:?}"
    );
    assert!(!names.contains(&"tavo_tool_search".to_owned()));
}

#[tokio::test]
async fn a_started_reply_names_the_user_message_it_stored() {
    let lab = lab(
        Wire::OpenaiChat,
        Script::new(vec![Turn::text("first"), Turn::text("second")]),
        &[],
    )
    .await;
    let engine = lab.engine(Services::default(), None);
    let handle = engine
        .start(ReplyRequest::normal(lab.chat, "hello"))
        .unwrap_or_else(|e| panic!("{e}"));
    drive(&handle, &Answers::default()).await;
    let stored = lab
        .store
        .messages_last(lab.chat, 2)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(stored[0].content, "hello");
    assert_eq!(handle.user_message_id(), stored[0].id);
    assert_eq!(stored[1].content, "first");

    // A regenerate stores no user message, so it names none.
    let again = engine
        .start(ReplyRequest::new(
            lab.chat,
            tavo_engine::ReplyKind::Regenerate { speaker: None },
        ))
        .unwrap_or_else(|e| panic!("{e}"));
    drive(&again, &Answers::default()).await;
    assert_eq!(again.user_message_id(), None);
}
