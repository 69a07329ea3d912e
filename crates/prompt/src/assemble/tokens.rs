//! Token counting for the context budget.
//!
//! OpenAI-family models (`gpt-*`, `o1`/`o3`/`o4`, `chatgpt-*`, …) use their real tiktoken
//! encoding. Other models have no public local tokenizer; their count is **estimated** as
//! o200k tokens × 1.1, rounded up (providers' tokenizers for Claude, Gemini and most open
//! models produce somewhat more tokens than o200k on the same text). Each message costs 3
//! tokens of framing (+1 with a name) and every reply 3 tokens of priming, as in OpenAI's
//! published counting recipe.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Mutex;

use tiktoken_rs::CoreBPE;

use super::message::PromptMessage;

/// Framing tokens per message.
pub const PER_MESSAGE: usize = 3;
/// Tokens that prime the reply.
pub const REPLY_PRIMING: usize = 3;
const CACHE_CAPACITY: usize = 200_000;

/// Counts tokens for one model, caching counts by text hash.
pub struct TokenCounter {
    bpe: &'static CoreBPE,
    estimated: bool,
    encoding: &'static str,
    cache: Mutex<HashMap<u64, u32>>,
}

impl std::fmt::Debug for TokenCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenCounter")
            .field("encoding", &self.encoding)
            .field("estimated", &self.estimated)
            .finish()
    }
}

impl TokenCounter {
    /// The counter for `model`: its tiktoken encoding when it is an OpenAI model, else the
    /// documented estimate.
    pub fn for_model(model: &str) -> Self {
        let lower = model.to_ascii_lowercase();
        let name = lower.rsplit('/').next().unwrap_or(&lower);
        let openai = [
            "gpt-",
            "o1",
            "o3",
            "o4",
            "chatgpt-",
            "text-davinci",
            "davinci",
            "babbage",
        ]
        .iter()
        .any(|p| name.starts_with(p));
        if openai && let Ok(bpe) = tiktoken_rs::bpe_for_model(name) {
            let encoding = if name.starts_with("gpt-4o")
                || name.starts_with('o')
                || name.starts_with("gpt-4.1")
                || name.starts_with("gpt-5")
                || name.starts_with("chatgpt")
            {
                "o200k_base"
            } else {
                "cl100k_base"
            };
            return Self::new(bpe, false, encoding);
        }
        Self::new(tiktoken_rs::o200k_base_singleton(), true, "o200k_base×1.1")
    }

    fn new(bpe: &'static CoreBPE, estimated: bool, encoding: &'static str) -> Self {
        Self {
            bpe,
            estimated,
            encoding,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// Whether counts are estimates.
    pub fn is_estimate(&self) -> bool {
        self.estimated
    }

    /// The encoding name (`o200k_base`, `cl100k_base`, or the estimate's label).
    pub fn encoding(&self) -> &'static str {
        self.encoding
    }

    /// Tokens of a text.
    pub fn count(&self, text: &str) -> usize {
        if text.is_empty() {
            return 0;
        }
        let mut hasher = DefaultHasher::new();
        text.hash(&mut hasher);
        let key = hasher.finish();
        if let Ok(cache) = self.cache.lock()
            && let Some(hit) = cache.get(&key)
        {
            return *hit as usize;
        }
        let raw = self.bpe.encode_ordinary(text).len();
        let count = if self.estimated {
            (raw * 11).div_ceil(10)
        } else {
            raw
        };
        if let Ok(mut cache) = self.cache.lock() {
            if cache.len() >= CACHE_CAPACITY {
                cache.clear();
            }
            cache.insert(key, count as u32);
        }
        count
    }

    /// Tokens of a message including framing.
    pub fn message(&self, message: &PromptMessage) -> usize {
        self.count(&message.content) + PER_MESSAGE + usize::from(message.name.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_models_use_real_encodings() {
        let c = TokenCounter::for_model("gpt-4o");
        assert!(!c.is_estimate());
        assert_eq!(c.encoding(), "o200k_base");
        assert_eq!(c.count("hello world"), 2);
        let old = TokenCounter::for_model("gpt-4");
        assert_eq!(old.encoding(), "cl100k_base");
        assert_eq!(old.count("hello world"), 2);
    }

    #[test]
    fn other_models_are_estimated_above_o200k() {
        let c = TokenCounter::for_model("claude-sonnet-4");
        assert!(c.is_estimate());
        let text = "The quick brown fox jumps over the lazy dog. ".repeat(10);
        let base = tiktoken_rs::o200k_base_singleton()
            .encode_ordinary(&text)
            .len();
        assert_eq!(c.count(&text), (base * 11).div_ceil(10));
        assert_eq!(c.count(""), 0);
        assert_eq!(
            c.message(&PromptMessage::new(tavo_model::Role::User, "")),
            PER_MESSAGE
        );
    }
}
