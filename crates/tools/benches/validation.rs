//! Validation cost of a typical tool call at the model door (target: < 20 µs per call).
//!
//! `cargo bench -p tavo-tools --bench validation`

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

fn bench(c: &mut Criterion) {
    let registry = match tavo_tools::builtin_registry() {
        Ok(r) => r,
        Err(e) => panic!("registry: {e}"),
    };
    let op = |name: &str| match registry.get(name) {
        Some(op) => op,
        None => panic!("{name} missing"),
    };

    let save = op("tavo_file_save");
    let save_args = json!({
        "name": "notes.txt",
        "content": "由模型工具保存 — a typical short note of a few hundred bytes. ".repeat(4),
        "options": {"scope": "chat", "encoding": "utf8"}
    });
    c.bench_function("validate tavo_file_save (valid)", |b| {
        b.iter(|| black_box(save.validate(black_box(&save_args))))
    });

    let find = op("tavo_character_find");
    let find_args = json!({"name": "Ali", "options": {"match": "prefix"}});
    c.bench_function("validate tavo_character_find (valid)", |b| {
        b.iter(|| black_box(find.validate(black_box(&find_args))))
    });

    let preset = op("tavo_preset_update");
    let entries: Vec<_> = (0..20)
        .map(|i| json!({"identifier": format!("e{i}"), "name": format!("Entry {i}"), "content": "Write vividly.", "enabled": true, "role": "system"}))
        .collect();
    let preset_args = json!({"preset": {"id": 3, "name": "Mine", "entries": entries}});
    c.bench_function("validate tavo_preset_update, 20 entries (valid)", |b| {
        b.iter(|| black_box(preset.validate(black_box(&preset_args))))
    });

    let bad = json!({"name": "x.txt", "content": "x", "bogus": 1});
    c.bench_function(
        "validate tavo_file_save (unknown field, error built)",
        |b| b.iter(|| black_box(save.validate(black_box(&bad)))),
    );
}

// `criterion_group!` makes a `pub fn` per group: in a private module it needs no docs.
mod groups {
    use super::*;

    criterion_group!(benches, bench);
}
criterion_main!(groups::benches);
