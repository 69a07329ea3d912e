//! Request fixtures round-trip: provider body → canonical request → provider body again,
//! equivalent to the original (compared as JSON values, after the normalizations below).

use crate::support::protocol_of;
use serde_json::{Value, json};
use tavo_llm::Protocol;
use tavo_llm::codec::decode_request;

/// Differences that carry no meaning:
/// - numbers compare as numbers (`0` = `0.0`);
/// - tool-call `arguments` strings are compared as the JSON they hold (spacing differs);
/// - assistant `content: ""` and `null` beside tool calls are the same;
/// - `stream_options.include_usage` is always added to a streamed Chat request;
/// - Responses: a string `input` is one user message, `store: false` is always sent (the whole
///   conversation goes with each request), and function tools say `strict` explicitly.
fn normalize(protocol: Protocol, v: &mut Value) {
    match v {
        Value::Object(m) => {
            let parsed = m
                .get("arguments")
                .and_then(Value::as_str)
                .and_then(|s| serde_json::from_str::<Value>(s).ok());
            if let Some(parsed) = parsed {
                m.insert("arguments".into(), parsed);
            }
            if m.contains_key("tool_calls") && m.get("content") == Some(&json!("")) {
                m.insert("content".into(), Value::Null);
            }
            if protocol == Protocol::OpenaiResponses
                && m.get("type") == Some(&json!("function"))
                && !m.contains_key("strict")
            {
                m.insert("strict".into(), json!(false));
            }
            for (_, child) in m.iter_mut() {
                normalize(protocol, child);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| normalize(protocol, x)),
        // `0` and `0.0` are the same number to every provider.
        Value::Number(n) => {
            if let Some(f) = n.as_f64() {
                *v = json!(f);
            }
        }
        _ => {}
    }
}

fn top_level(protocol: Protocol, v: &mut Value) {
    let Some(m) = v.as_object_mut() else { return };
    m.remove("stream_options");
    if protocol == Protocol::OpenaiResponses {
        if let Some(Value::String(s)) = m.get("input").cloned() {
            m.insert("input".into(), json!([{"role": "user", "content": s}]));
        }
        m.entry("store").or_insert(json!(false));
    }
}

#[test]
fn every_request_fixture_round_trips_through_the_canonical_model() {
    let root = tavo_testkit::provider_fixtures();
    let mut checked = 0;
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .into_iter()
        .flatten()
        .flatten()
        .collect();
    dirs.sort_by_key(|d| d.file_name());
    for d in dirs {
        let dir = d.file_name().to_string_lossy().into_owned();
        let Some(protocol) = protocol_of(&dir) else {
            continue;
        };
        let mut files: Vec<_> = std::fs::read_dir(d.path())
            .into_iter()
            .flatten()
            .flatten()
            .collect();
        files.sort_by_key(|f| f.file_name());
        for f in files {
            let name = f.file_name().to_string_lossy().into_owned();
            if !(name.contains("request") && name.ends_with(".json")) {
                continue;
            }
            let text = std::fs::read_to_string(f.path()).unwrap_or_else(|e| panic!("{name}: {e}"));
            let original: Value =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{dir}/{name}: {e}"));
            let canonical =
                decode_request(protocol, &original).unwrap_or_else(|e| panic!("{dir}/{name}: {e}"));
            // The canonical form itself survives serde (what `tavo llm encode` reads).
            let reread: tavo_llm::ChatRequest =
                serde_json::from_value(serde_json::to_value(&canonical).unwrap_or_default())
                    .unwrap_or_else(|e| panic!("{dir}/{name}: {e}"));
            assert_eq!(reread, canonical, "{dir}/{name}");
            let encoded = tavo_llm::encode(protocol, &canonical)
                .unwrap_or_else(|e| panic!("{dir}/{name}: {e}"));
            let (mut want, mut got) = (original.clone(), encoded.body.clone());
            top_level(protocol, &mut want);
            top_level(protocol, &mut got);
            normalize(protocol, &mut want);
            normalize(protocol, &mut got);
            assert_eq!(
                got,
                want,
                "{dir}/{name} did not round-trip\n got: {}\nwant: {}",
                serde_json::to_string_pretty(&got).unwrap_or_default(),
                serde_json::to_string_pretty(&want).unwrap_or_default()
            );
            checked += 1;
        }
    }
    assert!(checked >= 15, "only {checked} request fixtures found");
}

/// Re-encoding a Gemini conversation for Anthropic drops the Gemini signatures with a warning
/// and keeps the calls and results.
#[test]
fn natives_are_dropped_with_a_warning_for_another_protocol() {
    let root = tavo_testkit::provider_fixtures();
    let text = std::fs::read_to_string(
        root.join("gemini/constructed-request-function-response-with-ids.json"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let body: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    let canonical = decode_request(Protocol::Gemini, &body).unwrap_or_else(|e| panic!("{e}"));
    let enc = tavo_llm::encode(Protocol::Anthropic, &canonical).unwrap_or_else(|e| panic!("{e}"));
    let s = enc.body.to_string();
    assert!(!s.contains("thoughtSignature"));
    assert!(s.contains("fc-paris-1") && s.contains("tool_result"));
    assert!(
        enc.warnings.iter().any(|w| w.contains("gemini")),
        "{:?}",
        enc.warnings
    );
}
