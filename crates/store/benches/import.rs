//! Whole-import speed, reader and store together, as `tavo import` runs it:
//! a generated 100,000-message SillyTavern JSONL chat (target < 2 s), and 1,000 PNG cards
//! (reported as cards/s).
//!
//! Run: `cargo bench -p tavo-store --bench import`.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use tavo_formats::{Imported, import_bytes};
use tavo_store::Store;

const MESSAGES: usize = 100_000;
const CARDS: u64 = 1_000;

/// A SillyTavern chat file: header line, then alternating user / character messages with the
/// keys SillyTavern writes (swipes and `extra` on the character's replies).
fn generated_jsonl() -> Vec<u8> {
    let mut out = String::with_capacity(MESSAGES * 400);
    out.push_str(
        r#"{"user_name":"You","character_name":"Seraphina","create_date":"2024-6-14@08h18m03s","chat_metadata":{"note_prompt":"","tainted":false}}"#,
    );
    for i in 0..MESSAGES {
        out.push('\n');
        let text = format!("Message {i}: {}", "lorem ipsum dolor sit amet ".repeat(8));
        let line = if i % 2 == 0 {
            serde_json::json!({"name": "You", "is_user": true, "is_system": false,
                "send_date": "June 14, 2024 8:43am", "mes": text, "extra": {}})
        } else {
            serde_json::json!({"name": "Seraphina", "is_user": false, "is_system": false,
                "send_date": "June 14, 2024 8:44am", "mes": text, "swipe_id": 0,
                "swipes": [text, "an alternative reply"],
                "extra": {"api": "openai", "model": "gpt-4o", "reasoning": "thinking"}})
        };
        out.push_str(&line.to_string());
    }
    out.into_bytes()
}

fn import_one(store: &Store, bytes: &[u8], name: &str) {
    let outcome = import_bytes(bytes, name, None).expect("the generated file parses");
    match outcome.imported {
        Imported::Chat(chat) => {
            store
                .import_chat(
                    chat.chat,
                    chat.messages,
                    &chat.character_names,
                    chat.user_name.as_deref(),
                )
                .expect("store the chat");
        }
        Imported::Character {
            character,
            avatar,
            lorebook,
            regex,
            ..
        } => {
            store
                .import_character(
                    &character,
                    avatar.as_deref(),
                    lorebook.as_ref(),
                    regex.as_ref(),
                )
                .expect("store the card");
        }
        other => panic!("unexpected kind {:?}", other.kind()),
    }
}

fn bench(c: &mut Criterion) {
    let jsonl = generated_jsonl();
    let mut group = c.benchmark_group("import");
    group.sample_size(10);
    group.throughput(Throughput::Elements(MESSAGES as u64));
    group.bench_function("st_jsonl_chat_100k_messages", |b| {
        b.iter_batched(
            || {
                let dir = tempfile::tempdir().expect("tempdir");
                let store = Store::open(dir.path()).expect("open");
                (dir, store)
            },
            |(dir, store)| {
                import_one(&store, black_box(&jsonl), "chat.jsonl");
                drop(store);
                drop(dir);
            },
            BatchSize::PerIteration,
        )
    });

    let card = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/corpus/cards/stbackload-default_Assistant.png"
    ))
    .expect("corpus card (../shared/corpus)");
    group.throughput(Throughput::Elements(CARDS));
    group.bench_function("png_cards_1000", |b| {
        b.iter_batched(
            || {
                let dir = tempfile::tempdir().expect("tempdir");
                let store = Store::open(dir.path()).expect("open");
                (dir, store)
            },
            |(dir, store)| {
                for _ in 0..CARDS {
                    import_one(&store, black_box(&card), "card.png");
                }
                drop(store);
                drop(dir);
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

// `criterion_group!` makes a `pub fn` per group: in a private module it needs no docs.
mod groups {
    use super::*;

    criterion_group!(benches, bench);
}
criterion_main!(groups::benches);
