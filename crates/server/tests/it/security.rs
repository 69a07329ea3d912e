//! Authentication, the host check, CSRF, CORS, body limits and the JSON error shape, against
//! a real server on 127.0.0.1.

use crate::support::{TOKEN, TestServer, bare_client, bearer_client, client, json_of};
use serde_json::json;

#[tokio::test]
async fn health_answers_without_auth_and_everything_else_needs_the_token() {
    let s = TestServer::start_with(|c| c.token = Some(TOKEN.into())).await;
    let (status, body) = json_of(
        bare_client()
            .get(s.url("/api/health"))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["status"], "ok");
    assert_eq!(body["authRequired"], true);

    let r = bare_client()
        .get(s.url("/api/ops"))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 401);
    assert_eq!(
        r.headers().get("www-authenticate").map(|v| v.as_bytes()),
        Some(&b"Bearer"[..])
    );
    let (_, body) = json_of(r).await;
    assert_eq!(body["error"]["code"], "unauthorized");

    let wrong = bare_client()
        .get(s.url("/api/ops"))
        .bearer_auth("wrong-token-0123456789")
        .send()
        .await
        .expect("send");
    assert_eq!(wrong.status(), 401);
    let ok = bearer_client()
        .get(s.url("/api/ops"))
        .send()
        .await
        .expect("send");
    assert_eq!(ok.status(), 200);
    // The OpenAPI document is behind the token too.
    assert_eq!(
        bare_client()
            .get(s.url("/api/openapi.json"))
            .send()
            .await
            .expect("send")
            .status(),
        401
    );
}

#[tokio::test]
async fn the_browser_logs_in_with_a_cookie_that_is_not_the_token() {
    let s = TestServer::start_with(|c| c.token = Some(TOKEN.into())).await;
    let c = client();
    let bad = c
        .post(s.url("/api/session"))
        .json(&json!({"token": "nope"}))
        .send()
        .await
        .expect("send");
    assert_eq!(bad.status(), 401);
    let r = c
        .post(s.url("/api/session"))
        .json(&json!({"token": TOKEN}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 204);
    let cookie = r
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .expect("cookie")
        .to_owned();
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"));
    assert!(!cookie.contains(TOKEN));
    let pair = cookie.split(';').next().expect("pair").to_owned();
    let r = bare_client()
        .get(s.url("/api/ops"))
        .header("cookie", &pair)
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    // With only the cookie, a state change still needs the custom header (a cross-site form
    // carries the cookie but cannot add a header).
    let r = bare_client()
        .post(s.url("/api/ops/tavo_variable_get"))
        .header("cookie", &pair)
        .body("{}")
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 403);
    assert_eq!(json_of(r).await.1["error"]["code"], "csrf");
}

#[tokio::test]
async fn a_foreign_host_header_is_refused() {
    let s = TestServer::start().await;
    for host in ["evil.example", "evil.example:7860", "127.0.0.1.nip.io"] {
        let r = bare_client()
            .get(s.url("/api/health"))
            .header("host", host)
            .send()
            .await
            .expect("send");
        assert_eq!(r.status(), 403, "{host}");
        assert_eq!(json_of(r).await.1["error"]["code"], "forbidden_host");
    }
    for host in ["localhost:7860", "127.0.0.1"] {
        let r = bare_client()
            .get(s.url("/api/health"))
            .header("host", host)
            .send()
            .await
            .expect("send");
        assert_eq!(r.status(), 200, "{host}");
    }
}

#[tokio::test]
async fn state_changes_need_the_csrf_header_and_a_same_site_origin() {
    let s = TestServer::start().await;
    let form = bare_client()
        .post(s.url("/api/ops/tavo_variable_get"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("a=b")
        .send()
        .await
        .expect("send");
    assert_eq!(form.status(), 403);
    assert_eq!(json_of(form).await.1["error"]["code"], "csrf");
    let cross = client()
        .post(s.url("/api/ops/tavo_variable_get"))
        .header("origin", "https://evil.example")
        .body("{}")
        .send()
        .await
        .expect("send");
    assert_eq!(cross.status(), 403);
    // Reads do not need the header.
    assert_eq!(
        bare_client()
            .get(s.url("/api/ops"))
            .send()
            .await
            .expect("send")
            .status(),
        200
    );
}

#[tokio::test]
async fn no_cors_headers_are_ever_sent() {
    let s = TestServer::start().await;
    let pre = bare_client()
        .request(reqwest::Method::OPTIONS, s.url("/api/ops/tavo_file_save"))
        .header("origin", "https://evil.example")
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "x-tavo-request")
        .send()
        .await
        .expect("send");
    assert!(pre.headers().get("access-control-allow-origin").is_none());
    assert!(pre.headers().get("access-control-allow-headers").is_none());
    let get = bare_client()
        .get(s.url("/api/health"))
        .header("origin", "https://evil.example")
        .send()
        .await
        .expect("send");
    assert!(get.headers().get("access-control-allow-origin").is_none());
}

#[tokio::test]
async fn bodies_over_the_route_limit_are_refused_as_json() {
    let s = TestServer::start_with(|c| {
        c.limits.json_body = 1024;
        c.limits.op_body = 4096;
    })
    .await;
    let big = "x".repeat(8192);
    let r = client()
        .post(s.url("/api/connections"))
        .header("content-type", "application/json")
        .body(format!("{{\"name\":\"{big}\"}}"))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 413);
    assert_eq!(json_of(r).await.1["error"]["code"], "payload_too_large");
    let r = client()
        .post(s.url("/api/ops/tavo_variable_set"))
        .body(format!("{{\"path\":\"a\",\"value\":\"{big}\"}}"))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 413);
}

#[tokio::test]
async fn errors_are_json_and_name_no_internal_path() {
    let s = TestServer::start().await;
    let (status, body) = json_of(
        bare_client()
            .get(s.url("/api/nope"))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(status, 404);
    assert_eq!(body["error"]["code"], "not_found");
    let r = client()
        .delete(s.url("/api/health"))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 405);
    let (_, body) = json_of(r).await;
    assert_eq!(body["error"]["code"], "method_not_allowed");
    let r = client()
        .post(s.url("/api/connections"))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 400);
    let (_, body) = json_of(r).await;
    assert_eq!(body["error"]["code"], "invalid_arguments");
    let data_dir = s.dir.path().display().to_string();
    assert!(!body.to_string().contains(&data_dir));
}

#[tokio::test]
async fn the_openapi_document_lists_the_routes() {
    let s = TestServer::start().await;
    let (status, doc) = json_of(
        bare_client()
            .get(s.url("/api/openapi.json"))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(status, 200);
    assert!(doc["openapi"].as_str().is_some_and(|v| v.starts_with("3.")));
    for path in [
        "/api/health",
        "/api/ops",
        "/api/ops/{name}",
        "/api/import",
        "/api/export/{kind}/{id}",
        "/api/chats/{id}/messages",
        "/api/replies/{id}/events",
        "/api/replies/{id}/confirm",
        "/api/events",
    ] {
        assert!(
            doc["paths"].get(path).is_some(),
            "{path} missing from the OpenAPI document"
        );
    }
}

#[tokio::test]
async fn graceful_shutdown_ends_event_streams() {
    let mut s = TestServer::start().await;
    let stream = bare_client()
        .get(s.url("/api/events"))
        .send()
        .await
        .expect("send");
    assert_eq!(stream.status(), 200);
    let started = std::time::Instant::now();
    s.shutdown().await;
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "an open SSE stream held the shutdown"
    );
    drop(stream);
}
