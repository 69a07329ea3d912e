//! `/api/plugins`: Tavo plugins over HTTP, the operations `tavo plugin` and the MCP
//! `tavo_plugin_*` tools run ([`tavo_tools::plugins`]). Every change is published on the global
//! event stream as `plugin` `{action, id}` so open pages load or drop the plugin at once.
//!
//! Texts are resolved for `?locale=`, else the first `Accept-Language` tag, else English.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};
use tavo_tools::ToolError;
use tavo_tools::error::ErrorCode;
use tavo_tools::plugins::{self, ConfigView, DEFAULT_LOCALE, PluginDetail, PluginSummary};

use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::state::AppState;

/// `?locale=` and `?q=`.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
pub struct PluginQuery {
    /// Locale tag for names and texts (`zh-CN`).
    pub locale: Option<String>,
    /// Search text over id, name, author, description and version.
    pub q: Option<String>,
}

/// `?dryRun=` of an install.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
pub struct InstallQuery {
    /// Check the package and answer what would be installed; store nothing.
    #[serde(default)]
    pub dry_run: bool,
    /// Locale tag for names and texts.
    pub locale: Option<String>,
}

/// `?key=` of a settings reset.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
pub struct ResetQuery {
    /// Reset only this key (default: every saved value).
    pub key: Option<String>,
    /// Locale tag for text defaults.
    pub locale: Option<String>,
}

/// `{enabled}`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct EnabledBody {
    /// Whether the plugin runs.
    pub enabled: bool,
}

/// `{key, value}`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct ConfigBody {
    /// The settings key.
    pub key: String,
    /// The value (checked against the field's type, options and range).
    pub value: Value,
}

/// The caller's locale: the query, else the first `Accept-Language` tag, else English.
fn locale(query: Option<&str>, headers: &HeaderMap) -> String {
    query
        .map(str::to_owned)
        .or_else(|| {
            let accept = headers.get(header::ACCEPT_LANGUAGE)?.to_str().ok()?;
            let first = accept.split(',').next()?.split(';').next()?.trim();
            (!first.is_empty() && first != "*").then(|| first.to_owned())
        })
        .unwrap_or_else(|| DEFAULT_LOCALE.to_owned())
}

/// Tells open pages: `plugin` `{action, id}`, and the `library` event every page already
/// follows (`{kind: "plugin", action, id: null}`; plugin ids are not numbers).
fn publish(state: &AppState, action: &str, id: &str) {
    state
        .hub
        .publish("plugin", json!({"action": action, "id": id}));
    state.hub.library("plugin", action, None);
}

/// `X-Filename`, which the app percent-encodes (file names may be any Unicode); the last path
/// segment only.
fn file_name(headers: &HeaderMap) -> String {
    let raw = headers
        .get("x-filename")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let decoded = percent_decode(raw);
    let name = decoded.rsplit(['/', '\\']).next().unwrap_or("").trim();
    if name.is_empty() {
        "package.tpg".to_owned()
    } else {
        name.to_owned()
    }
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%'
            && let (Some(h), Some(l)) = (
                b.get(i + 1).copied().and_then(hex),
                b.get(i + 2).copied().and_then(hex),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

async fn run<T: Send + 'static>(
    state: &AppState,
    f: impl FnOnce(&tavo_store::Store) -> Result<T, ToolError> + Send + 'static,
) -> ApiResult<T> {
    state
        .blocking_api(move |s| f(s).map_err(ApiError::from))
        .await
}

/// Installed plugins, filtered by `q`.
#[utoipa::path(get, path = "/api/plugins", tag = "plugins", params(PluginQuery),
    responses((status = 200, description = "`[PluginSummary]`: {id, name, version, specVersion, enabled, author?, description?, hasCover, cover?, permissions, tags, installedAt, updatedAt}", body = Object)))]
pub async fn list(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<PluginQuery>,
) -> ApiResult<Json<Vec<PluginSummary>>> {
    let loc = locale(q.locale.as_deref(), &headers);
    let query = q.q.unwrap_or_default();
    let rows = run(&state, move |s| plugins::list(s, &query, &loc)).await?;
    Ok(Json(rows))
}

/// Installs a package sent as the raw body (`application/zip` or `application/octet-stream`;
/// `X-Filename` names it in messages). `?dryRun=true` checks it and stores nothing (`200`);
/// an install answers `201`. A refused package is `422 invalid_plugin` whose message is
/// `FILE: manifest.json: FIELD: problem` and whose details name file, member and field.
#[utoipa::path(post, path = "/api/plugins", tag = "plugins", params(InstallQuery),
    request_body(content_type = "application/zip", content = Vec<u8>, description = "the .tpg / .zip bytes"),
    responses((status = 201, description = "`{plugin, warnings, replaces?, installed: true}`", body = Object),
              (status = 200, description = "dry run: `{plugin, warnings, replaces?, installed: false}`", body = Object),
              (status = 422, description = "the package is refused (`invalid_plugin`)", body = ErrorBody)))]
pub async fn install(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<InstallQuery>,
    body: Bytes,
) -> ApiResult<Response> {
    let loc = locale(q.locale.as_deref(), &headers);
    let file = file_name(&headers);
    if body.is_empty() {
        return Err(ApiError::bad_request(
            "send the .tpg package as the request body",
        ));
    }
    let dry = q.dry_run;
    let done = state
        .blocking_api(move |s| {
            plugins::install(s, &body, &file, dry, &loc).map_err(|e| {
                if e.code == ErrorCode::InvalidArguments {
                    let mut err = ApiError::new(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        "invalid_plugin",
                        e.message,
                    );
                    err.details = e.details;
                    err
                } else {
                    ApiError::from(e)
                }
            })
        })
        .await?;
    if done.installed {
        publish(&state, "installed", &done.plugin.id);
    }
    let status = if done.installed {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(done)).into_response())
}

/// One plugin in full: the summary plus `manifest`, `entry`, resolved `contributes`, `config`,
/// `overrides`, `i18n` and `files`.
#[utoipa::path(get, path = "/api/plugins/{id}", tag = "plugins", params(("id" = String, Path, description = "plugin id"), PluginQuery),
    responses((status = 200, description = "PluginDetail", body = Object), (status = 404, description = "not installed", body = ErrorBody)))]
pub async fn get(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Query(q): Query<PluginQuery>,
) -> ApiResult<Json<PluginDetail>> {
    let loc = locale(q.locale.as_deref(), &headers);
    let d = run(&state, move |s| plugins::get(s, &id, &loc)).await?;
    Ok(Json(d))
}

/// Uninstalls a plugin with its files and settings.
#[utoipa::path(delete, path = "/api/plugins/{id}", tag = "plugins", params(("id" = String, Path, description = "plugin id")),
    responses((status = 204, description = "uninstalled"), (status = 404, description = "not installed", body = ErrorBody)))]
pub async fn uninstall(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    let shown = id.to_ascii_lowercase();
    run(&state, move |s| plugins::uninstall(s, &id)).await?;
    publish(&state, "uninstalled", &shown);
    Ok(StatusCode::NO_CONTENT)
}

/// What the chat page runs: every enabled plugin in full.
#[utoipa::path(get, path = "/api/plugins/runtime", tag = "plugins", params(PluginQuery),
    responses((status = 200, description = "`[PluginDetail]` of enabled plugins", body = Object)))]
pub async fn runtime(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<PluginQuery>,
) -> ApiResult<Json<Vec<PluginDetail>>> {
    let loc = locale(q.locale.as_deref(), &headers);
    let rows = run(&state, move |s| plugins::runtime(s, &loc)).await?;
    Ok(Json(rows))
}

/// Enables or disables a plugin.
#[utoipa::path(put, path = "/api/plugins/{id}/enabled", tag = "plugins", params(("id" = String, Path, description = "plugin id")),
    request_body = EnabledBody,
    responses((status = 200, description = "PluginSummary", body = Object), (status = 404, description = "not installed", body = ErrorBody)))]
pub async fn set_enabled(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Json(body): Json<EnabledBody>,
) -> ApiResult<Json<PluginSummary>> {
    let loc = locale(None, &headers);
    let p = run(&state, move |s| {
        plugins::set_enabled(s, &id, body.enabled, &loc)
    })
    .await?;
    let action = if p.enabled { "enabled" } else { "disabled" };
    publish(&state, action, &p.id);
    Ok(Json(p))
}

/// The effective settings values and the saved overrides.
#[utoipa::path(get, path = "/api/plugins/{id}/config", tag = "plugins", params(("id" = String, Path, description = "plugin id"), PluginQuery),
    responses((status = 200, description = "`{config, overrides}`", body = Object)))]
pub async fn get_config(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Query(q): Query<PluginQuery>,
) -> ApiResult<Json<ConfigView>> {
    let loc = locale(q.locale.as_deref(), &headers);
    let c = run(&state, move |s| plugins::config(s, &id, &loc)).await?;
    Ok(Json(c))
}

/// Saves one settings value, checked against the schema.
#[utoipa::path(put, path = "/api/plugins/{id}/config", tag = "plugins", params(("id" = String, Path, description = "plugin id")),
    request_body = ConfigBody,
    responses((status = 200, description = "`{config, overrides}`", body = Object),
              (status = 400, description = "an unknown key or a value the field refuses", body = ErrorBody)))]
pub async fn set_config(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Json(body): Json<ConfigBody>,
) -> ApiResult<Json<ConfigView>> {
    let loc = locale(None, &headers);
    let shown = id.to_ascii_lowercase();
    let c = run(&state, move |s| {
        plugins::set_config(s, &id, &body.key, body.value, &loc)
    })
    .await?;
    publish(&state, "configured", &shown);
    Ok(Json(c))
}

/// Forgets saved values (`?key=` one, else all) so the defaults apply.
#[utoipa::path(delete, path = "/api/plugins/{id}/config", tag = "plugins", params(("id" = String, Path, description = "plugin id"), ResetQuery),
    responses((status = 200, description = "`{config, overrides}`", body = Object)))]
pub async fn reset_config(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Query(q): Query<ResetQuery>,
) -> ApiResult<Json<ConfigView>> {
    let loc = locale(q.locale.as_deref(), &headers);
    let shown = id.to_ascii_lowercase();
    let c = run(&state, move |s| {
        plugins::reset_config(s, &id, q.key.as_deref(), &loc)
    })
    .await?;
    publish(&state, "configured", &shown);
    Ok(Json(c))
}

/// One package file, typed by its extension. Served with `Content-Security-Policy: sandbox`
/// so that a package page opened directly cannot run as the app's origin; the app mounts
/// plugin HTML in sandboxed frames itself.
#[utoipa::path(get, path = "/api/plugins/{id}/files/{*path}", tag = "plugins",
    params(("id" = String, Path, description = "plugin id"), ("path" = String, Path, description = "package path")),
    responses((status = 200, description = "the file", content_type = "application/octet-stream"), (status = 404, description = "no such file", body = ErrorBody)))]
pub async fn file(
    State(state): State<AppState>,
    Path((id, path)): Path<(String, String)>,
) -> ApiResult<Response> {
    let mime = mime_guess::from_path(&path)
        .first_or_octet_stream()
        .to_string();
    let bytes = run(&state, move |s| plugins::file(s, &id, &path)).await?;
    let mut r = super::bytes_response(&mime, bytes);
    r.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        header::HeaderValue::from_static("sandbox"),
    );
    r.headers_mut().insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-cache"),
    );
    Ok(r)
}
