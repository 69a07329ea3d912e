//! What several llm tests share: a client that retries quickly, a tool to offer, the protocol
//! of a fixture folder.

use serde_json::json;
use tavo_llm::retry::RetryPolicy;
use tavo_llm::{Client, Protocol, Timeouts, ToolDecl};

/// A client whose retries wait 10 ms, not the default back-off.
pub fn client() -> Client {
    let retry = RetryPolicy {
        base_delay: std::time::Duration::from_millis(10),
        ..RetryPolicy::default()
    };
    Client::with(retry, Timeouts::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// `get_weather(city)`, the tool the scripted models call.
pub fn weather_tool() -> ToolDecl {
    ToolDecl {
        name: "get_weather".into(),
        description: "Current weather".into(),
        parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        strict: false,
    }
}

/// The protocol whose bodies a fixture folder holds (`None` for a folder of no protocol).
pub fn protocol_of(dir: &str) -> Option<Protocol> {
    Some(match dir {
        "openai-chat" | "deepseek" | "openrouter" | "llama-cpp-python" => Protocol::OpenaiChat,
        "openai-responses" => Protocol::OpenaiResponses,
        "anthropic" => Protocol::Anthropic,
        "gemini" => Protocol::Gemini,
        _ => return None,
    })
}
