//! The audit log: read it a page at a time, clear it (seed 000, privacy). Both call
//! `tavo_tools::audit`, as `tavo audit list|clear` does.

use axum::Json;
use axum::extract::{Query, State};
use serde::Deserialize;
use tavo_store::AuditFilter;
use tavo_tools::audit::{AuditCleared, AuditPage, clear_audit, find_audit};

use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::state::AppState;

/// Which page of the log.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Entries per page (1–500, default 50).
    pub limit: Option<u32>,
    /// Only entries older than this id (the previous page's `nextBefore`).
    pub before: Option<i64>,
    /// Only calls made in this chat.
    pub chat: Option<i64>,
    /// Only calls of this tool (`tavo_file_save`).
    pub tool: Option<String>,
    /// Only the call with this id (what a tool card names), newest first.
    pub call: Option<String>,
}

/// Audit entries, newest first: `{entries: [{id, at, action, target?, details}], nextBefore?,
/// capacity}`. A tool call's row (`tool.NAME`) holds its arguments and result envelope; a
/// `tavo_web_fetch` result only as metadata. `chat`, `tool` and `call` narrow the listing (the
/// app's log screen filters by chat and tool; a tool card opens its own call).
#[utoipa::path(get, path = "/api/audit", tag = "audit",
    params(AuditQuery),
    responses((status = 200, description = "`{entries, nextBefore?, capacity}`", body = Object),
              (status = 400, description = "A limit outside 1–500", body = ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    Query(q): Query<AuditQuery>,
) -> ApiResult<Json<AuditPage>> {
    let limit = q.limit.unwrap_or(50);
    for (field, value) in [("tool", &q.tool), ("call", &q.call)] {
        if value
            .as_ref()
            .is_some_and(|v| v.is_empty() || v.len() > 200)
        {
            return Err(ApiError::bad_request(format!(
                "{field}: must be 1–200 characters"
            )));
        }
    }
    let filter = AuditFilter {
        action: q.tool.map(|t| format!("tool.{t}")),
        target: q.chat.map(|c| format!("chat:{c}")),
        call_id: q.call,
    };
    let page = state
        .blocking_api(move |s| find_audit(s, limit, q.before, &filter).map_err(ApiError::from))
        .await?;
    Ok(Json(page))
}

/// Clears the audit log: `{removed}`. Chat messages keep their compact tool-call cards.
#[utoipa::path(delete, path = "/api/audit", tag = "audit",
    responses((status = 200, description = "`{removed}`", body = Object)))]
pub async fn clear(State(state): State<AppState>) -> ApiResult<Json<AuditCleared>> {
    let cleared = state
        .blocking_api(|s| clear_audit(s).map_err(ApiError::from))
        .await?;
    Ok(Json(cleared))
}
