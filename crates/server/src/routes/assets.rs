//! Whole-asset reads and writes with optimistic concurrency, and the chat message pages.
//!
//! `PUT /api/library/{kind}/{id}` must name the `revision` it read (in the body or as
//! `If-Match`); the store writes only if it is still current, so two clients editing the same
//! character get a 409 for the second write instead of a silent overwrite. Writes are
//! [`tavo_tools::assets`] and [`tavo_tools::chats`], the functions the model's tools and the CLI
//! call: the asset is parsed and validated as its model type (CCv3 names accepted for a
//! character, `firstMes` required on create) before anything is written, and the error names
//! the field path (`character.firstMes`) in the tools' envelope.

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tavo_model::AssetKind;
use tavo_model::{ChatId, Message};
use tavo_store::{AssetSummary, Store};

use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::state::AppState;

/// Parses the `{kind}` path segment.
pub fn parse_kind(kind: &str) -> ApiResult<AssetKind> {
    AssetKind::parse(kind).ok_or_else(|| {
        ApiError::not_found(format!(
            "unknown kind {kind:?}; use character, persona, preset, lorebook, regex or chat"
        ))
    })
}

/// One asset's listing row.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SummaryDoc {
    /// Id.
    pub id: i64,
    /// Name.
    pub name: String,
    /// Current revision.
    pub revision: u64,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339.
    pub updated_at: String,
}

/// Every asset of a kind (summaries).
#[utoipa::path(get, path = "/api/library/{kind}", tag = "library",
    params(("kind" = String, Path, description = "character, persona, preset, lorebook, regex or chat")),
    responses((status = 200, description = "Summaries", body = [SummaryDoc]),
              (status = 404, description = "Unknown kind", body = ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    Path(kind): Path<String>,
) -> ApiResult<Json<Vec<AssetSummary>>> {
    let kind = parse_kind(&kind)?;
    Ok(Json(
        state
            .blocking_api(move |s| Ok(tavo_tools::reads::summaries(s, kind)?))
            .await?,
    ))
}

/// Creates an asset from its JSON (TavoJS shape; `id` and `revision` are ignored). The asset
/// is validated as its model type first; the error names the field path. A chat's body is
/// `tavo_chat_create`'s `chat`: every binding is checked in one transaction, the greeting
/// becomes message 0 and the characters' own lorebooks and regex groups are bound.
#[utoipa::path(post, path = "/api/library/{kind}", tag = "library",
    params(("kind" = String, Path, description = "character, persona, preset, lorebook, regex or chat")),
    request_body(content = Object, description = "The asset"),
    responses((status = 201, description = "Created", body = Written),
              (status = 400, description = "Invalid asset (the message names the field path)", body = ErrorBody),
              (status = 404, description = "Unknown kind", body = ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    Path(kind): Path<String>,
    Json(body): Json<Value>,
) -> ApiResult<(StatusCode, Json<Written>)> {
    let kind = parse_kind(&kind)?;
    let Value::Object(mut data) = body else {
        return Err(ApiError::bad_request(format!(
            "the body must be the {kind} as a JSON object"
        )));
    };
    data.shift_remove("id");
    data.shift_remove("revision");
    let id = state
        .blocking_api(move |s| match kind {
            AssetKind::Chat => create_chat(s, data),
            _ => Ok(tavo_tools::assets::create_asset(s, kind, data)?),
        })
        .await?;
    state.hub.library(kind.as_str(), "created", Some(id));
    Ok((StatusCode::CREATED, Json(Written { id, revision: 1 })))
}

/// One asset as TavoJS-shaped JSON, with `id` and `revision`.
#[utoipa::path(get, path = "/api/library/{kind}/{id}", tag = "library",
    params(("kind" = String, Path), ("id" = i64, Path)),
    responses((status = 200, description = "The asset", body = Object),
              (status = 404, description = "No such asset", body = ErrorBody)))]
pub async fn get(
    State(state): State<AppState>,
    Path((kind, id)): Path<(String, i64)>,
) -> ApiResult<(HeaderMap, Json<Value>)> {
    let kind = parse_kind(&kind)?;
    let value = state
        .blocking_api(move |s| Ok(tavo_tools::reads::asset(s, kind, id)?))
        .await?
        .ok_or_else(|| ApiError::not_found(format!("{kind} {id} not found")))?;
    let headers = revision_etag(&value);
    Ok((headers, Json(value)))
}

/// An asset's `revision` as its `ETag`.
fn revision_etag(value: &Value) -> HeaderMap {
    let mut headers = HeaderMap::new();
    if let Some(rev) = value.get("revision").and_then(Value::as_u64)
        && let Ok(v) = header::HeaderValue::from_str(&format!("\"{rev}\""))
    {
        headers.insert(header::ETAG, v);
    }
    headers
}

/// Which entries of a lorebook.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct EntriesQuery {
    /// The first entry, 0-based, in book order (default 0).
    pub offset: Option<u64>,
    /// Entries in this page (1–5,000, default 500).
    pub limit: Option<u64>,
}

/// Most entries one page may hold: a page of the largest entries stays a few megabytes.
const ENTRY_PAGE_MAX: u64 = 5_000;

/// A lorebook as `GET /api/library/lorebook/{id}` gives it, with only `limit` of its entries
/// from `offset`, plus `entryCount` (all its entries) and `offset`. The workbench's editor
/// draws a book's first rows from the first page and reads the rest in pages at the same
/// `revision`, instead of waiting for a 10,000-entry book as one answer.
#[utoipa::path(get, path = "/api/library/lorebook/{id}/entries", tag = "library",
    params(("id" = i64, Path), EntriesQuery),
    responses((status = 200, description = "The book with one page of its entries", body = Object),
              (status = 400, description = "A bad offset or limit", body = ErrorBody),
              (status = 404, description = "No such lorebook", body = ErrorBody)))]
pub async fn lorebook_entries(
    State(state): State<AppState>,
    Path(id): Path<i64>,
    Query(q): Query<EntriesQuery>,
) -> ApiResult<(HeaderMap, Json<Value>)> {
    let limit = q.limit.unwrap_or(500);
    if !(1..=ENTRY_PAGE_MAX).contains(&limit) {
        return Err(
            ApiError::bad_request(format!("limit must be 1..={ENTRY_PAGE_MAX}"))
                .with_details(serde_json::json!({ "path": "limit" })),
        );
    }
    let offset = q.offset.unwrap_or(0);
    let mut value = state
        .blocking_api(move |s| Ok(tavo_tools::reads::asset(s, AssetKind::Lorebook, id)?))
        .await?
        .ok_or_else(|| ApiError::not_found(format!("lorebook {id} not found")))?;
    let headers = revision_etag(&value);
    if let Value::Object(book) = &mut value {
        let entries = match book.get_mut("entries") {
            Some(Value::Array(list)) => std::mem::take(list),
            _ => Vec::new(),
        };
        let count = entries.len() as u64;
        let start = usize::try_from(offset.min(count)).unwrap_or(entries.len());
        let page: Vec<Value> = entries
            .into_iter()
            .skip(start)
            .take(usize::try_from(limit).unwrap_or(usize::MAX))
            .collect();
        book.insert("entries".into(), Value::Array(page));
        book.insert("entryCount".into(), Value::from(count));
        book.insert("offset".into(), Value::from(offset));
    }
    Ok((headers, Json(value)))
}

/// The answer to a write.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Written {
    /// Id.
    pub id: i64,
    /// The new revision.
    pub revision: u64,
}

/// Replaces an asset. The body is the whole asset (as `GET` returns it) including the
/// `revision` that was read; `If-Match: "<revision>"` may carry it instead.
#[utoipa::path(put, path = "/api/library/{kind}/{id}", tag = "library",
    params(("kind" = String, Path), ("id" = i64, Path)),
    request_body(content = Object, description = "The asset with the revision it was read at"),
    responses((status = 200, description = "Written", body = Written),
              (status = 400, description = "Invalid asset (the message names the field path) or no revision", body = ErrorBody),
              (status = 404, description = "No such asset", body = ErrorBody),
              (status = 409, description = "Someone else wrote it since that revision", body = ErrorBody)))]
pub async fn replace(
    State(state): State<AppState>,
    Path((kind, id)): Path<(String, i64)>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> ApiResult<Json<Written>> {
    let kind = parse_kind(&kind)?;
    let Value::Object(mut data) = body else {
        return Err(ApiError::bad_request(format!(
            "the body must be the {kind} as a JSON object"
        )));
    };
    let revision = match data.shift_remove("revision") {
        Some(Value::Number(n)) => n.as_u64(),
        Some(_) => {
            return Err(ApiError::bad_request(format!(
                "{kind}.revision must be a number"
            )));
        }
        None => if_match(&headers),
    }
    .ok_or_else(|| {
        ApiError::new(
            StatusCode::PRECONDITION_REQUIRED,
            "revision_required",
            format!(
                "{kind}.revision is required: send the revision you read (or If-Match) so a \
                 concurrent change is not overwritten"
            ),
        )
    })?;
    let revision = state
        .blocking_api(move |s| {
            Ok(tavo_tools::assets::replace_asset(
                s, kind, id, data, revision,
            )?)
        })
        .await?;
    state.hub.library(kind.as_str(), "updated", Some(id));
    Ok(Json(Written { id, revision }))
}

/// Deletes an asset (a chat with its messages, variables and files).
#[utoipa::path(delete, path = "/api/library/{kind}/{id}", tag = "library",
    params(("kind" = String, Path), ("id" = i64, Path)),
    responses((status = 204, description = "Deleted"),
              (status = 404, description = "No such asset", body = ErrorBody)))]
pub async fn delete(
    State(state): State<AppState>,
    Path((kind, id)): Path<(String, i64)>,
) -> ApiResult<StatusCode> {
    let kind = parse_kind(&kind)?;
    // The delete (and the refusal) of `tavo_<kind>_delete` and `tavo delete`.
    state
        .blocking_api(move |s| Ok(tavo_tools::assets::delete_asset(s, kind, id)?))
        .await?;
    state.hub.library(kind.as_str(), "deleted", Some(id));
    Ok(StatusCode::NO_CONTENT)
}

fn if_match(headers: &HeaderMap) -> Option<u64> {
    let v = headers.get(header::IF_MATCH)?.to_str().ok()?;
    v.trim()
        .trim_start_matches("W/")
        .trim_matches('"')
        .parse()
        .ok()
}

/// `POST /api/library/chat`: the body is `tavo_chat_create`'s `chat` (ids, or summaries such as
/// a chat object carries); bindings are checked and the greeting added by the one
/// [`tavo_tools::chats::create_chat`].
fn create_chat(store: &Store, mut data: Map<String, Value>) -> ApiResult<i64> {
    // A chat object as `GET` returns it carries its creation time; a new chat gets its own.
    data.shift_remove("creationDate");
    let new: tavo_tools::chats::NewChat = serde_json::from_value(Value::Object(data))
        .map_err(|e| ApiError::bad_request(format!("chat: {e}")))?;
    Ok(tavo_tools::chats::create_chat(store, new)?.id.0)
}

/// Which page of a chat.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// Messages per page (1–500, default 50).
    pub limit: Option<u64>,
    /// Only messages before this floor (exclusive); absent: the latest page.
    pub before: Option<u64>,
}

/// A page of messages, oldest first.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MessagePage {
    /// The messages, oldest first.
    #[schema(value_type = Vec<Object>)]
    pub messages: Vec<Message>,
    /// Messages in the chat.
    pub total: u64,
    /// Whether older messages exist (request `before` = the first floor of this page).
    pub has_more: bool,
}

/// A page of a chat's messages: the latest by default, or those before a floor.
#[utoipa::path(get, path = "/api/chats/{id}/messages", tag = "chats",
    params(("id" = i64, Path), PageQuery),
    responses((status = 200, description = "The page", body = MessagePage),
              (status = 404, description = "No such chat", body = ErrorBody)))]
pub async fn messages_page(
    State(state): State<AppState>,
    Path(id): Path<i64>,
    Query(q): Query<PageQuery>,
) -> ApiResult<Json<MessagePage>> {
    let limit = q.limit.unwrap_or(50);
    if !(1..=500).contains(&limit) {
        return Err(ApiError::bad_request("limit must be 1..=500"));
    }
    let chat = ChatId(id);
    let page = state
        .blocking_api(move |s| Ok(tavo_tools::reads::message_page(s, chat, q.before, limit)?))
        .await?
        .ok_or_else(|| ApiError::not_found(format!("chat {id} does not exist")))?;
    let page = MessagePage {
        has_more: page.start > 0,
        messages: page.messages,
        total: page.total,
    };
    Ok(Json(page))
}
