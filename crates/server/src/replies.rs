//! The server's view of replies: starting them in the engine, finding them again, and
//! reporting their status on the global stream.
//!
//! The engine owns a reply while it lives (closing the page that started it changes nothing).
//! The server adds two things: a watcher per reply that publishes its status changes
//! (`running`, `waiting` with what it waits for, `finished`/`cancelled`/`failed`) to the global
//! stream — the "waiting" badge of a chat the user is not looking at — and a bounded memory of
//! recently ended replies, so a page that reconnects just after the end still gets the events
//! it missed from memory rather than from the stored message.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use tavo_model::ChatId;

use serde_json::{Value, json};
use tavo_engine::{CallStatus, Engine, EngineError, EventKind, ReplyHandle, ReplyRequest};

use crate::hub::Hub;
use crate::memory::Trimmer;

/// Ended replies kept in memory for late readers of their event stream. Each keeps its event
/// log (at most the engine's `LOG_CAPACITY` events), so this bounds the memory ended replies
/// hold; older ones are served from the stored message.
pub const RECENT_CAPACITY: usize = 32;

/// Replies started through this server.
#[derive(Clone)]
pub struct Replies {
    engine: Engine,
    hub: Hub,
    recent: Arc<Mutex<VecDeque<ReplyHandle>>>,
    trimmer: Trimmer,
}

impl std::fmt::Debug for Replies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replies")
            .field("engine", &self.engine)
            .finish_non_exhaustive()
    }
}

impl Replies {
    /// A reply manager over `engine`, reporting to `hub`; `trimmer` returns memory to the
    /// system once the last live reply has ended.
    pub fn new(engine: Engine, hub: Hub, trimmer: Trimmer) -> Self {
        Replies {
            engine,
            hub,
            recent: Arc::new(Mutex::new(VecDeque::with_capacity(RECENT_CAPACITY))),
            trimmer,
        }
    }

    /// The engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Starts a reply and its status watcher. Must be called inside the tokio runtime.
    pub fn start(&self, request: ReplyRequest) -> Result<ReplyHandle, EngineError> {
        let handle = self.engine.start(request)?;
        self.watch(&handle);
        Ok(handle)
    }

    /// Sends the user's message through the engine's one send operation (`/imagine`, the
    /// draft, the empty-send refusal, the attachment: see `tavo_engine::send`), watches the
    /// reply it started and announces the message it wrote.
    pub async fn send(
        &self,
        out: tavo_engine::send::Outgoing,
    ) -> Result<tavo_engine::send::Sent, EngineError> {
        let sent = self.engine.send(out).await?;
        if let tavo_engine::send::Sent::Reply { handle, .. } = &sent {
            self.watch(handle);
        }
        if let Some(id) = sent.message_id() {
            self.hub.library("message", "created", Some(id.get()));
        }
        Ok(sent)
    }

    /// Starts the status watcher of a reply this server started. Must be called inside the
    /// tokio runtime; the watcher reads the reply's log from its start, so none is missed.
    fn watch(&self, handle: &ReplyHandle) {
        let watcher = Watcher {
            handle: handle.clone(),
            hub: self.hub.clone(),
            recent: self.recent.clone(),
            replies: self.clone(),
        };
        tokio::spawn(watcher.run());
    }

    /// The reply with this id: live in the engine, or recently ended.
    pub fn find(&self, id: &str) -> Option<ReplyHandle> {
        self.engine.reply(id).or_else(|| {
            self.recent
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .find(|h| h.id() == id)
                .cloned()
        })
    }

    /// The live reply of a chat.
    pub fn for_chat(&self, chat: ChatId) -> Option<ReplyHandle> {
        self.engine
            .reply_for_chat(chat)
            .filter(|h| h.status().is_live())
    }

    /// Every live reply.
    pub fn live(&self) -> Vec<ReplyHandle> {
        let mut live = self.engine.live();
        live.retain(|h| h.status().is_live());
        live.sort_by_key(ReplyHandle::chat);
        live
    }
}

/// The JSON the API shows for a reply in memory.
pub fn describe(handle: &ReplyHandle) -> Value {
    let pending = handle.pending().map(|(id, interaction)| {
        let mut v = serde_json::to_value(&interaction).unwrap_or(Value::Null);
        if let Value::Object(m) = &mut v {
            m.insert("pendingId".into(), json!(id));
        }
        v
    });
    json!({
        "replyId": handle.id(),
        "chatId": handle.chat(),
        "status": handle.status().as_str(),
        "pending": pending,
    })
}

struct Watcher {
    handle: ReplyHandle,
    hub: Hub,
    recent: Arc<Mutex<VecDeque<ReplyHandle>>>,
    replies: Replies,
}

impl Watcher {
    async fn run(self) {
        let reply = self.handle.id().to_owned();
        let chat = self.handle.chat();
        let registry = self.replies.engine.registry();
        let mut sub = self.handle.subscribe_milestones(0);
        while let Some(next) = sub.next_shared().await {
            // A gap only loses deltas for this watcher; statuses are re-read from the handle.
            let Ok(event) = next else { continue };
            // A tool's write inside a reply is news for the open app as the operation door's
            // is: the same `library` event, so lists and editors refresh.
            if let EventKind::ToolCall { call } = &event.kind
                && call.status == CallStatus::Ok
                && let Some(op) = registry.get(&call.tool)
                && op.safety().writes()
            {
                self.hub.publish(
                    "library",
                    json!({ "kind": "operation", "action": op.name(), "chat": chat }),
                );
            }
            let update = match &event.kind {
                EventKind::Started { message_id, .. } => Some(
                    json!({ "replyId": reply, "chatId": chat, "status": "running", "messageId": message_id }),
                ),
                // A group reply's later speakers write new messages.
                EventKind::Speaker {
                    message_id,
                    character_id,
                    turn,
                    ..
                } if *turn > 1 => Some(json!({
                    "replyId": reply, "chatId": chat, "status": "running",
                    "messageId": message_id, "characterId": character_id,
                })),
                EventKind::Waiting {
                    pending_id,
                    interaction,
                } => Some(json!({
                    "replyId": reply, "chatId": chat, "status": "waiting",
                    "pendingId": pending_id, "interaction": interaction,
                })),
                EventKind::Resumed { pending_id } => Some(
                    json!({ "replyId": reply, "chatId": chat, "status": "running", "pendingId": pending_id }),
                ),
                EventKind::Finished { status, .. } => {
                    Some(json!({ "replyId": reply, "chatId": chat, "status": status.as_str() }))
                }
                _ => None,
            };
            if let Some(update) = update {
                self.hub.publish("reply", update);
            }
            if event.is_final() {
                break;
            }
        }
        {
            let mut recent = self.recent.lock().unwrap_or_else(|p| p.into_inner());
            if recent.len() == RECENT_CAPACITY {
                recent.pop_front();
            }
            recent.push_back(self.handle);
        }
        if !self.replies.engine.any_live() {
            self.replies.trimmer.schedule();
        }
    }
}
