//! `tavo_web_search` against a local Tavily mock that checks request bodies against the
//! recorded fixtures in `shared/fixtures/providers/tavily/`.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use serde_json::{Value, json};
use tavo_web::search::{SearchApi, SearchArgs, SearchDepth, SearchError, TavilyClient};

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/fixtures/providers/tavily"
);

/// The request fields tavo decides; everything else in a fixture is an SDK option tavo never
/// sends (include_answer, include_raw_content, days, ...).
const CONTROLLED: [&str; 8] = [
    "query",
    "search_depth",
    "topic",
    "time_range",
    "max_results",
    "include_domains",
    "exclude_domains",
    "chunks_per_source",
];

fn fixture(name: &str) -> Value {
    let path = format!("{FIXTURES}/{name}");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// One request as the mock saw it: the Authorization header and the JSON body.
type Request = (Option<String>, Value);

#[derive(Clone, Default)]
struct Seen {
    bodies: Arc<Mutex<Vec<Request>>>,
    reply: Arc<Mutex<(u16, Value)>>,
}

async fn mock() -> (SocketAddr, Seen) {
    let seen = Seen::default();
    *seen.reply.lock().expect("lock") = (200, fixture("docs-response-search.json"));
    let app = Router::new()
        .route(
            "/search",
            post(
                |State(seen): State<Seen>, headers: HeaderMap, Json(body): Json<Value>| async move {
                    let auth = headers
                        .get("authorization")
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_string);
                    seen.bodies.lock().expect("lock").push((auth, body));
                    let (status, reply) = seen.reply.lock().expect("lock").clone();
                    (
                        StatusCode::from_u16(status).unwrap_or(StatusCode::OK),
                        Json(reply),
                    )
                },
            ),
        )
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (addr, seen)
}

fn api(depth: SearchDepth, chunks: u8, max_results: u8) -> SearchApi {
    SearchApi {
        search_depth: depth,
        chunks_per_source: chunks,
        max_results,
        ..SearchApi::tavily("t", "Tavily", "tvly-test-key")
    }
}

/// Sends one search and checks the body against a fixture.
async fn check_against(name: &str, api: SearchApi, args: Value) {
    let (addr, seen) = mock().await;
    let client = TavilyClient::with_loopback_base_url(&format!("http://{addr}")).expect("client");
    let args = SearchArgs::from_json(&args).expect("valid arguments");
    client
        .search(&api, &args)
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let (auth, body) = seen
        .bodies
        .lock()
        .expect("lock")
        .pop()
        .expect("one request");
    assert_eq!(auth.as_deref(), Some("Bearer tvly-test-key"));
    let expected = fixture(name);
    for key in CONTROLLED {
        if key == "chunks_per_source" && expected.get(key).is_none() {
            // The seed: chunks per source go with every depth but ultra-fast.
            let want =
                (api.search_depth != SearchDepth::UltraFast).then(|| json!(api.chunks_per_source));
            assert_eq!(body.get(key).cloned(), want, "{name}: {key}");
            continue;
        }
        assert_eq!(body.get(key), expected.get(key), "{name}: {key} in {body}");
    }
    let extra: Vec<&String> = body
        .as_object()
        .map(|o| {
            o.keys()
                .filter(|k| !CONTROLLED.contains(&k.as_str()))
                .collect()
        })
        .unwrap_or_default();
    assert!(extra.is_empty(), "{name}: unexpected fields {extra:?}");
}

#[tokio::test]
async fn request_bodies_match_the_fixtures() {
    check_against(
        "request-search-ultra-fast.json",
        api(SearchDepth::UltraFast, 2, 3),
        json!({"query": "latest Rust release"}),
    )
    .await;
    check_against(
        "request-search-fast-finance.json",
        api(SearchDepth::Fast, 1, 10),
        json!({"query": "NVDA earnings", "topic": "finance", "time_range": "month", "max_results": 3}),
    )
    .await;
    check_against(
        "request-search-advanced-chunks.json",
        api(SearchDepth::Advanced, 3, 5),
        json!({"query": "who is Leo Messi?", "topic": "general", "time_range": "week"}),
    )
    .await;
    check_against(
        "request-search-news-specific.json",
        api(SearchDepth::Advanced, 3, 5),
        json!({
            "query": "What is Tavily?", "topic": "news", "max_results": 10,
            "include_domains": ["tavily.com"], "exclude_domains": ["example.com"]
        }),
    )
    .await;
}

#[tokio::test]
async fn ultra_fast_body_is_exactly_the_fixture() {
    let (addr, seen) = mock().await;
    let client = TavilyClient::with_loopback_base_url(&format!("http://{addr}")).expect("client");
    client
        .search(
            &api(SearchDepth::UltraFast, 3, 3),
            &SearchArgs::query("latest Rust release"),
        )
        .await
        .expect("search");
    let (_, body) = seen
        .bodies
        .lock()
        .expect("lock")
        .pop()
        .expect("one request");
    assert_eq!(body, fixture("request-search-ultra-fast.json"));
}

#[tokio::test]
async fn results_are_normalised_and_leak_nothing_provider_only() {
    let (addr, _seen) = mock().await;
    let client = TavilyClient::with_loopback_base_url(&format!("http://{addr}")).expect("client");
    let out = client
        .search(
            &api(SearchDepth::Basic, 3, 5),
            &SearchArgs::query("Who is Leo Messi?"),
        )
        .await
        .expect("search");
    assert_eq!(out.results.len(), 1);
    let hit = &out.results[0];
    assert_eq!(hit.title, "Lionel Messi Facts | Britannica");
    assert_eq!(hit.url, "https://www.britannica.com/facts/Lionel-Messi");
    assert!(
        hit.snippet
            .starts_with("Lionel Messi, an Argentine footballer")
    );
    assert_eq!(hit.score, Some(0.81025416));
    let text = serde_json::to_string(&out).expect("serialises");
    for leak in [
        "request_id",
        "123e4567",
        "tvly-test-key",
        "answer",
        "credits",
        "favicon",
        "response_time",
    ] {
        assert!(!text.contains(leak), "{leak} leaked: {text}");
    }
    assert!(out.warnings.is_empty());
}

#[tokio::test]
async fn the_sdk_test_response_and_result_trimming() {
    let (addr, seen) = mock().await;
    let mut response = fixture("sdk-test-response-search.json");
    if let Some(results) = response.get_mut("results").and_then(Value::as_array_mut) {
        let first = results[0].clone();
        results.push(first.clone());
        results.push(first);
    }
    *seen.reply.lock().expect("lock") = (200, response);
    let client = TavilyClient::with_loopback_base_url(&format!("http://{addr}")).expect("client");
    let args = SearchArgs::from_json(&json!({"query": "What is Tavily?", "max_results": 2}))
        .expect("args");
    let out = client
        .search(&api(SearchDepth::Basic, 3, 5), &args)
        .await
        .expect("search");
    assert_eq!(out.results.len(), 2);
    assert_eq!(out.warnings, vec!["results_trimmed".to_string()]);
    assert_eq!(out.results[0].score, Some(0.99));
}

#[tokio::test]
async fn provider_errors_map_to_codes_without_the_key() {
    let (addr, seen) = mock().await;
    let client = TavilyClient::with_loopback_base_url(&format!("http://{addr}")).expect("client");
    let cases = [
        (400, "error-400.json", "search_rejected"),
        (401, "error-401.json", "permission_denied"),
        (429, "error-429.json", "search_usage_limit"),
        (432, "error-432.json", "search_usage_limit"),
        (433, "error-433.json", "search_usage_limit"),
    ];
    for (status, file, code) in cases {
        *seen.reply.lock().expect("lock") = (status, fixture(file));
        let err = client
            .search(&api(SearchDepth::Basic, 3, 5), &SearchArgs::query("q"))
            .await
            .expect_err("provider error");
        assert_eq!(err.code(), code, "{file}");
        assert!(!err.to_string().contains("tvly-test-key"));
    }
    *seen.reply.lock().expect("lock") = (400, fixture("error-400.json"));
    let err = client
        .search(&api(SearchDepth::Basic, 3, 5), &SearchArgs::query("q"))
        .await
        .expect_err("400");
    assert!(
        err.to_string()
            .contains("Max query length is 400 characters")
    );
}

#[tokio::test]
async fn an_incomplete_api_never_sends_a_request() {
    let (addr, seen) = mock().await;
    let client = TavilyClient::with_loopback_base_url(&format!("http://{addr}")).expect("client");
    let mut incomplete = api(SearchDepth::Basic, 3, 5);
    incomplete.api_key.clear();
    let err = client.search(&incomplete, &SearchArgs::query("q")).await;
    assert!(matches!(err, Err(SearchError::NotConfigured)));
    assert!(seen.bodies.lock().expect("lock").is_empty());
}
