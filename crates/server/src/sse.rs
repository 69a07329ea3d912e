//! Server-sent events on the wire: frames written straight into their bytes, and the response
//! body that carries them with a keep-alive and an end at shutdown.
//!
//! Why not axum's `Sse`: a reply's stream relays one frame per token from the provider, tens
//! of thousands a second under load, and every microsecond per frame is latency for every
//! other chat on the same core. axum builds each event field by field (a string per id, a
//! newline scan over the data, a buffer per event), resets its keep-alive timer for every
//! event, and `take_until` on the server's shutdown token locks that token's waiter list —
//! one lock shared by every open stream — on every poll. Here a frame is one buffer written
//! once, the keep-alive timer is re-armed only when it fires, and the shutdown token is
//! registered once and then read with an atomic load.

use std::convert::Infallible;
use std::future::Future;
use std::io::Write;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures_util::Stream;
use http_body::Frame;
use tokio::time::{Instant, Sleep};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

/// Silence after which a comment is sent, so that proxies and browsers keep the stream open.
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The keep-alive frame: an empty comment.
const KEEP_ALIVE_FRAME: &[u8] = b":\n\n";

/// One SSE event: `id: ID` (when given), `event: NAME`, then `data: ` followed by what `data`
/// writes, which must be a single line (JSON as `serde_json` writes it always is).
fn frame(id: Option<u64>, event: &str, data: impl FnOnce(&mut Vec<u8>)) -> Bytes {
    let mut buf = Vec::with_capacity(160);
    if let Some(id) = id {
        // Writing into a Vec cannot fail.
        let _ = writeln!(buf, "id: {id}");
    }
    buf.extend_from_slice(b"event: ");
    buf.extend_from_slice(event.as_bytes());
    buf.extend_from_slice(b"\ndata: ");
    let data_at = buf.len();
    data(&mut buf);
    debug_assert!(
        !buf[data_at..].contains(&b'\n'),
        "an SSE data line must not contain a newline"
    );
    buf.extend_from_slice(b"\n\n");
    Bytes::from(buf)
}

/// A JSON value as the data of one event.
pub fn json_frame(id: Option<u64>, event: &str, value: &impl serde::Serialize) -> Bytes {
    frame(id, event, |buf| {
        let start = buf.len();
        if serde_json::to_writer(&mut *buf, value).is_err() {
            // Whatever the serialiser wrote before it failed is not JSON.
            buf.truncate(start);
            buf.extend_from_slice(br#"{"error":"this event could not be serialised"}"#);
        }
    })
}

/// An event whose data is JSON text already (an event another replica stored). Text that is
/// not one line of JSON, or a name that is not a plain event name, is not sent as it is: the
/// database is outside this process.
pub fn raw_json_frame(id: Option<u64>, event: &str, json: &str) -> Bytes {
    let plain_name = !event.is_empty()
        && event
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b == b'_' || b.is_ascii_digit());
    let event = if plain_name { event } else { "message" };
    if json.contains(['\n', '\r']) || serde_json::from_str::<serde::de::IgnoredAny>(json).is_err() {
        return json_frame(
            id,
            event,
            &serde_json::json!({"error": "this event could not be read from the database"}),
        );
    }
    frame(id, event, |buf| buf.extend_from_slice(json.as_bytes()))
}

/// The `text/event-stream` response for a stream of frames.
pub fn response<S>(frames: S, shutdown: CancellationToken) -> Response
where
    S: Stream<Item = Bytes> + Send + 'static,
{
    (
        [
            (http::header::CONTENT_TYPE, "text/event-stream"),
            (http::header::CACHE_CONTROL, "no-cache"),
        ],
        Body::new(EventBody::new(frames, shutdown, KEEP_ALIVE)),
    )
        .into_response()
}

/// The body of an SSE response: `frames` as they come, a keep-alive comment after `interval`
/// without one ([`KEEP_ALIVE`] in responses), and the end when the stream ends or the server
/// shuts down.
struct EventBody<S> {
    frames: Pin<Box<S>>,
    shutdown: CancellationToken,
    /// Polled once per task waker to register it; after that the token's state is read with
    /// [`CancellationToken::is_cancelled`], and its cancellation wakes the registered waker.
    cancelled: Pin<Box<WaitForCancellationFutureOwned>>,
    registered: Option<Waker>,
    /// Fires no earlier than `interval` after the last frame; when it finds a frame was sent
    /// since it was armed, it is re-armed for that frame instead of sending anything.
    keep_alive: Pin<Box<Sleep>>,
    interval: Duration,
    last_frame: Instant,
    done: bool,
}

impl<S> EventBody<S> {
    fn new(frames: S, shutdown: CancellationToken, interval: Duration) -> Self {
        let now = Instant::now();
        EventBody {
            frames: Box::pin(frames),
            cancelled: Box::pin(shutdown.clone().cancelled_owned()),
            shutdown,
            registered: None,
            keep_alive: Box::pin(tokio::time::sleep_until(now + interval)),
            interval,
            last_frame: now,
            done: false,
        }
    }

    /// Whether the server is shutting down; registers the task's waker the first time (and
    /// whenever the body moves to another task).
    fn shutting_down(&mut self, cx: &mut Context<'_>) -> bool {
        if self.shutdown.is_cancelled() {
            return true;
        }
        if self
            .registered
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            return false;
        }
        self.registered = Some(cx.waker().clone());
        self.cancelled.as_mut().poll(cx).is_ready()
    }

    /// A keep-alive frame when `interval` has passed since the last frame.
    fn poll_keep_alive(&mut self, cx: &mut Context<'_>) -> Poll<Bytes> {
        while self.keep_alive.as_mut().poll(cx).is_ready() {
            let due = self.last_frame + self.interval;
            let now = Instant::now();
            if now >= due {
                self.last_frame = now;
                self.keep_alive.as_mut().reset(now + self.interval);
                return Poll::Ready(Bytes::from_static(KEEP_ALIVE_FRAME));
            }
            self.keep_alive.as_mut().reset(due);
        }
        Poll::Pending
    }
}

impl<S: Stream<Item = Bytes>> http_body::Body for EventBody<S> {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        // Every field is boxed or `Unpin`, so the body itself is `Unpin`.
        let this = self.get_mut();
        if this.done || this.shutting_down(cx) {
            this.done = true;
            return Poll::Ready(None);
        }
        match this.frames.as_mut().poll_next(cx) {
            Poll::Ready(Some(bytes)) => {
                this.last_frame = Instant::now();
                Poll::Ready(Some(Ok(Frame::data(bytes))))
            }
            Poll::Ready(None) => {
                this.done = true;
                Poll::Ready(None)
            }
            Poll::Pending => this
                .poll_keep_alive(cx)
                .map(|bytes| Some(Ok(Frame::data(bytes)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.done
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;
    use futures_util::stream;
    use http_body_util::BodyExt;

    #[test]
    fn a_frame_is_id_event_and_one_data_line() {
        let f = json_frame(Some(7), "text_delta", &serde_json::json!({"text": "a\nb"}));
        assert_eq!(
            &f[..],
            b"id: 7\nevent: text_delta\ndata: {\"text\":\"a\\nb\"}\n\n"
        );
        let f = frame(None, "reload", |b| b.extend_from_slice(b"{}"));
        assert_eq!(&f[..], b"event: reload\ndata: {}\n\n");
    }

    #[test]
    fn a_value_that_fails_half_way_leaves_no_partial_json() {
        // serde_json writes `{` and then refuses a key that is not a string.
        let unwritable = std::collections::BTreeMap::from([((1u8, 2u8), 3u8)]);
        let f = json_frame(None, "x", &unwritable);
        assert_eq!(
            &f[..],
            &b"event: x\ndata: {\"error\":\"this event could not be serialised\"}\n\n"[..]
        );
    }

    #[tokio::test]
    async fn frames_pass_through_and_the_body_ends_with_the_stream() {
        let frames = stream::iter([Bytes::from_static(b"a"), Bytes::from_static(b"b")]);
        let body = EventBody::new(frames, CancellationToken::new(), KEEP_ALIVE);
        let collected = body.collect().await.map(|c| c.to_bytes());
        assert_eq!(collected.ok().as_deref(), Some(&b"ab"[..]));
    }

    #[tokio::test]
    async fn silence_sends_a_keep_alive_and_frames_postpone_it() {
        let interval = Duration::from_millis(200);
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Bytes>();
        let mut body = EventBody::new(stream_of(rx), CancellationToken::new(), interval);
        tokio::time::sleep(interval / 2).await;
        let sent = Instant::now();
        let _ = tx.send(Bytes::from_static(b"x"));
        assert_eq!(next(&mut body).await.as_deref(), Some(&b"x"[..]));
        assert_eq!(
            next(&mut body).await.as_deref(),
            Some(KEEP_ALIVE_FRAME),
            "silence ends in a keep-alive"
        );
        // Timers never fire early: the frame moved the keep-alive a whole interval on.
        assert!(sent.elapsed() >= interval);
        drop(tx);
        assert!(next(&mut body).await.is_none());
    }

    #[tokio::test]
    async fn shutdown_ends_a_waiting_body() {
        let (_tx, rx) = tokio::sync::mpsc::unbounded_channel::<Bytes>();
        let shutdown = CancellationToken::new();
        let mut body = EventBody::new(stream_of(rx), shutdown.clone(), KEEP_ALIVE);
        let waiting = tokio::spawn(async move { next(&mut body).await });
        tokio::task::yield_now().await;
        shutdown.cancel();
        let ended = tokio::time::timeout(Duration::from_secs(5), waiting).await;
        assert!(matches!(ended, Ok(Ok(None))), "{ended:?}");
    }

    async fn next<S: Stream<Item = Bytes>>(body: &mut EventBody<S>) -> Option<Bytes> {
        let frame = body.frame().await?.ok()?;
        frame.into_data().ok()
    }

    fn stream_of(mut rx: tokio::sync::mpsc::UnboundedReceiver<Bytes>) -> impl Stream<Item = Bytes> {
        stream::poll_fn(move |cx| rx.poll_recv(cx)).boxed()
    }
}
