//! Message storage speed: appending a 100,000-message chat in one transaction, and reading the
//! last 50 messages / an index range of it.
//!
//! Run: `cargo bench -p tavo-store --bench messages`. Targets (DESIGN.md §5): the 100k import
//! under 2 s, the last 50 messages under 5 ms.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use tavo_model::{Chat, ChatId, Message, Role};
use tavo_store::Store;

const MESSAGES: usize = 100_000;

fn generated_chat() -> Vec<Message> {
    (0..MESSAGES)
        .map(|i| {
            let role = if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            };
            let mut m = Message::new(
                role,
                format!("Message {i}: {}", "lorem ipsum dolor sit amet ".repeat(8)),
            );
            m.send_date = Some("June 14, 2024 8:43am".into());
            if i % 2 == 1 {
                m.character_id = Some(1.into());
                m.swipes = vec![m.content.clone(), "an alternative reply".into()];
                m.swipe_id = Some(0);
            }
            m
        })
        .collect()
}

fn fresh_chat(dir: &std::path::Path) -> (Store, ChatId) {
    let store = Store::open(dir).expect("open store");
    let chat = store
        .chat_create(&Chat {
            name: "bench".into(),
            ..Default::default()
        })
        .expect("create chat");
    (store, chat)
}

fn bench(c: &mut Criterion) {
    let messages = generated_chat();
    let mut group = c.benchmark_group("messages");
    group.sample_size(10);
    group.bench_function("append_100k_one_transaction", |b| {
        b.iter_batched(
            || {
                let dir = tempfile::tempdir().expect("tempdir");
                let (store, chat) = fresh_chat(dir.path());
                (dir, store, chat)
            },
            |(dir, store, chat)| {
                store
                    .messages_append(chat, black_box(&messages))
                    .expect("append");
                drop(store);
                drop(dir);
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();

    let dir = tempfile::tempdir().expect("tempdir");
    let (store, chat) = fresh_chat(dir.path());
    store.messages_append(chat, &messages).expect("append");
    c.bench_function("messages/last_50_of_100k", |b| {
        b.iter(|| black_box(store.messages_last(chat, 50).expect("read")))
    });
    c.bench_function("messages/range_50000_to_50099_of_100k", |b| {
        b.iter(|| {
            black_box(
                store
                    .messages_range(chat, 50_000, Some(50_099))
                    .expect("read"),
            )
        })
    });
    c.bench_function("messages/count_of_100k", |b| {
        b.iter(|| black_box(store.message_count(chat).expect("count")))
    });
}

// `criterion_group!` makes a `pub fn` per group: in a private module it needs no docs.
mod groups {
    use super::*;

    criterion_group!(benches, bench);
}
criterion_main!(groups::benches);
