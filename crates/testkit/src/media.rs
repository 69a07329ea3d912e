//! What the image and voice mocks ([`crate::image`], [`crate::speech`]) share: a loopback
//! server that records every request and refuses the key `bad-key` as OpenAI does — 401 with
//! a body that echoes the key — so a test can check that no key reaches an error message.
//! Each mock supplies only its routes.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::sync::oneshot;

/// One request a media mock received.
#[derive(Debug, Clone)]
pub struct MediaRequestSeen {
    /// The HTTP method (`POST`, or `GET` for a result fetched by URL).
    pub method: String,
    /// Path and query.
    pub path: String,
    /// Lower-case names.
    pub headers: BTreeMap<String, String>,
    /// The JSON body (`Null` when it is not JSON, such as multipart).
    pub body: Value,
    /// The raw body.
    pub raw: Vec<u8>,
}

impl MediaRequestSeen {
    /// The path without the query.
    pub fn route(&self) -> &str {
        self.path.split('?').next().unwrap_or("")
    }

    /// The API key, from whichever header the platform uses (`Authorization: Bearer`,
    /// `x-goog-api-key`, `xi-api-key`).
    pub fn key(&self) -> Option<&str> {
        self.headers
            .get("authorization")
            .map(|v| v.trim_start_matches("Bearer "))
            .or_else(|| self.headers.get("x-goog-api-key").map(String::as_str))
            .or_else(|| self.headers.get("xi-api-key").map(String::as_str))
    }
}

/// A mock's answer to a request that got past the key check; `base` is the mock's own
/// `http://127.0.0.1:PORT`, for answers that point back at it.
pub(crate) type Routes = fn(&MediaRequestSeen, &str) -> Response;

struct Shared {
    requests: Mutex<Vec<MediaRequestSeen>>,
    routes: Routes,
    base: String,
}

/// A running media mock. Dropping it stops the server.
pub(crate) struct MediaMock {
    shared: Arc<Shared>,
    stop: Option<oneshot::Sender<()>>,
}

impl Drop for MediaMock {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

impl MediaMock {
    /// Starts on a free loopback port, answering with `routes`.
    pub(crate) async fn start(routes: Routes) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr: SocketAddr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            requests: Mutex::new(Vec::new()),
            routes,
            base: format!("http://{addr}"),
        });
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await;
        });
        Ok(Self {
            shared,
            stop: Some(stop),
        })
    }

    /// `http://127.0.0.1:PORT`.
    pub(crate) fn base(&self) -> String {
        self.shared.base.clone()
    }

    /// Every request so far.
    pub(crate) fn requests(&self) -> Vec<MediaRequestSeen> {
        self.shared
            .requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    raw: Bytes,
) -> Response {
    let seen = MediaRequestSeen {
        method: method.to_string(),
        path: uri
            .path_and_query()
            .map_or(uri.path().to_owned(), |p| p.as_str().to_owned()),
        headers: headers
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_ascii_lowercase(),
                    v.to_str().unwrap_or("").to_owned(),
                )
            })
            .collect(),
        body: serde_json::from_slice(&raw).unwrap_or(Value::Null),
        raw: raw.to_vec(),
    };
    shared
        .requests
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(seen.clone());
    if let Some(key) = seen.key().filter(|k| *k == "bad-key") {
        return (
            StatusCode::UNAUTHORIZED,
            axum::Json(
                json!({"error": {"message": format!("Incorrect API key provided: {key}."),
                "type": "invalid_request_error", "code": "invalid_api_key"}}),
            ),
        )
            .into_response();
    }
    (shared.routes)(&seen, &shared.base)
}

/// The answer to a route the mock does not have.
pub(crate) fn no_such_route() -> Response {
    (
        StatusCode::NOT_FOUND,
        axum::Json(json!({"error": {"message": "no such route"}})),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn echo(seen: &MediaRequestSeen, base: &str) -> Response {
        axum::Json(json!({"route": seen.route(), "base": base})).into_response()
    }

    #[tokio::test]
    async fn requests_are_recorded_and_the_bad_key_is_refused_with_an_echo() {
        let mock = MediaMock::start(echo)
            .await
            .unwrap_or_else(|e| panic!("start: {e}"));
        let http = reqwest::Client::new();
        let ok: Value = http
            .post(format!("{}/v1/x?y=1", mock.base()))
            .header("xi-api-key", "good")
            .body(r#"{"text": "hi"}"#)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .json()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(ok, json!({"route": "/v1/x", "base": mock.base()}));
        let refused = http
            .post(format!("{}/v1/x", mock.base()))
            .bearer_auth("bad-key")
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(refused.status(), 401);
        let text = refused.text().await.unwrap_or_default();
        assert!(text.contains("bad-key"), "the body echoes the key: {text}");
        let seen = mock.requests();
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[0].path, "/v1/x?y=1");
        assert_eq!(seen[0].key(), Some("good"));
        assert_eq!(seen[0].body["text"], "hi");
        assert_eq!(seen[1].key(), Some("bad-key"));
    }
}
