//! Criterion benches: PNG card parsing throughput, a 100,000-message JSONL chat parse, and
//! reading a plugin package (unzip, root, path rules, manifest, catalogs).

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

/// A plugin the size of a real one: manifest, entry, 3 catalogs, 8 fragments, a 600 KB cover and
/// 40 assets of 8 KB (about 1 MB in all).
fn plugin_package(c: &mut Criterion) {
    use std::collections::BTreeMap;
    let manifest = serde_json::json!({
        "id": "bench.plugin", "name": {"$t": "name"}, "version": "1.2.3", "specVersion": 2, "entry": "entry.js",
        "cover": "cover.png",
        "localization": {"defaultLocale": "en", "resources": {"en": "locales/en.json", "fr": "locales/fr.json", "zh-CN": "locales/zh.json"}},
        "contributes": {
            "inputActions": [{"id": "a", "label": {"$t": "a"}}],
            "htmlFragments": (0..8).map(|i| serde_json::json!({"id": format!("f{i}"), "src": format!("ui/f{i}.html"), "mount": "/messages?role=character"})).collect::<Vec<_>>(),
            "settings": {"schema": (0..20).map(|i| serde_json::json!({"type": "text", "key": format!("k{i}"), "label": {"$t": "a"}, "default": "x"})).collect::<Vec<_>>()}
        }
    });
    let mut files = BTreeMap::from([
        (
            "manifest.json".to_owned(),
            manifest.to_string().into_bytes(),
        ),
        (
            "entry.js".to_owned(),
            "tavo.plugin.onInputAction('a', () => {});\n"
                .repeat(500)
                .into_bytes(),
        ),
        (
            "cover.png".to_owned(),
            (0..600_000u32).map(|i| (i * 7 % 251) as u8).collect(),
        ),
    ]);
    for loc in ["en", "fr", "zh"] {
        files.insert(
            format!("locales/{loc}.json"),
            br#"{"name": "Bench", "a": "Action"}"#.to_vec(),
        );
    }
    for i in 0..8 {
        files.insert(
            format!("ui/f{i}.html"),
            "<div>fragment</div>".repeat(200).into_bytes(),
        );
    }
    for i in 0..40 {
        files.insert(
            format!("assets/a{i}.bin"),
            (0..8192u32).map(|j| (j * 13 % 256) as u8).collect(),
        );
    }
    let zip = tavo_formats::plugin::write_package(&files).unwrap_or_default();
    let mut g = c.benchmark_group("plugin");
    g.throughput(Throughput::Bytes(zip.len() as u64));
    g.bench_function("read_1mb_package", |b| {
        b.iter(|| black_box(tavo_formats::plugin::read_package(black_box(&zip)).is_ok()))
    });
    g.finish();
}

// `criterion_group!` makes a `pub fn` per group: in a private module it needs no docs.
mod groups {
    use super::*;

    criterion_group!(benches, png_cards, big_chat, plugin_package);
}
criterion_main!(groups::benches);
