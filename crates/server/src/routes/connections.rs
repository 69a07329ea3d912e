//! Provider connections, kept in the settings under `llm.connections` (the same book `tavo
//! connection` edits). API keys are write-only: a key is accepted on add or replace and never
//! returned — every answer masks it (`sk-…cdef`), and a replace without `apiKey` keeps the
//! stored key, since the client never saw it.
//!
//! Every change is one read-modify-write transaction (`tavo_engine::connections`, the path
//! `tavo connection` takes too), so two clients adding connections at the same moment both land.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};
use tavo_engine::connections::{self, BookError};
use tavo_llm::connection::ConnectionError;
use tavo_llm::{Connection, ConnectionBook};

use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::state::AppState;

/// The book as the API shows it: every connection masked.
fn masked(book: &ConnectionBook) -> Value {
    json!({
        "connections": book.connections.iter().map(Connection::masked).collect::<Vec<_>>(),
        "default": book.default,
        "global": book.global,
    })
}

pub(super) fn book_error(e: BookError) -> ApiError {
    match e {
        BookError::Store(s) => s.into(),
        BookError::Connection(c) => conn_error(c),
    }
}

fn conn_error(e: ConnectionError) -> ApiError {
    match e {
        ConnectionError::NotFound(_) => ApiError::not_found(e.to_string()),
        ConnectionError::Exists(_) => {
            ApiError::new(StatusCode::CONFLICT, "conflict", e.to_string())
        }
        ConnectionError::NoDefault
        | ConnectionError::MissingEnv { .. }
        | ConnectionError::Invalid(_) => ApiError::bad_request(e.to_string()),
    }
}

/// Runs a change to the book in one transaction and answers the masked book.
async fn change(
    state: &AppState,
    f: impl FnOnce(&mut ConnectionBook) -> Result<(), ConnectionError> + Send + 'static,
) -> ApiResult<Json<Value>> {
    let ((), book) = state
        .blocking_api(move |store| connections::change_book(store, f).map_err(book_error))
        .await?;
    state.hub.library("connection", "updated", None);
    Ok(Json(masked(&book)))
}

/// Every connection, keys masked, with the default's name and the global parameters.
#[utoipa::path(get, path = "/api/connections", tag = "connections",
    responses((status = 200, description = "`{connections, default, global}`; keys masked", body = Object)))]
pub async fn list(State(state): State<AppState>) -> ApiResult<Json<Value>> {
    let book = state
        .blocking_api(|store| connections::book(store).map_err(book_error))
        .await?;
    Ok(Json(masked(&book)))
}

/// A new connection.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewConnection {
    /// The connection (`name`, `source`, `protocol`, `baseUrl`, `model`, `apiKey` or
    /// `apiKeyEnv`, `parameters`).
    #[serde(flatten)]
    pub connection: Connection,
    /// Make it the default.
    #[serde(default)]
    pub default: bool,
}

/// Adds a connection (the first one becomes the default).
#[utoipa::path(post, path = "/api/connections", tag = "connections",
    request_body(content = Object, description = "`{name, source, protocol, baseUrl, model, apiKey?, apiKeyEnv?, parameters?, default?}`"),
    responses((status = 200, description = "The book, keys masked", body = Object),
              (status = 400, description = "Invalid connection (the message names the field)", body = ErrorBody),
              (status = 409, description = "The name is taken", body = ErrorBody)))]
pub async fn add(
    State(state): State<AppState>,
    Json(new): Json<NewConnection>,
) -> ApiResult<Json<Value>> {
    change(&state, move |book| book.add(new.connection, new.default)).await
}

/// Replaces a connection. Without `apiKey` the stored key is kept; `"apiKey": ""` removes it.
#[utoipa::path(put, path = "/api/connections/{name}", tag = "connections",
    params(("name" = String, Path)),
    request_body(content = Object, description = "The connection; `name` may rename it"),
    responses((status = 200, description = "The book, keys masked", body = Object),
              (status = 400, description = "Invalid connection", body = ErrorBody),
              (status = 404, description = "No such connection", body = ErrorBody)))]
pub async fn replace(
    State(state): State<AppState>,
    Path(name): Path<String>,
    Json(mut new): Json<NewConnection>,
) -> ApiResult<Json<Value>> {
    change(&state, move |book| {
        let old = book.remove(&name)?;
        match new.connection.api_key.as_deref() {
            None => new.connection.api_key = old.api_key,
            Some("") => new.connection.api_key = None,
            Some(_) => {}
        }
        // `add` makes it the default again when it was (removing it left no default).
        book.add(new.connection, new.default)
    })
    .await
}

/// Removes a connection.
#[utoipa::path(delete, path = "/api/connections/{name}", tag = "connections",
    params(("name" = String, Path)),
    responses((status = 200, description = "The book, keys masked", body = Object),
              (status = 404, description = "No such connection", body = ErrorBody)))]
pub async fn remove(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> ApiResult<Json<Value>> {
    change(&state, move |book| book.remove(&name).map(drop)).await
}

/// Makes a connection the default.
#[utoipa::path(post, path = "/api/connections/{name}/default", tag = "connections",
    params(("name" = String, Path)),
    responses((status = 200, description = "The book, keys masked", body = Object),
              (status = 404, description = "No such connection", body = ErrorBody)))]
pub async fn make_default(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> ApiResult<Json<Value>> {
    change(&state, move |book| book.set_default(&name)).await
}

/// The provider catalogue (`tavo connection sources`): `[{id, name, protocol, baseUrl, note}]`,
/// `baseUrl` null where it depends on the account (or for Custom). The connection form starts
/// from it.
#[utoipa::path(get, path = "/api/connection-sources", tag = "connections",
    responses((status = 200, description = "`[{id, name, protocol, baseUrl, note}]`", body = Object)))]
pub async fn sources() -> Json<Value> {
    Json(serde_json::to_value(tavo_llm::catalogue::sources()).unwrap_or_default())
}
