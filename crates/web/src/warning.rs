//! Non-fatal conditions reported in a fetch result's `warnings` (as stable string codes).

use serde::{Deserialize, Serialize};

/// A warning attached to a fetched document. Serialised as its code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Warning {
    /// A redirect crossed origins, so every caller-supplied header was dropped before it was
    /// followed.
    CrossOriginHeadersDropped,
    /// The page looks like a JavaScript application shell; only its static content (possibly
    /// nothing) was returned.
    JavascriptRequired,
    /// The server answered 4xx/5xx; the body is returned as the page.
    HttpErrorStatus,
    /// The HTML was longer than the HTML input limit and was cut before conversion.
    HtmlInputTruncated,
    /// The Markdown was longer than the per-document limit and was cut.
    MarkdownTruncated,
    /// The HTML nests too deeply to convert safely; only its text was returned.
    HtmlTooDeep,
}

impl Warning {
    /// The stable code.
    pub fn code(self) -> &'static str {
        match self {
            Warning::CrossOriginHeadersDropped => "cross_origin_headers_dropped",
            Warning::JavascriptRequired => "javascript_required",
            Warning::HttpErrorStatus => "http_error_status",
            Warning::HtmlInputTruncated => "html_input_truncated",
            Warning::MarkdownTruncated => "markdown_truncated",
            Warning::HtmlTooDeep => "html_too_deep",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialises_as_its_code() {
        for w in [
            Warning::CrossOriginHeadersDropped,
            Warning::JavascriptRequired,
            Warning::HttpErrorStatus,
            Warning::HtmlInputTruncated,
            Warning::MarkdownTruncated,
            Warning::HtmlTooDeep,
        ] {
            assert_eq!(serde_json::to_value(w).ok(), Some(w.code().into()));
        }
    }
}
