//! The one stream of events every codec produces, whatever the protocol.
//!
//! Serialized as JSON lines this is the documented, stable contract of `tavo llm decode`:
//! every event is an object with a `type` field (`text_delta`, `reasoning_delta`, `native`,
//! `tool_call_start`, `tool_call_delta`, `tool_call`, `usage`, `finish`, `error`, `warning`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ErrorKind;
use crate::request::Native;

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// A natural end (OpenAI `stop`, Anthropic `end_turn`/`stop_sequence`, Gemini `STOP`).
    Stop,
    /// The output token limit was reached.
    Length,
    /// The model wants tool results before it goes on.
    ToolCalls,
    /// A safety system stopped or withheld the output.
    ContentFilter,
    /// The provider reported a failure in-band.
    Error,
    /// Anything else; the provider's word is in `raw`.
    Other,
}

/// Token counts. Fields a provider does not report stay `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub struct Usage {
    /// Prompt tokens (OpenAI Chat `prompt_tokens`, Responses and Anthropic `input_tokens`,
    /// Gemini `promptTokenCount`). Anthropic's count leaves out cache reads; the others
    /// include them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Generated tokens (OpenAI Chat `completion_tokens`, Responses and Anthropic
    /// `output_tokens`, Gemini `candidatesTokenCount`, which leaves out the thoughts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// Tokens spent on reasoning (OpenAI `reasoning_tokens` in the completion or output token
    /// details, Gemini `thoughtsTokenCount`). Anthropic does not report them apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
    /// Prompt tokens served from the provider's cache (OpenAI `cached_tokens`, DeepSeek
    /// `prompt_cache_hit_tokens`, Anthropic `cache_read_input_tokens`, Gemini
    /// `cachedContentTokenCount`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input_tokens: Option<u64>,
    /// The provider's own total (`total_tokens`, Gemini `totalTokenCount`); never computed
    /// here, so `None` for Anthropic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_tokens: Option<u64>,
}

impl Usage {
    /// Fills fields this one lacks from `later` and lets later values win (Anthropic reports
    /// input tokens at `message_start` and output tokens at `message_delta`).
    pub fn merge(&mut self, later: &Usage) {
        fn pick(a: &mut Option<u64>, b: Option<u64>) {
            if b.is_some() {
                *a = b;
            }
        }
        pick(&mut self.input_tokens, later.input_tokens);
        pick(&mut self.output_tokens, later.output_tokens);
        pick(&mut self.reasoning_tokens, later.reasoning_tokens);
        pick(&mut self.cached_input_tokens, later.cached_input_tokens);
        pick(&mut self.total_tokens, later.total_tokens);
    }
}

/// One canonical stream event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    /// Visible answer text.
    TextDelta {
        /// The next piece of the answer, to append to what came before.
        text: String,
    },
    /// Reasoning (thinking) text.
    ReasoningDelta {
        /// The next piece of the reasoning or of its summary (Anthropic `thinking_delta`,
        /// DeepSeek `reasoning_content`, Gemini thought parts, Responses reasoning text).
        text: String,
    },
    /// A completed provider-native reasoning block (signature, encrypted content, redacted
    /// thinking) to keep and replay to the same protocol.
    Native {
        /// The block, flattened into the event (`protocol`, `value`).
        #[serde(flatten)]
        native: Native,
    },
    /// A tool call began. `index` is the call's position in this reply.
    ToolCallStart {
        /// The call's position among this reply's calls, from 0; the later events of the
        /// call carry the same index.
        index: usize,
        /// The call's id (made up for Gemini calls that come without one).
        id: String,
        /// The called tool's name.
        name: String,
    },
    /// A fragment of a tool call's JSON arguments, as the provider streamed it.
    ToolCallDelta {
        /// The `index` of the [`StreamEvent::ToolCallStart`] this belongs to.
        index: usize,
        /// Raw argument text, to append; only the whole is JSON.
        arguments: String,
    },
    /// A completed tool call. `arguments` is parsed JSON; when the provider sent text that is
    /// not JSON it is that text as a string, and `arguments_error` says why.
    ToolCall {
        /// The call's position among this reply's calls, as in [`StreamEvent::ToolCallStart`].
        index: usize,
        /// The call's id, which the tool result must repeat.
        id: String,
        /// The called tool's name.
        name: String,
        /// The arguments: parsed JSON, `{}` when the provider sent none.
        arguments: Value,
        /// Why the arguments are not JSON, when they are not; the call can then be answered
        /// with an error result instead of being run.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arguments_error: Option<String>,
        /// The provider-native call to replay verbatim: only Gemini's decoder sets it (the
        /// part with its `thoughtSignature`); the other encoders rebuild calls from the fields.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        native: Option<Native>,
    },
    /// Token counts (may come more than once; later values win).
    Usage {
        /// The counts reported so far, flattened into the event; a field may be missing from
        /// one report and present in a later one ([`Usage::merge`]).
        #[serde(flatten)]
        usage: Usage,
    },
    /// The model stopped. `raw` is the provider's own reason string.
    Finish {
        /// The reason in canonical terms.
        reason: FinishReason,
        /// The provider's own reason (`stop`, `end_turn`, `MAX_TOKENS`, ...), kept for
        /// [`FinishReason::Other`] and for display.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        raw: Option<String>,
    },
    /// A failure: an error body, an in-band error event, or a stream that broke off.
    Error {
        /// What went wrong, in terms a caller can act on.
        kind: ErrorKind,
        /// The provider's message (keys scrubbed), or ours for what we found wrong ourselves
        /// (a cut stream, a body that is not JSON).
        message: String,
        /// When to try again, in seconds, if the provider said.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after_secs: Option<f64>,
    },
    /// Something the caller should know that is not a failure (a dropped native block, an
    /// unknown event type, a tool call left unfinished).
    Warning {
        /// What happened, in words for a log or the UI.
        message: String,
    },
}

impl StreamEvent {
    /// The JSON line of the `tavo llm decode` contract.
    pub fn to_json_line(&self) -> String {
        // Serializing these types cannot fail: no maps with non-string keys, no custom impls.
        serde_json::to_string(self).unwrap_or_else(|e| {
            format!(r#"{{"type":"warning","message":"event not serializable: {e}"}}"#)
        })
    }
}

/// Parses streamed tool-call arguments: empty text means "no arguments" (`{}`), text that is
/// not JSON is kept as a string with the parse error beside it.
pub fn parse_arguments(raw: &str) -> (Value, Option<String>) {
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return (Value::Object(Default::default()), None);
    }
    match serde_json::from_str::<Value>(trimmed) {
        Ok(v) => (v, None),
        Err(e) => (
            Value::String(raw.to_owned()),
            Some(format!("tool-call arguments are not valid JSON: {e}")),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lines_follow_the_contract() {
        let e = StreamEvent::ToolCall {
            index: 0,
            id: "c".into(),
            name: "f".into(),
            arguments: serde_json::json!({"x": 1}),
            arguments_error: None,
            native: None,
        };
        assert_eq!(
            e.to_json_line(),
            r#"{"type":"tool_call","index":0,"id":"c","name":"f","arguments":{"x":1}}"#
        );
        let u = StreamEvent::Usage {
            usage: Usage {
                input_tokens: Some(3),
                ..Usage::default()
            },
        };
        assert_eq!(u.to_json_line(), r#"{"type":"usage","input_tokens":3}"#);
    }

    #[test]
    fn arguments_parse_leniently() {
        assert_eq!(parse_arguments("").0, serde_json::json!({}));
        assert_eq!(
            parse_arguments(" {\"a\":1} ").0,
            serde_json::json!({"a": 1})
        );
        let (v, err) = parse_arguments("{\"a\":");
        assert_eq!(v, serde_json::json!("{\"a\":"));
        assert!(err.is_some());
    }

    #[test]
    fn usage_merge_keeps_earlier_fields_and_takes_later_ones() {
        let mut a = Usage {
            input_tokens: Some(10),
            output_tokens: Some(1),
            ..Usage::default()
        };
        a.merge(&Usage {
            output_tokens: Some(7),
            ..Usage::default()
        });
        assert_eq!((a.input_tokens, a.output_tokens), (Some(10), Some(7)));
    }
}
