//! What the mock provider answers: a list of turns, one per request received.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A scripted tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScriptCall {
    /// The call id; generated (`call_<turn>_<n>`) when absent.
    #[serde(default)]
    pub id: Option<String>,
    /// The tool to call.
    pub name: String,
    /// The arguments: sent as an object to Anthropic and Gemini, as a JSON string to OpenAI.
    #[serde(default)]
    pub arguments: Value,
}

/// A scripted HTTP error instead of an answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScriptError {
    /// The HTTP status of the answer.
    pub status: u16,
    /// The message inside the protocol's own error body.
    pub message: String,
    /// Sent as the `retry-after` header (seconds).
    #[serde(default)]
    pub retry_after: Option<u64>,
}

/// One answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct Turn {
    /// Reasoning text (DeepSeek `reasoning_content`, Responses summary, Anthropic thinking,
    /// Gemini thought parts).
    pub reasoning: Option<String>,
    /// The opaque signature of the reasoning: Anthropic `signature`, Gemini `thoughtSignature`
    /// (on the first function call, or on the last text part), Responses `encrypted_content`,
    /// OpenRouter `reasoning_details[].signature`.
    pub signature: Option<String>,
    /// The answer's text, streamed in pieces of [`Turn::chunk`] characters.
    pub text: Option<String>,
    /// Tool calls after the text, in order.
    pub tool_calls: Vec<ScriptCall>,
    /// Answer with this HTTP error instead; the other fields are then ignored.
    pub error: Option<ScriptError>,
    /// Cut the connection after this many SSE events (a mid-stream failure).
    pub fail_after: Option<usize>,
    /// End the stream cleanly but without the protocol's end marker.
    pub truncate: bool,
    /// Pause before every SSE event (slow tokens), in milliseconds.
    pub delay_ms: u64,
    /// Characters per text or argument delta (default 8).
    pub chunk: Option<usize>,
    /// Stamp every streamed text delta with its send time instead of the scripted characters
    /// (relay-latency load tests): each text delta carries `<t:NANOS>`, NANOS the wall-clock time
    /// in nanoseconds since the Unix epoch (19 digits, zero-padded), read when the mock writes
    /// the event, after the [`Turn::delay_ms`] pause. [`Turn::text`] and [`Turn::chunk`] still set
    /// how many text deltas there are (one per piece); a frame that repeats the whole text (the
    /// Responses `done` events, a non-streamed body) carries one stamp for it. Off by default.
    pub stamp: bool,
}

impl Turn {
    /// A plain text answer.
    pub fn text(text: impl Into<String>) -> Self {
        Turn {
            text: Some(text.into()),
            ..Turn::default()
        }
    }

    /// An answer calling one tool.
    pub fn call(name: impl Into<String>, arguments: Value) -> Self {
        Turn {
            tool_calls: vec![ScriptCall {
                id: None,
                name: name.into(),
                arguments,
            }],
            ..Turn::default()
        }
    }

    /// An HTTP error.
    pub fn error(status: u16, message: impl Into<String>) -> Self {
        Turn {
            error: Some(ScriptError {
                status,
                message: message.into(),
                retry_after: None,
            }),
            ..Turn::default()
        }
    }

    /// Adds reasoning with a signature.
    pub fn with_reasoning(mut self, text: impl Into<String>, signature: impl Into<String>) -> Self {
        self.reasoning = Some(text.into());
        self.signature = Some(signature.into());
        self
    }

    pub(crate) fn chunk_size(&self) -> usize {
        self.chunk.unwrap_or(8).max(1)
    }

    /// The call ids, generated where the script gave none.
    pub(crate) fn call_ids(&self, turn_no: usize) -> Vec<String> {
        self.tool_calls
            .iter()
            .enumerate()
            .map(|(i, c)| {
                c.id.clone()
                    .unwrap_or_else(|| format!("call_{turn_no}_{i}"))
            })
            .collect()
    }
}

/// The whole script.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Script {
    /// The answers, one per generation request, in order; a request past the end gets a 500
    /// unless [`Script::repeat_last`].
    pub turns: Vec<Turn>,
    /// Keep answering with the last turn once the script is used up (load tests).
    #[serde(default)]
    pub repeat_last: bool,
}

impl Script {
    /// A script of these turns.
    pub fn new(turns: Vec<Turn>) -> Self {
        Script {
            turns,
            repeat_last: false,
        }
    }
}

/// Splits text into pieces of `n` characters (never inside a character).
pub(crate) fn pieces(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return Vec::new();
    }
    chars.chunks(n.max(1)).map(|c| c.iter().collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_split_on_characters() {
        assert_eq!(pieces("héllo", 2), vec!["hé", "ll", "o"]);
        assert!(pieces("", 3).is_empty());
    }

    #[test]
    fn scripts_read_from_json() {
        let s: Script = serde_json::from_str(
            r#"{"turns":[{"text":"hi","delayMs":5},{"toolCalls":[{"name":"f","arguments":{"a":1}}]}]}"#,
        )
        .unwrap_or_default();
        assert_eq!(s.turns.len(), 2);
        assert_eq!(s.turns[0].delay_ms, 5);
        assert_eq!(s.turns[1].call_ids(1), vec!["call_1_0"]);
        assert!(!s.turns[0].stamp);
        let t: Turn = serde_json::from_str(r#"{"text":"abc","stamp":true}"#).unwrap_or_default();
        assert!(t.stamp);
    }
}
