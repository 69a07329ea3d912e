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
    System,
    User,
    Assistant,
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
    pub protocol: Protocol,
    pub value: Value,
}

/// Where an image comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum ImageSource {
    /// Inline bytes, base64-encoded (without a `data:` prefix).
    Base64 { media_type: String, data: String },
    /// A URL the provider fetches itself (not every provider accepts one).
    Url { url: String },
}

/// One piece of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Part {
    Text {
        text: String,
    },
    Image {
        #[serde(flatten)]
        source: ImageSource,
    },
    /// Model reasoning. `text` is what a user may read (may be empty for redacted or omitted
    /// thinking); `native` is the signed block to replay.
    Reasoning {
        #[serde(default)]
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        native: Option<Native>,
    },
    /// A call the model asked for. `arguments` is parsed JSON (an object for every protocol).
    ToolCall {
        id: String,
        name: String,
        #[serde(default = "empty_object")]
        arguments: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        native: Option<Native>,
    },
    /// The answer to a tool call, matched by `call_id`. `name` is needed by Gemini, which
    /// pairs results with calls by function name.
    ToolResult {
        call_id: String,
        #[serde(default)]
        name: String,
        content: String,
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
    pub role: Role,
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
    pub name: String,
    #[serde(default)]
    pub description: String,
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
    #[default]
    Auto,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_k: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
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
    Minimal,
    Low,
    Medium,
    High,
}

/// What the caller wants from a reasoning model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningSettings {
    /// Ask the provider for reasoning (thinking) output.
    #[serde(default)]
    pub enabled: bool,
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
    pub model: String,
    pub messages: Vec<Message>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolDecl>,
    #[serde(default)]
    pub tool_choice: ToolChoice,
    #[serde(default)]
    pub sampling: Sampling,
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
