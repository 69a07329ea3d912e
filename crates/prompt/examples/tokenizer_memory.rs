//! What an o200k token counter costs a fresh process (issue 29): memory and time to make it
//! ready, and for a first count, for tavo's counter and for tiktoken-rs's. Run in release, one
//! process per figure:
//! `cargo run --release -p tavo-prompt --example tokenizer_memory [tavo|tiktoken|parts] [FILE]`.
//!
//! `parts` rebuilds tiktoken-rs's o200k structures one by one (the encoder map, the decoder
//! map, the sorted token list, the compiled pattern and its 128 per-thread clones) and prints
//! the resident memory each adds: where tiktoken-rs's ≈ 45 MB go. FILE (default: a chat of the
//! corpus) is the text counted.

use std::collections::HashMap;
use std::time::Instant;

use tavo_prompt::assemble::TokenCounter;

fn status() -> String {
    let text = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches(" kB").parse::<f64>().ok())
            .map_or(0.0, |kb| kb / 1024.0)
    };
    format!(
        "VmRSS {:.1} MB (RssAnon {:.1}, RssFile {:.1})",
        field("VmRSS:"),
        field("RssAnon:"),
        field("RssFile:")
    )
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args.first().map_or("tavo", String::as_str);
    let file = args.get(1).cloned().unwrap_or_else(|| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/corpus/chats/mgb-claude-2024.jsonl"
        )
        .to_owned()
    });
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{file}: {e}"));
    println!("{mode}: start: {}", status());
    match mode {
        "tavo" => {
            let t = Instant::now();
            let counter = TokenCounter::for_model("gpt-4o");
            println!("ready in {:?}: {}", t.elapsed(), status());
            let first: String = text.chars().take(2_000).collect();
            let t = Instant::now();
            let n = counter.count(&first);
            println!(
                "2 kB counted in {:?} ({n} tokens): {}",
                t.elapsed(),
                status()
            );
            let t = Instant::now();
            let n = counter.count(&text);
            let took = t.elapsed();
            println!(
                "{} kB counted in {took:?} ({n} tokens, {:.1} MB/s): {}",
                text.len() / 1024,
                text.len() as f64 / took.as_secs_f64() / 1e6,
                status()
            );
        }
        "tiktoken" => {
            let t = Instant::now();
            let bpe = tiktoken_rs::o200k_base_singleton();
            println!("ready in {:?}: {}", t.elapsed(), status());
            let t = Instant::now();
            let n = bpe.encode_ordinary(&text).len();
            let took = t.elapsed();
            println!(
                "{} kB counted in {took:?} ({n} tokens, {:.1} MB/s): {}",
                text.len() / 1024,
                text.len() as f64 / took.as_secs_f64() / 1e6,
                status()
            );
        }
        _ => parts(),
    }
}

/// tiktoken-rs's o200k `CoreBPE::new`, one structure at a time.
fn parts() {
    let reference = tiktoken_rs::o200k_base_singleton();
    let tokens: Vec<Vec<u8>> = (0u32..199_998)
        .filter_map(|rank| reference.decode_bytes(&[rank]).ok())
        .collect();
    println!(
        "(tiktoken-rs loaded, to read the tokens from; {} tokens): {}",
        tokens.len(),
        status()
    );
    let encoder: HashMap<Vec<u8>, u32> = tokens.iter().cloned().zip(0..).collect();
    println!("+ encoder HashMap<Vec<u8>, u32>: {}", status());
    let decoder: HashMap<u32, Vec<u8>> = encoder.iter().map(|(k, v)| (*v, k.clone())).collect();
    println!("+ decoder HashMap<u32, Vec<u8>>: {}", status());
    let mut sorted: Vec<Vec<u8>> = encoder.keys().cloned().collect();
    sorted.sort();
    println!("+ sorted token bytes Vec<Vec<u8>>: {}", status());
    let pattern =
        fancy_regex::Regex::new(tiktoken_rs::O200K_BASE_PAT_STR).unwrap_or_else(|e| panic!("{e}"));
    println!("+ the compiled pattern: {}", status());
    let clones: Vec<fancy_regex::Regex> = (0..128).map(|_| pattern.clone()).collect();
    println!("+ 128 clones of it: {}", status());
    let n = clones
        .first()
        .map_or(0, |p| p.find_iter("hello world").count());
    println!(
        "(kept: {} {} {} {n})",
        encoder.len(),
        decoder.len(),
        sorted.len()
    );
}
