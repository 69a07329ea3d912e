//! Whole-asset reads and writes with optimistic concurrency, and the chat message pages.
//!
//! `PUT /api/library/{kind}/{id}` must name the `revision` it read (in the body or as
//! `If-Match`); the store writes only if it is still current, so two clients editing the same
//! character get a 409 for the second write instead of a silent overwrite. The asset is parsed
//! and validated as its model type before anything is written; the error names the field path.

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tavo_model::AssetKind;
use tavo_model::{
    Character, Chat, ChatId, Lorebook, Message, Persona, Preset, RegexGroup, ValidationErrors,
};
use tavo_store::{Asset, AssetSummary, Store, StoreError};

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
        state.blocking(move |s| s.asset_summaries(kind)).await?,
    ))
}

/// Creates an asset from its JSON (TavoJS shape; `id` and `revision` are ignored). The asset
/// is validated as its model type first; the error names the field path.
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
        .blocking_api(move |s| create_typed(s, kind, data))
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
        .blocking(move |s| s.asset_json(kind, id))
        .await?
        .ok_or_else(|| ApiError::not_found(format!("{kind} {id} not found")))?;
    let mut headers = HeaderMap::new();
    if let Some(rev) = value.get("revision").and_then(Value::as_u64)
        && let Ok(v) = header::HeaderValue::from_str(&format!("\"{rev}\""))
    {
        headers.insert(header::ETAG, v);
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
    data.insert("id".into(), json!(id));
    let revision = state
        .blocking_api(move |s| write_typed(s, kind, data, revision))
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
    let existed = state
        .blocking(move |s| match kind {
            AssetKind::Chat => s.chat_delete(ChatId(id)),
            other => s.asset_delete(other, id),
        })
        .await?;
    if !existed {
        return Err(ApiError::not_found(format!("{kind} {id} not found")));
    }
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

fn write_typed(
    store: &Store,
    kind: AssetKind,
    data: Map<String, Value>,
    revision: u64,
) -> ApiResult<u64> {
    let value = Value::Object(data);
    match kind {
        AssetKind::Character => write_one::<Character>(store, value, revision, Character::validate),
        AssetKind::Persona => write_one::<Persona>(store, value, revision, Persona::validate),
        AssetKind::Preset => write_one::<Preset>(store, value, revision, Preset::validate),
        AssetKind::Lorebook => write_one::<Lorebook>(store, value, revision, Lorebook::validate),
        AssetKind::Regex => write_one::<RegexGroup>(store, value, revision, RegexGroup::validate),
        AssetKind::Chat => write_one::<Chat>(store, value, revision, Chat::validate),
    }
}

fn create_typed(store: &Store, kind: AssetKind, data: Map<String, Value>) -> ApiResult<i64> {
    let value = Value::Object(data);
    match kind {
        AssetKind::Character => create_one::<Character>(store, value, Character::validate),
        AssetKind::Persona => create_one::<Persona>(store, value, Persona::validate),
        AssetKind::Preset => create_one::<Preset>(store, value, Preset::validate),
        AssetKind::Lorebook => create_one::<Lorebook>(store, value, Lorebook::validate),
        AssetKind::Regex => create_one::<RegexGroup>(store, value, RegexGroup::validate),
        AssetKind::Chat => create_one::<Chat>(store, value, Chat::validate),
    }
}

fn parse_valid<A: Asset + DeserializeOwned>(
    value: Value,
    validate: fn(&A) -> Result<(), ValidationErrors>,
) -> ApiResult<A> {
    let kind = A::KIND;
    let asset: A =
        serde_json::from_value(value).map_err(|e| ApiError::bad_request(format!("{kind}: {e}")))?;
    validate(&asset).map_err(|e| {
        ApiError::bad_request(format!("{kind}: {e}")).with_details(json!({ "fields": e }))
    })?;
    Ok(asset)
}

fn create_one<A: Asset + DeserializeOwned>(
    store: &Store,
    value: Value,
    validate: fn(&A) -> Result<(), ValidationErrors>,
) -> ApiResult<i64> {
    let asset = parse_valid::<A>(value, validate)?;
    Ok(A::raw_id(store.create(&asset)?))
}

fn write_one<A: Asset + DeserializeOwned>(
    store: &Store,
    value: Value,
    revision: u64,
    validate: fn(&A) -> Result<(), ValidationErrors>,
) -> ApiResult<u64> {
    let asset = parse_valid::<A>(value, validate)?;
    store.update(&asset, Some(revision)).map_err(ApiError::from)
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
        .blocking(move |s| {
            s.read(|tx| {
                if tx.get::<Chat>(chat)?.is_none() {
                    return Err(StoreError::NotFound {
                        kind: "chat",
                        id: id.to_string(),
                    });
                }
                let total = tx.message_count(chat)?;
                let end = q.before.map_or(total, |b| b.min(total));
                let start = end.saturating_sub(limit);
                let messages = if end == 0 {
                    Vec::new()
                } else {
                    tx.messages_range(chat, start, Some(end - 1))?
                };
                Ok(MessagePage {
                    messages,
                    total,
                    has_more: start > 0,
                })
            })
        })
        .await?;
    Ok(Json(page))
}
