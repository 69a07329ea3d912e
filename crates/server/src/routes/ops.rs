//! The operation door: `GET /api/ops` lists every operation of the registry the model uses,
//! `POST /api/ops/{name}` calls one with JSON arguments and answers the strict envelope.
//!
//! The call takes the one direct-call path of every door (`tavo_tools::direct`: the tool
//! settings, strict validation once, the approval policy — which fails closed —, the handler
//! under `tools.callTimeoutSeconds`, budgets, the envelope, the audit log of writes), with the
//! services replies get (web fetch and search). The HTTP caller is the user (or their own program), so an operation whose
//! contract asks for confirmation runs only with `?confirm=true` — the UI shows its dialog
//! first — and the approval policy's `deny` refuses it always. An operation that would pause
//! for the user (`tavo_ask_user`) is answered as cancelled: over plain HTTP there is nobody to
//! ask in the middle of a request; a reply's questions go through `/api/replies/{id}/answer`.
//! The status mirrors the envelope: 200 for `ok: true`, the error code's status otherwise, so
//! a revision conflict is a 409 at this door as everywhere.

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tavo_model::ChatId;
use tavo_tools::approval::declined;
use tavo_tools::registry::complete;
use tavo_tools::{
    DirectTarget, ErrorCode, Origin, ReplyBudget, Safety, ToolCall, ToolError, UnattendedDoor,
};

use crate::error::{ErrorBody, status_of_tool_code};
use crate::state::AppState;

/// One operation as listed.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OpInfo {
    /// Model-door name, `tavo_file_save`.
    pub name: String,
    /// Operation name, `file.save`.
    pub operation: String,
    /// What it does, as the model reads it.
    pub description: String,
    /// `read`, `write` or `confirm`.
    #[schema(value_type = String)]
    pub safety: Safety,
    /// `resident` or `discoverable`.
    #[schema(value_type = String)]
    pub residency: tavo_tools::Residency,
    /// The strict JSON Schema of the arguments.
    #[schema(value_type = Object)]
    pub parameters: Value,
}

/// Every operation with its schema.
#[utoipa::path(get, path = "/api/ops", tag = "operations",
    responses((status = 200, description = "Every operation", body = [OpInfo])))]
pub async fn list(State(state): State<AppState>) -> Json<Vec<OpInfo>> {
    Json(
        state
            .registry
            .operations()
            .map(|op| OpInfo {
                name: op.tool_name().to_owned(),
                operation: op.name().to_owned(),
                description: op.description().to_owned(),
                safety: op.safety(),
                residency: op.residency(),
                parameters: op.schema().clone(),
            })
            .collect(),
    )
}

/// Options of a call.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct CallQuery {
    /// The chat chat-scoped operations work on (files, variables, messages, memory).
    pub chat: Option<i64>,
    /// Confirms an operation whose contract asks for confirmation.
    #[serde(default)]
    pub confirm: bool,
}

/// Calls one operation; the body is its arguments object.
#[utoipa::path(post, path = "/api/ops/{name}", tag = "operations",
    params(("name" = String, Path, description = "Tool name (tavo_file_save) or operation name (file.save)"), CallQuery),
    request_body(content = Object, description = "The arguments, exactly as a model would send them"),
    responses(
        (status = 200, description = "`{ok: true, result}`", body = Object),
        (status = 400, description = "`{ok: false, error}`: invalid_arguments (details name the field path)", body = Object),
        (status = 403, description = "permission_denied: refused by policy or not confirmed", body = Object),
        (status = 404, description = "unknown_tool or resource_not_found", body = Object),
        (status = 409, description = "conflict", body = Object),
        (status = 413, description = "Body too large", body = ErrorBody)))]
pub async fn call(
    State(state): State<AppState>,
    Path(name): Path<String>,
    Query(query): Query<CallQuery>,
    body: axum::body::Bytes,
) -> Response {
    let mut budget = ReplyBudget::default();
    let args: Value = if body.iter().all(u8::is_ascii_whitespace) {
        json!({})
    } else {
        match serde_json::from_slice(&body) {
            Ok(v) => v,
            Err(e) => {
                let err = ToolError::new(
                    ErrorCode::InvalidArguments,
                    format!(
                        "the request body is not JSON ({e}); send the arguments as one JSON object"
                    ),
                );
                return envelope_response(complete(Err(err), &mut budget));
            }
        }
    };
    let chat = query.chat;
    let done = run_call(&state, &name, args, query).await;
    let changed = done.error.is_none()
        && state
            .registry
            .get(&name)
            .is_some_and(|op| op.safety().writes());
    if changed && let Some(op) = state.registry.get(&name) {
        state.hub.publish(
            "library",
            json!({ "kind": "operation", "action": op.name(), "chat": chat }),
        );
    }
    envelope_response(done)
}

async fn run_call(
    state: &AppState,
    name: &str,
    args: Value,
    query: CallQuery,
) -> tavo_tools::Completed {
    let door = UnattendedDoor {
        confirmed: query.confirm,
        refusal: needs_confirmation,
    };
    let call = ToolCall::new("http", name, args);
    let dispatcher = state.replies.engine().dispatcher();
    dispatcher
        .call_direct(
            Origin::Http,
            query.chat.map(ChatId),
            DirectTarget::Named(&call),
            &door,
        )
        .await
        .completed
}

/// What a call that asks for confirmation answers without `?confirm=true`.
fn needs_confirmation(tool: &str) -> ToolError {
    declined(tool).with_details(json!({
        "needsConfirmation": true,
        "hint": "repeat the call with ?confirm=true once the user has agreed",
    }))
}

fn envelope_response(done: tavo_tools::Completed) -> Response {
    let status = done.error.map_or(StatusCode::OK, status_of_tool_code);
    (status, Json(done.envelope)).into_response()
}
