//! The reply's plugin generation hooks (see [`crate::hooks`]): one set of events per turn, so
//! in a group chat each member's answer is its own generation (`generationId` is the reply id,
//! with `#2`, `#3`… for the later turns of a group reply).

use std::sync::Arc;

use serde_json::Value;

use super::{ReplyTask, Stop, Target};
use crate::hooks::{self, GenerationHooks};
use crate::status::ReplyStatus;

impl ReplyTask {
    /// The id plugins see for this turn's generation.
    fn generation_id(&self) -> String {
        match self.turn {
            0 => self.id.clone(),
            n => format!("{}#{}", self.id, n + 1),
        }
    }

    /// The hook source of this generation, when plugins may see it: a reply, regeneration or
    /// continuation that stores a message (impersonation and quiet prompts are excluded).
    pub(super) fn hook_source(&self) -> Option<(Arc<dyn GenerationHooks>, &'static str)> {
        let stores = matches!(
            self.target,
            Target::New | Target::Continue(_) | Target::Swipe(_)
        );
        let hooks = self.inner.hooks.clone()?;
        let turn = match (self.plan.group, self.plan.without_user) {
            (false, _) => hooks::Turn::Solo,
            (true, false) => hooks::Turn::Group,
            (true, true) => hooks::Turn::GroupWithoutUser,
        };
        let source = hooks::source(self.kind, turn).filter(|_| stores)?;
        hooks.listening(self.chat).then_some((hooks, source))
    }

    /// `generation:prepare`: the latest user text as the request will carry it, or `None` to
    /// keep it. Runs before anything is built; the stored message is never changed.
    pub(super) async fn prepare_hook(&self) -> Result<Option<String>, Stop> {
        let Some((hooks, source)) = self.hook_source() else {
            return Ok(None);
        };
        let chat = self.chat;
        let before = self
            .blocking(move |store| {
                let last = store.read(|tx| tx.messages_last(chat, 64))?;
                Ok(last
                    .into_iter()
                    .rev()
                    .find(|m| m.role == tavo_model::Role::User)
                    .map(|m| m.content))
            })
            .await
            .map_err(Stop::Failed)?;
        let Some(before) = before else {
            return Ok(None);
        };
        let mut event = hooks::base_event(&self.generation_id(), chat, source);
        event["text"] = Value::String(before.clone());
        let answer = tokio::select! {
            a = hooks::ask(&*hooks, chat, "generation:prepare", event) => a,
            () = self.control.cancelled() => return Err(Stop::Cancelled),
        };
        Ok(hooks::rewritten(answer, &before, false))
    }

    /// `generation:success`: after the receive rules, before the final save; a non-empty
    /// rewrite replaces the body that is stored and announced.
    pub(super) async fn success_hook(&mut self) {
        let Some((hooks, source)) = self.hook_source() else {
            return;
        };
        let mut event = hooks::base_event(&self.generation_id(), self.chat, source);
        event["text"] = Value::String(self.text.clone());
        let answer = hooks::ask(&*hooks, self.chat, "generation:success", event).await;
        if let Some(text) = hooks::rewritten(answer, &self.text, true) {
            self.text = text;
        }
    }

    /// `generation:error` / `generation:cancelled`: notices nobody waits for. A success was
    /// already its own terminal event.
    pub(super) fn terminal_notice(&self, status: ReplyStatus, failure: Option<String>) {
        let Some((hooks, source)) = self.hook_source() else {
            return;
        };
        let mut event = hooks::base_event(&self.generation_id(), self.chat, source);
        let kind = match status {
            ReplyStatus::Failed => {
                // Sanitised: the engine's own one-line message, never provider bodies,
                // requests, context or reasoning.
                let message = failure.unwrap_or_else(|| "the generation failed".to_owned());
                event["error"] =
                    serde_json::json!({"code": "generation_failed", "message": message});
                "generation:error"
            }
            ReplyStatus::Cancelled => {
                event["partial"] = Value::Bool(self.message.is_some() && !self.text.is_empty());
                "generation:cancelled"
            }
            _ => return,
        };
        let chat = self.chat;
        tokio::spawn(async move {
            let _ = hooks::ask(&*hooks, chat, kind, event).await;
        });
    }
}
