//! Exact token counts for the OpenAI encodings o200k_base and cl100k_base, without their
//! tables on the heap (issue 29).
//!
//! tiktoken-rs builds each encoding as hash maps of `Vec<u8>` (encoder, decoder, sorted
//! token list: ≈ 45 MB of heap for o200k, kept for the life of the process). Counting needs
//! only "which rank do these bytes have", so here the vocabulary is three flat tables that the
//! build script writes and the executable includes ([`vocabulary`]): read-only pages of the
//! file, resident only where lookups touch them, shared between processes and dropped by the
//! kernel under memory pressure like any clean page. Splitting the text into pieces uses the
//! encoding's own pattern with the same regex engine as tiktoken (fancy-regex), and each piece
//! is merged as tiktoken merges it ([`merge`]), so counts are tiktoken's exactly
//! (`tests/token_counts.rs` compares them on the corpus and on arbitrary strings).
//!
//! Making an encoding ready is compiling its pattern: a few milliseconds and a few hundred
//! kilobytes, once per process.

use std::sync::OnceLock;

mod merge;
mod models;
mod vocab_hash;
mod vocabulary;

pub(crate) use models::encoding_for_model;
use vocabulary::Vocabulary;

/// An encoding counted exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// GPT-4o, GPT-4.1, GPT-5, the o-series; the estimate of every other model counts with it.
    O200kBase,
    /// GPT-4, GPT-3.5 Turbo, the embedding models.
    Cl100kBase,
}

/// tiktoken's pre-tokenizer of o200k_base (`O200K_BASE_PAT_STR`).
const O200K_PATTERN: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    r"\p{N}{1,3}",
    "|",
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
    "|",
    r"\s*[\r\n]+",
    "|",
    r"\s+(?!\S)",
    "|",
    r"\s+",
);

/// tiktoken's pre-tokenizer of cl100k_base.
const CL100K_PATTERN: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";

/// A table the build script wrote for an encoding.
macro_rules! table {
    ($encoding:literal, $part:literal) => {
        include_bytes!(concat!(env!("OUT_DIR"), "/", $encoding, ".", $part))
    };
}

impl Encoding {
    /// Its tiktoken name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }

    /// Its position in [`Encoding::ALL`], for per-encoding state.
    pub(crate) fn slot(self) -> usize {
        match self {
            Encoding::O200kBase => 0,
            Encoding::Cl100kBase => 1,
        }
    }

    fn pattern(self) -> &'static str {
        match self {
            Encoding::O200kBase => O200K_PATTERN,
            Encoding::Cl100kBase => CL100K_PATTERN,
        }
    }

    fn vocabulary(self) -> Option<Vocabulary> {
        match self {
            Encoding::O200kBase => Vocabulary::new(
                table!("o200k_base", "bytes"),
                table!("o200k_base", "ends"),
                table!("o200k_base", "index"),
            ),
            Encoding::Cl100kBase => Vocabulary::new(
                table!("cl100k_base", "bytes"),
                table!("cl100k_base", "ends"),
                table!("cl100k_base", "index"),
            ),
        }
    }
}

/// Each encoding's tokenizer once made ready (`None` inside: it could not be).
static READY: [OnceLock<Option<Tokenizer>>; 2] = [const { OnceLock::new() }; 2];

/// The encoding's tokenizer, made ready on first use in the process (blocking meanwhile).
pub(crate) fn tokenizer(encoding: Encoding) -> Option<&'static Tokenizer> {
    READY[encoding.slot()]
        .get_or_init(|| Tokenizer::new(encoding))
        .as_ref()
}

/// Whether the encoding's tokenizer is ready: [`tokenizer`] would not wait.
pub(crate) fn is_ready(encoding: Encoding) -> bool {
    READY[encoding.slot()].get().is_some()
}

/// An encoding ready to count: its vocabulary and its compiled pre-tokenizer.
pub(crate) struct Tokenizer {
    vocabulary: Vocabulary,
    pieces: fancy_regex::Regex,
}

impl Tokenizer {
    /// Compiles the encoding's pattern (the only work: the vocabulary is in the executable).
    /// `None` only if the pattern or the tables were broken by the build.
    fn new(encoding: Encoding) -> Option<Self> {
        Some(Self {
            vocabulary: encoding.vocabulary()?,
            pieces: fancy_regex::Regex::new(encoding.pattern()).ok()?,
        })
    }

    /// The number of tokens tiktoken's `encode_ordinary` gives for `text`. Should the
    /// pattern's backtracking exceed fancy-regex's limit (tiktoken panics there), the rest of
    /// the text counts one token per byte, which is never below its real count.
    pub(crate) fn count(&self, text: &str) -> usize {
        let mut scratch = Vec::new();
        let mut total = 0;
        let mut counted_to = 0;
        for found in self.pieces.find_iter(text) {
            let Ok(piece) = found else {
                return total + (text.len() - counted_to);
            };
            total += merge::count_piece(&self.vocabulary, piece.as_str().as_bytes(), &mut scratch);
            counted_to = piece.end();
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::merge::{LARGE_PIECE, count_long, count_short};
    use super::*;
    use proptest::prelude::*;

    fn ready(encoding: Encoding) -> &'static Tokenizer {
        tokenizer(encoding).unwrap_or_else(|| panic!("{encoding:?} does not load"))
    }

    #[test]
    fn every_token_is_found_at_its_rank() {
        for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let vocabulary = ready(encoding).vocabulary;
            assert!(vocabulary.len() > 100_000, "{encoding:?}");
            for rank in 0..vocabulary.len() as u32 {
                assert_eq!(vocabulary.rank(vocabulary.token(rank)), Some(rank));
            }
            assert_eq!(vocabulary.rank(b""), None);
            assert_eq!(vocabulary.rank(&[0xff; 40]), None);
        }
    }

    #[test]
    fn the_tables_are_tiktokens() {
        let reference = tiktoken_rs::o200k_base_singleton();
        let vocabulary = ready(Encoding::O200kBase).vocabulary;
        for rank in (0..vocabulary.len() as u32).step_by(97) {
            let bytes = reference.decode_bytes(&[rank]).unwrap_or_default();
            assert_eq!(vocabulary.token(rank), bytes.as_slice(), "rank {rank}");
        }
        assert_eq!(O200K_PATTERN, tiktoken_rs::O200K_BASE_PAT_STR);
    }

    #[test]
    fn counts_known_texts() {
        let o200k = ready(Encoding::O200kBase);
        assert_eq!(o200k.count("hello world"), 2);
        assert_eq!(o200k.count(""), 0);
        let cl100k = ready(Encoding::Cl100kBase);
        assert_eq!(cl100k.count("hello world"), 2);
    }

    proptest! {
        /// The long-piece merge gives what the short one gives, so the threshold between them
        /// changes no count (bytes from a small alphabet make long merge chains).
        #[test]
        fn both_merges_agree(piece in proptest::collection::vec(
            prop_oneof![Just(b'a'), Just(b' '), Just(b'e'), Just(b'n'), any::<u8>()],
            2..3 * LARGE_PIECE,
        )) {
            let o200k = ready(Encoding::O200kBase);
            let mut scratch = Vec::new();
            prop_assert_eq!(
                count_short(&o200k.vocabulary, &piece, &mut scratch),
                count_long(&o200k.vocabulary, &piece)
            );
        }
    }
}
