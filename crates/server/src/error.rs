//! Errors as the HTTP API shows them: `{"error": {"code", "message", "details"?}}` with a
//! status that matches the code.
//!
//! Codes are the tool envelope's vocabulary (`invalid_arguments`, `resource_not_found`,
//! `conflict`, `permission_denied`, `internal_error`, …) plus the few that only HTTP has
//! (`unauthorized`, `forbidden_host`, `csrf`, `payload_too_large`, `not_found`). Messages never
//! carry physical paths or SQL: internal failures are logged with their detail and answered
//! with a generic message.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::{Value, json};
use tavo_store::StoreError;
use tavo_tools::{ErrorCode, ToolError};

/// An error answered to an HTTP client.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// Stable machine-readable code.
    pub code: &'static str,
    /// What happened and what to do, for a person.
    pub message: String,
    /// Structured details (field path, expected revision…).
    pub details: Option<Value>,
}

/// The JSON body of every error response.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// The error.
    pub error: ErrorDetail,
}

/// One error.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ErrorDetail {
    /// Stable code, e.g. `conflict`, `unauthorized`, `invalid_arguments`.
    pub code: String,
    /// A sentence for a person.
    pub message: String,
    /// Structured details, when there are any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

impl ApiError {
    /// An error with a status, a code and a message.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            details: None,
        }
    }

    /// Adds structured details.
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// 400 `invalid_arguments`.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_arguments", message)
    }

    /// 404 `resource_not_found`.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "resource_not_found", message)
    }

    /// 413 `payload_too_large`.
    pub fn too_large(message: impl Into<String>) -> Self {
        Self::new(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large", message)
    }

    /// 500 with a generic message; the detail goes to the log only.
    pub fn internal(what: &str, detail: impl std::fmt::Display) -> Self {
        tracing::error!(error = %detail, "{what} failed");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal_error",
            format!("{what} failed; the server log has the details"),
        )
    }

    /// The JSON body.
    pub fn body(&self) -> Value {
        let mut error = json!({ "code": self.code, "message": self.message });
        if let Some(d) = &self.details {
            error["details"] = d.clone();
        }
        json!({ "error": error })
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(self.body())).into_response()
    }
}

/// The status of a provider's failure that is not a refusal (rate limit, server error, an
/// answer without what was asked): the server works, the service behind it did not. Image
/// generation and speech answer it alike (replies' `provider_error` too).
pub const PROVIDER_FAILED: StatusCode = StatusCode::BAD_GATEWAY;

/// The HTTP status of a tool envelope error code.
pub fn status_of_tool_code(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::InvalidArguments => StatusCode::BAD_REQUEST,
        ErrorCode::UnknownTool | ErrorCode::ResourceNotFound => StatusCode::NOT_FOUND,
        ErrorCode::Conflict => StatusCode::CONFLICT,
        ErrorCode::PermissionDenied => StatusCode::FORBIDDEN,
        ErrorCode::Timeout => StatusCode::GATEWAY_TIMEOUT,
        ErrorCode::ResultTooLarge | ErrorCode::LimitExceeded => StatusCode::UNPROCESSABLE_ENTITY,
        // The reply the call belonged to was cancelled: the request conflicts with its state.
        ErrorCode::Cancelled => StatusCode::CONFLICT,
        ErrorCode::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::InternalError => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

impl From<ToolError> for ApiError {
    fn from(e: ToolError) -> Self {
        let mut err = ApiError::new(status_of_tool_code(e.code), e.code.as_str(), e.message);
        err.details = e.details;
        err
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match &e {
            StoreError::NotFound { .. } => ApiError::not_found(e.to_string()),
            StoreError::Conflict {
                kind,
                id,
                expected,
                actual,
            } => ApiError::new(StatusCode::CONFLICT, "conflict", e.to_string()).with_details(
                json!({ "kind": kind, "id": id, "expectedRevision": expected, "revision": actual }),
            ),
            StoreError::InvalidFileName { .. }
            | StoreError::InvalidPath { .. }
            | StoreError::InvalidArgument(_) => ApiError::bad_request(e.to_string()),
            StoreError::FileTooLarge { .. } => ApiError::too_large(e.to_string()),
            // Io carries a physical path and Sqlite the statement's error: log, don't show.
            StoreError::Io { .. }
            | StoreError::Sqlite(_)
            | StoreError::Postgres(_)
            | StoreError::Database(_)
            | StoreError::Migration(_)
            | StoreError::Json { .. } => ApiError::internal("the library operation", &e),
        }
    }
}

/// The result type of handlers.
pub type ApiResult<T> = Result<T, ApiError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conflicts_are_409_with_revisions() {
        let e: ApiError = StoreError::Conflict {
            kind: "character",
            id: 3,
            expected: 1,
            actual: 2,
        }
        .into();
        assert_eq!(e.status, StatusCode::CONFLICT);
        assert_eq!(e.body()["error"]["details"]["revision"], 2);
    }

    #[test]
    fn io_errors_do_not_leak_paths() {
        let e: ApiError = StoreError::Io {
            action: "cannot read",
            path: "/home/secret/tavo.db".into(),
            source: std::io::Error::other("boom"),
        }
        .into();
        assert_eq!(e.status, StatusCode::INTERNAL_SERVER_ERROR);
        assert!(!e.body().to_string().contains("/home/secret"));
    }

    #[test]
    fn tool_codes_map_to_statuses() {
        let e: ApiError = ToolError::new(ErrorCode::Conflict, "x").into();
        assert_eq!(e.status, StatusCode::CONFLICT);
        let e: ApiError = ToolError::new(ErrorCode::InvalidArguments, "x").into();
        assert_eq!(e.status, StatusCode::BAD_REQUEST);
        assert_eq!(e.code, "invalid_arguments");
    }
}
