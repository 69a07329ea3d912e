//! The front door of a server with accounts: the session routes, the admin routes, and the
//! hand-over of every other request to its user's library.
//!
//! - `GET /api/health` answers without a session (`accounts: true` tells the app to show its
//!   name-and-password login).
//! - `POST /api/session {name, password}` logs in: a new session (never one the browser sent:
//!   no fixation) in an HttpOnly, `SameSite=Strict` cookie, `Secure` when the request came
//!   over TLS (`X-Forwarded-Proto: https` from the proxy that terminates it). Throttled per
//!   account and per address (`429` "try again in N s", with `Retry-After`).
//! - `GET /api/session` → `{user}`; `DELETE /api/session[?everywhere=true]` logs out this
//!   browser or every session of the user (their open event streams end too).
//! - `/api/admin/users…` (admins only, `admin.rs`).
//! - `/api/shared…` and `/api/admin/shared…`: the shared library (`shared.rs`).
//! - `POST /mcp` with a user's MCP token reaches that user's MCP server.
//! - `GET /u/<id>/api/signed/…`: a signed file URL of user `<id>`'s library (a bubble's
//!   sandboxed frame sends no cookie; the signature, which covers the prefix, is the key).
//! - Anything else needs a session and goes to the user's own router, unchanged; without one
//!   the app's files are served (its login page) and everything else is `401`. The operator's
//!   limits come first: a request that would start a reply beyond `max_replies_per_user` is
//!   `429 limit_exceeded`, a write to a library over `quota_mb_per_user` is `507
//!   quota_exceeded` (deletions always pass), and neither has written anything.
//!
//! The host check and the CSRF rules of the single-user guard apply here first, then again in
//! the user's router.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::{ConnectInfo, FromRequest, Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, delete, get, post, put};
use serde::Deserialize;
use serde_json::json;
use tavo_accounts::{AccountError, SessionToken, User};
use tower::ServiceExt as _;

use super::tenants::{Tenant, Tenants};
use super::{admin, shared};
use crate::error::{ApiError, ApiResult};
use crate::security::{self, Guard};

/// The session cookie of a server with accounts.
pub const ACCOUNT_COOKIE: &str = "tavo_account";

/// What the door holds.
pub struct Door {
    /// The open libraries and the registry.
    pub tenants: Tenants,
    /// Host check and CSRF (no token: sessions authenticate).
    pub guard: Arc<Guard>,
    /// Each user's library size as last measured, and when (a walk of the folder is not free).
    pub usage: std::sync::Mutex<std::collections::HashMap<i64, (std::time::Instant, u64)>>,
    /// What admins publish for everyone.
    pub shared: super::shared::SharedLibrary,
}

/// How long a measured library size is trusted.
const USAGE_FRESH: std::time::Duration = std::time::Duration::from_secs(10);

/// Whether a request starts a reply (a message sent, a reply asked for, a generation).
fn starts_reply(method: &Method, path: &str) -> bool {
    let Some(rest) = path.strip_prefix("/api/chats/") else {
        return false;
    };
    let mut parts = rest.split('/');
    let id_ok = parts
        .next()
        .is_some_and(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()));
    *method == Method::POST
        && id_ok
        && matches!(
            (parts.next(), parts.next()),
            (Some("messages" | "replies" | "generate"), None)
        )
}

impl Door {
    /// The operator's limits for one user, checked before the request reaches their library,
    /// so a refused request has written nothing.
    pub(super) async fn admit(
        &self,
        tenant: &Tenant,
        method: &Method,
        path: &str,
    ) -> ApiResult<()> {
        let limits = self.tenants.limits();
        if starts_reply(method, path) {
            let live = tenant.state.replies.live().len();
            if live >= limits.max_replies {
                return Err(ApiError::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    "limit_exceeded",
                    format!(
                        "you have {live} replies running and this server allows {} per user; wait for one to end or stop one",
                        limits.max_replies
                    ),
                ));
            }
        }
        let writes = !matches!(
            *method,
            Method::GET | Method::HEAD | Method::OPTIONS | Method::DELETE
        );
        if let (Some(quota), true) = (limits.quota_bytes, writes) {
            let used = self.usage_of(&tenant.user).await;
            if used >= quota {
                let mb = |b: u64| b.div_ceil(1024 * 1024);
                return Err(ApiError::new(
                    StatusCode::INSUFFICIENT_STORAGE,
                    "quota_exceeded",
                    format!(
                        "your library uses {} MB of its {} MB; delete chats, files or images to write again",
                        mb(used),
                        mb(quota)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A user's library size, measured at most every [`USAGE_FRESH`].
    async fn usage_of(&self, user: &User) -> u64 {
        let now = std::time::Instant::now();
        if let Some((at, bytes)) = self
            .usage
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&user.id)
            && now.duration_since(*at) < USAGE_FRESH
        {
            return *bytes;
        }
        let accounts = self.tenants.accounts.clone();
        let who = user.clone();
        let bytes = tokio::task::spawn_blocking(move || accounts.usage(&who))
            .await
            .unwrap_or(0);
        self.usage
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(user.id, (now, bytes));
        bytes
    }
}

/// The door's routes.
pub fn router(door: Arc<Door>) -> Router {
    let guarded = Router::new()
        .route("/api/health", get(health))
        .route("/api/session", get(me).post(login).delete(logout))
        .route("/api/admin/users", get(admin::list).post(admin::add))
        .route(
            "/api/admin/users/{name}",
            put(admin::change).delete(admin::remove),
        )
        .route("/api/shared", get(shared::list))
        .route("/api/shared/{kind}/{id}", get(shared::get))
        .route("/api/shared/{kind}/{id}/avatar", get(shared::avatar))
        .route("/api/shared/{kind}/{id}/copy", post(shared::copy))
        .route("/api/admin/shared", post(shared::publish))
        .route("/api/admin/shared/{kind}/{id}", delete(shared::unpublish))
        .fallback(dispatch)
        .layer(axum::middleware::from_fn_with_state(
            door.guard.clone(),
            security::guard,
        ))
        .layer(axum::middleware::map_response(crate::routes::json_errors));
    Router::new()
        .route("/mcp", any(mcp))
        .route("/u/{id}/api/signed/{*rest}", get(signed))
        .merge(guarded)
        .with_state(door)
}

/// The session token a request's cookie carries.
fn cookie(headers: &HeaderMap) -> Option<SessionToken> {
    security::cookies(headers, ACCOUNT_COOKIE)
        .next()
        .map(SessionToken::from_cookie)
}

pub(super) fn account_error(e: AccountError) -> ApiError {
    match e {
        AccountError::WrongCredentials => {
            ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", e.to_string())
        }
        AccountError::Disabled => ApiError::new(StatusCode::FORBIDDEN, "disabled", e.to_string()),
        AccountError::Throttled(t) => {
            ApiError::new(StatusCode::TOO_MANY_REQUESTS, "throttled", t.to_string())
                .with_details(json!({"retryAfterSeconds": t.retry_after_secs}))
        }
        AccountError::NoSuchUser(_) => ApiError::not_found(e.to_string()),
        AccountError::Exists(_) => ApiError::new(StatusCode::CONFLICT, "conflict", e.to_string()),
        AccountError::BadName(_) | AccountError::BadPassword => {
            ApiError::bad_request(e.to_string())
        }
        AccountError::LastAdmin(_) | AccountError::OwnsRootLibrary(_) => {
            ApiError::new(StatusCode::CONFLICT, "conflict", e.to_string())
        }
        other => ApiError::internal("the accounts registry", other),
    }
}

fn log_in_first() -> ApiError {
    ApiError::new(
        StatusCode::UNAUTHORIZED,
        "unauthorized",
        "log in first: POST /api/session {name, password} (the app shows its login page)",
    )
}

/// The user of the request's session, if it is live.
pub(super) async fn session_user(door: &Door, headers: &HeaderMap) -> ApiResult<Option<User>> {
    let Some(token) = cookie(headers) else {
        return Ok(None);
    };
    let accounts = door.tenants.accounts.clone();
    tokio::task::spawn_blocking(move || accounts.session(&token))
        .await
        .map_err(|e| ApiError::internal("reading the session", e))?
        .map_err(account_error)
}

/// The user of the request's session, or `401`.
pub(super) async fn require_user(door: &Door, headers: &HeaderMap) -> ApiResult<User> {
    session_user(door, headers).await?.ok_or_else(log_in_first)
}

pub(super) async fn tenant(door: &Door, user: &User) -> ApiResult<Tenant> {
    door.tenants
        .get(user)
        .await
        .map_err(|e| ApiError::internal("opening the user's library", e))
}

async fn forward(tenant: Tenant, request: Request) -> Response {
    match tenant.router.oneshot(request).await {
        Ok(r) => r,
        Err(never) => match never {},
    }
}

/// `GET /api/health`: with the database's answer (through the shared library, which is on
/// the same database as every user's); `503` when it does not answer.
async fn health(State(door): State<Arc<Door>>) -> Response {
    let database = match door.shared.store(&door).await {
        Ok(store) => {
            tokio::task::spawn_blocking(move || tavo_tools::reads::database_health(&store))
                .await
                .unwrap_or_else(|_| json!({"ok": false}))
        }
        Err(_) => json!({"ok": false, "error": "the database did not answer; see the server log"}),
    };
    let ok = database["ok"] == true;
    let body = Json(json!({
        "status": if ok { "ok" } else { "degraded" },
        "version": env!("CARGO_PKG_VERSION"),
        "tavoVersion": tavo_tools::plugins::TAVO_COMPAT_VERSION,
        "authRequired": true,
        "accounts": true,
        "database": database,
    }));
    if ok {
        body.into_response()
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, body).into_response()
    }
}

/// A login.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LoginBody {
    name: String,
    password: String,
}

fn user_json(u: &User) -> serde_json::Value {
    json!({"id": u.id, "name": u.name, "admin": u.admin})
}

fn set_cookie(value: &str, max_age: u64, secure: bool) -> Option<HeaderValue> {
    let secure = if secure { "; Secure" } else { "" };
    HeaderValue::from_str(&format!(
        "{ACCOUNT_COOKIE}={value}; HttpOnly; SameSite=Strict; Path=/; Max-Age={max_age}{secure}"
    ))
    .ok()
}

/// Whether the request came over TLS (a proxy that terminates TLS says so).
fn over_tls(headers: &HeaderMap) -> bool {
    headers
        .get("x-forwarded-proto")
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"https"))
}

/// `POST /api/session {name, password}`.
async fn login(State(door): State<Arc<Door>>, request: Request) -> ApiResult<Response> {
    let address = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip())
        .unwrap_or(std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED));
    let secure = over_tls(request.headers());
    let Json(body) = Json::<LoginBody>::from_request(request, &())
        .await
        .map_err(|e| ApiError::bad_request(format!("the body must be {{name, password}}: {e}")))?;
    let accounts = door.tenants.accounts.clone();
    // Argon2id takes tens of milliseconds of CPU: never on the executor.
    let login =
        tokio::task::spawn_blocking(move || accounts.login(&body.name, &body.password, address))
            .await
            .map_err(|e| ApiError::internal("checking the login", e))?
            .map_err(|e| {
                let throttled = match &e {
                    AccountError::Throttled(t) => Some(t.retry_after_secs),
                    _ => None,
                };
                (account_error(e), throttled)
            });
    match login {
        Ok(l) => {
            let mut response = Json(json!({"user": user_json(&l.user)})).into_response();
            if let Some(c) = set_cookie(
                l.token.as_str(),
                tavo_accounts::ABSOLUTE_EXPIRY.as_secs(),
                secure,
            ) {
                response.headers_mut().insert(header::SET_COOKIE, c);
            }
            tracing::info!(user = %l.user.name, "logged in");
            Ok(response)
        }
        Err((e, throttled)) => {
            let mut response = e.into_response();
            if let Some(secs) = throttled
                && let Ok(v) = HeaderValue::from_str(&secs.to_string())
            {
                response.headers_mut().insert(header::RETRY_AFTER, v);
            }
            Ok(response)
        }
    }
}

/// `GET /api/session`: who is logged in.
async fn me(
    State(door): State<Arc<Door>>,
    headers: HeaderMap,
) -> ApiResult<Json<serde_json::Value>> {
    let user = require_user(&door, &headers).await?;
    Ok(Json(json!({"user": user_json(&user)})))
}

/// `?everywhere=`.
#[derive(Debug, Default, Deserialize)]
struct LogoutQuery {
    #[serde(default)]
    everywhere: bool,
}

/// `DELETE /api/session[?everywhere=true]`.
async fn logout(
    State(door): State<Arc<Door>>,
    headers: HeaderMap,
    Query(q): Query<LogoutQuery>,
) -> ApiResult<Response> {
    let secure = over_tls(&headers);
    if let Some(token) = cookie(&headers) {
        let accounts = door.tenants.accounts.clone();
        let user = session_user(&door, &headers).await?;
        let everywhere = q.everywhere;
        let user_id = user.as_ref().map(|u| u.id);
        tokio::task::spawn_blocking(move || match (everywhere, user_id) {
            (true, Some(id)) => accounts.logout_everywhere(id).map(|_| ()),
            _ => accounts.logout(&token),
        })
        .await
        .map_err(|e| ApiError::internal("logging out", e))?
        .map_err(account_error)?;
        if let (true, Some(id)) = (everywhere, user_id) {
            // Every browser of theirs is logged out: their open event streams end now.
            door.tenants.close(id, false);
        }
    }
    let mut response = StatusCode::NO_CONTENT.into_response();
    if let Some(c) = set_cookie("", 0, secure) {
        response.headers_mut().insert(header::SET_COOKIE, c);
    }
    Ok(response)
}

/// Everything else: the user's own router, or the app's files (its login page), or `401`.
async fn dispatch(State(door): State<Arc<Door>>, request: Request) -> Response {
    let user = match session_user(&door, request.headers()).await {
        Ok(u) => u,
        Err(e) => return e.into_response(),
    };
    match user {
        Some(user) => match tenant(&door, &user).await {
            Ok(t) => {
                let (method, path) = (request.method().clone(), request.uri().path().to_owned());
                match door.admit(&t, &method, &path).await {
                    Ok(()) => forward(t, request).await,
                    Err(e) => e.into_response(),
                }
            }
            Err(e) => e.into_response(),
        },
        None => {
            let (method, uri, headers) = (
                request.method().clone(),
                request.uri().clone(),
                request.headers().clone(),
            );
            if matches!(method, Method::GET | Method::HEAD)
                && crate::static_app::is_app_path(uri.path())
            {
                crate::static_app::fallback(method, uri, headers).await
            } else {
                log_in_first().into_response()
            }
        }
    }
}

/// `POST /mcp` with a user's token: that user's MCP server (its own switch, scope and token).
async fn mcp(State(door): State<Arc<Door>>, request: Request) -> Response {
    let bearer = security::bearer(request.headers()).map(str::to_owned);
    let Some(bearer) = bearer else {
        return ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "send your MCP token as `Authorization: Bearer <token>` (`tavo mcp info --user NAME` shows it)",
        )
        .into_response();
    };
    match tenant_of_mcp_token(&door, &bearer).await {
        Some(t) => forward(t, request).await,
        None => ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "no user has this MCP token (or their MCP server is off)",
        )
        .into_response(),
    }
}

async fn tenant_of_mcp_token(door: &Door, bearer: &str) -> Option<Tenant> {
    let users = {
        let accounts = door.tenants.accounts.clone();
        tokio::task::spawn_blocking(move || accounts.list())
            .await
            .ok()?
            .ok()?
    };
    for user in users.into_iter().filter(|u| !u.disabled) {
        let Ok(t) = door.tenants.get(&user).await else {
            continue;
        };
        let store = t.state.store.clone();
        let token = tokio::task::spawn_blocking(move || {
            tavo_engine::settings::secret(&store, tavo_engine::settings::MCP_TOKEN)
        })
        .await
        .ok()
        .and_then(Result::ok)
        .flatten();
        if token.is_some_and(|k| security::constant_time_eq(k.as_bytes(), bearer.as_bytes())) {
            return Some(t);
        }
    }
    None
}

/// `GET /u/<id>/api/signed/…`: handed to user `<id>`'s library without the prefix; its handler
/// checks the signature (which covers the prefix, so another user's id fails it).
async fn signed(
    State(door): State<Arc<Door>>,
    Path((id, _rest)): Path<(i64, String)>,
    request: Request,
) -> Response {
    let accounts = door.tenants.accounts.clone();
    let user = tokio::task::spawn_blocking(move || accounts.list())
        .await
        .ok()
        .and_then(Result::ok)
        .and_then(|users| users.into_iter().find(|u| u.id == id && !u.disabled));
    let Some(user) = user else {
        return ApiError::not_found("no such file").into_response();
    };
    let Ok(t) = tenant(&door, &user).await else {
        return ApiError::not_found("no such file").into_response();
    };
    let prefix = format!("{}{id}", super::tenants::USER_PREFIX);
    let path_and_query = request
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_default();
    let Some(rest) = path_and_query.strip_prefix(&prefix) else {
        return ApiError::not_found("no such file").into_response();
    };
    let Ok(uri) = rest.parse::<Uri>() else {
        return ApiError::not_found("no such file").into_response();
    };
    // A fresh request: this route's own path parameters must not reach the user's router,
    // which would add its parameters to them.
    let (parts, body) = request.into_parts();
    let mut fresh = Request::new(body);
    *fresh.method_mut() = parts.method;
    *fresh.uri_mut() = uri;
    *fresh.headers_mut() = parts.headers;
    if let Some(c) = parts.extensions.get::<ConnectInfo<SocketAddr>>() {
        fresh.extensions_mut().insert(*c);
    }
    forward(t, fresh).await
}
