//! `tavo_web_search`: model arguments, saved search APIs and the Tavily client.

mod args;
mod settings;
mod tavily;

pub use args::{SearchArgs, TimeRange, Topic};
pub use settings::{SearchApi, SearchDepth, SearchProvider, SearchSettings};
pub use tavily::{SearchHit, SearchOutput, TAVILY_BASE_URL, TavilyClient};

use serde_json::{Value, json};

/// Why a search (or a settings change) failed. Messages never contain the API key.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// A model argument is missing or out of range.
    #[error("{field}: {message}")]
    InvalidArgument {
        /// Argument path, e.g. `max_results` or `include_domains[1]`.
        field: String,
        /// What is expected.
        message: String,
    },
    /// A saved-API field is invalid (local validation on save).
    #[error("{field}: {message}")]
    InvalidSetting {
        /// Field name, e.g. `chunksPerSource`.
        field: String,
        /// What is expected.
        message: String,
    },
    /// No saved API has this id.
    #[error("no saved search API has the id {0:?}")]
    NotFound(String),
    /// There is no complete default search API (the tool is hidden in that state).
    #[error(
        "no complete default web search API is configured; add a Tavily API key in the web search settings"
    )]
    NotConfigured,
    /// Tavily rejected the key (401) or the account (403).
    #[error(
        "the search provider rejected the API key (HTTP {0}); check the key in the web search settings"
    )]
    Unauthorized(u16),
    /// Rate limit (429) or plan/pay-as-you-go limits (432, 433).
    #[error(
        "the search provider refused the request because a usage limit was reached (HTTP {status}): {message}"
    )]
    UsageLimit {
        /// HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// The provider said the request is invalid (400), e.g. a query over 400 characters.
    #[error("the search provider rejected the request: {0}")]
    Rejected(String),
    /// 5xx, unreadable response, or network failure.
    #[error("the search provider is unavailable: {0}")]
    Unavailable(String),
}

impl SearchError {
    /// The stable code for the tool envelope.
    pub fn code(&self) -> &'static str {
        match self {
            SearchError::InvalidArgument { .. } => "invalid_arguments",
            SearchError::InvalidSetting { .. } => "invalid_setting",
            SearchError::NotFound(_) => "resource_not_found",
            SearchError::NotConfigured => "search_not_configured",
            SearchError::Unauthorized(_) => "permission_denied",
            SearchError::UsageLimit { .. } => "search_usage_limit",
            SearchError::Rejected(_) => "search_rejected",
            SearchError::Unavailable(_) => "search_unavailable",
        }
    }

    /// The envelope's `error` object.
    pub fn to_json(&self) -> Value {
        let mut error = json!({ "code": self.code(), "message": self.to_string() });
        let details = match self {
            SearchError::InvalidArgument { field, .. }
            | SearchError::InvalidSetting { field, .. } => Some(json!({ "path": field })),
            SearchError::Unauthorized(status) => Some(json!({ "status": status })),
            SearchError::UsageLimit { status, .. } => Some(json!({ "status": status })),
            _ => None,
        };
        if let (Some(details), Some(obj)) = (details, error.as_object_mut()) {
            obj.insert("details".into(), details);
        }
        error
    }

    pub(crate) fn invalid_arg(field: impl Into<String>, message: impl Into<String>) -> Self {
        SearchError::InvalidArgument {
            field: field.into(),
            message: message.into(),
        }
    }

    pub(crate) fn invalid_setting(field: impl Into<String>, message: impl Into<String>) -> Self {
        SearchError::InvalidSetting {
            field: field.into(),
            message: message.into(),
        }
    }
}
