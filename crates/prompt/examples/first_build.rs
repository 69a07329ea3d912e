//! What a process's first prompt build costs against a later one: a reply's build
//! (`wait_for_tokenizer` off) counts with the byte upper bound while the tokenizer loads in
//! the background; an exact build (a preview) waits for the load. The first is part of a
//! reply's overhead before its first request. Run in release:
//! `cargo run --release -p tavo-prompt --example first_build [MODEL]`.

use std::time::Instant;

use tavo_model::{Character, CharacterId, Message, Role};
use tavo_prompt::lorebook::TimedEffects;
use tavo_prompt::macros::Variables;
use tavo_prompt::{PromptEngine, PromptInput, PromptOptions};

fn main() {
    let model = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "gpt-4o".to_owned());
    let character = Character {
        id: Some(CharacterId(1)),
        name: "Sera".into(),
        description: "A guardian of the forest.".into(),
        first_mes: "Hello.".into(),
        ..Character::default()
    };
    let messages: Vec<Message> = (0..20)
        .map(|i| {
            let role = if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            };
            Message::new(
                role,
                format!("message {i}: the quick brown fox jumps over the lazy dog"),
            )
        })
        .collect();
    let characters = [character];
    let variables = Variables::default();
    let timed = TimedEffects::default();
    let input = PromptInput {
        chat: None,
        characters: &characters,
        speaker: 0,
        persona: None,
        preset: None,
        lorebooks: &[],
        regex_groups: &[],
        messages: &messages,
        memory: None,
        variables: &variables,
        timed: &timed,
    };
    let mut options = PromptOptions::new(tavo_prompt::local_now());
    options.model = model.clone();
    let engine = PromptEngine::new();
    let rss = || {
        std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("VmRSS:"))
                    .map(|l| l.trim_start_matches("VmRSS:").trim().to_owned())
            })
            .unwrap_or_default()
    };
    println!("model {model}; RSS before {}", rss());
    let mut reply = options.clone();
    reply.wait_for_tokenizer = false;
    let t = Instant::now();
    let by_reply = engine.build(&input, &reply);
    let cold = t.elapsed();
    println!(
        "first reply build (no wait: {}): {cold:?}; RSS after {}",
        by_reply.explain.tokens.encoding,
        rss()
    );
    let t = Instant::now();
    let first = engine.build(&input, &options);
    let cold = t.elapsed();
    println!(
        "first exact build (waits for the tokenizer's load): {cold:?}; RSS after {}",
        rss()
    );
    assert_eq!(
        by_reply.messages, first.messages,
        "the reply's build sends what the exact one does"
    );
    let t = Instant::now();
    let runs = 100;
    for _ in 0..runs {
        std::hint::black_box(engine.build(&input, &options));
    }
    let warm = t.elapsed() / runs;
    println!(
        "later build: {warm:?} ({} messages, {} tokens)",
        first.messages.len(),
        first.explain.tokens.total
    );
}
