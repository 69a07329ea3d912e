//! `GET /api/health` (no authentication) and the browser session: `POST /api/session` logs a
//! page in by setting the HttpOnly session cookie, `DELETE /api/session` logs it out.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::security::SESSION_COOKIE;
use crate::state::AppState;

/// The health answer.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Health {
    /// Always `ok` when the server answers.
    pub status: &'static str,
    /// The server's version (tavo's own release).
    pub version: &'static str,
    /// The Tavo version whose contracts tavo implements (TavoJS, plugins, tool calling): what
    /// `tavo.app.version()` answers, since scripts and plugins gate on Tavo releases.
    pub tavo_version: &'static str,
    /// Whether the other routes need the access token.
    pub auth_required: bool,
    /// The library's database: `{kind: "sqlite"|"postgres", ok, latencyMs, error?}`. When it
    /// does not answer, `status` is `degraded` and the answer is `503`.
    #[schema(value_type = Object)]
    pub database: serde_json::Value,
}

/// Liveness, without authentication.
#[utoipa::path(get, path = "/api/health", tag = "server",
    responses((status = 200, description = "The server and its database answer", body = Health),
              (status = 503, description = "The database does not answer", body = Health)))]
pub async fn health(State(state): State<AppState>) -> Response {
    let store = state.store.clone();
    let database = tokio::task::spawn_blocking(move || tavo_tools::reads::database_health(&store))
        .await
        .unwrap_or_else(|_| serde_json::json!({"ok": false}));
    let ok = database["ok"] == true;
    let body = Json(Health {
        status: if ok { "ok" } else { "degraded" },
        version: env!("CARGO_PKG_VERSION"),
        tavo_version: tavo_tools::plugins::TAVO_COMPAT_VERSION,
        auth_required: state.guard.auth_required(),
        database,
    });
    if ok {
        body.into_response()
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, body).into_response()
    }
}

/// A login.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Login {
    /// The access token.
    pub token: String,
}

/// Logs a browser in: checks the token and sets the session cookie (HttpOnly, SameSite=Strict).
#[utoipa::path(post, path = "/api/session", tag = "server", request_body = Login,
    responses(
        (status = 204, description = "Logged in; the cookie is set"),
        (status = 401, description = "Wrong token", body = ErrorBody)))]
pub async fn login(State(state): State<AppState>, Json(login): Json<Login>) -> ApiResult<Response> {
    if !state.guard.auth_required() {
        return Ok(StatusCode::NO_CONTENT.into_response());
    }
    if !state.guard.token_matches(login.token.trim()) {
        return Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "the token is wrong; it is the one given to `tavo serve` with --token, TAVO_TOKEN or config.toml",
        ));
    }
    let mut response = StatusCode::NO_CONTENT.into_response();
    if let Some(cookie) = state.guard.session_cookie() {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    Ok(response)
}

/// Logs a browser out (clears the session cookie).
#[utoipa::path(delete, path = "/api/session", tag = "server",
    responses((status = 204, description = "The cookie is cleared")))]
pub async fn logout() -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    if let Ok(v) = HeaderValue::from_str(&format!(
        "{SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0"
    )) {
        response.headers_mut().insert(header::SET_COOKIE, v);
    }
    response
}
