//! Failures of `tavo_web_fetch`, each with a stable machine code.
//!
//! The tool envelope (`{"ok":false,"error":{"code","message","details"}}`) is built by the tool
//! registry; this crate only promises that [`FetchError::code`] never changes for a given
//! failure and that messages tell the model (or the user) what to do next. Messages never
//! contain header values: callers may pass credentials in headers.

use serde_json::{Value, json};

/// Which streaming limit a response ran into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyLimit {
    /// Bytes received on the wire, before decompression (default 20 MiB).
    Wire,
    /// Bytes after decompression (default 40 MiB). A decompression bomb stops here.
    Decompressed,
}

impl BodyLimit {
    /// The name used in error details.
    pub fn as_str(self) -> &'static str {
        match self {
            BodyLimit::Wire => "wire",
            BodyLimit::Decompressed => "decompressed",
        }
    }
}

/// Why a fetch (or a cursor continuation) failed.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// Neither `url` nor `cursor` was given, or an argument has the wrong shape.
    #[error("{field}: {message}")]
    InvalidArgument {
        /// The argument path, for example `url` or `headers.X-Key`.
        field: String,
        /// What is wrong and what is expected.
        message: String,
    },
    /// The URL is not http(s), has credentials the tool cannot send, or does not parse.
    #[error("url: {0}")]
    InvalidUrl(String),
    /// The cursor was not made by this reply's cache.
    #[error(
        "cursor: this cursor is not valid in the current reply; fetch the URL again to get a new one"
    )]
    InvalidCursor,
    /// The cursor was valid but its snapshot was evicted (cache full or reply over).
    #[error("cursor: this cursor has expired (its cached page was evicted); fetch the URL again")]
    CursorExpired,
    /// The address policy forbids the destination (only when a deployment narrowed it).
    #[error(
        "the address {address} of {host} is not allowed by this server's address policy ({policy})"
    )]
    AddressNotAllowed {
        /// The host as written in the URL.
        host: String,
        /// The resolved or literal IP address.
        address: String,
        /// The policy name.
        policy: &'static str,
    },
    /// More than the allowed number of redirects.
    #[error("more than {limit} redirects; the last one pointed to {location}")]
    TooManyRedirects {
        /// The configured maximum.
        limit: usize,
        /// Where the redirect that was refused pointed.
        location: String,
    },
    /// A 3xx response without a usable `Location`.
    #[error("redirect {status} without a usable Location header ({reason})")]
    BadRedirect {
        /// The HTTP status.
        status: u16,
        /// What was wrong with the Location.
        reason: String,
    },
    /// The body exceeded a streaming limit; reading stopped at the limit.
    #[error("the response is larger than the {} limit of {limit} bytes; reading stopped there", .which.as_str())]
    TooLarge {
        /// Which limit.
        which: BodyLimit,
        /// The limit in bytes.
        limit: u64,
    },
    /// PDF, images, archives and other binary media are not read.
    #[error(
        "content type {content_type} is not supported: web fetch reads HTML, Markdown, plain text, JSON and XML only"
    )]
    UnsupportedContentType {
        /// The declared or sniffed MIME type.
        content_type: String,
    },
    /// The server declared a `Content-Encoding` this tool cannot decode.
    #[error("content encoding {0:?} is not supported (gzip, deflate, br and zstd are)")]
    UnsupportedEncoding(String),
    /// The compressed stream is corrupt.
    #[error("the {encoding} body could not be decompressed: {message}")]
    Decode {
        /// The content coding.
        encoding: String,
        /// The decoder's message.
        message: String,
    },
    /// Connection, TLS or protocol failure.
    #[error("network error while fetching {url}: {message}")]
    Network {
        /// The URL of the failing hop.
        url: String,
        /// A description without header values.
        message: String,
    },
    /// The server did not answer (or finish the body) within the policy's time limits.
    #[error("the request timed out: the server did not answer within the fetch time limit")]
    Timeout,
    /// Conversion failed in a way that is a bug, not a property of the page.
    #[error("internal error: {0}")]
    Internal(String),
}

impl FetchError {
    /// The stable code carried in the tool error envelope.
    pub fn code(&self) -> &'static str {
        match self {
            FetchError::InvalidArgument { .. } => "invalid_arguments",
            FetchError::InvalidUrl(_) => "invalid_url",
            FetchError::InvalidCursor => "invalid_cursor",
            FetchError::CursorExpired => "cursor_expired",
            FetchError::AddressNotAllowed { .. } => "address_not_allowed",
            FetchError::TooManyRedirects { .. } => "too_many_redirects",
            FetchError::BadRedirect { .. } => "bad_redirect",
            FetchError::TooLarge { .. } => "content_too_large",
            FetchError::UnsupportedContentType { .. } => "unsupported_content_type",
            FetchError::UnsupportedEncoding(_) => "unsupported_content_encoding",
            FetchError::Decode { .. } => "content_decode_failed",
            FetchError::Network { .. } => "network_error",
            FetchError::Timeout => "timeout",
            FetchError::Internal(_) => "internal_error",
        }
    }

    /// Structured diagnostics for the envelope's `details`, when there are any.
    pub fn details(&self) -> Option<Value> {
        match self {
            FetchError::InvalidArgument { field, .. } => Some(json!({ "path": field })),
            FetchError::TooManyRedirects { limit, location } => {
                Some(json!({ "limit": limit, "location": location }))
            }
            FetchError::TooLarge { which, limit } => {
                Some(json!({ "limit": which.as_str(), "bytes": limit }))
            }
            FetchError::UnsupportedContentType { content_type } => {
                Some(json!({ "contentType": content_type }))
            }
            FetchError::AddressNotAllowed { host, address, .. } => {
                Some(json!({ "host": host, "address": address }))
            }
            FetchError::BadRedirect { status, .. } => Some(json!({ "status": status })),
            _ => None,
        }
    }

    /// The envelope's `error` object.
    pub fn to_json(&self) -> Value {
        let mut error = json!({ "code": self.code(), "message": self.to_string() });
        if let (Some(details), Some(obj)) = (self.details(), error.as_object_mut()) {
            obj.insert("details".into(), details);
        }
        error
    }

    pub(crate) fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        FetchError::InvalidArgument {
            field: field.into(),
            message: message.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_stable_and_details_name_the_limit() {
        let e = FetchError::TooLarge {
            which: BodyLimit::Decompressed,
            limit: 40,
        };
        assert_eq!(e.code(), "content_too_large");
        assert_eq!(e.to_json()["details"]["limit"], "decompressed");
        assert_eq!(FetchError::InvalidCursor.code(), "invalid_cursor");
        assert!(FetchError::CursorExpired.to_json().get("details").is_none());
    }
}
