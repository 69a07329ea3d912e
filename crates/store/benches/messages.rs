//! Message storage speed: appending a 100,000-message chat in one transaction, and reading the
//! last 50 messages / an index range of it.
//!
//! Run: `cargo bench -p tavo-store --bench messages`. Targets (DESIGN.md §5): the 100k import
//! under 2 s, the last 50 messages under 5 ms. With `TAVO_TEST_POSTGRES` set, the reads and the
//! one-message save also run on PostgreSQL (`messages/postgres/*`).

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
    // A save after one new message: one row, one transaction (the chat keeps growing).
    let one = Message::new(Role::User, "one more line of the story");
    c.bench_function("messages/append_one_to_100k", |b| {
        b.iter(|| black_box(store.message_append(chat, &one).expect("append")))
    });
    postgres(c, &messages, &one);
}

/// The same reads and the one-message save on PostgreSQL, when `TAVO_TEST_POSTGRES` names a
/// server (`eval "$(scripts/throwaway-postgres.sh start)"`): the library in a schema of its
/// own, dropped at the end.
fn postgres(c: &mut Criterion, messages: &[Message], one: &Message) {
    let Ok(url) = std::env::var("TAVO_TEST_POSTGRES") else {
        eprintln!("messages/postgres/*: skipped (TAVO_TEST_POSTGRES is not set)");
        return;
    };
    let pool = tavo_store::PgPool::connect(&url).expect("connect");
    let schema = format!("bench_{}", std::process::id());
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open_postgres(pool.clone(), &schema, dir.path()).expect("open");
    let chat = store
        .chat_create(&Chat {
            name: "bench".into(),
            ..Default::default()
        })
        .expect("create chat");
    let started = std::time::Instant::now();
    store.messages_append(chat, messages).expect("append");
    eprintln!(
        "messages/postgres: 100k messages appended in one transaction in {:.2} s",
        started.elapsed().as_secs_f64()
    );
    c.bench_function("messages/postgres/last_50_of_100k", |b| {
        b.iter(|| black_box(store.messages_last(chat, 50).expect("read")))
    });
    c.bench_function("messages/postgres/range_50000_to_50099_of_100k", |b| {
        b.iter(|| {
            black_box(
                store
                    .messages_range(chat, 50_000, Some(50_099))
                    .expect("read"),
            )
        })
    });
    c.bench_function("messages/postgres/count_of_100k", |b| {
        b.iter(|| black_box(store.message_count(chat).expect("count")))
    });
    c.bench_function("messages/postgres/append_one_to_100k", |b| {
        b.iter(|| black_box(store.message_append(chat, one).expect("append")))
    });
    drop(store);
    pool.drop_library(&schema).expect("drop the bench schema");
}

// `criterion_group!` makes a `pub fn` per group: in a private module it needs no docs.
mod groups {
    use super::*;

    criterion_group!(benches, bench);
}
criterion_main!(groups::benches);
