//! End-to-end: the real transport and codecs against the loopback mock provider, for each of
//! the four protocols, in both directions (what we decode, and what the mock received).

use crate::support::{client, weather_tool};
use futures_util::StreamExt;
use serde_json::{Value, json};
use tavo_llm::retry::RetryPolicy;
use tavo_llm::{
    ChatRequest, Client, Endpoint, ErrorKind, FinishReason, InterleavedReasoning, Message, Part,
    Protocol, Role, StreamEvent, Timeouts,
};
use tavo_testkit::{MockProvider, Script, ScriptError, Turn, Wire};

const PROTOCOLS: [(Protocol, Wire); 4] = [
    (Protocol::OpenaiChat, Wire::OpenaiChat),
    (Protocol::OpenaiResponses, Wire::OpenaiResponses),
    (Protocol::Anthropic, Wire::Anthropic),
    (Protocol::Gemini, Wire::Gemini),
];

fn endpoint(mock: &MockProvider, protocol: Protocol, wire: Wire) -> Endpoint {
    Endpoint {
        protocol,
        base_url: mock.base_url(wire),
        api_key: Some("test-key-0123456789".into()),
    }
}

#[tokio::test]
async fn text_streams_and_whole_bodies_decode_in_every_protocol() {
    for (protocol, wire) in PROTOCOLS {
        for stream in [true, false] {
            let mock =
                MockProvider::start(Script::new(vec![Turn::text("Hello there, traveller.")]))
                    .await
                    .unwrap_or_else(|e| panic!("{e}"));
            let mut req = ChatRequest::new("mock-model", vec![Message::text(Role::User, "hi")]);
            req.stream = stream;
            let reply = client()
                .complete(&endpoint(&mock, protocol, wire), &req)
                .await
                .unwrap_or_else(|e| panic!("{protocol} stream={stream}: {e}"));
            assert_eq!(
                reply.text(),
                "Hello there, traveller.",
                "{protocol} stream={stream}"
            );
            assert_eq!(
                reply.finish,
                Some(FinishReason::Stop),
                "{protocol} stream={stream}"
            );
            assert_eq!(reply.error, None);
            let seen = mock.requests();
            assert_eq!(seen.len(), 1);
            assert_eq!(seen[0].stream, stream, "{protocol}");
            // The key travels in the protocol's header and nowhere else.
            let auth = match protocol {
                Protocol::Anthropic => seen[0].headers.get("x-api-key").cloned(),
                Protocol::Gemini => seen[0].headers.get("x-goog-api-key").cloned(),
                _ => seen[0].headers.get("authorization").cloned(),
            };
            assert!(
                auth.is_some_and(|a| a.contains("test-key-0123456789")),
                "{protocol}"
            );
            assert!(!seen[0].body.to_string().contains("test-key"), "{protocol}");
        }
    }
}

/// Round 1: the model thinks (signed) and calls a tool. Round 2: we send the call, its
/// result and the signed reasoning back; the mock records it.
#[tokio::test]
async fn two_round_tool_loop_carries_reasoning_signatures_back() {
    for (protocol, wire) in PROTOCOLS {
        let signature = format!("SIG-{protocol}-c2lnbmF0dXJl+/==");
        let script = Script::new(vec![
            Turn::call("get_weather", json!({"city": "Paris"}))
                .with_reasoning("The user wants weather.", signature.clone()),
            Turn::text("It is sunny in Paris."),
        ]);
        let mock = MockProvider::start(script)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let ep = endpoint(&mock, protocol, wire);
        let mut req = ChatRequest::new(
            "mock-model",
            vec![Message::text(Role::User, "Weather in Paris?")],
        );
        req.tools = vec![weather_tool()];
        req.reasoning.enabled = true;
        req.reasoning.interleaved = InterleavedReasoning::ActiveToolChain;

        let first = client()
            .complete(&ep, &req)
            .await
            .unwrap_or_else(|e| panic!("{protocol}: {e}"));
        assert_eq!(first.finish, Some(FinishReason::ToolCalls), "{protocol}");
        let calls: Vec<&Part> = first.tool_calls().collect();
        assert_eq!(calls.len(), 1, "{protocol}");
        let Part::ToolCall {
            id,
            name,
            arguments,
            ..
        } = calls[0]
        else {
            panic!("{protocol}: not a call")
        };
        assert_eq!(
            (name.as_str(), arguments),
            ("get_weather", &json!({"city": "Paris"})),
            "{protocol}"
        );
        let call_id = id.clone();

        req.messages.push(first.message.clone());
        req.messages.push(Message {
            role: Role::Tool,
            parts: vec![Part::ToolResult {
                call_id: call_id.clone(),
                name: "get_weather".into(),
                content: r#"{"sky":"sunny"}"#.into(),
                is_error: false,
            }],
        });
        let second = client()
            .complete(&ep, &req)
            .await
            .unwrap_or_else(|e| panic!("{protocol}: {e}"));
        assert_eq!(second.text(), "It is sunny in Paris.", "{protocol}");

        let seen = mock.requests();
        assert_eq!(seen.len(), 2, "{protocol}");
        let body = seen[1].body.to_string();
        assert!(
            body.contains(&signature),
            "{protocol}: signature not sent back: {body}"
        );
        assert!(
            body.contains(&call_id),
            "{protocol}: call id not sent back: {body}"
        );
        assert!(
            body.contains("sunny"),
            "{protocol}: tool result not sent: {body}"
        );
    }
}

#[tokio::test]
async fn disabled_mode_drops_replayable_reasoning_but_keeps_what_the_provider_requires() {
    for (protocol, wire, kept) in [
        (Protocol::OpenaiChat, Wire::OpenaiChat, false),
        (Protocol::Anthropic, Wire::Anthropic, true),
        (Protocol::Gemini, Wire::Gemini, true),
    ] {
        let script = Script::new(vec![
            Turn::call("get_weather", json!({"city": "Oslo"}))
                .with_reasoning("hmm", "SIGNED-BLOCK"),
            Turn::text("Cold."),
        ]);
        let mock = MockProvider::start(script)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let ep = endpoint(&mock, protocol, wire);
        let mut req = ChatRequest::new("m", vec![Message::text(Role::User, "Oslo?")]);
        req.tools = vec![weather_tool()];
        let first = client()
            .complete(&ep, &req)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let Some(Part::ToolCall { id, .. }) = first.tool_calls().next().cloned() else {
            panic!("{protocol}: no call")
        };
        req.messages.push(first.message);
        req.messages.push(Message {
            role: Role::Tool,
            parts: vec![Part::ToolResult {
                call_id: id,
                name: "get_weather".into(),
                content: "-5C".into(),
                is_error: false,
            }],
        });
        client()
            .complete(&ep, &req)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let body = mock.requests()[1].body.to_string();
        assert_eq!(body.contains("SIGNED-BLOCK"), kept, "{protocol}: {body}");
    }
}

#[tokio::test]
async fn http_errors_map_to_kinds_with_the_provider_message() {
    for (protocol, wire) in PROTOCOLS {
        for (status, kind) in [
            (401, ErrorKind::Authentication),
            (400, ErrorKind::InvalidRequest),
            (404, ErrorKind::NotFound),
        ] {
            let mock = MockProvider::start(Script::new(vec![Turn::error(
                status,
                "the provider says no",
            )]))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
            let req = ChatRequest::new("m", vec![Message::text(Role::User, "hi")]);
            let err = match client().send(&endpoint(&mock, protocol, wire), &req).await {
                Err(e) => e,
                Ok(_) => panic!("{protocol} {status}: no error"),
            };
            assert_eq!(err.kind, kind, "{protocol} {status}");
            assert_eq!(err.status, Some(status));
            assert!(
                err.message.contains("the provider says no"),
                "{protocol}: {}",
                err.message
            );
            assert_eq!(
                mock.requests().len(),
                1,
                "{protocol} {status}: a {status} is never retried"
            );
        }
    }
}

#[tokio::test]
async fn rate_limits_and_overload_are_retried_with_the_same_bytes() {
    let overloaded = Turn {
        error: Some(ScriptError {
            status: 529,
            message: "Overloaded".into(),
            retry_after: None,
        }),
        ..Turn::default()
    };
    let limited = Turn {
        error: Some(ScriptError {
            status: 429,
            message: "slow down".into(),
            retry_after: Some(0),
        }),
        ..Turn::default()
    };
    let mock = MockProvider::start(Script::new(vec![
        overloaded,
        limited,
        Turn::text("finally"),
    ]))
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let mut req = ChatRequest::new("m", vec![Message::text(Role::User, "hi")]);
    req.tools = vec![weather_tool()];
    let reply = client()
        .complete(&endpoint(&mock, Protocol::Anthropic, Wire::Anthropic), &req)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(reply.text(), "finally");
    let seen = mock.requests();
    assert_eq!(seen.len(), 3);
    assert!(
        seen.windows(2).all(|w| w[0].body == w[1].body),
        "a retry changed the request"
    );
    assert!(
        seen[2].body.get("tools").is_some(),
        "tools were dropped on retry"
    );
}

#[tokio::test]
async fn retries_stop_after_the_limit() {
    let turns = (0..5).map(|_| Turn::error(503, "busy")).collect();
    let mock = MockProvider::start(Script::new(turns))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let req = ChatRequest::new("m", vec![Message::text(Role::User, "hi")]);
    let err = client()
        .send(
            &endpoint(&mock, Protocol::OpenaiChat, Wire::OpenaiChat),
            &req,
        )
        .await
        .err()
        .unwrap_or_else(|| panic!("no error"));
    assert_eq!(err.kind, ErrorKind::Overloaded);
    assert_eq!(mock.requests().len(), 3, "one attempt and two retries");
}

#[tokio::test]
async fn a_stream_cut_mid_answer_is_an_error_and_is_not_retried() {
    for (protocol, wire) in PROTOCOLS {
        let turn = Turn {
            text: Some("This answer will be cut off in the middle of a sentence.".into()),
            chunk: Some(4),
            fail_after: Some(3),
            ..Turn::default()
        };
        let mock = MockProvider::start(Script::new(vec![turn, Turn::text("second")]))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let req = ChatRequest::new("m", vec![Message::text(Role::User, "hi")]);
        let reply = client()
            .complete(&endpoint(&mock, protocol, wire), &req)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let (kind, _) = reply
            .error
            .clone()
            .unwrap_or_else(|| panic!("{protocol}: no error"));
        assert_eq!(kind, ErrorKind::Network, "{protocol}: the connection broke");
        assert_eq!(
            mock.requests().len(),
            1,
            "{protocol}: output had started; no retry"
        );
    }
}

#[tokio::test]
async fn a_stream_without_its_end_marker_is_reported() {
    for (protocol, wire) in PROTOCOLS {
        let turn = Turn {
            text: Some("unfinished".into()),
            truncate: true,
            ..Turn::default()
        };
        let mock = MockProvider::start(Script::new(vec![turn]))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let req = ChatRequest::new("m", vec![Message::text(Role::User, "hi")]);
        let reply = client()
            .complete(&endpoint(&mock, protocol, wire), &req)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(reply.text(), "unfinished", "{protocol}");
        assert_eq!(
            reply.error.map(|e| e.0),
            Some(ErrorKind::InvalidResponse),
            "{protocol}"
        );
    }
}

#[tokio::test]
async fn slow_tokens_arrive_one_by_one_and_dropping_the_stream_stops_reading() {
    let turn = Turn {
        text: Some("a b c d e f g h".into()),
        chunk: Some(2),
        delay_ms: 30,
        ..Turn::default()
    };
    let mock = MockProvider::start(Script::new(vec![turn]))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let req = ChatRequest::new("m", vec![Message::text(Role::User, "hi")]);
    let mut stream = client()
        .send(
            &endpoint(&mock, Protocol::OpenaiChat, Wire::OpenaiChat),
            &req,
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut texts = Vec::new();
    while let Some(e) = stream.next().await {
        if let StreamEvent::TextDelta { text } = e {
            texts.push(text);
            if texts.len() == 2 {
                break;
            }
        }
    }
    drop(stream);
    assert_eq!(texts, vec!["a ", "b "]);
}

#[tokio::test]
async fn connection_refused_is_a_network_error() {
    // Bind then drop to find a port with nobody listening.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
        l.local_addr().map(|a| a.port()).unwrap_or(1)
    };
    let ep = Endpoint {
        protocol: Protocol::OpenaiChat,
        base_url: format!("http://127.0.0.1:{port}/v1"),
        api_key: None,
    };
    let req = ChatRequest::new("m", vec![Message::text(Role::User, "hi")]);
    let err = client()
        .send(&ep, &req)
        .await
        .err()
        .unwrap_or_else(|| panic!("no error"));
    assert_eq!(err.kind, ErrorKind::Network);
}

#[tokio::test]
async fn parallel_tool_calls_keep_their_order_and_ids() {
    for (protocol, wire) in PROTOCOLS {
        let turn = Turn {
            tool_calls: vec![
                tavo_testkit::ScriptCall {
                    id: Some("call_a".into()),
                    name: "get_weather".into(),
                    arguments: json!({"city": "Paris"}),
                },
                tavo_testkit::ScriptCall {
                    id: Some("call_b".into()),
                    name: "get_weather".into(),
                    arguments: json!({"city": "Rome"}),
                },
            ],
            chunk: Some(3),
            ..Turn::default()
        };
        let mock = MockProvider::start(Script::new(vec![turn]))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let mut req = ChatRequest::new("m", vec![Message::text(Role::User, "two cities")]);
        req.tools = vec![weather_tool()];
        let reply = client()
            .complete(&endpoint(&mock, protocol, wire), &req)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let got: Vec<(String, Value)> = reply
            .tool_calls()
            .filter_map(|p| match p {
                Part::ToolCall { id, arguments, .. } => Some((id.clone(), arguments.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("call_a".into(), json!({"city": "Paris"})),
                ("call_b".into(), json!({"city": "Rome"}))
            ],
            "{protocol}"
        );
    }
}

/// The idle time-out bounds the silence between two chunks, not the length of the answer: a
/// slow but steady stream longer than the time-out streams to its end, and a silence longer
/// than the time-out ends it with a time-out.
#[tokio::test]
async fn the_idle_timeout_counts_silence_not_the_whole_answer() {
    let idle = std::time::Duration::from_millis(400);
    let client = Client::with(
        RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        },
        Timeouts {
            idle,
            ..Timeouts::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let answer = async |turn: Turn| {
        let mock = MockProvider::start(Script::new(vec![turn]))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let req = ChatRequest::new("m", vec![Message::text(Role::User, "hi")]);
        client
            .complete(
                &endpoint(&mock, Protocol::OpenaiChat, Wire::OpenaiChat),
                &req,
            )
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    };

    // Ten chunks 150 ms apart: 1.5 s in all, never 400 ms of silence.
    let reply = answer(Turn {
        text: Some("abcdefghijklmnopqrst".into()),
        chunk: Some(2),
        delay_ms: 150,
        ..Turn::default()
    })
    .await;
    assert_eq!(reply.error, None);
    assert_eq!(reply.text(), "abcdefghijklmnopqrst");

    // A first chunk only after 900 ms of silence.
    let reply = answer(Turn {
        delay_ms: 900,
        ..Turn::text("late")
    })
    .await;
    assert_eq!(reply.error.map(|e| e.0), Some(ErrorKind::Timeout));
}
