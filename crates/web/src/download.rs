//! One GET with redirects followed by hand and the body read under limits.
//!
//! reqwest's own redirect policy keeps custom headers (`X-Api-Key`) across origins and its
//! automatic decompression hides the wire size, so both are off: this module follows at most
//! `max_redirects` redirects itself (dropping every caller header on the first cross-origin
//! hop) and decompresses through counters, so a 60 KB gzip bomb stops at the decompressed
//! limit instead of at the end of memory.

use std::io;
use std::time::Duration;

use async_compression::tokio::bufread::{
    BrotliDecoder, DeflateDecoder, GzipDecoder, ZlibDecoder, ZstdDecoder,
};
use futures_util::{StreamExt, TryStreamExt};
use reqwest::header::{self, HeaderMap, HeaderName, HeaderValue};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};
use tokio_util::io::StreamReader;
use url::Url;

use crate::content::{ContentType, Declared};
use crate::error::{BodyLimit, FetchError};
use crate::policy::FetchPolicy;
use crate::resolver::{check_literal_host, find_blocked};
use crate::warning::Warning;

/// What the network part of a fetch produced.
#[derive(Debug)]
pub(crate) struct Download {
    pub final_url: Url,
    pub status: u16,
    pub content_type: ContentType,
    /// Decompressed body, at most `decompressed_bytes` long.
    pub body: Vec<u8>,
    pub warnings: Vec<Warning>,
}

const DEFAULT_ACCEPT: &str = "text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.9,\
application/json;q=0.9,application/xml;q=0.8,*/*;q=0.5";
const ACCEPT_ENCODING: &str = "gzip, deflate, br, zstd";

/// Follows redirects from `url` and reads the final body. A declared binary type (an image,
/// audio…) is refused before its body is read unless `binary` says the caller stores bytes.
pub(crate) async fn download(
    client: &reqwest::Client,
    policy: &FetchPolicy,
    url: Url,
    caller_headers: &HeaderMap,
    binary: bool,
) -> Result<Download, FetchError> {
    let mut current = url;
    let mut headers = Some(caller_headers);
    let mut warnings = Vec::new();
    let mut redirects = 0usize;
    loop {
        check_scheme(&current)?;
        check_literal_host(policy.addresses, &current)?;
        let response = send(client, &current, headers).await?;
        let status = response.status();
        if matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308) {
            let next = redirect_target(&current, status.as_u16(), response.headers())?;
            if redirects >= policy.limits.max_redirects {
                return Err(FetchError::TooManyRedirects {
                    limit: policy.limits.max_redirects,
                    location: next.to_string(),
                });
            }
            redirects += 1;
            if headers.is_some_and(|h| !h.is_empty()) && next.origin() != current.origin() {
                headers = None;
                warnings.push(Warning::CrossOriginHeadersDropped);
            }
            current = next;
            continue;
        }
        if status.is_client_error() || status.is_server_error() {
            warnings.push(Warning::HttpErrorStatus);
        }
        let content_type = ContentType::parse(
            response
                .headers()
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok()),
        );
        if !binary && content_type.declared() == Declared::Binary {
            return Err(FetchError::UnsupportedContentType {
                content_type: content_type.essence.unwrap_or_default(),
            });
        }
        let body = read_body(response, policy, &current).await?;
        return Ok(Download {
            final_url: current,
            status: status.as_u16(),
            content_type,
            body,
            warnings,
        });
    }
}

fn check_scheme(url: &Url) -> Result<(), FetchError> {
    match url.scheme() {
        "http" | "https" => Ok(()),
        other => Err(FetchError::InvalidUrl(format!(
            "scheme {other:?} is not supported; use an http:// or https:// URL"
        ))),
    }
}

async fn send(
    client: &reqwest::Client,
    url: &Url,
    caller_headers: Option<&HeaderMap>,
) -> Result<reqwest::Response, FetchError> {
    let mut request = client.get(url.clone());
    let mut headers = HeaderMap::new();
    headers.insert(header::ACCEPT, HeaderValue::from_static(DEFAULT_ACCEPT));
    headers.insert(
        header::ACCEPT_ENCODING,
        HeaderValue::from_static(ACCEPT_ENCODING),
    );
    if let Some(caller) = caller_headers {
        for (name, value) in caller {
            headers.insert(name.clone(), value.clone());
        }
    }
    request = request.headers(headers);
    request.send().await.map_err(|e| network_error(url, &e))
}

fn network_error(url: &Url, err: &reqwest::Error) -> FetchError {
    if let Some(blocked) = find_blocked(err) {
        return FetchError::AddressNotAllowed {
            host: blocked.host,
            address: blocked.address,
            policy: "publicOnly",
        };
    }
    if err.is_timeout() {
        return FetchError::Timeout;
    }
    let mut message = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(s) = source {
        message.push_str(": ");
        message.push_str(&s.to_string());
        source = s.source();
    }
    // reqwest's messages name the URL; never echo one with userinfo.
    FetchError::Network {
        url: redacted(url),
        message,
    }
}

fn redacted(url: &Url) -> String {
    let mut url = url.clone();
    let _ = url.set_password(None);
    let _ = url.set_username("");
    url.to_string()
}

fn redirect_target(current: &Url, status: u16, headers: &HeaderMap) -> Result<Url, FetchError> {
    let location = headers
        .get(header::LOCATION)
        .ok_or_else(|| FetchError::BadRedirect {
            status,
            reason: "no Location header".into(),
        })?;
    let location = String::from_utf8_lossy(location.as_bytes());
    let next = current
        .join(location.trim())
        .map_err(|e| FetchError::BadRedirect {
            status,
            reason: format!("Location {location:?} is not a URL: {e}"),
        })?;
    if !matches!(next.scheme(), "http" | "https") {
        return Err(FetchError::BadRedirect {
            status,
            reason: format!("Location uses the {:?} scheme", next.scheme()),
        });
    }
    Ok(next)
}

/// Marker errors carried through `io::Error` from the wire stream.
#[derive(Debug, thiserror::Error)]
enum WireFailure {
    #[error("wire limit reached")]
    Limit,
    #[error("timed out")]
    Timeout,
    #[error("{0}")]
    Network(String),
}

async fn read_body(
    response: reqwest::Response,
    policy: &FetchPolicy,
    url: &Url,
) -> Result<Vec<u8>, FetchError> {
    let limits = policy.limits;
    let wire_limit = limits.wire_bytes;
    if response
        .content_length()
        .is_some_and(|len| len > wire_limit)
    {
        return Err(FetchError::TooLarge {
            which: BodyLimit::Wire,
            limit: wire_limit,
        });
    }
    let coding = content_coding(response.headers())?;
    let mut wire_seen = 0u64;
    let stream = response.bytes_stream().map_err(|e| {
        if e.is_timeout() {
            io::Error::other(WireFailure::Timeout)
        } else {
            io::Error::other(WireFailure::Network(e.to_string()))
        }
    });
    let stream = stream.map(move |item| {
        let chunk = item?;
        wire_seen += chunk.len() as u64;
        if wire_seen > wire_limit {
            Err(io::Error::other(WireFailure::Limit))
        } else {
            Ok(chunk)
        }
    });
    let reader = BufReader::new(StreamReader::new(stream));
    let limit = limits.decompressed_bytes;
    let result = match coding.as_deref() {
        None => read_capped(reader, limit).await,
        Some("gzip") => {
            let mut decoder = GzipDecoder::new(reader);
            decoder.multiple_members(true);
            read_capped(decoder, limit).await
        }
        Some("deflate") => {
            // "deflate" is zlib-wrapped by the standard, raw DEFLATE on some servers.
            let mut reader = reader;
            let first = reader.fill_buf().await.map(|b| b.first().copied());
            match first {
                Ok(Some(b)) if b & 0x0f == 8 => read_capped(ZlibDecoder::new(reader), limit).await,
                Ok(_) => read_capped(DeflateDecoder::new(reader), limit).await,
                Err(e) => Err(BodyError::Io(e)),
            }
        }
        Some("br") => read_capped(BrotliDecoder::new(reader), limit).await,
        Some("zstd") => read_capped(ZstdDecoder::new(reader), limit).await,
        Some(other) => return Err(FetchError::UnsupportedEncoding(other.to_string())),
    };
    result.map_err(|e| body_error(e, coding.as_deref(), url, policy))
}

fn body_error(err: BodyError, coding: Option<&str>, url: &Url, policy: &FetchPolicy) -> FetchError {
    match err {
        BodyError::Limit => FetchError::TooLarge {
            which: BodyLimit::Decompressed,
            limit: policy.limits.decompressed_bytes,
        },
        BodyError::Io(e) => match e.get_ref().and_then(|r| r.downcast_ref::<WireFailure>()) {
            Some(WireFailure::Limit) => FetchError::TooLarge {
                which: BodyLimit::Wire,
                limit: policy.limits.wire_bytes,
            },
            Some(WireFailure::Timeout) => FetchError::Timeout,
            Some(WireFailure::Network(message)) => FetchError::Network {
                url: redacted(url),
                message: message.clone(),
            },
            None => match coding {
                Some(encoding) => FetchError::Decode {
                    encoding: encoding.to_string(),
                    message: e.to_string(),
                },
                None => FetchError::Network {
                    url: redacted(url),
                    message: e.to_string(),
                },
            },
        },
    }
}

/// The single content coding to undo, `None` for identity.
fn content_coding(headers: &HeaderMap) -> Result<Option<String>, FetchError> {
    let codings: Vec<String> = headers
        .get_all(header::CONTENT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|c| c.trim().to_ascii_lowercase())
        .filter(|c| !c.is_empty() && c != "identity")
        .collect();
    match codings.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(match one.as_str() {
            "x-gzip" => "gzip".to_string(),
            other => other.to_string(),
        })),
        _ => Err(FetchError::UnsupportedEncoding(codings.join(", "))),
    }
}

enum BodyError {
    Limit,
    Io(io::Error),
}

/// Reads until EOF or until more than `limit` bytes came out. Capacity grows by doubling but
/// never past the limit, so the peak allocation is bounded by `limit` plus one read buffer.
async fn read_capped<R: AsyncRead + Unpin>(
    mut reader: R,
    limit: u64,
) -> Result<Vec<u8>, BodyError> {
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let mut out: Vec<u8> = Vec::with_capacity(64 * 1024);
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = reader.read(&mut chunk).await.map_err(BodyError::Io)?;
        if n == 0 {
            return Ok(out);
        }
        if out.len() + n > limit {
            return Err(BodyError::Limit);
        }
        if out.capacity() - out.len() < n {
            let target = (out.capacity() * 2).max(out.len() + n).min(limit);
            out.reserve_exact(target - out.len());
        }
        out.extend_from_slice(&chunk[..n]);
    }
}

/// Builds the HTTP client a [`crate::WebFetcher`] uses: no redirects, no automatic
/// decompression, no proxy, the address-policy resolver.
pub(crate) fn build_client(policy: &FetchPolicy) -> Result<reqwest::Client, FetchError> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_gzip()
        .no_brotli()
        .no_deflate()
        .no_proxy()
        .connect_timeout(policy.connect_timeout)
        .read_timeout(Duration::from_secs(30).min(policy.total_timeout))
        .user_agent(policy.user_agent.clone())
        .dns_resolver(std::sync::Arc::new(crate::resolver::PolicyResolver {
            policy: policy.addresses,
        }))
        .build()
        .map_err(|e| FetchError::Internal(format!("could not build the HTTP client: {e}")))
}

/// Validates caller headers into a `HeaderMap`, naming the offending header on error.
pub(crate) fn caller_headers(pairs: &[(String, String)]) -> Result<HeaderMap, FetchError> {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        let header_name = HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| {
            FetchError::invalid(format!("headers.{name}"), "is not a valid HTTP header name")
        })?;
        // The value is never echoed: it may be a credential.
        let header_value = HeaderValue::from_str(value).map_err(|_| {
            FetchError::invalid(
                format!("headers.{name}"),
                "the value contains characters not allowed in an HTTP header (such as a newline)",
            )
        })?;
        if matches!(
            header_name,
            header::HOST | header::CONTENT_LENGTH | header::TRANSFER_ENCODING | header::CONNECTION
        ) {
            return Err(FetchError::invalid(
                format!("headers.{name}"),
                "is managed by the HTTP client and cannot be set",
            ));
        }
        map.append(header_name, header_value);
    }
    Ok(map)
}
