//! Interleaved reasoning (seed 001, "交替思考"): which earlier reasoning goes back to the model
//! with a tool-call request.
//!
//! - `Disabled` (the default, most compatible): no reasoning context is sent.
//! - `SinceLastUserMessage`: the reasoning of every tool round after the latest user message.
//! - `ActiveToolChain`: reasoning only while the current tool loop is still open; once a normal
//!   assistant reply exists, the old chain's reasoning is not sent again.
//!
//! Decision (where Tavo's three settings meet a provider rule): Anthropic rejects a tool-result
//! turn whose assistant tool_use turn lost its signed `thinking` block while thinking is on,
//! and Gemini rejects a `functionCall` without its `thoughtSignature`. Those signed blocks of
//! the still-open tool chain are therefore always kept, in every mode; the mode governs all
//! other reasoning. Gemini signatures live on the tool-call part itself and are never touched.

use serde::{Deserialize, Serialize};

use crate::protocol::Protocol;
use crate::request::{Message, Part, Role};

/// The three modes of seed 001.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum InterleavedReasoning {
    /// Send no earlier reasoning, except the signed blocks an open tool chain needs. The
    /// default, as the mode every provider accepts.
    #[default]
    Disabled,
    /// Send the reasoning of every tool-call turn after the latest user message.
    SinceLastUserMessage,
    /// Send the reasoning of the tool-call turns of the still-open tool loop only; none once a
    /// normal assistant reply closed it.
    ActiveToolChain,
}

/// Index of the last message a user typed (a `User` message that is not only tool results).
fn last_user_message(messages: &[Message]) -> Option<usize> {
    messages
        .iter()
        .rposition(|m| m.role == Role::User && !m.is_tool_results())
}

/// Index of the last normal assistant reply (one without tool calls).
fn last_final_reply(messages: &[Message]) -> Option<usize> {
    messages
        .iter()
        .rposition(|m| m.role == Role::Assistant && !m.has_tool_calls())
}

/// The first message index of the still-open tool chain, if the conversation is inside one.
fn open_chain_start(messages: &[Message]) -> Option<usize> {
    let boundary = match (last_user_message(messages), last_final_reply(messages)) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    let start = boundary.map_or(0, |b| b + 1);
    messages[start..]
        .iter()
        .any(|m| m.role == Role::Assistant && m.has_tool_calls())
        .then_some(start)
}

fn is_required_signed(part: &Part) -> bool {
    matches!(part, Part::Reasoning { native: Some(n), .. } if n.protocol == Protocol::Anthropic)
}

/// Returns the messages with the reasoning the mode does not send removed. Messages left
/// without any part are dropped.
pub fn select(messages: &[Message], mode: InterleavedReasoning) -> Vec<Message> {
    let keep_from = match mode {
        InterleavedReasoning::Disabled => None,
        InterleavedReasoning::SinceLastUserMessage => {
            Some(last_user_message(messages).map_or(0, |i| i + 1))
        }
        InterleavedReasoning::ActiveToolChain => open_chain_start(messages),
    };
    let chain = open_chain_start(messages);
    messages
        .iter()
        .enumerate()
        .filter_map(|(i, m)| {
            if m.role != Role::Assistant {
                return Some(m.clone());
            }
            let mode_keeps = keep_from.is_some_and(|k| i >= k) && m.has_tool_calls();
            let in_open_chain = chain.is_some_and(|k| i >= k) && m.has_tool_calls();
            let parts: Vec<Part> = m
                .parts
                .iter()
                .filter(|p| match p {
                    Part::Reasoning { .. } => {
                        mode_keeps || (in_open_chain && is_required_signed(p))
                    }
                    _ => true,
                })
                .cloned()
                .collect();
            (!parts.is_empty()).then(|| Message {
                role: m.role,
                parts,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Native;
    use serde_json::json;

    fn reasoning(t: &str) -> Part {
        Part::Reasoning {
            text: t.into(),
            native: None,
        }
    }
    fn call(id: &str) -> Part {
        Part::ToolCall {
            id: id.into(),
            name: "f".into(),
            arguments: json!({}),
            native: None,
        }
    }
    fn result(id: &str) -> Message {
        Message {
            role: Role::Tool,
            parts: vec![Part::ToolResult {
                call_id: id.into(),
                name: "f".into(),
                content: "ok".into(),
                is_error: false,
            }],
        }
    }
    fn assistant(parts: Vec<Part>) -> Message {
        Message {
            role: Role::Assistant,
            parts,
        }
    }
    fn reasoning_texts(ms: &[Message]) -> Vec<String> {
        ms.iter()
            .flat_map(|m| &m.parts)
            .filter_map(|p| match p {
                Part::Reasoning { text, .. } => Some(text.clone()),
                _ => None,
            })
            .collect()
    }

    /// user, [r1 + call a], result, [r2 + final], user, [r3 + call b], result
    fn conversation() -> Vec<Message> {
        vec![
            Message::text(Role::User, "one"),
            assistant(vec![reasoning("r1"), call("a")]),
            result("a"),
            assistant(vec![reasoning("r2"), Part::text("done")]),
            Message::text(Role::User, "two"),
            assistant(vec![reasoning("r3"), call("b")]),
            result("b"),
        ]
    }

    #[test]
    fn disabled_sends_no_reasoning() {
        assert!(
            reasoning_texts(&select(&conversation(), InterleavedReasoning::Disabled)).is_empty()
        );
    }

    #[test]
    fn since_last_user_message_keeps_only_later_rounds() {
        let got = select(&conversation(), InterleavedReasoning::SinceLastUserMessage);
        assert_eq!(reasoning_texts(&got), vec!["r3"]);
    }

    #[test]
    fn active_tool_chain_drops_reasoning_once_a_final_reply_exists() {
        let mut c = conversation();
        assert_eq!(
            reasoning_texts(&select(&c, InterleavedReasoning::ActiveToolChain)),
            vec!["r3"]
        );
        c.push(assistant(vec![reasoning("r4"), Part::text("final")]));
        assert!(reasoning_texts(&select(&c, InterleavedReasoning::ActiveToolChain)).is_empty());
    }

    #[test]
    fn signed_anthropic_thinking_of_the_open_chain_survives_disabled() {
        let mut c = conversation();
        c[5].parts[0] = Part::Reasoning {
            text: "r3".into(),
            native: Some(Native {
                protocol: Protocol::Anthropic,
                value: json!({"type": "thinking", "thinking": "r3", "signature": "sig"}),
            }),
        };
        assert_eq!(
            reasoning_texts(&select(&c, InterleavedReasoning::Disabled)),
            vec!["r3"]
        );
    }
}
