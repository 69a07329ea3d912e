//! The canonical, provider-neutral request: messages of parts, tool declarations, sampling
//! parameters and reasoning settings. Codecs translate it into each protocol's body.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::protocol::Protocol;
use crate::reasoning::InterleavedReasoning;

/// Who said a message. Tool results travel in `Tool` messages; codecs move them to wherever
/// their protocol wants them (an OpenAI `tool` message, an Anthropic `user` turn, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Instructions ahead of the conversation. The OpenAI protocols send them as `system`
    /// messages; Anthropic (`system`) and Gemini (`systemInstruction`) lift them out of the turns.
    System,
    /// The person chatting, or text sent on their behalf. A user message may also carry tool
    /// results, as Anthropic's user turns do.
    User,
    /// The model's own turns (Gemini calls this role `model`).
    Assistant,
    /// Tool results going back to the model. Only OpenAI Chat has a `tool` role; Anthropic and
    /// Gemini send them in user turns, Responses as `function_call_output` items.
    Tool,
}

/// A provider-native block that must go back to its own protocol byte for byte: an Anthropic
/// `thinking` block with its `signature` or a `redacted_thinking` block, a Gemini part carrying
/// a `thoughtSignature`, a Responses `reasoning` item with `encrypted_content` or a
/// `function_call` item, OpenRouter `reasoning_details`, DeepSeek `reasoning_content`.
///
/// Invariant: `value` is exactly what the provider sent; codecs never edit it. Encoding for a
/// different protocol drops it and records a warning instead.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Native {
    /// The protocol that produced `value`, and the only one it may be replayed to.
    pub protocol: Protocol,
    /// The provider's JSON as received: a whole block, part or item, or for OpenAI Chat the
    /// message fields (`reasoning_content`, `reasoning_details`) merged back into the
    /// assistant message.
    pub value: Value,
}

/// Where an image comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum ImageSource {
    /// Inline bytes, base64-encoded (without a `data:` prefix).
    Base64 {
        /// The MIME type (`image/png`, `image/jpeg`, ...), sent as Anthropic `media_type`,
        /// Gemini `mimeType` or in the OpenAI data URL.
        media_type: String,
        /// The image bytes in standard base64.
        data: String,
    },
    /// A URL the provider fetches itself (not every provider accepts one).
    Url {
        /// The image's address. Gemini receives it as `fileData.fileUri`, so there it must name
        /// a file Gemini can read.
        url: String,
    },
}

/// One piece of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Part {
    /// Text the user or the model wrote.
    Text {
        /// The text, sent as is.
        text: String,
    },
    /// An image for the model to look at. Input only: no stream event carries an image, so a
    /// reply never contains one.
    Image {
        /// Where the bytes come from. Flattened, so the JSON reads
        /// `{"type": "image", "source": "base64", "media_type": ..., "data": ...}`.
        #[serde(flatten)]
        source: ImageSource,
    },
    /// Model reasoning. `text` is what a user may read (may be empty for redacted or omitted
    /// thinking); `native` is the signed block to replay.
    Reasoning {
        /// The readable reasoning or its summary; empty when the provider redacted or omitted
        /// it.
        #[serde(default)]
        text: String,
        /// The block to send back. `None` for reasoning that came with nothing replayable:
        /// it is shown to the user, and every codec leaves it out of the next request.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        native: Option<Native>,
    },
    /// A call the model asked for. `arguments` is parsed JSON (an object for every protocol).
    ToolCall {
        /// The call's id, which the matching `ToolResult`'s `call_id` repeats. Gemini may send
        /// a call without one; its decoder then makes one up from the part.
        id: String,
        /// The name of the declared tool ([`ToolDecl::name`]).
        name: String,
        /// The arguments; `{}` when the provider sent none. Text that was not JSON stays a
        /// string (see [`crate::event::StreamEvent::ToolCall`]).
        #[serde(default = "empty_object")]
        arguments: Value,
        /// The provider's own form of the call, replayed instead of the fields above to its
        /// protocol: a Gemini `functionCall` part with its `thoughtSignature`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        native: Option<Native>,
    },
    /// The answer to a tool call, matched by `call_id`. `name` is needed by Gemini, which
    /// pairs results with calls by function name.
    ToolResult {
        /// The `id` of the [`Part::ToolCall`] this answers (OpenAI `tool_call_id`, Anthropic
        /// `tool_use_id`, Responses `call_id`).
        call_id: String,
        /// The tool's name. May be empty: the Gemini encoder then takes it from the matching
        /// call in the conversation.
        #[serde(default)]
        name: String,
        /// The result as text. Gemini wants an object: a result that is a JSON object is sent
        /// parsed, anything else is wrapped as `{"result": ...}`.
        content: String,
        /// The tool failed and `content` says why. Sent as Anthropic `is_error`; Gemini wraps a
        /// non-object result as `{"error": ...}` instead; the OpenAI protocols have no such
        /// flag.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

impl Part {
    /// A plain text part.
    pub fn text(text: impl Into<String>) -> Self {
        Part::Text { text: text.into() }
    }
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who said it.
    pub role: Role,
    /// What was said, in order. Codecs merge consecutive messages of one role where the
    /// protocol requires alternating turns (Anthropic, Gemini).
    pub parts: Vec<Part>,
}

impl Message {
    /// A message with a single text part.
    pub fn text(role: Role, text: impl Into<String>) -> Self {
        Message {
            role,
            parts: vec![Part::text(text)],
        }
    }

    /// The concatenated text parts.
    pub fn joined_text(&self) -> String {
        let mut out = String::new();
        for p in &self.parts {
            if let Part::Text { text } = p {
                out.push_str(text);
            }
        }
        out
    }

    /// Whether the message contains at least one tool call.
    pub fn has_tool_calls(&self) -> bool {
        self.parts
            .iter()
            .any(|p| matches!(p, Part::ToolCall { .. }))
    }

    /// Whether every part is a tool result (a tool turn, not something the user typed).
    pub fn is_tool_results(&self) -> bool {
        !self.parts.is_empty()
            && self
                .parts
                .iter()
                .all(|p| matches!(p, Part::ToolResult { .. }))
    }
}

/// A tool the model may call. `parameters` is a JSON Schema object; codecs adapt it to what
/// each provider accepts (see [`crate::schema`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDecl {
    /// The name the model calls the tool by, echoed back in [`Part::ToolCall`].
    pub name: String,
    /// What the tool does and when to use it, for the model. Not sent when empty.
    #[serde(default)]
    pub description: String,
    /// The JSON Schema of the arguments (`{}` when the tool takes none). Sent as OpenAI
    /// `parameters`, Anthropic `input_schema` or Gemini `parameters`, adapted per provider.
    #[serde(default = "empty_object")]
    pub parameters: Value,
    /// OpenAI strict mode: the provider guarantees arguments match the schema, but refuses
    /// schemas outside its subset.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub strict: bool,
}

/// How the model may use the tools.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case", tag = "mode", content = "name")]
pub enum ToolChoice {
    /// The model decides. This is every provider's default, so nothing is sent for it.
    #[default]
    Auto,
    /// No tool calls, though the tools are still declared.
    None,
    /// At least one call (OpenAI `required`, Anthropic `any`, Gemini `ANY`).
    Required,
    /// This very tool.
    Tool(String),
}

/// Sampling parameters. `None` means "let the provider decide" and is never sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Sampling {
    /// Randomness of sampling (`temperature` everywhere). Anthropic refuses it with extended
    /// thinking, so it is dropped there with a warning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Nucleus sampling: the probability mass to sample from (`top_p`, Gemini `topP`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Sample only from the k likeliest tokens (`top_k`, Gemini `topK`). Not an OpenAI
    /// parameter, but sent to OpenAI Chat because compatible servers honour it; Responses and
    /// Anthropic with thinking drop it with a warning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_k: Option<u32>,
    /// Limit on the reply's length, in tokens: OpenAI Chat `max_tokens` (or
    /// `max_completion_tokens` with reasoning), Responses `max_output_tokens`, Anthropic
    /// `max_tokens` (which is mandatory, so 4096 when unset), Gemini `maxOutputTokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// Strings that end the reply when generated (OpenAI `stop`, Anthropic `stop_sequences`,
    /// Gemini `stopSequences`). Responses has no such parameter and drops them with a warning.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<String>,
    /// OpenAI's `frequency_penalty` / Gemini's `frequencyPenalty` (a SillyTavern preset's);
    /// protocols without it drop it with a warning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frequency_penalty: Option<f64>,
    /// OpenAI's `presence_penalty` / Gemini's `presencePenalty`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub presence_penalty: Option<f64>,
}

/// Reasoning effort, mapped per protocol (OpenAI `reasoning_effort` / `reasoning.effort`,
/// Anthropic `thinking.budget_tokens`, Gemini `thinkingConfig.thinkingBudget`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effort {
    /// The least reasoning: Anthropic budget 1024 tokens, Gemini 512.
    Minimal,
    /// Anthropic budget 1024 tokens, Gemini 1024.
    Low,
    /// Anthropic budget 4096 tokens (also its budget when no effort is given), Gemini 8192.
    Medium,
    /// The most reasoning: Anthropic budget 16000 tokens, Gemini 24576.
    High,
}

/// What the caller wants from a reasoning model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningSettings {
    /// Ask the provider for reasoning (thinking) output.
    #[serde(default)]
    pub enabled: bool,
    /// How hard to think; only read when `enabled`. `None` leaves it to the provider (Gemini:
    /// a dynamic budget; Anthropic: 4096 tokens, as it needs a number).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<Effort>,
    /// An explicit token budget; wins over `effort` where the protocol takes a budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_tokens: Option<u32>,
    /// Which earlier reasoning goes back with a tool-call request (seed 001).
    #[serde(default)]
    pub interleaved: InterleavedReasoning,
}

/// A complete request in canonical form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatRequest {
    /// The provider's model id. Sent as `model` in the body, except for Gemini, where it is part
    /// of the URL (`models/{model}:generateContent`).
    pub model: String,
    /// The conversation, oldest first, system instructions included.
    pub messages: Vec<Message>,
    /// The tools the model may call; none means a plain chat request.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolDecl>,
    /// How the model may use `tools`; ignored when there are none.
    #[serde(default)]
    pub tool_choice: ToolChoice,
    /// Sampling parameters; only those set are sent.
    #[serde(default)]
    pub sampling: Sampling,
    /// Whether and how hard the model should reason, and which earlier reasoning goes back.
    #[serde(default)]
    pub reasoning: ReasoningSettings,
    /// Stream the answer (SSE) rather than wait for the whole body.
    #[serde(default = "yes")]
    pub stream: bool,
    /// Provider-specific top-level fields, merged into the body verbatim (they win over what the
    /// codec produced), e.g. OpenRouter `provider`, `store`, `include`.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extras: Map<String, Value>,
}

fn yes() -> bool {
    true
}

impl ChatRequest {
    /// A streaming request with the given model and messages and nothing else set.
    pub fn new(model: impl Into<String>, messages: Vec<Message>) -> Self {
        ChatRequest {
            model: model.into(),
            messages,
            tools: Vec::new(),
            tool_choice: ToolChoice::Auto,
            sampling: Sampling::default(),
            reasoning: ReasoningSettings::default(),
            stream: true,
            extras: Map::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_serialize_with_a_type_tag_and_round_trip() {
        let m = Message {
            role: Role::Assistant,
            parts: vec![
                Part::Reasoning {
                    text: "hmm".into(),
                    native: Some(Native {
                        protocol: Protocol::Anthropic,
                        value: serde_json::json!({"type": "thinking", "thinking": "hmm", "signature": "s"}),
                    }),
                },
                Part::ToolCall {
                    id: "c1".into(),
                    name: "f".into(),
                    arguments: serde_json::json!({"a": 1}),
                    native: None,
                },
            ],
        };
        let v = serde_json::to_value(&m).unwrap_or_default();
        assert_eq!(v["parts"][0]["type"], "reasoning");
        assert_eq!(v["parts"][0]["native"]["protocol"], "anthropic");
        assert_eq!(v["parts"][1]["type"], "tool_call");
        let back: Message = serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, m);
    }

    #[test]
    fn a_minimal_request_gets_defaults() {
        let r: ChatRequest = serde_json::from_str(
            r#"{"model":"m","messages":[{"role":"user","parts":[{"type":"text","text":"hi"}]}]}"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(r.stream);
        assert_eq!(r.tool_choice, ToolChoice::Auto);
        assert_eq!(r.messages[0].joined_text(), "hi");
    }
}
