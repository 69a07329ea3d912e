//! The tool approvals a user remembered for one chat ("Remember for this tool in this chat" in
//! the confirmation dialog; `tools.approval`'s per-chat map), so the app can show and forget
//! them. The global choices for outside tools are set on `/api/mcp-servers/…/approval`.

use axum::Json;
use axum::extract::{Path, State};
use serde_json::{Value, json};
use tavo_tools::approval::ApprovalPolicy;

use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::state::AppState;

fn read(s: &tavo_store::Store) -> ApiResult<ApprovalPolicy> {
    ApprovalPolicy::load(s).map_err(|e| ApiError::internal("reading the approval policy", e))
}

/// `{tools: {name: allow|deny|ask}}`: the choices remembered for this chat (they win over the
/// global ones there).
#[utoipa::path(get, path = "/api/chats/{id}/approvals", tag = "chats",
    params(("id" = i64, Path)),
    responses((status = 200, description = "`{tools}`", body = Object)))]
pub async fn list(State(state): State<AppState>, Path(id): Path<i64>) -> ApiResult<Json<Value>> {
    let policy = state.blocking_api(read).await?;
    let tools = policy.chats.get(&id).cloned().unwrap_or_default();
    Ok(Json(json!({ "tools": tools })))
}

/// Forgets the choice remembered for `tool` in this chat: the tool asks (or follows its global
/// choice) again. Answers the remaining `{tools}`; forgetting what is not remembered is no error.
#[utoipa::path(delete, path = "/api/chats/{id}/approvals/{tool}", tag = "chats",
    params(("id" = i64, Path), ("tool" = String, Path)),
    responses((status = 200, description = "`{tools}`", body = Object),
              (status = 500, description = "The policy could not be saved", body = ErrorBody)))]
pub async fn forget(
    State(state): State<AppState>,
    Path((id, tool)): Path<(i64, String)>,
) -> ApiResult<Json<Value>> {
    let tools = state
        .blocking_api(move |s| {
            let mut policy = read(s)?;
            if let Some(m) = policy.chats.get_mut(&id)
                && m.remove(&tool).is_some()
            {
                if m.is_empty() {
                    policy.chats.remove(&id);
                }
                policy
                    .save(s)
                    .map_err(|e| ApiError::internal("saving the approval policy", e))?;
            }
            Ok(policy.chats.get(&id).cloned().unwrap_or_default())
        })
        .await?;
    Ok(Json(json!({ "tools": tools })))
}
