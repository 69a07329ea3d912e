//! What a reply tells its watchers: one event type, numbered per reply.
//!
//! Every event carries a sequence number that grows by one per event of the same reply, so a
//! relay (the server's SSE endpoint) can use it as the event id and replay from a
//! `Last-Event-ID`. Serialized as one JSON object with a `type` field; this is the contract of
//! `tavo reply --json` (one event per line).

use serde::Serialize;
use serde_json::Value;
use tavo_model::{CharacterId, ChatId, MessageId};

use crate::interaction::Interaction;
use crate::status::ReplyStatus;
use crate::summary::ToolCallSummary;

/// One reply event with its position in the reply's stream.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplyEvent {
    /// 1 for the first event of a reply, then +1 per event.
    pub seq: u64,
    /// The reply this event belongs to.
    pub reply_id: String,
    /// What happened.
    #[serde(flatten)]
    pub kind: EventKind,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventKind {
    /// The reply started on its chat; `messageId` is the message it writes (when it writes one).
    Started {
        /// The chat the reply answers in; fixed for the reply's whole life.
        #[serde(rename = "chatId")]
        chat_id: ChatId,
        /// The stored message the text goes into. Absent when the reply stores no message: an
        /// impersonation writes the input draft and a quiet reply writes nothing.
        #[serde(rename = "messageId", skip_serializing_if = "Option::is_none")]
        message_id: Option<MessageId>,
        /// What the reply does (normal, regenerate, swipe, continue, impersonate, quiet).
        kind: tavo_tools::GenerationKind,
        /// The character who speaks in that message (the first speaker of a group reply).
        #[serde(rename = "characterId", skip_serializing_if = "Option::is_none")]
        character_id: Option<CharacterId>,
    },
    /// Group chats: a member's turn starts — `characterId` (`name`) answers in its own
    /// message `messageId`; turn `turn` of `turns` (1-based). The text deltas that follow, up
    /// to the next `speaker` event, are this member's.
    Speaker {
        /// The member who speaks in this turn.
        #[serde(rename = "characterId", skip_serializing_if = "Option::is_none")]
        character_id: Option<CharacterId>,
        /// That member's name as the chat shows it, so a watcher can label the turn without a
        /// lookup.
        name: String,
        /// The message this turn writes; each member of a group reply answers in its own.
        #[serde(rename = "messageId", skip_serializing_if = "Option::is_none")]
        message_id: Option<MessageId>,
        /// This turn's number, from 1.
        turn: u32,
        /// How many turns the reply plans in all.
        turns: u32,
    },
    /// A model request of round `round` (0-based) was sent with `tools` tools offered.
    Round {
        /// The round's number: 0 for the first request, +1 after each batch of tool calls.
        round: u32,
        /// The names of the tools the model may call in this round; empty when it may call
        /// none (tools off, or the recursion limit reached).
        tools: Vec<String>,
    },
    /// Visible answer text.
    TextDelta {
        /// The next piece of the answer, to append to what came before.
        text: String,
    },
    /// Reasoning text, shown apart from the answer.
    ReasoningDelta {
        /// The next piece of the model's reasoning, to append to what came before.
        text: String,
    },
    /// A tool call card: created when the call is about to run, updated when it finishes.
    ToolCall {
        /// The call's card as the message keeps it (its fields are the event's fields).
        #[serde(flatten)]
        call: ToolCallSummary,
    },
    /// The reply paused for the user (status `waiting`); answer with the `pendingId`.
    Waiting {
        /// The id to answer with; 1 for the reply's first interaction, then +1 each, so a stale
        /// answer to an earlier one is refused.
        #[serde(rename = "pendingId")]
        pending_id: u64,
        /// What the user is asked: a question or a confirmation (its fields are the event's
        /// fields).
        #[serde(flatten)]
        interaction: Interaction,
    },
    /// The user answered; the reply runs again.
    Resumed {
        /// The interaction that was answered, as its `waiting` event numbered it.
        #[serde(rename = "pendingId")]
        pending_id: u64,
    },
    /// Something worth knowing that is not a failure (a limit reached, a dropped block).
    Warning {
        /// What happened, in words meant for the user.
        message: String,
    },
    /// The reply ended. `text` is the whole visible answer (all rounds; in a group reply every
    /// speaker's, a blank line between them), `status` is `finished`, `cancelled` or `failed`.
    Finished {
        /// How the reply ended; already saved when this event is published.
        status: ReplyStatus,
        /// The whole visible answer.
        text: String,
        /// The whole reasoning text, joined like `text`; absent when the model gave none.
        #[serde(skip_serializing_if = "Option::is_none")]
        reasoning: Option<String>,
        /// The token counts the provider reported (`input_tokens`, `output_tokens`, ...), each
        /// the latest value any round gave; absent when it reported none.
        #[serde(skip_serializing_if = "Option::is_none")]
        usage: Option<Value>,
    },
    /// The reply failed; a `finished` event with status `failed` follows.
    Error {
        /// Why, as the error's text (the provider's message for a provider failure).
        message: String,
    },
}

impl EventKind {
    /// A text or reasoning delta: the bulk of a stream, and nothing a status watcher needs.
    pub fn is_delta(&self) -> bool {
        matches!(
            self,
            EventKind::TextDelta { .. } | EventKind::ReasoningDelta { .. }
        )
    }

    /// The `type` field of this event's JSON, also its SSE event name. Lets a relay name the
    /// event without serialising it twice.
    pub fn name(&self) -> &'static str {
        match self {
            EventKind::Started { .. } => "started",
            EventKind::Speaker { .. } => "speaker",
            EventKind::Round { .. } => "round",
            EventKind::TextDelta { .. } => "text_delta",
            EventKind::ReasoningDelta { .. } => "reasoning_delta",
            EventKind::ToolCall { .. } => "tool_call",
            EventKind::Waiting { .. } => "waiting",
            EventKind::Resumed { .. } => "resumed",
            EventKind::Warning { .. } => "warning",
            EventKind::Finished { .. } => "finished",
            EventKind::Error { .. } => "error",
        }
    }
}

impl ReplyEvent {
    /// The JSON line of `tavo reply --json`.
    pub fn to_json_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| {
            format!(
                r#"{{"seq":{},"type":"warning","message":"event not serializable: {e}"}}"#,
                self.seq
            )
        })
    }

    /// Whether this is the last event of the reply.
    pub fn is_final(&self) -> bool {
        matches!(self.kind, EventKind::Finished { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::CallStatus;
    use serde_json::json;

    #[test]
    fn every_name_is_the_serialised_type() {
        let card = ToolCallSummary {
            call_id: "c".into(),
            tool: "t".into(),
            status: CallStatus::Ok,
            label: String::new(),
            error_code: None,
            truncated: false,
            stealth: false,
        };
        let kinds = vec![
            EventKind::Started {
                chat_id: ChatId(1),
                message_id: None,
                kind: tavo_tools::GenerationKind::Normal,
                character_id: None,
            },
            EventKind::Speaker {
                character_id: Some(CharacterId(2)),
                name: "Ann".into(),
                message_id: Some(MessageId(3)),
                turn: 1,
                turns: 2,
            },
            EventKind::Round {
                round: 0,
                tools: vec![],
            },
            EventKind::TextDelta { text: "a".into() },
            EventKind::ReasoningDelta { text: "b".into() },
            EventKind::ToolCall { call: card },
            EventKind::Waiting {
                pending_id: 1,
                interaction: Interaction::Confirmation {
                    call_id: "c".into(),
                    tool: "t".into(),
                    safety: tavo_tools::Safety::Confirm,
                    arguments: json!({}),
                },
            },
            EventKind::Resumed { pending_id: 1 },
            EventKind::Warning {
                message: "w".into(),
            },
            EventKind::Finished {
                status: ReplyStatus::Finished,
                text: String::new(),
                reasoning: None,
                usage: None,
            },
            EventKind::Error {
                message: "e".into(),
            },
        ];
        for kind in kinds {
            let name = kind.name();
            let event = ReplyEvent {
                seq: 1,
                reply_id: "r".into(),
                kind,
            };
            let v: Value = serde_json::from_str(&event.to_json_line()).unwrap_or(Value::Null);
            assert_eq!(v["type"], name, "{v}");
        }
    }
}
