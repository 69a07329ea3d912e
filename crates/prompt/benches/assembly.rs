//! Prompt assembly benchmarks (DESIGN.md §5 target: < 10 ms median for a 10,000-message
//! chat, a 10,000-entry lorebook with 5 keys per entry, scan depth 100, 20 regex rules and a
//! 30-entry preset), and lorebook scan cost against scanned text length and entry count.
//!
//! Run: `cargo bench -p tavo-prompt --bench assembly`.

use std::hint::black_box;

use chrono::{FixedOffset, TimeZone};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tavo_model::{
    Character, CharacterId, Lorebook, LorebookEntry, LorebookId, Message, Persona, Preset,
    PresetEntry, PresetInjectionPosition, RegexEntry, RegexGroup, RegexId, RegexPlacement,
    RegexTiming, Role,
};
use tavo_prompt::lorebook::{
    ActivationInput, EntryScope, LorebookIndex, LorebookOptions, TimedEffects, activate,
};
use tavo_prompt::macros::{MacroContext, MacroState, Variables};
use tavo_prompt::{PromptEngine, PromptInput, PromptOptions};

const VOCAB: usize = 50_000;

fn word(rng: &mut ChaCha8Rng) -> String {
    format!("w{}", rng.random_range(0..VOCAB))
}

fn sentence(rng: &mut ChaCha8Rng, words: usize) -> String {
    (0..words).map(|_| word(rng)).collect::<Vec<_>>().join(" ")
}

fn lorebook(entries: usize, rng: &mut ChaCha8Rng) -> Lorebook {
    Lorebook {
        id: Some(LorebookId(1)),
        revision: 1,
        name: "bench".into(),
        entries: (0..entries)
            .map(|i| LorebookEntry {
                identifier: format!("e{i}"),
                name: format!("entry {i}"),
                content: sentence(rng, 30),
                keywords: (0..5).map(|_| word(rng)).collect(),
                scan_depth: 100,
                ..LorebookEntry::default()
            })
            .collect(),
        ..Lorebook::default()
    }
}

/// A lorebook whose entries each have keys of their own (`thing<i>k<j>`), as real books
/// name characters, places and items.
fn named_lorebook(entries: usize, rng: &mut ChaCha8Rng) -> Lorebook {
    Lorebook {
        id: Some(LorebookId(2)),
        revision: 1,
        name: "named".into(),
        entries: (0..entries)
            .map(|i| LorebookEntry {
                identifier: format!("n{i}"),
                name: format!("thing {i}"),
                content: sentence(rng, 30),
                keywords: (0..5).map(|j| format!("thing{i}k{j}")).collect(),
                scan_depth: 100,
                ..LorebookEntry::default()
            })
            .collect(),
        ..Lorebook::default()
    }
}

fn messages(count: usize, rng: &mut ChaCha8Rng) -> Vec<Message> {
    (0..count)
        .map(|i| {
            let role = if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            };
            Message::new(
                role,
                format!("{} foo{} *smiles*", sentence(rng, 35), i % 97),
            )
        })
        .collect()
}

fn regex_group() -> RegexGroup {
    RegexGroup {
        id: Some(RegexId(1)),
        revision: 1,
        name: "bench".into(),
        entries: (0..20)
            .map(|i| RegexEntry {
                identifier: format!("r{i}"),
                name: format!("rule {i}"),
                find_regex: format!("/foo{i}(\\d*)/g"),
                replace_string: format!("bar{i}$1"),
                placements: vec![RegexPlacement::User, RegexPlacement::Char],
                timing: RegexTiming::Send,
                ..RegexEntry::default()
            })
            .collect(),
        ..RegexGroup::default()
    }
}

fn preset(rng: &mut ChaCha8Rng) -> Preset {
    let mut entries = Preset::default_entries();
    for i in 0..18 {
        entries.push(PresetEntry {
            identifier: format!("custom{i}"),
            name: format!("Custom {i}"),
            content: Some(format!("{} {{{{char}}}} {{{{user}}}}", sentence(rng, 40))),
            role: Some(Role::System),
            injection_position: if i % 6 == 0 {
                PresetInjectionPosition::Absolute
            } else {
                PresetInjectionPosition::Relative
            },
            injection_depth: (i % 5) as u32,
            ..PresetEntry::default()
        });
    }
    Preset {
        id: None,
        name: "bench".into(),
        entries,
        ..Preset::default()
    }
}

fn now() -> chrono::DateTime<FixedOffset> {
    let tz = FixedOffset::east_opt(0).unwrap_or_else(|| unreachable!());
    tz.with_ymd_and_hms(2026, 1, 1, 0, 0, 0)
        .single()
        .unwrap_or_else(|| unreachable!())
}

fn full_assembly(c: &mut Criterion) {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let books = vec![lorebook(10_000, &mut rng)];
    let msgs = messages(10_000, &mut rng);
    let groups = vec![regex_group()];
    let preset = preset(&mut rng);
    let characters = vec![Character {
        id: Some(CharacterId(1)),
        name: "Sera".into(),
        description: sentence(&mut rng, 200),
        personality: sentence(&mut rng, 30),
        scenario: sentence(&mut rng, 40),
        mes_example: format!(
            "<START>\n{{{{user}}}}: {}\n{{{{char}}}}: {}",
            sentence(&mut rng, 20),
            sentence(&mut rng, 20)
        ),
        ..Character::default()
    }];
    let persona = Persona {
        name: "Alex".into(),
        description: sentence(&mut rng, 30),
        ..Persona::default()
    };
    let vars = Variables::default();
    let timed = TimedEffects::default();
    let input = PromptInput {
        chat: None,
        characters: &characters,
        speaker: 0,
        persona: Some(&persona),
        preset: Some(&preset),
        lorebooks: &books,
        regex_groups: &groups,
        messages: &msgs,
        memory: None,
        variables: &vars,
        timed: &timed,
    };
    let mut options = PromptOptions::new(now());
    options.max_context_tokens = 32_768;
    let engine = PromptEngine::new();
    let warm = engine.build(&input, &options);
    eprintln!(
        "assembly: {} messages, {} tokens, {} history messages, {} entries activated",
        warm.messages.len(),
        warm.explain.tokens.total,
        warm.explain.tokens.history_included,
        warm.explain.activated_entries.len()
    );
    let mut group = c.benchmark_group("assembly");
    group.sample_size(30);
    group.bench_function(
        "10k_messages_10k_entries_depth100_20_rules_30_entries",
        |b| b.iter(|| black_box(engine.build(black_box(&input), &options))),
    );
    group.bench_function("cold_engine_same_input", |b| {
        b.iter(|| black_box(PromptEngine::new().build(black_box(&input), &options)))
    });
    group.finish();
}

fn scan_cost(c: &mut Criterion) {
    let ctx = MacroContext::new("Alex", "Sera", now());
    let mut group = c.benchmark_group("lorebook_scan");
    group.sample_size(20);
    // Cost against scanned text: 10,000 entries, 25 … 800 messages of ~250 bytes.
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let books = vec![lorebook(10_000, &mut rng)];
    let index = LorebookIndex::build(&books).unwrap_or_else(|e| panic!("{e}"));
    for messages in [25usize, 100, 400, 800] {
        let texts: Vec<String> = (0..messages).map(|_| sentence(&mut rng, 35)).collect();
        let mut books = books.clone();
        for e in &mut books[0].entries {
            e.scan_depth = messages as u32;
        }
        let index = LorebookIndex::build(&books).unwrap_or_else(|e| panic!("{e}"));
        let bytes: usize = texts.iter().map(String::len).sum();
        group.bench_with_input(BenchmarkId::new("text_bytes", bytes), &texts, |b, texts| {
            b.iter(|| run(&books, &index, texts, &ctx))
        });
    }
    // Cost against entry count, as lorebooks are written: each entry names its own thing
    // (keys unique to it), and the chat mentions a fixed 20 of them among ordinary words.
    // 100 messages, 1,000 … 40,000 entries: the scan and the 20 mentioned entries cost the
    // same whatever the size of the book.
    let mut chat: Vec<String> = (0..100).map(|_| sentence(&mut rng, 35)).collect();
    for (m, mention) in (0..20).map(|k| (k * 5, k * 37)) {
        chat[m].push_str(&format!(" thing{mention}k2"));
    }
    for entries in [1_000usize, 5_000, 10_000, 40_000] {
        let books = vec![named_lorebook(entries, &mut rng)];
        let index = LorebookIndex::build(&books).unwrap_or_else(|e| panic!("{e}"));
        group.bench_with_input(
            BenchmarkId::new("entries_named", entries),
            &chat,
            |b, texts| b.iter(|| run(&books, &index, texts, &ctx)),
        );
    }
    // The same sizes with every key drawn from the chat's own vocabulary: about 30 % of
    // entries match, so the work grows with the entries that activate (a worst case).
    let texts: Vec<String> = (0..100).map(|_| sentence(&mut rng, 35)).collect();
    for entries in [1_000usize, 5_000, 10_000, 40_000] {
        let books = vec![lorebook(entries, &mut rng)];
        let index = LorebookIndex::build(&books).unwrap_or_else(|e| panic!("{e}"));
        group.bench_with_input(BenchmarkId::new("entries", entries), &texts, |b, texts| {
            b.iter(|| run(&books, &index, texts, &ctx))
        });
    }
    drop(index);
    group.finish();
}

fn run(books: &[Lorebook], index: &LorebookIndex, texts: &[String], ctx: &MacroContext) -> usize {
    let input = ActivationInput {
        books,
        index,
        texts,
        clock: texts.len() as u64,
        ctx,
        js: None,
        scope: EntryScope::default(),
    };
    let mut timed = TimedEffects::default();
    let mut macros = MacroState::new(Variables::default(), 1);
    let options = LorebookOptions {
        budget_tokens: Some(4_000),
        ..LorebookOptions::default()
    };
    let activation = activate(
        &input,
        &mut timed,
        &mut macros,
        &|t: &str| t.len() / 4,
        options,
    );
    black_box(activation.activated.len())
}

/// One card field rendered as a template (EJS on the shared QuickJS worker, then macros) next to
/// the same field with macros only: what a template costs per field.
fn ejs_field(c: &mut Criterion) {
    let now = FixedOffset::east_opt(3600)
        .and_then(|tz| tz.with_ymd_and_hms(2026, 11, 29, 20, 37, 0).single())
        .unwrap_or_else(|| panic!("a fixed time"));
    let ctx = MacroContext::new("Alice", "Seraphina", now);
    let mut vars = Variables::default();
    vars.chat.insert("hp".into(), serde_json::json!(10));
    let mut g = c.benchmark_group("ejs_field");
    g.bench_function("template", |b| {
        let mut state = MacroState::new(vars.clone(), 3);
        b.iter(|| black_box(state.render("<%= getvar('hp') + 1 %> {{user}}", &ctx).text))
    });
    g.bench_function("macros_only", |b| {
        let mut state = MacroState::new(vars.clone(), 3);
        b.iter(|| black_box(state.render("{{getvar::hp}} {{user}}", &ctx).text))
    });
    g.finish();
}

// `criterion_group!` makes a `pub fn` per group: in a private module it needs no docs.
mod groups {
    use super::*;

    criterion_group!(benches, full_assembly, scan_cost, ejs_field);
}
criterion_main!(groups::benches);
