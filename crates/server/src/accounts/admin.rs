//! `/api/admin/users…`: what `tavo user …` does, for an admin in the app.
//!
//! - `GET /api/admin/users` → `{users: [{id, name, admin, disabled, createdAt, library,
//!   usageBytes, liveReplies}]}`
//! - `POST /api/admin/users {name, password, admin?}` → `201 {user}`
//! - `PUT /api/admin/users/{name} {password?, admin?, disabled?}` → `{user}` (disabling ends
//!   the user's sessions, event streams and replies)
//! - `DELETE /api/admin/users/{name}?keepData=true` → `204` (their library is deleted unless
//!   `keepData`)
//!
//! A user who is not an admin gets `403` on every one of them.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};
use tavo_accounts::{AccountError, User};

use super::door::{Door, account_error, require_user};
use crate::error::{ApiError, ApiResult};

pub(super) async fn require_admin(door: &Door, headers: &HeaderMap) -> ApiResult<User> {
    let user = require_user(door, headers).await?;
    if user.admin {
        Ok(user)
    } else {
        Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            "only an admin manages users and the shared library",
        ))
    }
}

/// Runs registry work off the executor (password hashing, folder deletion).
async fn registry<T: Send + 'static>(
    door: &Door,
    f: impl FnOnce(&tavo_accounts::Accounts) -> Result<T, AccountError> + Send + 'static,
) -> ApiResult<T> {
    let accounts = door.tenants.accounts.clone();
    tokio::task::spawn_blocking(move || f(&accounts))
        .await
        .map_err(|e| ApiError::internal("the accounts registry", e))?
        .map_err(account_error)
}

/// `GET /api/admin/users`.
pub async fn list(State(door): State<Arc<Door>>, headers: HeaderMap) -> ApiResult<Json<Value>> {
    require_admin(&door, &headers).await?;
    let rows = registry(&door, |a| {
        Ok(a.list()?
            .into_iter()
            .map(|u| {
                let usage = a.usage(&u);
                (u, usage)
            })
            .collect::<Vec<_>>())
    })
    .await?;
    let open = door.tenants.all();
    let users: Vec<Value> = rows
        .into_iter()
        .map(|(u, usage)| {
            let live = open
                .iter()
                .find(|t| t.user.id == u.id)
                .map_or(0, |t| t.state.replies.live().len());
            let mut v = serde_json::to_value(&u).unwrap_or(Value::Null);
            v["usageBytes"] = json!(usage);
            v["liveReplies"] = json!(live);
            v
        })
        .collect();
    Ok(Json(json!({ "users": users })))
}

/// A new user.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewUser {
    name: String,
    password: String,
    #[serde(default)]
    admin: bool,
}

/// `POST /api/admin/users`.
pub async fn add(
    State(door): State<Arc<Door>>,
    headers: HeaderMap,
    Json(body): Json<NewUser>,
) -> ApiResult<Response> {
    let by = require_admin(&door, &headers).await?;
    let user = registry(&door, move |a| {
        a.add(&body.name, &body.password, body.admin)
    })
    .await?;
    tracing::info!(user = %user.name, by = %by.name, "user added");
    Ok((StatusCode::CREATED, Json(json!({ "user": user }))).into_response())
}

/// Changes to a user.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserChange {
    #[serde(default)]
    password: Option<String>,
    #[serde(default)]
    admin: Option<bool>,
    #[serde(default)]
    disabled: Option<bool>,
}

/// `PUT /api/admin/users/{name}`.
pub async fn change(
    State(door): State<Arc<Door>>,
    headers: HeaderMap,
    Path(name): Path<String>,
    Json(body): Json<UserChange>,
) -> ApiResult<Json<Value>> {
    require_admin(&door, &headers).await?;
    let disabled = body.disabled;
    let user = registry(&door, move |a| {
        if let Some(p) = &body.password {
            a.set_password(&name, p)?;
        }
        if let Some(admin) = body.admin {
            a.set_admin(&name, admin)?;
        }
        if let Some(d) = body.disabled {
            a.set_disabled(&name, d)?;
        }
        a.get(&name)
    })
    .await?;
    if disabled == Some(true) {
        // Their sessions ended in the registry; their open streams and replies end now.
        door.tenants.close(user.id, true);
    }
    Ok(Json(json!({ "user": user })))
}

/// `?keepData=`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoveQuery {
    #[serde(default)]
    keep_data: bool,
}

/// `DELETE /api/admin/users/{name}`.
pub async fn remove(
    State(door): State<Arc<Door>>,
    headers: HeaderMap,
    Path(name): Path<String>,
    Query(q): Query<RemoveQuery>,
) -> ApiResult<StatusCode> {
    require_admin(&door, &headers).await?;
    let keep = q.keep_data;
    let user = registry(&door, move |a| a.remove(&name, keep)).await?;
    // Its streams and replies end; on Linux the deleted files stay readable to what still
    // holds them open until it lets go.
    door.tenants.close(user.id, true);
    if let (Some(pool), false) = (door.tenants.database.clone(), keep) {
        // Their rows live in PostgreSQL: their schema goes too.
        let schema = door.tenants.accounts.library_schema(&user);
        tokio::task::spawn_blocking(move || {
            tavo_tools::backup::delete_postgres_library(&pool, &schema)
        })
        .await
        .map_err(|e| ApiError::internal("removing the user's library", e))?
        .map_err(|e| ApiError::internal("removing the user's library", e))?;
    }
    Ok(StatusCode::NO_CONTENT)
}
