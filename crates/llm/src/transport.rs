//! Sending a canonical request to a provider and streaming canonical events back.
//!
//! - The body is encoded once; every retry sends the same bytes.
//! - Retries happen only before the first byte of output (see [`crate::retry`]).
//! - Dropping the returned stream drops the HTTP response, which aborts the request.
//! - A connect timeout, a time-to-headers timeout and an idle timeout between chunks bound
//!   every wait; none of them limits a long answer that keeps streaming.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use futures_util::{Stream, StreamExt};

use crate::codec::{self, StreamDecode};
use crate::error::{ErrorKind, LlmError, error_from_response, scrub};
use crate::event::StreamEvent;
use crate::protocol::Protocol;
use crate::request::ChatRequest;
use crate::retry::{RetryPolicy, parse_retry_after};

/// Where to send a request.
#[derive(Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The wire protocol: it picks the codec, the URL path and how the key is sent.
    pub protocol: Protocol,
    /// The base URL as the user gave it (`https://api.openai.com/v1`,
    /// `https://api.anthropic.com`, `https://generativelanguage.googleapis.com`).
    pub base_url: String,
    /// The key, sent as `Authorization: Bearer` (OpenAI), `x-api-key` (Anthropic) or
    /// `x-goog-api-key` (Gemini); `None` or empty sends none. Masked in `Debug` and scrubbed
    /// from error messages.
    pub api_key: Option<String>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("protocol", &self.protocol)
            .field("base_url", &self.base_url)
            .field(
                "api_key",
                &self.api_key.as_deref().map(crate::connection::mask_key),
            )
            .finish()
    }
}

/// Time limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Longest wait for the TCP and TLS connection (default 15 s).
    pub connect: Duration,
    /// From sending the request to the response headers (a reasoning model may think long
    /// before its first byte when not streaming).
    pub headers: Duration,
    /// Longest silence between two chunks of a stream (or for a whole non-streamed body).
    pub idle: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(15),
            headers: Duration::from_secs(300),
            idle: Duration::from_secs(120),
        }
    }
}

/// The URL of the generation endpoint for a protocol, base URL and model.
pub fn endpoint_url(protocol: Protocol, base_url: &str, model: &str, stream: bool) -> String {
    let base = base_url.trim().trim_end_matches('/');
    match protocol {
        Protocol::OpenaiChat if base.ends_with("/chat/completions") => base.to_owned(),
        Protocol::OpenaiChat => format!("{base}/chat/completions"),
        Protocol::OpenaiResponses if base.ends_with("/responses") => base.to_owned(),
        Protocol::OpenaiResponses => format!("{base}/responses"),
        Protocol::Anthropic if base.ends_with("/messages") => base.to_owned(),
        Protocol::Anthropic if base.ends_with("/v1") => format!("{base}/messages"),
        Protocol::Anthropic => format!("{base}/v1/messages"),
        Protocol::Gemini => {
            let model = model.trim_start_matches("models/");
            let has_version = ["/v1", "/v1beta", "/v1alpha"]
                .iter()
                .any(|v| base.ends_with(v) || base.contains(&format!("{v}/")));
            let prefix = if has_version {
                base.to_owned()
            } else {
                format!("{base}/v1beta")
            };
            if stream {
                format!("{prefix}/models/{model}:streamGenerateContent?alt=sse")
            } else {
                format!("{prefix}/models/{model}:generateContent")
            }
        }
    }
}

/// The provider client. Cheap to clone; share one per process.
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    /// When a chat request is sent again. Media requests are never retried (a generation
    /// costs money).
    pub retry: RetryPolicy,
    /// Time limits for every request, chat and media. `connect` is fixed when the client is
    /// built; changing it later has no effect.
    pub timeouts: Timeouts,
}

impl Client {
    /// A client with default limits.
    pub fn new() -> Result<Self, LlmError> {
        Self::with(RetryPolicy::default(), Timeouts::default())
    }

    /// A client with the given limits.
    pub fn with(retry: RetryPolicy, timeouts: Timeouts) -> Result<Self, LlmError> {
        let http = reqwest::Client::builder()
            .connect_timeout(timeouts.connect)
            .user_agent(concat!("tavo/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| {
                LlmError::new(
                    ErrorKind::Network,
                    format!("cannot build the HTTP client: {e}"),
                )
            })?;
        Ok(Client {
            http,
            retry,
            timeouts,
        })
    }

    /// The underlying HTTP client (media requests, which have their own codecs, use it too).
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    fn request(
        &self,
        ep: &Endpoint,
        url: &str,
        body: Bytes,
        stream: bool,
    ) -> reqwest::RequestBuilder {
        let mut rb = self
            .http
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(
                reqwest::header::ACCEPT,
                if stream {
                    "text/event-stream"
                } else {
                    "application/json"
                },
            )
            .body(body);
        let key = ep.api_key.as_deref().filter(|k| !k.is_empty());
        match ep.protocol {
            Protocol::OpenaiChat | Protocol::OpenaiResponses => {
                if let Some(k) = key {
                    rb = rb.bearer_auth(k);
                }
            }
            Protocol::Anthropic => {
                rb = rb.header("anthropic-version", "2023-06-01");
                if let Some(k) = key {
                    rb = rb.header("x-api-key", k);
                }
            }
            Protocol::Gemini => {
                if let Some(k) = key {
                    rb = rb.header("x-goog-api-key", k);
                }
            }
        }
        rb
    }

    /// Sends `req` and returns the event stream. Errors before any output (after retries)
    /// come back as `Err`; errors after output started arrive as [`StreamEvent::Error`].
    /// Encoding warnings (dropped native blocks, schema rewrites) lead the stream as
    /// [`StreamEvent::Warning`]s.
    pub async fn send(&self, ep: &Endpoint, req: &ChatRequest) -> Result<EventStream, LlmError> {
        let encoded = codec::encode(ep.protocol, req)
            .map_err(|e| LlmError::new(ErrorKind::InvalidRequest, e.to_string()))?;
        let body = Bytes::from(serde_json::to_vec(&encoded.body).map_err(|e| {
            LlmError::new(
                ErrorKind::InvalidRequest,
                format!("cannot serialize the request: {e}"),
            )
        })?);
        let url = endpoint_url(ep.protocol, &ep.base_url, &req.model, req.stream);
        let secret = ep.api_key.as_deref();
        let mut attempt = 0u32;
        let response = loop {
            let sent = tokio::time::timeout(
                self.timeouts.headers,
                self.request(ep, &url, body.clone(), req.stream).send(),
            )
            .await;
            let failure = match sent {
                Err(_) => {
                    // The request may have reached the provider: not retried.
                    return Err(LlmError::new(
                        ErrorKind::Timeout,
                        format!(
                            "no response from {url} within {}s",
                            self.timeouts.headers.as_secs()
                        ),
                    ));
                }
                Ok(Err(e)) => {
                    let connect = e.is_connect();
                    let err = LlmError::new(
                        if e.is_timeout() {
                            ErrorKind::Timeout
                        } else {
                            ErrorKind::Network
                        },
                        scrub(&format!("cannot reach {url}: {}", error_chain(&e)), secret),
                    );
                    if !connect {
                        return Err(err);
                    }
                    err
                }
                Ok(Ok(resp)) if resp.status().is_success() => break resp,
                Ok(Ok(resp)) => {
                    let status = resp.status().as_u16();
                    let h = resp.headers();
                    let header =
                        |n: &str| h.get(n).and_then(|v| v.to_str().ok()).map(str::to_owned);
                    let retry_after = parse_retry_after(
                        header("retry-after-ms").as_deref(),
                        header("retry-after").as_deref(),
                        SystemTime::now(),
                    );
                    let body = tokio::time::timeout(self.timeouts.idle, resp.bytes())
                        .await
                        .ok()
                        .and_then(Result::ok)
                        .unwrap_or_default();
                    let err = error_from_response(ep.protocol, status, retry_after, &body, secret);
                    if !RetryPolicy::retryable_status(status) {
                        return Err(err);
                    }
                    err
                }
            };
            attempt += 1;
            match self.retry.delay(attempt, failure.retry_after) {
                Some(d) => {
                    tracing::debug!(attempt, delay_ms = d.as_millis() as u64, kind = %failure.kind, "retrying the same request");
                    tokio::time::sleep(d).await;
                }
                None => return Err(failure),
            }
        };
        let is_sse = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.starts_with("text/event-stream"));
        let mut pending: VecDeque<StreamEvent> = encoded
            .warnings
            .into_iter()
            .map(|message| StreamEvent::Warning { message })
            .collect();
        if !req.stream || !is_sse {
            // Streaming off, or a server that ignored `stream: true` and sent one JSON body.
            let body = tokio::time::timeout(self.timeouts.idle, response.bytes())
                .await
                .map_err(|_| {
                    LlmError::new(
                        ErrorKind::Timeout,
                        "the response body did not arrive in time",
                    )
                })?
                .map_err(|e| {
                    LlmError::new(
                        ErrorKind::Network,
                        format!("reading the response failed: {}", error_chain(&e)),
                    )
                })?;
            let events = if is_sse {
                codec::decode_stream(ep.protocol, &body)
            } else {
                codec::decode_body(ep.protocol, &body)
            };
            pending.extend(events);
            return Ok(EventStream {
                inner: Box::pin(futures_util::stream::iter(pending)),
            });
        }
        let idle = self.timeouts.idle;
        let state = Pump {
            bytes: Box::pin(response.bytes_stream()),
            decoder: StreamDecode::new(ep.protocol),
            pending,
            scratch: Vec::new(),
            idle,
            last_chunk: tokio::time::Instant::now(),
            idle_timer: Box::pin(tokio::time::sleep(idle)),
            done: false,
        };
        let inner = futures_util::stream::unfold(state, |mut s| async move {
            s.next_event().await.map(|e| (e, s))
        });
        Ok(EventStream {
            inner: Box::pin(inner),
        })
    }

    /// Sends `req` and waits for the whole reply.
    pub async fn complete(
        &self,
        ep: &Endpoint,
        req: &ChatRequest,
    ) -> Result<crate::response::ChatResponse, LlmError> {
        let mut stream = self.send(ep, req).await?;
        let mut b = crate::response::ReplyBuilder::new();
        while let Some(e) = stream.next().await {
            b.push(&e);
        }
        Ok(b.finish())
    }
}

/// reqwest's own message is terse ("error sending request"); the source chain says why.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        src = inner.source();
    }
    s
}

type ByteStream = Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>;

/// Reads chunks, decodes them and hands out events one by one.
struct Pump {
    bytes: ByteStream,
    decoder: StreamDecode,
    pending: VecDeque<StreamEvent>,
    scratch: Vec<StreamEvent>,
    idle: Duration,
    /// When the last chunk arrived (or the headers, before the first).
    last_chunk: tokio::time::Instant,
    /// Fires at `last_chunk + idle` or earlier; when it fires early (chunks came since it was
    /// armed) it is re-armed then. One timer per stream, re-armed about once per `idle`,
    /// instead of a timer-wheel entry in and out for every chunk.
    idle_timer: Pin<Box<tokio::time::Sleep>>,
    done: bool,
}

impl Pump {
    async fn next_event(&mut self) -> Option<StreamEvent> {
        loop {
            if let Some(e) = self.pending.pop_front() {
                return Some(e);
            }
            if self.done {
                return None;
            }
            let next = loop {
                tokio::select! {
                    biased;
                    chunk = self.bytes.next() => break Ok(chunk),
                    () = &mut self.idle_timer => {
                        let due = self.last_chunk + self.idle;
                        if tokio::time::Instant::now() >= due {
                            break Err(());
                        }
                        self.idle_timer.as_mut().reset(due);
                    }
                }
            };
            match next {
                Ok(Some(Ok(chunk))) => {
                    self.last_chunk = tokio::time::Instant::now();
                    self.decoder.feed(&chunk, &mut self.scratch);
                }
                Ok(Some(Err(e))) => {
                    self.done = true;
                    self.decoder.finish(&mut Vec::new());
                    self.scratch.push(
                        LlmError::new(
                            ErrorKind::Network,
                            format!(
                                "the connection broke during the answer: {}",
                                error_chain(&e)
                            ),
                        )
                        .to_event(),
                    );
                }
                Ok(None) => {
                    self.done = true;
                    self.decoder.finish(&mut self.scratch);
                }
                Err(_) => {
                    self.done = true;
                    self.scratch.push(
                        LlmError::new(
                            ErrorKind::Timeout,
                            format!(
                                "the provider sent nothing for {}s during the answer",
                                self.idle.as_secs()
                            ),
                        )
                        .to_event(),
                    );
                }
            }
            self.pending.extend(self.scratch.drain(..));
        }
    }
}

/// The canonical events of one reply. Dropping it aborts the HTTP request.
pub struct EventStream {
    inner: Pin<Box<dyn Stream<Item = StreamEvent> + Send>>,
}

impl Stream for EventStream {
    type Item = StreamEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.as_mut().poll_next(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_per_protocol() {
        assert_eq!(
            endpoint_url(Protocol::OpenaiChat, "http://127.0.0.1:8080/v1/", "m", true),
            "http://127.0.0.1:8080/v1/chat/completions"
        );
        assert_eq!(
            endpoint_url(
                Protocol::OpenaiResponses,
                "https://api.openai.com/v1",
                "m",
                true
            ),
            "https://api.openai.com/v1/responses"
        );
        assert_eq!(
            endpoint_url(Protocol::Anthropic, "https://api.anthropic.com", "m", true),
            "https://api.anthropic.com/v1/messages"
        );
        assert_eq!(
            endpoint_url(Protocol::Anthropic, "http://h/v1", "m", true),
            "http://h/v1/messages"
        );
        assert_eq!(
            endpoint_url(
                Protocol::Gemini,
                "https://generativelanguage.googleapis.com",
                "models/gemini-3",
                true
            ),
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-3:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            endpoint_url(
                Protocol::Gemini,
                "https://aiplatform.googleapis.com/v1/publishers/google",
                "g",
                false
            ),
            "https://aiplatform.googleapis.com/v1/publishers/google/models/g:generateContent"
        );
    }

    #[test]
    fn endpoint_debug_masks_the_key() {
        let ep = Endpoint {
            protocol: Protocol::OpenaiChat,
            base_url: "http://x".into(),
            api_key: Some("sk-very-secret-key-123".into()),
        };
        assert!(!format!("{ep:?}").contains("very-secret"));
    }
}
