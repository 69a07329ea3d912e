//! Every provider fixture decodes; golden outputs (insta) pin the canonical events, and
//! proptest checks that any split of a stream's bytes decodes to the same events.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::protocol_of;
use proptest::prelude::*;
use tavo_llm::codec::StreamDecode;
use tavo_llm::error::error_from_response;
use tavo_llm::retry::parse_retry_after;
use tavo_llm::{ErrorKind, Protocol, StreamEvent};

fn root() -> PathBuf {
    tavo_testkit::provider_fixtures()
}

/// (folder, file, protocol) of every response-side fixture.
fn fixtures(ext: &str) -> Vec<(String, PathBuf, Protocol)> {
    let mut out = Vec::new();
    let Ok(dirs) = std::fs::read_dir(root()) else {
        panic!("fixtures not found at {}", root().display())
    };
    for d in dirs.flatten() {
        let dir = d.file_name().to_string_lossy().into_owned();
        let Some(p) = protocol_of(&dir) else { continue };
        for f in std::fs::read_dir(d.path()).into_iter().flatten().flatten() {
            let name = f.file_name().to_string_lossy().into_owned();
            let is_response = name.ends_with(".sse")
                || (!name.contains("request")
                    && (name.contains("response") || name.contains("error")));
            if name.ends_with(ext) && is_response && !name.ends_with(".request.json") {
                out.push((dir.clone(), f.path(), p));
            }
        }
    }
    out.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    out
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn lines(events: &[StreamEvent]) -> String {
    events.iter().map(|e| e.to_json_line() + "\n").collect()
}

fn snapshot_name(dir: &str, path: &Path) -> String {
    format!(
        "{dir}__{}",
        path.file_name()
            .map(|f| f.to_string_lossy())
            .unwrap_or_default()
    )
}

#[test]
fn every_stream_fixture_decodes_to_its_golden_events() {
    let all = fixtures(".sse");
    assert!(all.len() >= 30, "only {} stream fixtures found", all.len());
    for (dir, path, protocol) in all {
        let events = tavo_llm::decode_stream(protocol, &read(&path));
        insta::assert_snapshot!(snapshot_name(&dir, &path), lines(&events));
    }
}

#[test]
fn every_body_fixture_decodes_to_its_golden_events() {
    let all = fixtures(".json");
    assert!(all.len() >= 30, "only {} body fixtures found", all.len());
    for (dir, path, protocol) in all {
        let bytes = read(&path);
        // Documentation fragments that are only a content array are still valid bodies.
        let events = tavo_llm::decode_body(protocol, &bytes);
        let name = path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name.starts_with("error-") || name.contains("-error-") {
            assert!(
                events
                    .iter()
                    .any(|e| matches!(e, StreamEvent::Error { .. })),
                "{dir}/{name}: an error body must decode to an error event"
            );
        }
        insta::assert_snapshot!(snapshot_name(&dir, &path), lines(&events));
    }
}

/// Each error fixture maps to the kind a user can act on.
#[test]
fn error_bodies_map_to_typed_kinds() {
    let cases: &[(&str, u16, ErrorKind)] = &[
        (
            "openai-chat/error-401-invalid-api-key.json",
            401,
            ErrorKind::Authentication,
        ),
        (
            "openai-chat/error-429-rate-limit.json",
            429,
            ErrorKind::RateLimit,
        ),
        (
            "openai-chat/error-400-invalid-function-parameters.json",
            400,
            ErrorKind::InvalidRequest,
        ),
        (
            "openai-chat/error-400-unsupported-parameter.json",
            400,
            ErrorKind::InvalidRequest,
        ),
        (
            "openai-responses/error-insufficient-quota.json",
            429,
            ErrorKind::QuotaExceeded,
        ),
        (
            "openai-responses/error-400-invalid-json-schema.json",
            400,
            ErrorKind::InvalidRequest,
        ),
        (
            "anthropic/error-401-authentication.json",
            401,
            ErrorKind::Authentication,
        ),
        (
            "anthropic/error-404-docs-example.json",
            404,
            ErrorKind::NotFound,
        ),
        (
            "anthropic/error-429-rate-limit.json",
            429,
            ErrorKind::RateLimit,
        ),
        (
            "anthropic/error-529-overloaded.json",
            529,
            ErrorKind::Overloaded,
        ),
        (
            "anthropic/error-400-invalid-tool-schema.json",
            400,
            ErrorKind::InvalidRequest,
        ),
        (
            "gemini/error-400-api-key-invalid.json",
            400,
            ErrorKind::Authentication,
        ),
        (
            "gemini/error-429-resource-exhausted.json",
            429,
            ErrorKind::RateLimit,
        ),
        (
            "gemini/error-400-missing-thought-signature.json",
            400,
            ErrorKind::InvalidRequest,
        ),
        (
            "openrouter/docs-error-429-provider.json",
            429,
            ErrorKind::RateLimit,
        ),
        (
            "openrouter/docs-error-403-guardrail.json",
            403,
            ErrorKind::Permission,
        ),
        (
            "llama-cpp-python/error-400-context-length-exceeded.json",
            400,
            ErrorKind::ContextTooLong,
        ),
        (
            "deepseek/error-400-reasoning-content-missing.json",
            400,
            ErrorKind::InvalidRequest,
        ),
    ];
    for (file, status, kind) in cases {
        let dir = file.split('/').next().unwrap_or_default();
        let protocol = protocol_of(dir).unwrap_or(Protocol::OpenaiChat);
        let body = read(&root().join(file));
        let e = error_from_response(protocol, *status, None, &body, None);
        assert_eq!(e.kind, *kind, "{file}: {}", e.message);
        assert!(
            !e.message.is_empty(),
            "{file}: the provider's message is kept"
        );
    }
    // Gemini puts the retry delay in the body.
    let e = error_from_response(
        Protocol::Gemini,
        429,
        None,
        &read(&root().join("gemini/error-429-resource-exhausted.json")),
        None,
    );
    assert_eq!(e.retry_after, Some(Duration::from_millis(34_400)));
}

/// `.http` fixtures: a status line, headers, a blank line, a body.
#[test]
fn http_fixtures_give_status_retry_after_and_kind() {
    let cases: &[(&str, Protocol, ErrorKind, Option<&str>)] = &[
        (
            "openai-chat/error-429-rate-limit.http",
            Protocol::OpenaiChat,
            ErrorKind::RateLimit,
            None,
        ),
        (
            "openai-chat/error-429-retry-after-http-date.http",
            Protocol::OpenaiChat,
            ErrorKind::RateLimit,
            None,
        ),
        (
            "anthropic/error-429-rate-limit.http",
            Protocol::Anthropic,
            ErrorKind::RateLimit,
            Some("30"),
        ),
        (
            "openrouter/docs-error-429-retry-after.http",
            Protocol::OpenaiChat,
            ErrorKind::RateLimit,
            Some("60"),
        ),
    ];
    for (file, protocol, kind, seconds) in cases {
        let text = String::from_utf8_lossy(&read(&root().join(file))).replace("\r\n", "\n");
        let (head, body) = text.split_once("\n\n").unwrap_or((&text, ""));
        let mut lines = head.lines();
        let status: u16 = lines
            .next()
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("{file}: no status line"));
        let header = |name: &str| {
            head.lines().skip(1).find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.trim()
                    .eq_ignore_ascii_case(name)
                    .then(|| v.trim().to_owned())
            })
        };
        let now = std::time::UNIX_EPOCH + Duration::from_secs(1_696_004_900);
        let retry_after = parse_retry_after(
            header("retry-after-ms").as_deref(),
            header("retry-after").as_deref(),
            now,
        );
        assert!(retry_after.is_some(), "{file}: retry-after not read");
        if let Some(s) = seconds {
            assert_eq!(
                retry_after,
                Some(Duration::from_secs(s.parse().unwrap_or(0))),
                "{file}"
            );
        }
        let e = error_from_response(*protocol, status, retry_after, body.trim().as_bytes(), None);
        assert_eq!(e.kind, *kind, "{file}");
        assert_eq!(e.retry_after, retry_after, "{file}");
    }
}

fn decode_in_pieces(protocol: Protocol, bytes: &[u8], cuts: &[usize]) -> Vec<StreamEvent> {
    let mut d = StreamDecode::new(protocol);
    let mut out = Vec::new();
    let mut at = 0;
    for &c in cuts {
        let c = c.clamp(at, bytes.len());
        d.feed(&bytes[at..c], &mut out);
        at = c;
    }
    d.feed(&bytes[at..], &mut out);
    d.finish(&mut out);
    out
}

#[test]
fn byte_by_byte_equals_all_at_once() {
    for (dir, path, protocol) in fixtures(".sse") {
        let bytes = read(&path);
        let whole = tavo_llm::decode_stream(protocol, &bytes);
        let cuts: Vec<usize> = (1..bytes.len()).collect();
        assert_eq!(
            decode_in_pieces(protocol, &bytes, &cuts),
            whole,
            "{dir}/{}",
            path.display()
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_split_of_any_stream_fixture_decodes_the_same(seed_cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..40)) {
        for (_, path, protocol) in fixtures(".sse") {
            let bytes = read(&path);
            let whole = tavo_llm::decode_stream(protocol, &bytes);
            let mut cuts: Vec<usize> = seed_cuts.iter().map(|i| i.index(bytes.len().max(1))).collect();
            cuts.sort_unstable();
            prop_assert_eq!(decode_in_pieces(protocol, &bytes, &cuts), whole, "{}", path.display());
        }
    }

    /// The SSE reader never panics on arbitrary bytes, whatever the split.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512), cut in 0usize..512) {
        for p in Protocol::ALL {
            let cut = cut.min(bytes.len());
            let _ = decode_in_pieces(p, &bytes, &[cut]);
            let _ = tavo_llm::decode_body(p, &bytes);
        }
    }

    /// CRLF and LF framing are the same stream.
    #[test]
    fn crlf_framing_equals_lf_framing(texts in proptest::collection::vec("[a-zA-Z0-9 ,.!?é😀]{0,12}", 1..8)) {
        let mut lf = String::new();
        for t in &texts {
            lf.push_str(&format!("data: {}\n\n", serde_json::json!({"candidates": [{"content": {"parts": [{"text": t}]}}]})));
        }
        let crlf = lf.replace('\n', "\r\n");
        prop_assert_eq!(
            tavo_llm::decode_stream(Protocol::Gemini, lf.as_bytes()),
            tavo_llm::decode_stream(Protocol::Gemini, crlf.as_bytes())
        );
    }
}
