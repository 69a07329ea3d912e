//! The provider catalogue: every source seed 001 lists for function calling, plus Tavo's own
//! (Volink, Doubao), each with the protocol it speaks and its default base URL.

use serde::Serialize;

use crate::protocol::Protocol;

/// One provider source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Source {
    /// The stable id a connection stores as its `source` (`openai`, `deepseek`, `custom`).
    pub id: &'static str,
    /// The name shown to users (`Claude (Anthropic)`).
    pub name: &'static str,
    /// The wire protocol the source's endpoint speaks.
    pub protocol: Protocol,
    /// `None` when the URL depends on the user's account (Azure, Cloudflare, Vertex projects)
    /// or is handed out by the service (Volink), or for Custom.
    pub base_url: Option<&'static str>,
    /// Setup advice shown with the source (activation steps, base URL forms, fields to
    /// replay); empty when there is nothing to say.
    pub note: &'static str,
}

const fn src(
    id: &'static str,
    name: &'static str,
    protocol: Protocol,
    base_url: Option<&'static str>,
    note: &'static str,
) -> Source {
    Source {
        id,
        name,
        protocol,
        base_url,
        note,
    }
}

use Protocol::{Anthropic, Gemini, OpenaiChat, OpenaiResponses};

static SOURCES: &[Source] = &[
    src(
        "custom",
        "Custom (OpenAI-compatible)",
        OpenaiChat,
        None,
        "Any OpenAI-compatible server (llama.cpp, Ollama, vLLM, LM Studio, TabbyAPI). Give the base URL, e.g. http://localhost:8080; if that fails append /v1 — never /chat/completions. The model name must match the server's model id; the key is optional.",
    ),
    src(
        "volink",
        "Volink",
        OpenaiChat,
        None,
        "Tavo's partner proxy; use the base URL and key Volink gives you.",
    ),
    src(
        "doubao",
        "Doubao (Volcengine Ark)",
        OpenaiChat,
        Some("https://ark.cn-beijing.volces.com/api/v3"),
        "Models must be activated (开通服务) in the Ark console before use.",
    ),
    src(
        "openai",
        "OpenAI",
        OpenaiChat,
        Some("https://api.openai.com/v1"),
        "",
    ),
    src(
        "openai-responses",
        "OpenAI (Responses API)",
        OpenaiResponses,
        Some("https://api.openai.com/v1"),
        "",
    ),
    src(
        "claude",
        "Claude (Anthropic)",
        Anthropic,
        Some("https://api.anthropic.com"),
        "",
    ),
    src(
        "google-ai-studio",
        "Google AI Studio (Gemini)",
        Gemini,
        Some("https://generativelanguage.googleapis.com"),
        "",
    ),
    src(
        "google-vertex-ai",
        "Google Vertex AI",
        Gemini,
        Some("https://aiplatform.googleapis.com/v1/publishers/google"),
        "Express mode (API key). Full service accounts need a project/region URL.",
    ),
    src(
        "deepseek",
        "DeepSeek",
        OpenaiChat,
        Some("https://api.deepseek.com/v1"),
        "deepseek-reasoner returns reasoning_content, which must go back with tool calls.",
    ),
    src(
        "openrouter",
        "OpenRouter",
        OpenaiChat,
        Some("https://openrouter.ai/api/v1"),
        "reasoning_details are passed back unmodified in tool loops.",
    ),
    src(
        "aimlapi",
        "AI/ML API",
        OpenaiChat,
        Some("https://api.aimlapi.com/v1"),
        "",
    ),
    src(
        "ai21",
        "AI21",
        OpenaiChat,
        Some("https://api.ai21.com/studio/v1"),
        "",
    ),
    src(
        "azure-openai",
        "Azure OpenAI",
        OpenaiChat,
        None,
        "https://<resource>.openai.azure.com/openai/v1 with your deployment name as the model.",
    ),
    src(
        "chutes",
        "Chutes",
        OpenaiChat,
        Some("https://llm.chutes.ai/v1"),
        "",
    ),
    src(
        "cloudflare",
        "Cloudflare Workers AI",
        OpenaiChat,
        None,
        "https://api.cloudflare.com/client/v4/accounts/<account_id>/ai/v1",
    ),
    src(
        "cohere",
        "Cohere",
        OpenaiChat,
        Some("https://api.cohere.ai/compatibility/v1"),
        "",
    ),
    src(
        "electronhub",
        "Electron Hub",
        OpenaiChat,
        Some("https://api.electronhub.ai/v1"),
        "",
    ),
    src(
        "fireworks",
        "Fireworks",
        OpenaiChat,
        Some("https://api.fireworks.ai/inference/v1"),
        "",
    ),
    src(
        "groq",
        "Groq",
        OpenaiChat,
        Some("https://api.groq.com/openai/v1"),
        "",
    ),
    src(
        "minimax",
        "MiniMax",
        OpenaiChat,
        Some("https://api.minimax.io/v1"),
        "",
    ),
    src(
        "mistralai",
        "MistralAI",
        OpenaiChat,
        Some("https://api.mistral.ai/v1"),
        "",
    ),
    src(
        "moonshot",
        "Moonshot (Kimi)",
        OpenaiChat,
        Some("https://api.moonshot.ai/v1"),
        "",
    ),
    src(
        "nanogpt",
        "NanoGPT",
        OpenaiChat,
        Some("https://nano-gpt.com/api/v1"),
        "",
    ),
    src(
        "pollinations",
        "Pollinations",
        OpenaiChat,
        Some("https://text.pollinations.ai/openai"),
        "",
    ),
    src(
        "siliconflow",
        "SiliconFlow",
        OpenaiChat,
        Some("https://api.siliconflow.cn/v1"),
        "",
    ),
    src(
        "xai",
        "xAI (Grok)",
        OpenaiChat,
        Some("https://api.x.ai/v1"),
        "",
    ),
    src(
        "zai",
        "Z.AI (GLM)",
        OpenaiChat,
        Some("https://api.z.ai/api/paas/v4"),
        "",
    ),
];

/// Every known source.
pub fn sources() -> &'static [Source] {
    SOURCES
}

/// The source with this id.
pub fn find(id: &str) -> Option<&'static Source> {
    SOURCES.iter().find(|s| s.id == id)
}

/// The source a new connection gets when none is named: the first-party one for the
/// protocol's official host, else Custom.
pub fn guess(protocol: Protocol, base_url: &str) -> &'static str {
    SOURCES
        .iter()
        .find(|s| s.protocol == protocol && s.base_url.is_some_and(|u| base_url.starts_with(u)))
        .map_or("custom", |s| s.id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_urls_are_https() {
        let mut ids: Vec<&str> = SOURCES.iter().map(|s| s.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), SOURCES.len());
        assert!(
            SOURCES
                .iter()
                .filter_map(|s| s.base_url)
                .all(|u| u.starts_with("https://"))
        );
    }

    #[test]
    fn guesses_the_source_from_the_url() {
        assert_eq!(
            guess(Protocol::OpenaiChat, "https://api.deepseek.com/v1"),
            "deepseek"
        );
        assert_eq!(
            guess(Protocol::OpenaiChat, "http://127.0.0.1:8080/v1"),
            "custom"
        );
        assert!(find("volink").is_some() && find("doubao").is_some());
    }
}
