//! The request, the fetched document, the result the model receives, and their audit records.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::warning::Warning;

/// A first call: one URL and optional caller headers (any, credentials included).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FetchRequest {
    /// The URL as submitted (query and fragment included; the fragment is not sent).
    pub url: String,
    /// Header names and values in the caller's order.
    pub headers: Vec<(String, String)>,
}

impl FetchRequest {
    /// A request without headers.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            headers: Vec::new(),
        }
    }

    /// The request audit record: the full submitted URL and every header name and value, as
    /// the seed requires for Tavo's bounded local audit.
    pub fn audit(&self) -> FetchRequestAudit {
        FetchRequestAudit {
            url: self.url.clone(),
            headers: self.headers.clone(),
        }
    }
}

/// What the local audit keeps about a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FetchRequestAudit {
    /// The full submitted URL, query and fragment included.
    pub url: String,
    /// Every header name and value, credentials included.
    pub headers: Vec<(String, String)>,
}

/// A downloaded and converted document, before paging.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchedDocument {
    /// The URL as submitted.
    pub url: String,
    /// The URL after redirects.
    pub final_url: String,
    /// The HTTP status of the final response.
    pub status: u16,
    /// The MIME type (declared, else sniffed).
    pub content_type: String,
    /// The page title, for HTML.
    pub title: Option<String>,
    /// The whole Markdown (at most the Markdown limit).
    pub markdown: String,
    /// Warnings about the document.
    pub warnings: Vec<Warning>,
    /// Cut by the HTML-input or Markdown limit.
    pub limit_truncated: bool,
    /// Decompressed body bytes.
    pub content_bytes: u64,
    /// Time from the first connection to the converted document.
    pub duration: Duration,
}

impl FetchedDocument {
    /// The result audit record: metadata only, never the body, title, cursor or headers.
    pub fn audit(&self) -> FetchResultAudit {
        FetchResultAudit {
            final_url: self.final_url.clone(),
            status: self.status,
            mime: self.content_type.clone(),
            content_bytes: self.content_bytes,
            duration_ms: u64::try_from(self.duration.as_millis()).unwrap_or(u64::MAX),
            warnings: self.warnings.clone(),
        }
    }
}

/// What the local audit keeps about a result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FetchResultAudit {
    /// The URL after redirects.
    pub final_url: String,
    /// The HTTP status.
    pub status: u16,
    /// The MIME type.
    pub mime: String,
    /// Bytes of content.
    pub content_bytes: u64,
    /// Duration in milliseconds.
    pub duration_ms: u64,
    /// Warning codes.
    pub warnings: Vec<Warning>,
}

/// One page of a document: exactly the JSON the model receives (and `tavo fetch --json`
/// prints).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FetchResult {
    /// The URL as submitted.
    pub url: String,
    /// The URL after redirects.
    pub final_url: String,
    /// The HTTP status.
    pub status: u16,
    /// The MIME type.
    pub content_type: String,
    /// The page title, or null.
    pub title: Option<String>,
    /// This page's Markdown.
    pub markdown: String,
    /// More text exists than this page (a next page, or a limit cut the document).
    pub truncated: bool,
    /// The cursor of the next page, or null.
    pub next_cursor: Option<String>,
    /// Warning codes.
    pub warnings: Vec<Warning>,
    /// Bytes of this page (for the result audit; not sent to the model).
    #[serde(skip)]
    pub content_bytes: u64,
}

impl FetchResult {
    /// The result audit record of a continuation page.
    pub fn audit(&self, duration: Duration) -> FetchResultAudit {
        FetchResultAudit {
            final_url: self.final_url.clone(),
            status: self.status,
            mime: self.content_type.clone(),
            content_bytes: self.content_bytes,
            duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
            warnings: self.warnings.clone(),
        }
    }
}
