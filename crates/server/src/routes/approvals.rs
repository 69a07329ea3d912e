//! The tool approvals a user remembered for one chat ("Remember for this tool in this chat" in
//! the confirmation dialog; `tools.approval`'s per-chat map), so the app can show and forget
//! them; and the standing choices that apply in every chat (`/api/approvals`), for any tool —
//! built-in, a page's function tool, an outside server's (also set on
//! `/api/mcp-servers/…/approval`).

use axum::Json;
use axum::extract::{Path, State};
use serde::Deserialize;
use serde_json::{Value, json};
use tavo_model::ChatId;
use tavo_tools::approval::{Approval, ApprovalPolicy};

use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::state::AppState;

fn read(s: &tavo_store::Store) -> ApiResult<ApprovalPolicy> {
    ApprovalPolicy::load(s).map_err(|e| ApiError::internal("reading the approval policy", e))
}

/// Stores `approval` as `tool`'s choice in every chat (this route's and the MCP servers' door).
pub(crate) fn remember_everywhere(
    s: &tavo_store::Store,
    tool: &str,
    approval: Approval,
) -> ApiResult<()> {
    let mut policy = read(s)?;
    policy.remember(None, tool, approval);
    policy
        .save(s)
        .map_err(|e| ApiError::internal("saving the approval policy", e))
}

/// `{tools: {name: allow|deny|ask}}`: the choices remembered for this chat (they win over the
/// global ones there).
#[utoipa::path(get, path = "/api/chats/{id}/approvals", tag = "chats",
    params(("id" = i64, Path)),
    responses((status = 200, description = "`{tools}`", body = Object)))]
pub async fn list(State(state): State<AppState>, Path(id): Path<ChatId>) -> ApiResult<Json<Value>> {
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
    Path((id, tool)): Path<(ChatId, String)>,
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

/// `{tools: {name: allow|deny|ask}, chats: {id: {name: …}}}`: every standing choice.
#[utoipa::path(get, path = "/api/approvals", tag = "settings",
    responses((status = 200, description = "`{tools, chats}`", body = Object)))]
pub async fn all(State(state): State<AppState>) -> ApiResult<Json<Value>> {
    let policy = state.blocking_api(read).await?;
    Ok(Json(
        json!({ "tools": policy.tools, "chats": policy.chats }),
    ))
}

/// Drops every standing choice, global and per chat: the way back from a policy that can no
/// longer be read (calls are refused while it cannot, never run under the defaults).
/// Answers `{tools: {}, chats: {}}`.
#[utoipa::path(delete, path = "/api/approvals", tag = "settings",
    responses((status = 200, description = "`{tools, chats}`, both empty", body = Object),
              (status = 500, description = "The policy could not be saved", body = ErrorBody)))]
pub async fn reset(State(state): State<AppState>) -> ApiResult<Json<Value>> {
    state
        .blocking_api(|s| {
            ApprovalPolicy::default()
                .save(s)
                .map_err(|e| ApiError::internal("saving the approval policy", e))
        })
        .await?;
    Ok(Json(json!({ "tools": {}, "chats": {} })))
}

/// `{approval}`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StandingApproval {
    /// `allow` (run without asking), `ask` (pause the reply and ask) or `deny`.
    #[schema(value_type = String)]
    pub approval: Approval,
}

/// The longest tool name a choice is kept for (tool names are far shorter; this only bounds
/// what a client can make the policy hold).
const MAX_TOOL_NAME: usize = 128;

/// Sets the choice for `tool` in every chat (a choice remembered for one chat still wins
/// there). Any name is accepted — a page's tool need not be registered yet to be governed.
/// Answers `{tool, approval}`.
#[utoipa::path(put, path = "/api/approvals/{tool}", tag = "settings",
    params(("tool" = String, Path)),
    request_body = StandingApproval,
    responses((status = 200, description = "`{tool, approval}`", body = Object),
              (status = 400, description = "An empty or over-long tool name", body = ErrorBody)))]
pub async fn set(
    State(state): State<AppState>,
    Path(tool): Path<String>,
    Json(body): Json<StandingApproval>,
) -> ApiResult<Json<Value>> {
    if tool.trim().is_empty() || tool.len() > MAX_TOOL_NAME {
        return Err(ApiError::bad_request(format!(
            "tool: a tool name of 1 to {MAX_TOOL_NAME} bytes"
        )));
    }
    let t = tool.clone();
    state
        .blocking_api(move |s| remember_everywhere(s, &t, body.approval))
        .await?;
    Ok(Json(json!({ "tool": tool, "approval": body.approval })))
}

/// Drops the choice for `tool` in every chat: it follows its default again (ask for writes
/// that need a confirmation and for outside tools, else allow). Answers the remaining
/// `{tools}`; dropping what is not set is no error.
#[utoipa::path(delete, path = "/api/approvals/{tool}", tag = "settings",
    params(("tool" = String, Path)),
    responses((status = 200, description = "`{tools}`", body = Object)))]
pub async fn unset(
    State(state): State<AppState>,
    Path(tool): Path<String>,
) -> ApiResult<Json<Value>> {
    let tools = state
        .blocking_api(move |s| {
            let mut policy = read(s)?;
            if policy.tools.remove(&tool).is_some() {
                policy
                    .save(s)
                    .map_err(|e| ApiError::internal("saving the approval policy", e))?;
            }
            Ok(policy.tools)
        })
        .await?;
    Ok(Json(json!({ "tools": tools })))
}
