//! The audit log: read it a page at a time, clear it (seed 000, privacy). Both call
//! `tavo_tools::audit`, as `tavo audit list|clear` does.

use axum::Json;
use axum::extract::{Query, State};
use serde::Deserialize;
use tavo_tools::audit::{AuditCleared, AuditPage, clear_audit, list_audit};

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
}

/// Audit entries, newest first: `{entries: [{id, at, action, target?, details}], nextBefore?,
/// capacity}`. A tool call's row (`tool.NAME`) holds its arguments and result envelope; a
/// `tavo_web_fetch` result only as metadata.
#[utoipa::path(get, path = "/api/audit", tag = "audit",
    params(AuditQuery),
    responses((status = 200, description = "`{entries, nextBefore?, capacity}`", body = Object),
              (status = 400, description = "A limit outside 1–500", body = ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    Query(q): Query<AuditQuery>,
) -> ApiResult<Json<AuditPage>> {
    let limit = q.limit.unwrap_or(50);
    let page = state
        .blocking_api(move |s| list_audit(s, limit, q.before).map_err(ApiError::from))
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
