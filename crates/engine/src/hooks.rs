//! Plugin generation hooks (`shared/reference/tavo-docs.md` §6.8): the engine asks whoever
//! listens for a chat — the browser page that has it open, where the plugins run — before the
//! request is built (`generation:prepare`, may rewrite the latest user text in the transient
//! request history only) and before the reply is stored (`generation:success`, may rewrite the
//! final body; an empty rewrite is discarded), and tells it how the generation ended
//! (`generation:error` with a sanitised `{code, message}`, `generation:cancelled` with
//! `partial`). Exactly one terminal event per generation.
//!
//! Fail-open, as Tavo: no listener, a listener that does not answer within [`HOOK_WAIT`], or one
//! that answers nonsense leaves the generation as it was. The per-handler 5-second limit and the
//! registration order are the page's to keep (it runs the handlers); the engine only bounds the
//! whole exchange. Events are not queued for pages that are not attached.

use std::time::Duration;
use tavo_model::ChatId;

use serde_json::{Value, json};
use tavo_tools::GenerationKind;
use tavo_tools::operation::BoxFuture;

/// The longest the engine waits for a listener's answer to `prepare` or `success`. Handlers are
/// bounded at 5 s each by the page; this bounds a page that stopped answering.
pub const HOOK_WAIT: Duration = Duration::from_secs(15);

/// Whoever runs plugin hooks for a chat.
pub trait GenerationHooks: Send + Sync {
    /// Whether anyone listens for `chat` (cheap; checked before any work is done).
    fn listening(&self, chat: ChatId) -> bool;
    /// Runs hook `kind` with `event` for `chat` and answers the listener's result (`{text}`),
    /// or `None` when nobody answered in time.
    fn run(&self, chat: ChatId, kind: &'static str, event: Value) -> BoxFuture<Option<Value>>;
}

/// Whose turn a generation is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Turn {
    /// A 1:1 chat.
    Solo,
    /// A group member answering the user's message.
    Group,
    /// A group member speaking when the newest message is a character's (the members go on
    /// talking among themselves without a new user message).
    GroupWithoutUser,
}

/// Tavo's `source` of a generation; `None` for the kinds hooks never see (impersonation,
/// quiet prompts). In a group chat a normal reply is `groupReply`, or `othersContinuation`
/// when it answers no new user message (Tavo's docs name the source without defining it; this
/// is our reading).
pub fn source(kind: GenerationKind, turn: Turn) -> Option<&'static str> {
    match kind {
        GenerationKind::Normal => Some(match turn {
            Turn::Solo => "reply",
            Turn::Group => "groupReply",
            Turn::GroupWithoutUser => "othersContinuation",
        }),
        GenerationKind::Regenerate | GenerationKind::Swipe => Some("regeneration"),
        GenerationKind::Continue => Some("continuation"),
        GenerationKind::Impersonate | GenerationKind::Quiet => None,
    }
}

/// The fields every generation event carries.
pub fn base_event(generation: &str, chat: ChatId, source: &str) -> Value {
    json!({
        "generationId": generation,
        "chatId": chat,
        "source": source,
        "at": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
    })
}

/// The rewritten text of a `prepare` / `success` answer, when it is one: a string field `text`
/// that differs from `before` (and, when `non_empty`, is not empty).
pub fn rewritten(answer: Option<Value>, before: &str, non_empty: bool) -> Option<String> {
    let text = answer?.get("text")?.as_str()?.to_owned();
    if text == before || (non_empty && text.trim().is_empty()) {
        return None;
    }
    Some(text)
}

/// Runs a hook under [`HOOK_WAIT`]: a listener that does not answer in time is ignored.
pub async fn ask(
    hooks: &dyn GenerationHooks,
    chat: ChatId,
    kind: &'static str,
    event: Value,
) -> Option<Value> {
    tokio::time::timeout(HOOK_WAIT, hooks.run(chat, kind, event))
        .await
        .ok()
        .flatten()
}

impl GenerationHooks for crate::pages::Pages {
    fn listening(&self, chat: ChatId) -> bool {
        self.page_for_chat(chat).is_some()
    }

    fn run(&self, chat: ChatId, kind: &'static str, event: Value) -> BoxFuture<Option<Value>> {
        let pages = self.clone();
        Box::pin(async move {
            let page = pages.page_for_chat(chat)?;
            pages
                .request(&page, "hook", json!({"type": kind, "event": event}))
                .await
                .map_err(
                    |e| tracing::debug!(%chat, hook = kind, error = %e, "plugin hook not answered"),
                )
                .ok()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_string_changes_count_and_success_stays_non_empty() {
        assert_eq!(
            rewritten(Some(json!({"text": "b"})), "a", true).as_deref(),
            Some("b")
        );
        assert_eq!(rewritten(Some(json!({"text": "a"})), "a", true), None);
        assert_eq!(rewritten(Some(json!({"text": " "})), "a", true), None);
        assert_eq!(
            rewritten(Some(json!({"text": ""})), "a", false).as_deref(),
            Some("")
        );
        assert_eq!(rewritten(Some(json!({"text": 3})), "a", false), None);
        assert_eq!(rewritten(None, "a", false), None);
    }

    #[test]
    fn hooks_see_replies_regenerations_and_continuations_only() {
        let solo = Turn::Solo;
        assert_eq!(source(GenerationKind::Normal, solo), Some("reply"));
        assert_eq!(source(GenerationKind::Swipe, solo), Some("regeneration"));
        assert_eq!(source(GenerationKind::Continue, solo), Some("continuation"));
        assert_eq!(source(GenerationKind::Quiet, solo), None);
        assert_eq!(source(GenerationKind::Impersonate, solo), None);
        assert_eq!(
            source(GenerationKind::Normal, Turn::Group),
            Some("groupReply")
        );
        assert_eq!(
            source(GenerationKind::Normal, Turn::GroupWithoutUser),
            Some("othersContinuation")
        );
        assert_eq!(
            source(GenerationKind::Continue, Turn::Group),
            Some("continuation")
        );
    }
}
