//! The four wire protocols tavo speaks. Every provider source maps onto one of them.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A provider wire protocol. The serde names are the ones users type on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Protocol {
    /// OpenAI Chat Completions (`POST {base}/chat/completions`), also spoken by DeepSeek,
    /// OpenRouter, llama.cpp, Ollama, vLLM and most "OpenAI-compatible" servers.
    OpenaiChat,
    /// OpenAI Responses (`POST {base}/responses`).
    OpenaiResponses,
    /// Anthropic Messages (`POST {base}/v1/messages`).
    Anthropic,
    /// Gemini `generateContent` / `streamGenerateContent?alt=sse`.
    Gemini,
}

impl Protocol {
    /// Every protocol, in the order the CLI lists them.
    pub const ALL: [Protocol; 4] = [
        Protocol::OpenaiChat,
        Protocol::OpenaiResponses,
        Protocol::Anthropic,
        Protocol::Gemini,
    ];

    /// The stable name used in JSON, settings and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::OpenaiChat => "openai-chat",
            Protocol::OpenaiResponses => "openai-responses",
            Protocol::Anthropic => "anthropic",
            Protocol::Gemini => "gemini",
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error for a protocol name that is none of the four.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown protocol `{0}`: use one of openai-chat, openai-responses, anthropic, gemini")]
pub struct UnknownProtocol(pub String);

impl FromStr for Protocol {
    type Err = UnknownProtocol;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Protocol::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| UnknownProtocol(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_from_str_and_serde() {
        for p in Protocol::ALL {
            assert_eq!(p.as_str().parse::<Protocol>(), Ok(p));
            let json = serde_json::to_value(p).unwrap_or_default();
            assert_eq!(json, serde_json::Value::String(p.as_str().into()));
        }
        assert!("openai".parse::<Protocol>().is_err());
    }
}
