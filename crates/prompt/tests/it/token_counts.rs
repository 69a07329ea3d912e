//! Token counts are tiktoken's exactly (tiktoken-rs, the reference implementation), for
//! o200k_base (`gpt-4o`) and cl100k_base (`gpt-4`): on the texts of every file of the corpus
//! in `shared/corpus` (the distinct strings of its JSON and JSONL files and the fields of its
//! PNG cards, up to [`PER_FILE`] bytes a file, and the start of each file's whole text as it
//! is) and on arbitrary strings.

use proptest::prelude::*;
use serde_json::Value;
use tavo_formats::{Imported, import_bytes};
use tavo_prompt::assemble::TokenCounter;
use tiktoken_rs::CoreBPE;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/corpus");

/// Bytes of distinct texts taken from one file: enough of every file's languages and
/// markup, while a debug build of both tokenizers counts the whole sample in seconds.
const PER_FILE: usize = 64 * 1024;

/// Bytes of a file's whole text compared as one text (JSON punctuation, long lines).
const WHOLE_FILE: usize = 16 * 1024;

/// The encodings compared: a model that counts with it, and tiktoken-rs's.
fn encodings() -> [(&'static str, &'static CoreBPE); 2] {
    [
        ("gpt-4o", tiktoken_rs::o200k_base_singleton()),
        ("gpt-4", tiktoken_rs::cl100k_base_singleton()),
    ]
}

fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) if !s.is_empty() => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// `(file, text)` for every text of the corpus.
fn corpus_texts() -> Vec<(String, String)> {
    let mut files: Vec<_> = walk(std::path::Path::new(CORPUS));
    files.sort();
    assert!(files.len() > 20, "the corpus is missing: {CORPUS}");
    let mut texts = Vec::new();
    for path in files {
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let name = path.display().to_string();
        let mut found = Vec::new();
        match path.extension().and_then(|e| e.to_str()) {
            Some("json") | Some("jsonl") => {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                for line in text.lines() {
                    if let Ok(value) = serde_json::from_str::<Value>(line) {
                        strings(&value, &mut found);
                    }
                }
                if let Ok(value) = serde_json::from_str::<Value>(&text) {
                    strings(&value, &mut found);
                }
                let mut cut = WHOLE_FILE.min(text.len());
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                found.push(text[..cut].to_owned());
            }
            Some("png") => {
                if let Ok(outcome) = import_bytes(&bytes, &name, None)
                    && let Imported::Character { character, .. } = outcome.imported
                {
                    let value =
                        serde_json::to_value(&character).unwrap_or_else(|e| panic!("{name}: {e}"));
                    strings(&value, &mut found);
                }
            }
            _ => {}
        }
        let mut seen = std::collections::HashSet::new();
        let mut taken = 0;
        for text in found {
            if taken < PER_FILE && seen.insert(text.clone()) {
                taken += text.len();
                texts.push((name.clone(), text));
            }
        }
    }
    texts
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut files = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

#[test]
fn counts_equal_tiktoken_on_the_corpus() {
    let texts = corpus_texts();
    let bytes: usize = texts.iter().map(|(_, t)| t.len()).sum();
    assert!(
        texts.len() > 1_000 && bytes > 1_000_000,
        "{} texts, {bytes} bytes",
        texts.len()
    );
    let non_ascii = texts.iter().filter(|(_, t)| !t.is_ascii()).count();
    assert!(non_ascii > 100, "the corpus has texts beyond ASCII");
    for (model, reference) in encodings() {
        let counter = TokenCounter::for_model(model);
        assert!(!counter.is_estimate());
        let mut total = 0;
        for (file, text) in &texts {
            let expected = reference.encode_ordinary(text).len();
            assert_eq!(
                counter.count(text),
                expected,
                "{model}, {file}: {text:.200}"
            );
            total += expected;
        }
        assert!(total > 100_000, "{model}: {total} tokens");
    }
}

/// Texts that exercise the pre-tokenizers: letters of several scripts and cases, combining
/// marks, digits, contractions, runs of spaces and newlines, symbols (long runs of them are
/// merged with the long-piece merge), and any character at all.
fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => "[a-zA-Z]{1,12}",
        2 => "[ ]{1,4}",
        1 => "[ \t\r\n]{1,6}",
        1 => "'(s|t|re|ve|m|ll|d|S|LL)",
        1 => "[0-9]{1,7}",
        1 => "[.,;:!?()\\[\\]{}<>/\\\\*=+_~`@#$%^&|\"-]{1,130}",
        1 => "[\u{4e00}-\u{4fff}\u{3040}-\u{30ff}]{1,8}",
        1 => "[\u{0400}-\u{04ff}\u{0370}-\u{03ff}\u{00c0}-\u{024f}]{1,10}",
        1 => "[\u{0300}-\u{036f}\u{0900}-\u{097f}\u{0600}-\u{06ff}]{1,4}",
        1 => "[\u{1f300}-\u{1f64f}\u{2000}-\u{206f}\u{00a0}\u{3000}]{1,3}",
        1 => any::<char>().prop_map(String::from),
    ];
    proptest::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn counts_equal_tiktoken_on_arbitrary_strings(text in text(), noise in any::<String>()) {
        for (model, reference) in encodings() {
            let counter = TokenCounter::for_model(model);
            for sample in [&text, &noise] {
                prop_assert_eq!(
                    counter.count(sample),
                    reference.encode_ordinary(sample).len(),
                    "{}: {:?}", model, sample
                );
            }
        }
    }
}
