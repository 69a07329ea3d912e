//! Criterion benches: PNG card parsing throughput and a 100,000-message JSONL chat parse.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use tavo_formats::{ExportFormat, import_bytes};
use tavo_model::Character;

fn png_cards(c: &mut Criterion) {
    let ch = Character {
        name: "Bench".into(),
        first_mes: "Hello there.".into(),
        description: "d".repeat(2000),
        ..Default::default()
    };
    let card = tavo_formats::export_character(&ch, None, None, None, ExportFormat::Png)
        .unwrap_or_default();
    let mut g = c.benchmark_group("png");
    g.throughput(Throughput::Elements(1000));
    g.bench_function("parse_1000_png_cards", |b| {
        b.iter(|| {
            for _ in 0..1000 {
                black_box(import_bytes(black_box(&card), "card.png", None).is_ok());
            }
        })
    });
    g.finish();
}

fn big_chat(c: &mut Criterion) {
    let mut text = String::from(
        "{\"user_name\":\"unused\",\"character_name\":\"unused\",\"chat_metadata\":{}}\n",
    );
    for i in 0..100_000 {
        let user = i % 2 == 0;
        text.push_str(&format!(
            "{{\"name\":\"{}\",\"is_user\":{user},\"is_system\":false,\"send_date\":\"June 14, 2024 8:43am\",\"mes\":\"message number {i} with some text to parse\",\"extra\":{{\"api\":\"openai\"}}}}\n",
            if user { "User" } else { "Seraphina" }
        ));
    }
    let bytes = text.into_bytes();
    let mut g = c.benchmark_group("jsonl");
    g.sample_size(10);
    g.bench_function("parse_100k_message_chat", |b| {
        b.iter(|| black_box(import_bytes(black_box(&bytes), "big.jsonl", None).is_ok()))
    });
    g.finish();
}

criterion_group!(benches, png_cards, big_chat);
criterion_main!(benches);
