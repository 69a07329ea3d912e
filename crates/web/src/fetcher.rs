//! `tavo_web_fetch`: the public entry point.

use std::sync::Mutex;
use std::time::Instant;

use serde_json::Value;
use url::Url;

use crate::cache::FetchCache;
use crate::charset;
use crate::content::{self, Declared, Kind, Sniffed};
use crate::document::{FetchRequest, FetchResult, FetchedDocument};
use crate::download::{self, Download};
use crate::error::FetchError;
use crate::html;
use crate::paging::truncate_to;
use crate::policy::{FetchLimits, FetchPolicy};
use crate::warning::Warning;

/// The model's arguments: a first call (`url`, optional `headers`) or a continuation
/// (`cursor`). When both are present the cursor wins, as the seed says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchArgs {
    /// Download and convert a URL.
    Url(FetchRequest),
    /// Read the next page of a cached document.
    Cursor(String),
}

impl FetchArgs {
    /// Parses `{"url"?, "headers"?, "cursor"?}`, naming the offending path on error.
    pub fn from_json(args: &Value) -> Result<Self, FetchError> {
        let Some(obj) = args.as_object() else {
            return Err(FetchError::invalid("arguments", "must be an object"));
        };
        if let Some(unknown) = obj
            .keys()
            .find(|k| !matches!(k.as_str(), "url" | "headers" | "cursor"))
        {
            return Err(FetchError::invalid(
                unknown.clone(),
                "unknown field; expected url, headers or cursor",
            ));
        }
        match obj.get("cursor") {
            Some(Value::String(cursor)) if !cursor.trim().is_empty() => {
                return Ok(FetchArgs::Cursor(cursor.clone()));
            }
            Some(Value::String(_)) => return Err(FetchError::InvalidCursor),
            Some(Value::Null) | None => {}
            Some(_) => return Err(FetchError::invalid("cursor", "must be a string")),
        }
        let url = match obj.get("url") {
            Some(Value::String(url)) if !url.trim().is_empty() => url.clone(),
            Some(Value::String(_)) | None | Some(Value::Null) => {
                return Err(FetchError::invalid(
                    "url",
                    "is required (an http:// or https:// URL) unless cursor is given",
                ));
            }
            Some(_) => return Err(FetchError::invalid("url", "must be a string")),
        };
        let mut headers = Vec::new();
        match obj.get("headers") {
            None | Some(Value::Null) => {}
            Some(Value::Object(map)) => {
                for (name, value) in map {
                    let Value::String(value) = value else {
                        return Err(FetchError::invalid(
                            format!("headers.{name}"),
                            "header values must be strings",
                        ));
                    };
                    headers.push((name.clone(), value.clone()));
                }
            }
            Some(_) => {
                return Err(FetchError::invalid(
                    "headers",
                    "must be an object of header names to string values",
                ));
            }
        }
        Ok(FetchArgs::Url(FetchRequest { url, headers }))
    }
}

/// Downloads pages and turns them into Markdown under a [`FetchPolicy`].
#[derive(Debug, Clone)]
pub struct WebFetcher {
    client: reqwest::Client,
    policy: FetchPolicy,
}

impl WebFetcher {
    /// A fetcher with its own connection pool.
    pub fn new(policy: FetchPolicy) -> Result<Self, FetchError> {
        let client = download::build_client(&policy)?;
        Ok(Self { client, policy })
    }

    /// The policy in force.
    pub fn policy(&self) -> &FetchPolicy {
        &self.policy
    }

    /// A cache sized by this fetcher's limits, for one reply.
    pub fn new_cache(&self) -> FetchCache {
        FetchCache::with_limits(&self.policy.limits)
    }

    /// Runs one tool call: a continuation reads from `cache`; a first call downloads and
    /// stores the document there. The lock is never held across the download.
    pub async fn call(
        &self,
        cache: &Mutex<FetchCache>,
        args: FetchArgs,
    ) -> Result<FetchResult, FetchError> {
        match args {
            FetchArgs::Cursor(cursor) => lock(cache)?.page(&cursor),
            FetchArgs::Url(request) => {
                let doc = self.fetch(request).await?;
                Ok(lock(cache)?.first_page(doc))
            }
        }
    }

    /// Downloads and converts one URL.
    pub async fn fetch(&self, request: FetchRequest) -> Result<FetchedDocument, FetchError> {
        let started = Instant::now();
        let mut url = parse_url(&request.url)?;
        // The fragment is never sent; the audit keeps it from `request.url`.
        url.set_fragment(None);
        let headers = download::caller_headers(&request.headers)?;
        let timeout = self.policy.total_timeout;
        let downloaded = tokio::time::timeout(
            timeout,
            download::download(&self.client, &self.policy, url, &headers, false),
        )
        .await
        .map_err(|_| FetchError::Timeout)??;
        let limits = self.policy.limits;
        let submitted = request.url;
        let mut doc = convert_off_runtime(move || process(submitted, downloaded, &limits)).await?;
        doc.duration = started.elapsed();
        Ok(doc)
    }
}

/// A file downloaded as it is, not converted: the body of the final response under the same
/// address, redirect and size rules as a page (`tavo.file.save(name, 'https://…')`).
#[derive(Debug, Clone)]
pub struct DownloadedFile {
    /// The URL after redirects.
    pub final_url: String,
    /// The HTTP status of the final response (the caller decides what a non-2xx means).
    pub status: u16,
    /// The declared `type/subtype`, lower-case, without parameters.
    pub mime_type: Option<String>,
    /// The decompressed body, at most the policy's `decompressed_bytes`.
    pub bytes: Vec<u8>,
}

impl WebFetcher {
    /// Downloads one URL's body as bytes (no conversion, no page cache).
    pub async fn download_file(&self, url: &str) -> Result<DownloadedFile, FetchError> {
        let mut url = parse_url(url)?;
        url.set_fragment(None);
        let headers = download::caller_headers(&[])?;
        let downloaded = tokio::time::timeout(
            self.policy.total_timeout,
            download::download(&self.client, &self.policy, url, &headers, true),
        )
        .await
        .map_err(|_| FetchError::Timeout)??;
        Ok(DownloadedFile {
            final_url: downloaded.final_url.to_string(),
            status: downloaded.status,
            mime_type: downloaded.content_type.essence,
            bytes: downloaded.body,
        })
    }
}

/// Stack of the conversion thread. The depth guard keeps the recursive converters far below
/// this; the headroom covers html5ever tree shapes the guard's estimate does not foresee.
const CONVERTER_STACK_BYTES: usize = 64 * 1024 * 1024;

/// Runs CPU-bound conversion on its own thread (not the async workers, and with a larger
/// stack than tokio's blocking pool gives) and awaits its result.
async fn convert_off_runtime<F>(work: F) -> Result<FetchedDocument, FetchError>
where
    F: FnOnce() -> Result<FetchedDocument, FetchError> + Send + 'static,
{
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("tavo-web-convert".into())
        .stack_size(CONVERTER_STACK_BYTES)
        .spawn(move || {
            let _ = tx.send(work());
        })
        .map_err(|e| FetchError::Internal(format!("could not start the conversion thread: {e}")))?;
    rx.await.map_err(|_| {
        FetchError::Internal("the conversion thread stopped without a result".into())
    })?
}

fn lock(cache: &Mutex<FetchCache>) -> Result<std::sync::MutexGuard<'_, FetchCache>, FetchError> {
    cache
        .lock()
        .map_err(|_| FetchError::Internal("the fetch cache lock was poisoned".into()))
}

/// Parses a submitted URL: absolute http(s), no userinfo.
pub fn parse_url(raw: &str) -> Result<Url, FetchError> {
    let url = Url::parse(raw.trim()).map_err(|e| {
        FetchError::InvalidUrl(format!("{e}; give an absolute http:// or https:// URL"))
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(FetchError::InvalidUrl(format!(
            "scheme {:?} is not supported; use an http:// or https:// URL",
            url.scheme()
        )));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(FetchError::InvalidUrl("the URL has no host".into()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(FetchError::InvalidUrl(
            "credentials in the URL are not sent; pass them in an Authorization header".into(),
        ));
    }
    Ok(url)
}

/// Picks the document kind, decodes, converts and applies the document limits.
pub(crate) fn process(
    submitted: String,
    download: Download,
    limits: &FetchLimits,
) -> Result<FetchedDocument, FetchError> {
    let Download {
        final_url,
        status,
        content_type,
        mut body,
        mut warnings,
    } = download;
    let kind = match (content_type.declared(), content::sniff(&body)) {
        (_, Sniffed::Binary(mime)) => {
            return Err(FetchError::UnsupportedContentType {
                content_type: content_type.essence.unwrap_or_else(|| mime.to_string()),
            });
        }
        (Declared::Readable(kind), _) => kind,
        (Declared::Unknown, Sniffed::Readable(kind)) => kind,
        (Declared::Binary, _) => {
            return Err(FetchError::UnsupportedContentType {
                content_type: content_type.essence.unwrap_or_default(),
            });
        }
    };
    let reported_type = content_type
        .essence
        .clone()
        .filter(|_| content_type.declared() != Declared::Unknown)
        .unwrap_or_else(|| content::kind_mime(kind).to_string());
    let content_bytes = body.len() as u64;
    let mut limit_truncated = false;
    if kind == Kind::Html && body.len() as u64 > limits.html_input_bytes {
        body.truncate(usize::try_from(limits.html_input_bytes).unwrap_or(usize::MAX));
        warnings.push(Warning::HtmlInputTruncated);
        limit_truncated = true;
    }
    let text = charset::decode(body, content_type.charset.as_deref(), kind);
    let (title, mut markdown) = if kind == Kind::Html {
        let converted = html::html_to_markdown(&text, &final_url);
        warnings.extend(converted.warnings);
        (converted.title, converted.markdown)
    } else {
        (None, content::text_to_markdown(kind, text))
    };
    let markdown_limit = usize::try_from(limits.markdown_bytes).unwrap_or(usize::MAX);
    if truncate_to(&mut markdown, markdown_limit) {
        warnings.push(Warning::MarkdownTruncated);
        limit_truncated = true;
    }
    Ok(FetchedDocument {
        url: submitted,
        final_url: final_url.to_string(),
        status,
        content_type: reported_type,
        title,
        markdown,
        warnings,
        limit_truncated,
        content_bytes,
        duration: std::time::Duration::ZERO,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cursor_wins_over_url_and_headers() {
        let args = FetchArgs::from_json(&json!({"url": "http://a.test", "cursor": "abc"}));
        assert_eq!(args.ok(), Some(FetchArgs::Cursor("abc".into())));
    }

    #[test]
    fn argument_errors_name_the_path() {
        let err = |v: Value| FetchArgs::from_json(&v).err().map(|e| e.to_string());
        assert_eq!(
            err(json!({"url": "http://a.test", "headers": {"X-Key": 5}})),
            Some("headers.X-Key: header values must be strings".into())
        );
        assert!(err(json!({})).is_some_and(|m| m.starts_with("url:")));
        assert!(
            err(json!({"url": "http://a.test", "proxy": "x"}))
                .is_some_and(|m| m.starts_with("proxy:"))
        );
        assert_eq!(
            FetchArgs::from_json(&json!({"cursor": ""}))
                .err()
                .map(|e| e.code()),
            Some("invalid_cursor")
        );
    }

    #[test]
    fn urls_must_be_absolute_http_without_credentials() {
        for bad in [
            "ftp://x.test/",
            "/relative",
            "file:///etc/passwd",
            "http://u:p@x.test/",
        ] {
            assert_eq!(
                parse_url(bad).err().map(|e| e.code()),
                Some("invalid_url"),
                "{bad}"
            );
        }
        assert!(parse_url("https://x.test/a?b=1#c").is_ok());
    }
}
