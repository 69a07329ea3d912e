//! Token counting for the context budget.
//!
//! OpenAI-family models (`gpt-*`, `o1`/`o3`/`o4`, `chatgpt-*`, …) use their real tiktoken
//! encoding. Other models have no public local tokenizer; their count is **estimated** as
//! o200k tokens × 1.1, rounded up (providers' tokenizers for Claude, Gemini and most open
//! models produce somewhat more tokens than o200k on the same text). Each message costs 3
//! tokens of framing (+1 with a name) and every reply 3 tokens of priming, as in OpenAI's
//! published counting recipe.
//!
//! Counts are exact where tiktoken's are: `crate::tokenizer` counts o200k_base and
//! cl100k_base from tables compiled into the executable, as tiktoken does, without its
//! ≈ 45 MB of heap. Making an encoding ready only compiles its pre-tokenizer pattern (a few
//! milliseconds, once per process), and still a reply does not wait for it:
//! [`TokenCounter::ready_for_model`] answers only once the encoding is ready, and until then
//! [`TokenCounter::upper_bound`] counts every UTF-8 byte as a token (a byte-level BPE token
//! covers at least one byte, so this is never less than the real count). [`warm`] makes the
//! encodings ready on a background thread at start.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use super::message::PromptMessage;
use crate::tokenizer::{self, Encoding, Tokenizer, encoding_for_model};

/// Framing tokens per message.
pub const PER_MESSAGE: usize = 3;
/// Tokens that prime the reply.
pub const REPLY_PRIMING: usize = 3;
const CACHE_CAPACITY: usize = 200_000;

/// How a counter counts.
#[derive(Clone, Copy)]
enum Counting {
    /// The model's encoding.
    Exact(&'static Tokenizer),
    /// One token per UTF-8 byte: never below the exact count.
    Bound,
}

/// Counts tokens for one model, caching counts by text hash.
pub struct TokenCounter {
    counting: Counting,
    estimated: bool,
    encoding: &'static str,
    cache: Mutex<HashMap<u64, u32>>,
}

impl std::fmt::Debug for TokenCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenCounter")
            .field("encoding", &self.encoding)
            .field("estimated", &self.estimated)
            .field("upperBound", &self.is_upper_bound())
            .finish()
    }
}

/// Which encoding a model counts with: `(encoding, label, estimated)`.
fn encoding_of(model: &str) -> (Encoding, &'static str, bool) {
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
    if openai && let Some(encoding) = encoding_for_model(name) {
        return (encoding, encoding.name(), false);
    }
    (Encoding::O200kBase, "o200k_base×1.1", true)
}

/// Whether `model`'s encoding is ready (an exact count would not wait).
pub(crate) fn is_ready(model: &str) -> bool {
    tokenizer::is_ready(encoding_of(model).0)
}

/// Makes the encodings of `models` (and o200k, the estimate's, always) ready on a background
/// thread, once per encoding and process, so that no reply waits for them. Returns at once.
pub fn warm(models: &[&str]) {
    static STARTED: [AtomicBool; 2] = [const { AtomicBool::new(false) }; 2];
    let mut wanted = vec![Encoding::O200kBase];
    wanted.extend(models.iter().map(|m| encoding_of(m).0));
    let todo: Vec<Encoding> = wanted
        .into_iter()
        .filter(|e| !STARTED[e.slot()].swap(true, Ordering::AcqRel))
        .collect();
    if todo.is_empty() {
        return;
    }
    // When no thread can be started, the first exact count makes the encoding ready itself.
    let _ = std::thread::Builder::new()
        .name("tavo-tokenizer".into())
        .spawn(move || {
            for encoding in todo {
                tokenizer::tokenizer(encoding);
            }
        });
}

impl TokenCounter {
    /// The counter for `model`: its tiktoken encoding when it is an OpenAI model, else the
    /// documented estimate. Makes the encoding ready on first use (blocking).
    pub fn for_model(model: &str) -> Self {
        let (encoding, label, estimated) = encoding_of(model);
        match tokenizer::tokenizer(encoding) {
            Some(ready) => Self::new(Counting::Exact(ready), estimated, label),
            None => Self::upper_bound(model),
        }
    }

    /// The exact counter for `model` if its encoding is already ready; `None` instead of
    /// waiting for it.
    pub fn ready_for_model(model: &str) -> Option<Self> {
        is_ready(model).then(|| Self::for_model(model))
    }

    /// A counter that needs no encoding: one token per UTF-8 byte (× 1.1 for estimated
    /// models), never below what [`TokenCounter::for_model`] counts.
    pub fn upper_bound(model: &str) -> Self {
        let (_, _, estimated) = encoding_of(model);
        Self::new(Counting::Bound, estimated, "utf8-bytes (upper bound)")
    }

    fn new(counting: Counting, estimated: bool, encoding: &'static str) -> Self {
        Self {
            counting,
            estimated,
            encoding,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// Whether counts are estimates.
    pub fn is_estimate(&self) -> bool {
        self.estimated || self.is_upper_bound()
    }

    /// Whether counts are the byte upper bound rather than the encoding's.
    pub fn is_upper_bound(&self) -> bool {
        matches!(self.counting, Counting::Bound)
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
        let tokenizer = match self.counting {
            Counting::Exact(tokenizer) => tokenizer,
            Counting::Bound => return self.scaled(text.len()),
        };
        let mut hasher = DefaultHasher::new();
        text.hash(&mut hasher);
        let key = hasher.finish();
        if let Ok(cache) = self.cache.lock()
            && let Some(hit) = cache.get(&key)
        {
            return *hit as usize;
        }
        let count = self.scaled(tokenizer.count(text));
        if let Ok(mut cache) = self.cache.lock() {
            if cache.len() >= CACHE_CAPACITY {
                cache.clear();
            }
            cache.insert(key, count as u32);
        }
        count
    }

    /// A raw count with the estimate's 1.1 applied when this model is estimated.
    fn scaled(&self, raw: usize) -> usize {
        if self.estimated {
            (raw * 11).div_ceil(10)
        } else {
            raw
        }
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
        for model in ["openai/gpt-oss-120b", "gpt-4.5-preview", "o3-mini"] {
            let c = TokenCounter::for_model(model);
            assert_eq!(
                (c.encoding(), c.is_estimate()),
                ("o200k_base", false),
                "{model}"
            );
        }
        // Retired completion models (p50k/r50k) are not counted exactly: estimated.
        assert!(TokenCounter::for_model("text-davinci-003").is_estimate());
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

    #[test]
    fn the_byte_bound_is_never_below_the_encoding() {
        let texts = [
            "hello world",
            "Привет, мир — 猫が好き 🐈",
            &"The quick brown fox jumps over the lazy dog. ".repeat(40),
        ];
        for model in ["gpt-4o", "gpt-4", "claude-sonnet-4"] {
            let exact = TokenCounter::for_model(model);
            let bound = TokenCounter::upper_bound(model);
            assert!(bound.is_upper_bound() && bound.is_estimate());
            assert!(TokenCounter::ready_for_model(model).is_some());
            for text in texts {
                assert!(bound.count(text) >= exact.count(text), "{model}: {text}");
            }
        }
    }
}
