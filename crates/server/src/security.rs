//! The request guard every route passes: host check, authentication, CSRF.
//!
//! A server on 127.0.0.1 is still reachable from every web page the user opens, so:
//! - **Host check** (DNS rebinding): a page on `evil.example` whose name is re-pointed at
//!   127.0.0.1 sends `Host: evil.example`; only `localhost`, IP literals and configured names
//!   pass.
//! - **Authentication**: with a token configured, every route except `GET /api/health`, the
//!   login route, the browser app's files (GET outside `/api/`) and signed file URLs
//!   (`GET /api/signed/…`, checked by their handler) needs
//!   `Authorization: Bearer <token>` or the session cookie the login route sets (HttpOnly,
//!   SameSite=Strict, holding a digest of the token, not the token).
//! - **CSRF**: a request that changes state must carry the bearer header or the custom header
//!   [`CSRF_HEADER`]. A cross-site HTML form can send neither, and a cross-site `fetch` that
//!   adds one triggers a CORS preflight, which this server never approves (no CORS headers at
//!   all). An `Origin` naming another host, or `Sec-Fetch-Site: cross-site`, is refused too.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use crate::config::ServeConfig;
use crate::error::ApiError;

/// The header that marks a request as sent by a script of this origin (or a program).
pub const CSRF_HEADER: &str = "x-tavo-request";

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "tavo_session";

/// Routes that answer without authentication.
const PUBLIC: [(&Method, &str); 2] = [
    (&Method::GET, "/api/health"),
    (&Method::POST, "/api/session"),
];

/// What the guard checks against; built once from the configuration.
#[derive(Clone)]
pub struct Guard {
    token: Option<String>,
    session: Option<String>,
    allowed_hosts: Vec<String>,
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard")
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("allowed_hosts", &self.allowed_hosts)
            .finish()
    }
}

impl Guard {
    /// The guard of a configuration.
    pub fn new(config: &ServeConfig) -> Self {
        Guard {
            session: config.token.as_deref().map(session_value),
            token: config.token.clone(),
            allowed_hosts: config
                .allowed_hosts
                .iter()
                .map(|h| h.trim().to_ascii_lowercase())
                .collect(),
        }
    }

    /// Whether a token is configured.
    pub fn auth_required(&self) -> bool {
        self.token.is_some()
    }

    /// Whether `candidate` is the access token (constant time).
    pub fn token_matches(&self, candidate: &str) -> bool {
        self.token
            .as_deref()
            .is_some_and(|t| constant_time_eq(t.as_bytes(), candidate.as_bytes()))
    }

    /// The `Set-Cookie` value that logs a browser in.
    pub fn session_cookie(&self) -> Option<HeaderValue> {
        let value = self.session.as_ref()?;
        HeaderValue::from_str(&format!(
            "{SESSION_COOKIE}={value}; HttpOnly; SameSite=Strict; Path=/"
        ))
        .ok()
    }

    pub(crate) fn host_allowed(&self, host: &str) -> bool {
        let name = host_name(host).to_ascii_lowercase();
        if name.is_empty() {
            return false;
        }
        if name == "localhost" || name.ends_with(".localhost") {
            return true;
        }
        if name
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok()
        {
            return true;
        }
        self.allowed_hosts.iter().any(|h| h == &name)
    }

    fn bearer_ok(&self, headers: &HeaderMap) -> Option<bool> {
        Some(self.token_matches(bearer(headers)?))
    }

    fn cookie_ok(&self, headers: &HeaderMap) -> bool {
        let Some(expected) = &self.session else {
            return false;
        };
        cookies(headers, SESSION_COOKIE)
            .any(|value| constant_time_eq(value.as_bytes(), expected.as_bytes()))
    }

    /// Checks one request; `Err` is the response to send instead.
    pub fn check(
        &self,
        method: &Method,
        path: &str,
        headers: &HeaderMap,
        authority: Option<&str>,
    ) -> Result<(), ApiError> {
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .or(authority)
            .unwrap_or_default();
        if !self.host_allowed(host) {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "forbidden_host",
                "this server answers only requests addressed to localhost or an IP address; \
                 add the name to `allowed_hosts` in config.toml to reach it through another name",
            ));
        }
        let app_file =
            matches!(*method, Method::GET | Method::HEAD) && crate::static_app::is_app_path(path);
        // A signed file URL (`routes/signed_files.rs`) is its own credential, made for a
        // bubble's `<img>`/`<audio>` (an opaque origin): its handler checks the signature.
        let signed = matches!(*method, Method::GET | Method::HEAD)
            && path.starts_with(crate::routes::signed_files::PREFIX);
        // A sandboxed frame (a bubble's script, a plugin) has an opaque origin and reaches the
        // library only through the app's bridge, never by calling the API itself.
        if !app_file
            && !signed
            && headers
                .get(header::ORIGIN)
                .is_some_and(|o| o.as_bytes() == b"null")
        {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "opaque_origin",
                "requests from an opaque origin (a sandboxed frame) are refused; scripts in \
                 messages reach the library through the app's tavo bridge",
            ));
        }
        let changes_state = !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS);
        if changes_state {
            if let Some(origin) = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok())
                && !self.host_allowed(origin_host(origin))
            {
                return Err(csrf(
                    "the request comes from another web site (Origin header)",
                ));
            }
            if headers
                .get("sec-fetch-site")
                .is_some_and(|v| v.as_bytes() == b"cross-site")
            {
                return Err(csrf(
                    "the request comes from another web site (Sec-Fetch-Site)",
                ));
            }
        }
        // The browser app's files (everything outside /api/) are public: the login screen must
        // load before the token is known. They hold nothing of the library.
        let public = app_file || signed || PUBLIC.iter().any(|(m, p)| *m == method && *p == path);
        let bearer = self.bearer_ok(headers);
        if bearer == Some(false) {
            return Err(unauthorized("the bearer token is wrong"));
        }
        if self.token.is_some() && !public && bearer.is_none() && !self.cookie_ok(headers) {
            return Err(unauthorized(
                "this server needs its access token: send `Authorization: Bearer <token>` \
                 or log in with POST /api/session",
            ));
        }
        if changes_state && bearer.is_none() && !headers.contains_key(CSRF_HEADER) {
            return Err(csrf(
                "requests that change anything must carry the header `X-Tavo-Request: 1` \
                 (or an Authorization header)",
            ));
        }
        Ok(())
    }
}

/// The token of an `Authorization: Bearer …` header (trimmed), if the request has one.
pub(crate) fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    value
        .strip_prefix("Bearer ")
        .or_else(|| value.strip_prefix("bearer "))
        .map(str::trim)
}

/// The values of every cookie named `name` the request carries.
pub(crate) fn cookies<'a>(headers: &'a HeaderMap, name: &'a str) -> impl Iterator<Item = &'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .filter(move |(n, _)| *n == name)
        .map(|(_, value)| value)
}

/// The middleware: runs [`Guard::check`] before the route.
pub async fn guard(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let authority = request.uri().authority().map(|a| a.as_str().to_owned());
    match guard.check(
        request.method(),
        request.uri().path(),
        request.headers(),
        authority.as_deref(),
    ) {
        Ok(()) => next.run(request).await,
        Err(e) => {
            let unauthorized = e.status == StatusCode::UNAUTHORIZED;
            let mut response = e.into_response();
            if unauthorized {
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            response
        }
    }
}

fn unauthorized(message: &str) -> ApiError {
    ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
}

fn csrf(message: &str) -> ApiError {
    ApiError::new(StatusCode::FORBIDDEN, "csrf", message)
}

/// The cookie value of a token: a digest, so a leaked cookie jar does not leak the token.
fn session_value(token: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"tavo-session-v1:");
    hasher.update(token.as_bytes());
    hex::encode(hasher.finalize())
}

/// `host:port`, `[v6]:port` or `host` → the host name.
fn host_name(host: &str) -> &str {
    let host = host.trim();
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or_default();
    }
    match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    }
}

/// `http://host:port` → `host:port`.
fn origin_host(origin: &str) -> &str {
    origin.split_once("://").map_or(origin, |(_, rest)| rest)
}

pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(token: Option<&str>) -> Guard {
        let mut c = ServeConfig::local("/tmp/none");
        c.token = token.map(str::to_owned);
        c.allowed_hosts = vec!["tavo.lan".into()];
        Guard::new(&c)
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            if let Ok(v) = HeaderValue::from_str(v) {
                h.append(*k, v);
            }
        }
        h
    }

    #[test]
    fn host_names() {
        let g = guard(None);
        for ok in [
            "localhost:7860",
            "127.0.0.1:7860",
            "[::1]:7860",
            "app.localhost",
            "tavo.lan:80",
            "TAVO.LAN",
        ] {
            assert!(g.host_allowed(ok), "{ok}");
        }
        for bad in [
            "evil.example:7860",
            "",
            "localhost.evil.example",
            "127.0.0.1.nip.io",
        ] {
            assert!(!g.host_allowed(bad), "{bad}");
        }
    }

    /// One request and what the guard answers: `Ok(())` or the error code.
    struct Case {
        what: &'static str,
        token: Option<&'static str>,
        method: Method,
        path: &'static str,
        headers: &'static [(&'static str, &'static str)],
        expect: Result<(), &'static str>,
    }

    const TOKEN: &str = "0123456789abcdef";
    const HOST: (&str, &str) = ("host", "127.0.0.1:7860");

    fn cases() -> Vec<Case> {
        let case = |what, token, method, path, headers, expect| Case {
            what,
            token,
            method,
            path,
            headers,
            expect,
        };
        let t = Some(TOKEN);
        vec![
            case(
                "DNS rebinding: a foreign Host",
                None,
                Method::GET,
                "/api/ops",
                &[("host", "evil.example:7860")],
                Err("forbidden_host"),
            ),
            case(
                "no Host at all",
                None,
                Method::GET,
                "/api/ops",
                &[],
                Err("forbidden_host"),
            ),
            case(
                "health is public with a token set",
                t,
                Method::GET,
                "/api/health",
                &[HOST],
                Ok(()),
            ),
            case(
                "the app's files are public",
                t,
                Method::GET,
                "/chats/3",
                &[HOST],
                Ok(()),
            ),
            case(
                "the API needs the token",
                t,
                Method::GET,
                "/api/ops",
                &[HOST],
                Err("unauthorized"),
            ),
            case(
                "a wrong bearer token",
                t,
                Method::GET,
                "/api/ops",
                &[HOST, ("authorization", "Bearer nope")],
                Err("unauthorized"),
            ),
            case(
                "a wrong bearer on a public route",
                t,
                Method::GET,
                "/api/health",
                &[HOST, ("authorization", "Bearer nope")],
                Err("unauthorized"),
            ),
            case(
                "the right bearer writes without the CSRF header",
                t,
                Method::POST,
                "/api/ops/x",
                &[HOST, ("authorization", "Bearer 0123456789abcdef")],
                Ok(()),
            ),
            case(
                "a session cookie reads",
                t,
                Method::GET,
                "/api/ops",
                &[HOST, ("cookie", "COOKIE")],
                Ok(()),
            ),
            case(
                "a session cookie alone cannot write",
                t,
                Method::POST,
                "/api/ops/x",
                &[HOST, ("cookie", "COOKIE")],
                Err("csrf"),
            ),
            case(
                "a session cookie with the CSRF header writes",
                t,
                Method::POST,
                "/api/ops/x",
                &[HOST, ("cookie", "COOKIE"), (CSRF_HEADER, "1")],
                Ok(()),
            ),
            case(
                "a forged cookie",
                t,
                Method::GET,
                "/api/ops",
                &[HOST, ("cookie", "tavo_session=0123456789abcdef")],
                Err("unauthorized"),
            ),
            case(
                "a bare form post",
                None,
                Method::POST,
                "/api/ops/x",
                &[HOST],
                Err("csrf"),
            ),
            case(
                "another site's Origin",
                None,
                Method::POST,
                "/api/ops/x",
                &[HOST, (CSRF_HEADER, "1"), ("origin", "https://evil.example")],
                Err("csrf"),
            ),
            case(
                "our own Origin",
                None,
                Method::POST,
                "/api/ops/x",
                &[
                    HOST,
                    (CSRF_HEADER, "1"),
                    ("origin", "http://127.0.0.1:7860"),
                ],
                Ok(()),
            ),
            case(
                "Sec-Fetch-Site: cross-site",
                None,
                Method::POST,
                "/api/ops/x",
                &[HOST, (CSRF_HEADER, "1"), ("sec-fetch-site", "cross-site")],
                Err("csrf"),
            ),
            case(
                "an opaque origin (a sandboxed bubble) cannot write",
                None,
                Method::POST,
                "/api/ops/x",
                &[HOST, (CSRF_HEADER, "1"), ("origin", "null")],
                Err("opaque_origin"),
            ),
            case(
                "an opaque origin cannot read",
                None,
                Method::GET,
                "/api/ops",
                &[HOST, ("origin", "null")],
                Err("opaque_origin"),
            ),
            case(
                "an opaque origin cannot read even with a cookie",
                t,
                Method::GET,
                "/api/ops",
                &[HOST, ("cookie", "COOKIE"), ("origin", "null")],
                Err("opaque_origin"),
            ),
            case(
                "an opaque origin may still load the app's files",
                None,
                Method::GET,
                "/",
                &[HOST, ("origin", "null")],
                Ok(()),
            ),
        ]
    }

    #[test]
    fn the_guard_answers_each_request_as_the_table_says() {
        let cookie = format!("a=b; {SESSION_COOKIE}={}", session_value(TOKEN));
        for c in cases() {
            let g = guard(c.token);
            let pairs: Vec<(&'static str, &str)> = c
                .headers
                .iter()
                .map(|&(k, v)| (k, if v == "COOKIE" { cookie.as_str() } else { v }))
                .collect();
            let got = g
                .check(&c.method, c.path, &headers(&pairs), None)
                .map_err(|e| e.code);
            assert_eq!(got, c.expect, "{}", c.what);
        }
    }

    #[test]
    fn session_cookie_holds_a_digest() {
        let g = guard(Some("0123456789abcdef"));
        let cookie = g.session_cookie().expect("cookie");
        let text = cookie.to_str().unwrap_or_default();
        assert!(!text.contains("0123456789abcdef"));
        assert!(text.contains("HttpOnly") && text.contains("SameSite=Strict"));
    }
}

#[cfg(test)]
mod proptests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any Host header is handled without a panic, and a name that is neither an IP
        /// literal, localhost nor configured never passes.
        #[test]
        fn host_check_never_admits_foreign_names(host in "\\PC{0,40}", port in proptest::option::of(0u16..)) {
            let mut c = ServeConfig::local("/tmp/none");
            c.allowed_hosts = vec!["tavo.lan".into()];
            let g = Guard::new(&c);
            let header = match port { Some(p) => format!("{host}:{p}"), None => host.clone() };
            let allowed = g.host_allowed(&header);
            let name = host_name(&header).to_ascii_lowercase();
            let expected = name == "localhost"
                || name.ends_with(".localhost")
                || name == "tavo.lan"
                || name.trim_start_matches('[').trim_end_matches(']').parse::<std::net::IpAddr>().is_ok();
            prop_assert_eq!(allowed, expected && !name.is_empty());
        }

        /// Arbitrary headers never panic the guard, and a state change without the bearer
        /// header or the CSRF header is always refused.
        #[test]
        fn guard_is_total_and_refuses_bare_writes(auth in "\\PC{0,30}", cookie in "\\PC{0,60}", origin in "\\PC{0,30}") {
            let mut c = ServeConfig::local("/tmp/none");
            c.token = Some("0123456789abcdef".into());
            let g = Guard::new(&c);
            let mut h = HeaderMap::new();
            h.insert(header::HOST, HeaderValue::from_static("localhost"));
            for (name, value) in [(header::COOKIE, &cookie), (header::ORIGIN, &origin)] {
                if let Ok(v) = HeaderValue::from_str(value) {
                    h.insert(name, v);
                }
            }
            if let Ok(v) = HeaderValue::from_str(&auth) {
                h.insert(header::AUTHORIZATION, v);
            }
            let result = g.check(&Method::POST, "/api/ops/x", &h, None);
            let bearer_ok = auth.strip_prefix("Bearer ").or_else(|| auth.strip_prefix("bearer ")).map(str::trim) == Some("0123456789abcdef");
            if !bearer_ok {
                prop_assert!(result.is_err());
            }
        }
    }
}
