//! Compiles the BPE vocabularies of the OpenAI encodings that token counts use (o200k_base,
//! cl100k_base) into three flat tables each, which `src/tokenizer` includes in the
//! executable: read-only pages of the file, paged in only where a count touches them and
//! shared by every process, instead of ≈ 45 MB of hash maps built on the heap at start
//! (issue 29). The vocabularies come from tiktoken-rs, the reference the tests compare with.
//!
//! Per encoding, in `OUT_DIR` (all integers little-endian `u32`):
//! - `NAME.bytes`: every ordinary token's bytes, concatenated in rank order;
//! - `NAME.ends`: for each rank, where its bytes end in `NAME.bytes` (they start where the
//!   previous rank's end);
//! - `NAME.index`: an open-addressing table of a power-of-two size, at most half full, probed
//!   linearly from the slot of [`vocab_hash`]; an entry is `tag | (rank + 1)`, 0 when empty.

use std::collections::HashSet;
use std::path::Path;

use tiktoken_rs::CoreBPE;

#[path = "src/tokenizer/vocab_hash.rs"]
#[allow(dead_code)]
mod vocab_hash;

use vocab_hash::{RANK_MASK, first_slot, tag, vocab_hash};

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=src/tokenizer/vocab_hash.rs");
    let out = std::env::var_os("OUT_DIR").unwrap_or_else(|| panic!("cargo sets OUT_DIR"));
    let out = Path::new(&out);
    let o200k = tiktoken_rs::o200k_base().unwrap_or_else(|e| panic!("o200k_base: {e}"));
    write_tables(out, "o200k_base", &ordinary_tokens(&o200k));
    let cl100k = tiktoken_rs::cl100k_base().unwrap_or_else(|e| panic!("cl100k_base: {e}"));
    write_tables(out, "cl100k_base", &ordinary_tokens(&cl100k));
}

/// The encoding's ordinary (non-special) tokens, by rank. Their ranks must run from 0 with
/// no gap: the tables index tokens by rank.
fn ordinary_tokens(bpe: &CoreBPE) -> Vec<Vec<u8>> {
    let special: HashSet<u32> = bpe
        .special_tokens()
        .into_iter()
        .flat_map(|s| bpe.encode_with_special_tokens(s))
        .collect();
    let mut tokens = Vec::new();
    for rank in 0u32.. {
        match bpe.decode_bytes(&[rank]) {
            Ok(bytes) if !special.contains(&rank) => tokens.push(bytes),
            _ => break,
        }
    }
    let highest = special.iter().copied().max().unwrap_or(0);
    let first_missing = u32::try_from(tokens.len()).unwrap_or(u32::MAX);
    for rank in first_missing..=highest + 1024 {
        if !special.contains(&rank) && bpe.decode_bytes(&[rank]).is_ok() {
            panic!("ordinary rank {rank} after the gap at {first_missing}");
        }
    }
    for byte in 0..=u8::MAX {
        assert!(
            tokens.iter().any(|t| t == &[byte]),
            "byte {byte} is not a token: the byte-level merge needs every byte"
        );
    }
    tokens
}

fn write_tables(out: &Path, name: &str, tokens: &[Vec<u8>]) {
    assert!(tokens.len() < RANK_MASK as usize, "{name}: too many tokens");
    let mut bytes = Vec::new();
    let mut ends = Vec::with_capacity(tokens.len() * 4);
    for token in tokens {
        bytes.extend_from_slice(token);
        let end = u32::try_from(bytes.len()).unwrap_or_else(|e| panic!("{name}: {e}"));
        ends.extend_from_slice(&end.to_le_bytes());
    }
    let slot_bits = (tokens.len() * 2).next_power_of_two().trailing_zeros();
    let mask = (1usize << slot_bits) - 1;
    let mut index = vec![0u32; 1 << slot_bits];
    let mut seen = HashSet::new();
    for (rank, token) in tokens.iter().enumerate() {
        assert!(
            seen.insert(token.as_slice()),
            "{name}: duplicate token {rank}"
        );
        let hash = vocab_hash(token);
        let mut slot = first_slot(hash, slot_bits);
        while index[slot] != 0 {
            slot = (slot + 1) & mask;
        }
        index[slot] = tag(hash) | (rank as u32 + 1);
    }
    let index: Vec<u8> = index.iter().flat_map(|e| e.to_le_bytes()).collect();
    for (suffix, table) in [("bytes", &bytes), ("ends", &ends), ("index", &index)] {
        let path = out.join(format!("{name}.{suffix}"));
        std::fs::write(&path, table).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}
