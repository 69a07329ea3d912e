//! Folding the event stream back into one assistant message: what the engine stores and what
//! goes back to the provider in the next round of a tool loop.

use serde::{Deserialize, Serialize};

use crate::error::ErrorKind;
use crate::event::{FinishReason, StreamEvent, Usage};
use crate::request::{Message, Part, Role};

/// A finished reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// The assistant message: reasoning (with native blocks), text and tool calls, in the
    /// order the model produced them.
    pub message: Message,
    /// Token counts, every `usage` event merged (later values win).
    pub usage: Usage,
    /// Why the model stopped; `None` when the stream ended without saying (an error, a cut).
    pub finish: Option<FinishReason>,
    /// The provider's own finish reason.
    pub finish_raw: Option<String>,
    /// The first error the stream reported, if any.
    pub error: Option<(ErrorKind, String)>,
    /// The stream's warnings in order, the request's encoding warnings first.
    pub warnings: Vec<String>,
}

impl ChatResponse {
    /// The answer text.
    pub fn text(&self) -> String {
        self.message.joined_text()
    }

    /// The tool calls, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &Part> {
        self.message
            .parts
            .iter()
            .filter(|p| matches!(p, Part::ToolCall { .. }))
    }
}

/// Accumulates events into a [`ChatResponse`].
#[derive(Debug, Default)]
pub struct ReplyBuilder {
    parts: Vec<Part>,
    text: String,
    reasoning: String,
    /// Where the pending reasoning began, so it lands before what followed it.
    reasoning_at: Option<usize>,
    usage: Usage,
    finish: Option<FinishReason>,
    finish_raw: Option<String>,
    error: Option<(ErrorKind, String)>,
    warnings: Vec<String>,
}

impl ReplyBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    fn flush_text(&mut self) {
        if !self.text.is_empty() {
            self.parts.push(Part::Text {
                text: std::mem::take(&mut self.text),
            });
        }
    }

    fn place_reasoning(&mut self, part: Part) {
        let at = self
            .reasoning_at
            .take()
            .unwrap_or(self.parts.len())
            .min(self.parts.len());
        self.parts.insert(at, part);
    }

    /// Takes one event into account.
    pub fn push(&mut self, event: &StreamEvent) {
        match event {
            StreamEvent::TextDelta { text } => self.text.push_str(text),
            StreamEvent::ReasoningDelta { text } => {
                if self.reasoning_at.is_none() {
                    self.flush_text();
                    self.reasoning_at = Some(self.parts.len());
                }
                self.reasoning.push_str(text);
            }
            StreamEvent::Native { native } => {
                self.flush_text();
                let text = std::mem::take(&mut self.reasoning);
                self.place_reasoning(Part::Reasoning {
                    text,
                    native: Some(native.clone()),
                });
            }
            StreamEvent::ToolCall {
                id,
                name,
                arguments,
                native,
                ..
            } => {
                self.flush_text();
                self.parts.push(Part::ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    arguments: arguments.clone(),
                    native: native.clone(),
                });
            }
            StreamEvent::Usage { usage } => self.usage.merge(usage),
            StreamEvent::Finish { reason, raw } => {
                self.finish = Some(*reason);
                self.finish_raw = raw.clone();
            }
            StreamEvent::Error { kind, message, .. } => {
                if self.error.is_none() {
                    self.error = Some((*kind, message.clone()));
                }
            }
            StreamEvent::Warning { message } => self.warnings.push(message.clone()),
            StreamEvent::ToolCallStart { .. } | StreamEvent::ToolCallDelta { .. } => {}
        }
    }

    /// The reply so far.
    pub fn finish(mut self) -> ChatResponse {
        self.flush_text();
        if !self.reasoning.is_empty() {
            let text = std::mem::take(&mut self.reasoning);
            self.place_reasoning(Part::Reasoning { text, native: None });
        }
        ChatResponse {
            message: Message {
                role: Role::Assistant,
                parts: self.parts,
            },
            usage: self.usage,
            finish: self.finish,
            finish_raw: self.finish_raw,
            error: self.error,
            warnings: self.warnings,
        }
    }
}

/// Folds a complete list of events.
pub fn collect<'a>(events: impl IntoIterator<Item = &'a StreamEvent>) -> ChatResponse {
    let mut b = ReplyBuilder::new();
    for e in events {
        b.push(e);
    }
    b.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Protocol;
    use crate::request::Native;
    use serde_json::json;

    #[test]
    fn thinking_then_text_then_call_keep_their_order() {
        let events = vec![
            StreamEvent::ReasoningDelta {
                text: "think".into(),
            },
            StreamEvent::Native {
                native: Native {
                    protocol: Protocol::Anthropic,
                    value: json!({"type": "thinking", "thinking": "think", "signature": "s"}),
                },
            },
            StreamEvent::TextDelta {
                text: "Let me ".into(),
            },
            StreamEvent::TextDelta {
                text: "check".into(),
            },
            StreamEvent::ToolCall {
                index: 0,
                id: "t1".into(),
                name: "f".into(),
                arguments: json!({}),
                arguments_error: None,
                native: None,
            },
            StreamEvent::Finish {
                reason: FinishReason::ToolCalls,
                raw: None,
            },
        ];
        let r = collect(&events);
        assert!(
            matches!(&r.message.parts[0], Part::Reasoning { text, native: Some(_) } if text == "think")
        );
        assert!(matches!(&r.message.parts[1], Part::Text { text } if text == "Let me check"));
        assert!(matches!(&r.message.parts[2], Part::ToolCall { id, .. } if id == "t1"));
        assert_eq!(r.finish, Some(FinishReason::ToolCalls));
    }

    #[test]
    fn plain_reasoning_lands_before_the_text_that_followed_it() {
        let r = collect(&[
            StreamEvent::ReasoningDelta { text: "a".into() },
            StreamEvent::TextDelta { text: "b".into() },
        ]);
        assert!(
            matches!(&r.message.parts[0], Part::Reasoning { text, native: None } if text == "a")
        );
        assert_eq!(r.text(), "b");
    }
}
