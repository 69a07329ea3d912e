//! Golden prompts from real SillyTavern-ecosystem files in `shared/corpus`: cards (with their
//! embedded lorebooks and regex scripts), presets and lorebooks, imported through
//! `tavo_formats::import_bytes`, assembled with a fixed clock and seed.

use chrono::{FixedOffset, TimeZone};
use serde_json::{Value, json};
use tavo_formats::{Imported, import_bytes};
use tavo_model::{
    Character, CharacterId, Lorebook, LorebookId, LorebookStrategy, Message, Persona, Preset,
    PresetId, RegexGroup, RegexId, Role,
};
use tavo_prompt::lorebook::TimedEffects;
use tavo_prompt::macros::Variables;
use tavo_prompt::{PromptInput, PromptOptions, PromptOutput};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/corpus");

fn read(path: &str) -> Imported {
    let full = format!("{CORPUS}/{path}");
    let bytes = std::fs::read(&full).unwrap_or_else(|e| panic!("{full}: {e}"));
    import_bytes(&bytes, path, None)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .imported
}

fn card(path: &str) -> (Character, Option<Lorebook>, Option<RegexGroup>) {
    match read(path) {
        Imported::Character {
            character,
            lorebook,
            regex,
            ..
        } => {
            let mut character = character;
            character.id = Some(CharacterId(1));
            let lorebook = lorebook.map(|mut l| {
                l.id = Some(LorebookId(1));
                l.revision = 1;
                l
            });
            let regex = regex.map(|mut r| {
                r.id = Some(RegexId(1));
                r
            });
            (character, lorebook, regex)
        }
        other => panic!("{path} is a {:?}", other.kind()),
    }
}

fn preset(path: &str) -> (Preset, Option<RegexGroup>) {
    match read(path) {
        Imported::Preset { preset, regex } => {
            let mut preset = preset;
            preset.id = Some(PresetId(1));
            (
                preset,
                regex.map(|mut r| {
                    r.id = Some(RegexId(2));
                    r
                }),
            )
        }
        other => panic!("{path} is a {:?}", other.kind()),
    }
}

fn lorebook(path: &str, id: i64) -> Lorebook {
    match read(path) {
        Imported::Lorebook(mut l) => {
            l.id = Some(LorebookId(id));
            l.revision = 1;
            l
        }
        other => panic!("{path} is a {:?}", other.kind()),
    }
}

/// First keys of the first `n` enabled keyword entries, so the chat mentions them.
fn trigger_words(books: &[Lorebook], n: usize) -> Vec<String> {
    books
        .iter()
        .flat_map(|b| &b.entries)
        .filter(|e| e.enabled && e.strategy == LorebookStrategy::Keyword)
        .filter_map(|e| {
            e.keywords
                .iter()
                .find(|k| !k.trim().is_empty() && !k.starts_with('/'))
        })
        .take(n)
        .cloned()
        .collect()
}

fn options() -> PromptOptions {
    let tz = FixedOffset::east_opt(8 * 3600).unwrap_or_else(|| unreachable!());
    let now = tz
        .with_ymd_and_hms(2026, 11, 29, 21, 30, 0)
        .single()
        .unwrap_or_else(|| unreachable!());
    let mut o = PromptOptions::new(now);
    o.seed = 42;
    o.max_context_tokens = 32_768;
    o
}

/// FNV-1a, 64-bit: a hash whose value never changes between Rust releases (std's does not
/// promise that), so a snapshot pins the exact text of every message.
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn summarize(out: &PromptOutput) -> Value {
    let messages: Vec<Value> = out
        .messages
        .iter()
        .map(|m| {
            let head: String = m.content.chars().take(240).collect();
            json!({
                "role": m.role,
                "name": m.name,
                "chars": m.content.chars().count(),
                // The whole content, not only its head, is compared.
                "fnv1a64": format!("{:016x}", fnv1a64(m.content.as_bytes())),
                "head": head,
            })
        })
        .collect();
    let e = &out.explain;
    json!({
        "messages": messages,
        "activatedEntries": e.activated_entries,
        "skippedGates": e.skipped_entries.iter().fold(std::collections::BTreeMap::<String, usize>::new(), |mut acc, s| {
            *acc.entry(format!("{:?}", s.gate)).or_default() += 1;
            acc
        }),
        "regexApplied": e.regex_applied,
        "tokens": e.tokens,
        "diagnostics": e.diagnostics.iter().map(|d| format!("{}: {}", d.location, d.message)).collect::<Vec<_>>(),
    })
}

struct Case {
    characters: Vec<Character>,
    preset: Option<Preset>,
    lorebooks: Vec<Lorebook>,
    regex: Vec<RegexGroup>,
    messages: Vec<Message>,
}

impl Case {
    fn build(&self) -> PromptOutput {
        let persona = Persona {
            name: "Alex".into(),
            description: "Alex is a curious traveller.".into(),
            ..Persona::default()
        };
        let vars = Variables::default();
        let timed = TimedEffects::default();
        let input = PromptInput {
            chat: None,
            characters: &self.characters,
            speaker: 0,
            persona: Some(&persona),
            preset: self.preset.as_ref(),
            lorebooks: &self.lorebooks,
            regex_groups: &self.regex,
            messages: &self.messages,
            memory: None,
            variables: &vars,
            timed: &timed,
        };
        tavo_prompt::build(&input, &options())
    }
}

fn chat(character: &Character, user_lines: &[String]) -> Vec<Message> {
    let mut messages = vec![Message::new(Role::Assistant, character.first_mes.clone())];
    for line in user_lines {
        messages.push(Message::new(Role::User, line.clone()));
        messages.push(Message::new(
            Role::Assistant,
            format!("{} nods.", character.name),
        ));
    }
    messages.pop();
    messages
}

#[test]
fn seraphina_with_st_default_preset() {
    let (character, book, _) = card("cards/st-default_Seraphina.png");
    let books: Vec<Lorebook> = book.into_iter().collect();
    let words = trigger_words(&books, 2);
    let lines = vec![
        "Where am I?".to_owned(),
        format!("Tell me about the {}.", words.join(" and the ")),
    ];
    let (p, _) = preset("presets/st-openai-Default.json");
    let case = Case {
        messages: chat(&character, &lines),
        characters: vec![character],
        preset: Some(p),
        lorebooks: books,
        regex: Vec::new(),
    };
    let out = case.build();
    assert!(
        !out.explain.activated_entries.is_empty(),
        "the chat names lorebook keys"
    );
    insta::assert_json_snapshot!(summarize(&out));
}

#[test]
fn lide_card_with_book_regex_and_chinese_preset() {
    let (character, book, regex) = card("cards/lide-ai-v3.json");
    let books: Vec<Lorebook> = book.into_iter().collect();
    let words = trigger_words(&books, 3);
    let lines = vec!["你好".to_owned(), format!("我们聊聊{}吧", words.join("、"))];
    let (p, _) = preset("presets/stagedog-mingyue-qiuqing.json");
    let case = Case {
        messages: chat(&character, &lines),
        characters: vec![character],
        preset: Some(p),
        lorebooks: books,
        regex: regex.into_iter().collect(),
    };
    insta::assert_json_snapshot!(summarize(&case.build()));
}

#[test]
fn balgruuf_with_world_books_and_large_preset() {
    let (character, _, _) = card("cards/mgb-balgruuf.png");
    let books = vec![
        lorebook("lorebooks/mgb-skyrim.json", 2),
        lorebook("lorebooks/st-Eldoria.json", 3),
    ];
    let words = trigger_words(&books, 3);
    let lines = vec![format!("I came from {}.", words.join(", "))];
    let (p, _) = preset("presets/atelier-v4.json");
    let case = Case {
        messages: chat(&character, &lines),
        characters: vec![character],
        preset: Some(p),
        lorebooks: books,
        regex: Vec::new(),
    };
    let out = case.build();
    assert!(
        out.explain
            .activated_entries
            .iter()
            .any(|a| a.lorebook_id == Some(LorebookId(2))),
        "Skyrim's constant entries"
    );
    insta::assert_json_snapshot!(summarize(&out));
}

#[test]
fn clickable_choices_card_with_kemini_preset_regex() {
    let (character, book, card_regex) = card("cards/stagedog-clickable-choices.png");
    let (p, preset_regex) = preset("presets/stbackload-kemini-5.03.json");
    let books: Vec<Lorebook> = book.into_iter().collect();
    let words = trigger_words(&books, 2);
    let lines = vec![format!("{} <thinking>plan</thinking>", words.join(" "))];
    let regex: Vec<RegexGroup> = card_regex.into_iter().chain(preset_regex).collect();
    let case = Case {
        messages: chat(&character, &lines),
        characters: vec![character],
        preset: Some(p),
        lorebooks: books,
        regex,
    };
    insta::assert_json_snapshot!(summarize(&case.build()));
}

#[test]
fn every_corpus_preset_and_lorebook_assembles_without_diagnostics_from_the_engine() {
    let (character, _, _) = card("cards/serioustavern-selene-v2.json");
    let dir = format!("{CORPUS}/presets");
    let mut built = 0;
    for entry in std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        let bytes = std::fs::read(entry.path()).unwrap_or_default();
        let Ok(outcome) = import_bytes(&bytes, &name, None) else {
            continue;
        };
        let Imported::Preset { preset, regex } = outcome.imported else {
            continue;
        };
        let case = Case {
            messages: chat(&character, &["Hello".to_owned()]),
            characters: vec![character.clone()],
            preset: Some(preset),
            lorebooks: Vec::new(),
            regex: regex.into_iter().collect(),
        };
        let out = case.build();
        assert!(
            out.messages.iter().any(|m| m.content.contains("Hello")),
            "{name}: history present"
        );
        assert!(
            out.explain.tokens.total <= out.explain.tokens.budget
                || !out.explain.diagnostics.is_empty(),
            "{name}"
        );
        built += 1;
    }
    assert!(built >= 8, "built {built} presets");
}
