//! The model door's failure vocabulary (seed 000: a call answers the model with a success or a
//! failure object, never an exception).
//!
//! A failed call is never an exception thrown at the model: it is the envelope
//! `{ "ok": false, "error": { "code", "message", "details"? } }`. The codes are a closed,
//! documented set so that models (and the engine) can branch on them. Messages are written
//! for the model and the user alike: they name the field path and say what to do, and they
//! never carry internal paths, SQL, or a provider's response body.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Every error code a tool call can end with.
///
/// The seed names `resource_not_found`, `permission_denied`, `internal_error` and
/// `result_too_large`; `invalid_arguments` is this project's one documented code for
/// arguments that fail the strict schema. The remaining codes describe what the engine
/// itself decides around a call (unknown tool, time-out, cancellation, limits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// Arguments do not match the tool's strict schema, or break a rule the schema cannot
    /// express (a `defaultValue` that matches no option, a file name with a separator…).
    /// `details` carries `path`, `expected` and `actualType`.
    InvalidArguments,
    /// The target (asset id, file, chat, voice binding, image endpoint…) does not exist.
    ResourceNotFound,
    /// The user or the approval policy refused the call, a read-only target (an official
    /// theme) was written to, or a provider refused the request.
    PermissionDenied,
    /// Anything unexpected. The message never contains internal details.
    InternalError,
    /// The result does not fit in what is left of the reply's 256 KiB result budget.
    ResultTooLarge,
    /// The tool name is not registered, or not callable in this round (not yet discovered).
    UnknownTool,
    /// The call ran longer than the per-call time-out (waiting for the user never counts).
    Timeout,
    /// The reply was cancelled while the call was pending.
    Cancelled,
    /// The reply reached its call or round limit; the call was not executed.
    LimitExceeded,
    /// A write raced with another write (`expectedRevision` no longer matches).
    Conflict,
    /// An outside service (a web page, the search provider) could not deliver; the service's
    /// own code is in `details.reason` (`network_error`, `too_many_redirects`, …).
    Unavailable,
}

impl ErrorCode {
    /// The wire spelling (`resource_not_found`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidArguments => "invalid_arguments",
            ErrorCode::ResourceNotFound => "resource_not_found",
            ErrorCode::PermissionDenied => "permission_denied",
            ErrorCode::InternalError => "internal_error",
            ErrorCode::ResultTooLarge => "result_too_large",
            ErrorCode::UnknownTool => "unknown_tool",
            ErrorCode::Timeout => "timeout",
            ErrorCode::Cancelled => "cancelled",
            ErrorCode::LimitExceeded => "limit_exceeded",
            ErrorCode::Conflict => "conflict",
            ErrorCode::Unavailable => "unavailable",
        }
    }

    /// The code of a wire spelling; `None` for any other word (such as a door's own
    /// `provider_error`).
    pub fn parse(wire: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == wire)
    }

    /// Every code, for documentation and exhaustive tests.
    pub const ALL: [ErrorCode; 11] = [
        ErrorCode::InvalidArguments,
        ErrorCode::ResourceNotFound,
        ErrorCode::PermissionDenied,
        ErrorCode::InternalError,
        ErrorCode::ResultTooLarge,
        ErrorCode::UnknownTool,
        ErrorCode::Timeout,
        ErrorCode::Cancelled,
        ErrorCode::LimitExceeded,
        ErrorCode::Conflict,
        ErrorCode::Unavailable,
    ];
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed tool call, exactly as the model will see it inside the envelope.
#[derive(Debug, Clone, PartialEq, thiserror::Error, Serialize, Deserialize)]
#[error("{code}: {message}")]
pub struct ToolError {
    /// Stable machine-readable code.
    pub code: ErrorCode,
    /// One sentence for the model: what failed, where, and what to do about it.
    pub message: String,
    /// Structured diagnostics (`path`, `expected`, `actualType`, …); omitted when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

impl ToolError {
    /// An error with a code and a message and no details.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            details: None,
        }
    }

    /// Attaches structured details.
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// `invalid_arguments` naming one field path, what was expected there and what was found.
    pub fn invalid_at(path: &str, expected: impl Into<String>, actual_type: &str) -> Self {
        let expected = expected.into();
        let shown = if path.is_empty() { "arguments" } else { path };
        let mut details = Map::new();
        details.insert("path".into(), Value::String(path.to_owned()));
        details.insert("expected".into(), Value::String(expected.clone()));
        details.insert("actualType".into(), Value::String(actual_type.to_owned()));
        Self::new(
            ErrorCode::InvalidArguments,
            format!("{shown}: expected {expected}, got {actual_type}"),
        )
        .with_details(Value::Object(details))
    }

    /// `resource_not_found` for one kind of asset and the id or name asked for.
    pub fn not_found(what: &str, which: impl std::fmt::Display) -> Self {
        Self::new(
            ErrorCode::ResourceNotFound,
            format!(
                "{what} {which} does not exist; list or find it first to get a valid id or name"
            ),
        )
    }

    /// `permission_denied` with a reason the model can relay.
    pub fn denied(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::PermissionDenied, message)
    }

    /// `internal_error` with a generic, leak-free message. The cause is logged by the caller
    /// (without secrets), never returned.
    pub fn internal(what: &str) -> Self {
        Self::new(
            ErrorCode::InternalError,
            format!("{what} failed unexpectedly; try again, and tell the user if it keeps failing"),
        )
    }

    /// The error of a failure envelope's `error` object (what [`ToolError::to_envelope`] wrote);
    /// anything else is an internal error.
    pub fn from_envelope(error: &Value) -> Self {
        serde_json::from_value(error.clone()).unwrap_or_else(|_| Self::internal("the call"))
    }

    /// Serialises into the failure envelope.
    pub fn to_envelope(&self) -> Value {
        let mut error = Map::new();
        error.insert("code".into(), Value::String(self.code.as_str().to_owned()));
        error.insert("message".into(), Value::String(self.message.clone()));
        if let Some(details) = &self.details {
            error.insert("details".into(), details.clone());
        }
        let mut env = Map::new();
        env.insert("ok".into(), Value::Bool(false));
        env.insert("error".into(), Value::Object(error));
        Value::Object(env)
    }
}

/// The success envelope `{ "ok": true, "result": … }`.
pub fn ok_envelope(result: Value) -> Value {
    let mut env = Map::new();
    env.insert("ok".into(), Value::Bool(true));
    env.insert("result".into(), result);
    Value::Object(env)
}

/// JSON type name as a model would call it (`integer` for whole numbers).
pub fn json_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn codes_have_their_wire_names() {
        for code in ErrorCode::ALL {
            let v = serde_json::to_value(code).unwrap_or(Value::Null);
            assert_eq!(v, Value::String(code.as_str().to_owned()));
            assert_eq!(ErrorCode::parse(code.as_str()), Some(code));
        }
        assert_eq!(ErrorCode::parse("provider_error"), None);
    }

    #[test]
    fn envelope_omits_absent_details() {
        let e = ToolError::not_found("character", 7).to_envelope();
        assert_eq!(e["ok"], json!(false));
        assert_eq!(e["error"]["code"], json!("resource_not_found"));
        assert!(e["error"].get("details").is_none());
    }

    #[test]
    fn invalid_at_carries_path_expected_and_actual_type() {
        let e = ToolError::invalid_at("preset.entries[0].enabled", "boolean", "string");
        let env = e.to_envelope();
        assert_eq!(
            env["error"]["details"]["path"],
            json!("preset.entries[0].enabled")
        );
        assert_eq!(env["error"]["details"]["expected"], json!("boolean"));
        assert_eq!(env["error"]["details"]["actualType"], json!("string"));
        assert!(
            e.message
                .starts_with("preset.entries[0].enabled: expected boolean")
        );
    }
}
