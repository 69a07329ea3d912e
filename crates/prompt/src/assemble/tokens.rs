//! Token counting for the context budget.
//!
//! OpenAI-family models (`gpt-*`, `o1`/`o3`/`o4`, `chatgpt-*`, …) use their real tiktoken
//! encoding. Other models have no public local tokenizer; their count is **estimated** as
//! o200k tokens × 1.1, rounded up (providers' tokenizers for Claude, Gemini and most open
//! models produce somewhat more tokens than o200k on the same text). Each message costs 3
//! tokens of framing (+1 with a name) and every reply 3 tokens of priming, as in OpenAI's
//! published counting recipe.
//!
//! Loading an encoding costs a process a few hundred milliseconds and ≈ 45 MB, once. A reply
//! does not wait for it: [`TokenCounter::ready_for_model`] answers only once the encoding is
//! in memory, and until then [`TokenCounter::upper_bound`] counts every UTF-8 byte as a token
//! (a byte-level BPE token covers at least one byte, so this is never less than the real
//! count). [`warm`] loads the encodings on a background thread at start.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use tiktoken_rs::CoreBPE;
use tiktoken_rs::tokenizer::Tokenizer;

use super::message::PromptMessage;

/// Framing tokens per message.
pub const PER_MESSAGE: usize = 3;
/// Tokens that prime the reply.
pub const REPLY_PRIMING: usize = 3;
const CACHE_CAPACITY: usize = 200_000;

/// How a counter counts.
#[derive(Clone, Copy)]
enum Counting {
    /// The model's encoding.
    Exact(&'static CoreBPE),
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

/// Which encoding a model counts with: `(tokenizer, name, estimated)`.
fn encoding_of(model: &str) -> (Tokenizer, &'static str, bool) {
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
    if openai && let Some(tokenizer) = tiktoken_rs::tokenizer::get_tokenizer(name) {
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
        return (tokenizer, encoding, false);
    }
    (Tokenizer::O200kBase, "o200k_base×1.1", true)
}

/// One flag per tokenizer: set once its encoding is in memory.
static LOADED: [AtomicBool; 7] = [const { AtomicBool::new(false) }; 7];

fn slot(tokenizer: Tokenizer) -> usize {
    match tokenizer {
        Tokenizer::O200kHarmony => 0,
        Tokenizer::O200kBase => 1,
        Tokenizer::Cl100kBase => 2,
        Tokenizer::P50kBase => 3,
        Tokenizer::R50kBase => 4,
        Tokenizer::P50kEdit => 5,
        Tokenizer::Gpt2 => 6,
    }
}

/// The encoding, loading it if this is the first use in the process (blocking).
fn load(tokenizer: Tokenizer) -> Option<&'static CoreBPE> {
    let bpe = tiktoken_rs::bpe_for_tokenizer(tokenizer).ok()?;
    LOADED[slot(tokenizer)].store(true, Ordering::Release);
    Some(bpe)
}

fn is_loaded(tokenizer: Tokenizer) -> bool {
    LOADED[slot(tokenizer)].load(Ordering::Acquire)
}

/// Whether `model`'s encoding is in memory (an exact count would not wait).
pub(crate) fn is_ready(model: &str) -> bool {
    is_loaded(encoding_of(model).0)
}

/// Loads the encodings of `models` (and o200k, the estimate's, always) on a background
/// thread, once per encoding and process, so that no reply waits for them. Returns at once.
pub fn warm(models: &[&str]) {
    static STARTED: [AtomicBool; 7] = [const { AtomicBool::new(false) }; 7];
    let mut wanted = vec![Tokenizer::O200kBase];
    wanted.extend(models.iter().map(|m| encoding_of(m).0));
    let todo: Vec<Tokenizer> = wanted
        .into_iter()
        .filter(|t| !STARTED[slot(*t)].swap(true, Ordering::AcqRel))
        .collect();
    if todo.is_empty() {
        return;
    }
    // When no thread can be started, the first exact count loads the encoding itself.
    let _ = std::thread::Builder::new()
        .name("tavo-tokenizer".into())
        .spawn(move || {
            for tokenizer in todo {
                load(tokenizer);
            }
        });
}

impl TokenCounter {
    /// The counter for `model`: its tiktoken encoding when it is an OpenAI model, else the
    /// documented estimate. Loads the encoding on first use (blocking).
    pub fn for_model(model: &str) -> Self {
        let (tokenizer, encoding, estimated) = encoding_of(model);
        match load(tokenizer) {
            Some(bpe) => Self::new(Counting::Exact(bpe), estimated, encoding),
            None => Self::upper_bound(model),
        }
    }

    /// The exact counter for `model` if its encoding is already in memory; `None` instead of
    /// waiting for the load.
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
        let bpe = match self.counting {
            Counting::Exact(bpe) => bpe,
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
        let count = self.scaled(bpe.encode_ordinary(text).len());
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
