//! The SSE streams: `GET /api/events` (reply status of every chat, library changes) and
//! `GET /api/replies/{id}/events` (one reply).
//!
//! Each event carries its id; a client reconnecting with `Last-Event-ID` first receives what it
//! missed. A client that fell too far behind — its gap is older than the kept history, or its
//! live buffer overflowed — receives one `reload` event and the stream ends: it re-reads what
//! it shows and reconnects. Publishing never waits for a slow client.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures_util::Stream;
use futures_util::stream::{self, StreamExt};
use serde_json::json;
use tavo_engine::{ReplyEvent, ReplyHandle};
use tokio::sync::broadcast;

use crate::error::{ApiError, ApiResult};
use crate::hub::{GlobalEvent, Replay};
use crate::sse;
use crate::state::AppState;
use tavo_engine::cluster::Elsewhere;
use tavo_engine::status::{ReplyRecord, stored_record};

/// The `Last-Event-ID` header, when it is a number.
pub fn last_event_id(headers: &HeaderMap) -> Option<u64> {
    headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
}

/// The `reload` event: the client must re-read its state and reconnect without an id.
fn reload_event(reason: &str) -> Bytes {
    sse::json_frame(None, "reload", &json!({ "reason": reason }))
}

fn to_sse(ev: &GlobalEvent) -> Bytes {
    sse::json_frame(Some(ev.id), ev.event, &ev.data)
}

/// The global event stream.
#[utoipa::path(get, path = "/api/events", tag = "events",
    params(("Last-Event-ID" = Option<u64>, Header, description = "The id of the last event received")),
    responses((status = 200, description = "text/event-stream of `library` (`{kind, action, id}`), \
        `reply` (`{replyId, chatId, status}`) and `reload` events", content_type = "text/event-stream")))]
pub async fn global(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let (replay, rx) = state.hub.subscribe(last_event_id(&headers));
    sse::response(global_stream(replay, rx), state.shutdown.clone())
}

fn global_stream(
    replay: Replay,
    rx: broadcast::Receiver<Arc<GlobalEvent>>,
) -> impl Stream<Item = Bytes> {
    let (first, replayed_to): (Vec<Bytes>, u64) = match replay {
        Replay::Gap => (
            vec![reload_event("missed events are no longer kept")],
            u64::MAX,
        ),
        Replay::Events(evs) => {
            let last = evs.last().map_or(0, |e| e.id);
            (evs.iter().map(|e| to_sse(e)).collect(), last)
        }
    };
    let gap = replayed_to == u64::MAX;
    let live = stream::unfold((rx, gap), move |(mut rx, done)| async move {
        if done {
            return None;
        }
        loop {
            match rx.recv().await {
                // Events already replayed can also be in the live channel: skip them.
                Ok(ev) if ev.id <= replayed_to => continue,
                Ok(ev) => return Some((to_sse(&ev), (rx, false))),
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    return Some((reload_event("this client fell too far behind"), (rx, true)));
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    });
    stream::iter(first).chain(live)
}

/// How a reply's event becomes an SSE event: `id` = its sequence number, `event` = its `type`,
/// `data` = the event as JSON (the same object `tavo reply --json` prints), written straight
/// into the frame.
fn reply_sse(event: &ReplyEvent) -> Bytes {
    sse::json_frame(Some(event.seq), event.kind.name(), event)
}

/// A reply's event stream: text and reasoning deltas, tool-call cards, waiting/resumed,
/// warnings, error, finished.
///
/// While the reply is in memory, a reconnect with `Last-Event-ID: N` resumes after event N.
/// A client whose gap is no longer in the reply's bounded log — or who falls so far behind
/// that its buffer overflows — receives `reload` (`{reason, lastEventId}`; its `id` is the
/// newest event): re-read the chat's messages (the partial text is saved as it streams) and
/// reconnect with that id. Once the reply has left memory (a restart), the stream is one
/// `finished` event built from the stored message. A reconnect after the final event is
/// answered 204, which tells `EventSource` to stop reconnecting.
#[utoipa::path(get, path = "/api/replies/{id}/events", tag = "events",
    params(("id" = String, Path),
           ("Last-Event-ID" = Option<u64>, Header, description = "The id of the last event received")),
    responses((status = 200, description = "text/event-stream of the reply's events", content_type = "text/event-stream"),
              (status = 204, description = "The client already has the final event"),
              (status = 404, description = "No such reply", body = crate::error::ErrorBody)))]
pub async fn reply(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let after = last_event_id(&headers);
    if let Some(handle) = state.replies.find(&id) {
        let after = after.unwrap_or(0);
        if after > 0 && !handle.status().is_live() {
            // The client already has the final event: 204 tells EventSource not to reconnect.
            let tail = handle.events_since(after - 1);
            if tail.len() == 1 && tail[0].is_final() {
                return Ok(StatusCode::NO_CONTENT.into_response());
            }
        }
        return Ok(sse::response(
            live_reply_stream(handle, after),
            state.shutdown.clone(),
        ));
    }
    // Running on another replica (a shared database): its events come from the database.
    let located = {
        let id = id.clone();
        state
            .blocking(move |s| tavo_engine::cluster::locate(s, &id))
            .await?
    };
    if let Some(Elsewhere::Live(_)) = located {
        return Ok(sse::response(
            followed_stream(state.clone(), id, after.unwrap_or(0)),
            state.shutdown.clone(),
        ));
    }
    let shown = id.clone();
    let stored = state
        .blocking_api(move |s| stored_reply(s, &id))
        .await?
        .ok_or_else(|| ApiError::not_found(format!("there is no reply with id {shown}")))?;
    let (record, message) = stored;
    Ok(sse::response(
        stream::iter([stored_finished(&record, message.as_ref())]),
        state.shutdown.clone(),
    ))
}

/// A reply's stored record and the message it wrote; `None` when no record has that id.
fn stored_reply(
    s: &tavo_store::Store,
    id: &str,
) -> ApiResult<Option<(ReplyRecord, Option<tavo_model::Message>)>> {
    let Some(record) = stored_record(s, id)? else {
        return Ok(None);
    };
    let message = match record.message_id {
        Some(m) => tavo_tools::reads::message(s, m)?,
        None => None,
    };
    Ok(Some((record, message)))
}

/// The `finished` frame of a reply that is no longer in any replica's memory, built from its
/// stored record and message.
fn stored_finished(record: &ReplyRecord, message: Option<&tavo_model::Message>) -> Bytes {
    let data = json!({
        "replyId": record.id,
        "type": "finished",
        "status": record.status.as_str(),
        "text": message.as_ref().map(|m| m.content.clone()).unwrap_or_default(),
        "reasoning": message.as_ref().and_then(|m| m.reasoning.clone()),
        "messageId": record.message_id,
        "source": "stored",
    });
    sse::json_frame(None, "finished", &data)
}

/// A reply running on another replica, followed through the database: its stored events after
/// `after`, then new ones as they are announced. Should the reply end without a final event
/// (its replica died and another marked it interrupted), the stream ends with the `finished`
/// frame of the stored record.
fn followed_stream(state: AppState, id: String, after: u64) -> impl Stream<Item = Bytes> {
    let events = tavo_engine::cluster::follow(state.store.clone(), id.clone(), after);
    let ended = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let seen_final = ended.clone();
    let frames = events.map(move |e| {
        if e.name == "finished" {
            seen_final.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        sse::raw_json_frame(Some(e.seq), &e.name, &e.data)
    });
    let tail = stream::once(async move {
        if ended.load(std::sync::atomic::Ordering::Relaxed) {
            return None;
        }
        let stored = state
            .blocking_api(move |s| stored_reply(s, &id))
            .await
            .ok()
            .flatten()?;
        Some(stored_finished(&stored.0, stored.1.as_ref()))
    })
    .filter_map(|f| async move { f });
    frames.chain(tail)
}

fn live_reply_stream(handle: ReplyHandle, after: u64) -> impl Stream<Item = Bytes> {
    let sub = handle.subscribe(after);
    stream::unfold((sub, handle, false), |(mut sub, handle, done)| async move {
        if done {
            return None;
        }
        match sub.next_shared().await? {
            Ok(event) => {
                let last = event.is_final();
                Some((reply_sse(&event), (sub, handle, last)))
            }
            Err(gap) => {
                // The newest event id, so the client's reconnect lands inside the log.
                let newest = handle
                    .events_since(gap.first.saturating_sub(1))
                    .last()
                    .map_or(gap.first, |e| e.seq);
                let event = sse::json_frame(
                    Some(newest),
                    "reload",
                    &json!({ "reason": gap.to_string(), "lastEventId": newest }),
                );
                Some((event, (sub, handle, true)))
            }
        }
    })
}
