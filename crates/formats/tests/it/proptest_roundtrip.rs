//! Property tests: model → export → import gives the model back, for every format family.

use chrono::{TimeZone, Utc};
use proptest::prelude::*;
use serde_json::json;
use tavo_formats::{
    ExportFormat, Imported, export_character, export_chat, export_lorebook, export_preset,
    export_regex, import_bytes,
};
use tavo_model::*;

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9 ,.!?]{0,16}",
        "[\\p{Han}\\p{Hiragana}é😀\"\\\\\r\n\t]{0,8}",
        Just(String::new()),
        Just("{{char}} <START>".to_owned()),
    ]
}

fn name() -> impl Strategy<Value = String> {
    "[a-zA-Z][a-zA-Z0-9 ]{0,10}[a-zA-Z0-9]"
}

fn role() -> impl Strategy<Value = Role> {
    prop_oneof![Just(Role::System), Just(Role::User), Just(Role::Assistant)]
}

fn lorebook_entry() -> impl Strategy<Value = LorebookEntry> {
    (
        (
            text(),
            text(),
            any::<bool>(),
            any::<bool>(),
            prop::collection::vec(text(), 0..3),
            prop::collection::vec(text(), 0..3),
        ),
        (
            prop_oneof![
                Just(SecondaryKeywordStrategy::None),
                Just(SecondaryKeywordStrategy::AndAny),
                Just(SecondaryKeywordStrategy::AndAll),
                Just(SecondaryKeywordStrategy::NotAny),
                Just(SecondaryKeywordStrategy::NotAll)
            ],
            0u32..=1000,
            any::<bool>(),
            any::<bool>(),
            prop_oneof![
                Just(LorebookPosition::LorebookBefore),
                Just(LorebookPosition::LorebookAfter),
                Just(LorebookPosition::TopOfExampleMessages),
                Just(LorebookPosition::BottomOfExampleMessages),
                Just(LorebookPosition::AtDepth)
            ],
            0u32..10_000,
        ),
        (
            role(),
            0u32..=100,
            0u32..50,
            0u32..50,
            0u32..50,
            -1000i64..1000,
        ),
    )
        .prop_map(
            |(
                (nm, content, enabled, constant, keywords, secondary),
                (sks, scan, cs, ww, pos, depth),
                (r, prob, sticky, cooldown, delay, order),
            )| {
                LorebookEntry {
                    identifier: String::new(),
                    name: nm,
                    content,
                    enabled,
                    strategy: if constant {
                        LorebookStrategy::Constant
                    } else {
                        LorebookStrategy::Keyword
                    },
                    keywords,
                    secondary_keywords: secondary,
                    secondary_keyword_strategy: sks,
                    scan_depth: scan,
                    case_sensitive: cs,
                    match_whole_word: ww,
                    injection_position: pos,
                    injection_depth: depth,
                    injection_role: r,
                    probability: prob,
                    sticky,
                    cooldown,
                    delay,
                    order,
                    extra: Extra::new(),
                }
            },
        )
}

fn lorebook() -> impl Strategy<Value = Lorebook> {
    (name(), prop::collection::vec(lorebook_entry(), 0..5)).prop_map(|(n, mut entries)| {
        for (i, e) in entries.iter_mut().enumerate() {
            e.identifier = i.to_string();
        }
        Lorebook {
            name: n,
            entries,
            ..Default::default()
        }
    })
}

fn regex_entry() -> impl Strategy<Value = RegexEntry> {
    (
        (name(), text(), text(), prop::collection::vec(text(), 0..3)),
        prop::sample::subsequence(
            vec![
                RegexPlacement::User,
                RegexPlacement::Char,
                RegexPlacement::Lorebook,
                RegexPlacement::Reasoning,
            ],
            0..=4,
        ),
        prop_oneof![
            Just(RegexTiming::Display),
            Just(RegexTiming::Send),
            Just(RegexTiming::SendAndDisplay),
            Just(RegexTiming::Receive),
            Just(RegexTiming::EditAndReceive)
        ],
        prop_oneof![
            Just(Substitution::None),
            Just(Substitution::Raw),
            Just(Substitution::Escaped)
        ],
        (
            prop::option::of(-1i64..100),
            prop::option::of(0i64..100),
            any::<bool>(),
        ),
    )
        .prop_map(
            |(
                (n, find, replace, trim),
                placements,
                timing,
                substitution,
                (min_depth, max_depth, enabled),
            )| RegexEntry {
                identifier: format!("id-{n}"),
                name: n,
                find_regex: find,
                replace_string: replace,
                trim_strings: trim,
                placements,
                timing,
                substitution,
                min_depth,
                max_depth,
                enabled,
                extra: Extra::new(),
            },
        )
}

fn character() -> impl Strategy<Value = Character> {
    (
        (name(), text(), text(), text(), text(), text(), text()),
        (
            text(),
            text(),
            prop::collection::vec(text(), 0..3),
            prop::collection::vec(name(), 0..3),
            text(),
            text(),
        ),
        (
            prop::option::of(text()),
            prop::collection::vec(text(), 0..2),
            prop::option::of(0i64..4_000_000_000),
            any::<u8>(),
        ),
    )
        .prop_map(
            |(
                (n, desc, first, pers, scen, ex, notes),
                (sys, post, alts, tags, creator, ver),
                (nick, group, date, talk),
            )| {
                let mut extensions = Extra::new();
                extensions.insert("talkativeness".into(), json!(talk.to_string()));
                extensions.insert(
                    "depth_prompt".into(),
                    json!({"prompt": "p", "depth": 4, "role": "system"}),
                );
                Character {
                    name: n,
                    description: desc,
                    first_mes: first,
                    personality: pers,
                    scenario: scen,
                    mes_example: ex,
                    creator_notes: notes,
                    system_prompt: sys,
                    post_history_instructions: post,
                    alternate_greetings: alts,
                    tags,
                    creator,
                    character_version: ver,
                    nickname: nick,
                    group_only_greetings: group,
                    creation_date: date.and_then(|s| Utc.timestamp_opt(s, 0).single()),
                    extensions,
                    ..Default::default()
                }
            },
        )
}

fn messages() -> impl Strategy<Value = Vec<Message>> {
    prop::collection::vec(
        (
            any::<bool>(),
            text(),
            prop::option::of(text()),
            any::<bool>(),
            prop::collection::vec(text(), 0..3),
            name(),
        ),
        0..6,
    )
    .prop_map(|list| {
        list.into_iter()
            .enumerate()
            .map(
                |(i, (user, content, reasoning, hidden, swipes, speaker))| Message {
                    floor: Some(i as u64),
                    role: if user { Role::User } else { Role::Assistant },
                    name: Some(speaker),
                    content,
                    reasoning,
                    hidden,
                    send_date: Some("June 14, 2024 8:43am".into()),
                    swipe_id: (!swipes.is_empty()).then_some(0),
                    swipes,
                    ..Default::default()
                },
            )
            .collect()
    })
}

fn preset() -> impl Strategy<Value = Preset> {
    (
        name(),
        prop::collection::vec(text(), 11),
        prop::collection::vec(
            (
                text(),
                prop::option::of(text()),
                any::<bool>(),
                any::<bool>(),
                prop::option::of(role()),
                any::<bool>(),
                0u32..100,
                any::<bool>(),
                any::<bool>(),
            ),
            0..6,
        ),
    )
        .prop_map(|(n, basics, raw)| {
            let b = BasicPrompts {
                persona: basics[0].clone(),
                description: basics[1].clone(),
                personality: basics[2].clone(),
                scenario: basics[3].clone(),
                example_message_start: basics[4].clone(),
                chat_start: basics[5].clone(),
                group_chat_start: basics[6].clone(),
                group_nudge: basics[7].clone(),
                continue_nudge: basics[8].clone(),
                impersonation: basics[9].clone(),
                lorebook: basics[10].clone(),
                extra: Extra::new(),
            };
            let mut entries: Vec<PresetEntry> = raw
                .into_iter()
                .enumerate()
                .map(
                    |(i, (nm, content, enabled, active, role, marker, depth, absolute, forbid))| {
                        PresetEntry {
                            identifier: format!("p{i}"),
                            name: nm,
                            content,
                            enabled,
                            active,
                            kind: if marker {
                                PresetEntryType::Marker
                            } else {
                                PresetEntryType::Custom
                            },
                            role,
                            injection_position: if absolute {
                                PresetInjectionPosition::Absolute
                            } else {
                                PresetInjectionPosition::Relative
                            },
                            injection_depth: depth,
                            forbid_overrides: forbid,
                            extra: Extra::new(),
                        }
                    },
                )
                .collect();
            // Active entries come first (inactive ones are not in SillyTavern's order list).
            entries.sort_by_key(|e| !e.active);
            Preset {
                name: n,
                basic_prompts: b,
                entries,
                ..Default::default()
            }
        })
}

fn reimport(bytes: &[u8], file: &str) -> Imported {
    match import_bytes(bytes, file, None) {
        Ok(o) => o.imported,
        Err(e) => panic!("re-import failed: {e}\n{}", String::from_utf8_lossy(bytes)),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn lorebook_st_ccv3_and_tavo(book in lorebook()) {
        for f in [ExportFormat::St, ExportFormat::Ccv3, ExportFormat::Tavo] {
            let bytes = export_lorebook(&book, f).expect("export");
            match reimport(&bytes, "book.json") {
                Imported::Lorebook(b) => prop_assert_eq!(&b, &book, "format {}", f),
                other => prop_assert!(false, "{:?}", other.kind()),
            }
        }
    }

    #[test]
    fn regex_st_and_tavo(entries in prop::collection::vec(regex_entry(), 1..4)) {
        let group = RegexGroup { name: "g".into(), entries, ..Default::default() };
        for f in [ExportFormat::St, ExportFormat::Tavo] {
            let bytes = export_regex(&group, f).expect("export");
            match reimport(&bytes, "g.json") {
                Imported::Regex(r) => prop_assert_eq!(&r.entries, &group.entries, "format {}", f),
                other => prop_assert!(false, "{:?}", other.kind()),
            }
        }
    }

    #[test]
    fn character_cards_in_every_format(c in character(), book in prop::option::of(lorebook())) {
        let book = book.map(|mut b| { b.name = c.name.clone(); b });
        for f in [ExportFormat::Ccv3Json, ExportFormat::Ccv2Json, ExportFormat::Png, ExportFormat::Charx, ExportFormat::Tavo] {
            let bytes = export_character(&c, book.as_ref(), None, None, f).expect("export");
            match reimport(&bytes, "card") {
                Imported::Character { character, lorebook, .. } => {
                    prop_assert_eq!(&character, &c, "format {}", f);
                    prop_assert_eq!(&lorebook, &book, "format {}", f);
                }
                other => prop_assert!(false, "{:?}", other.kind()),
            }
        }
    }

    #[test]
    fn chat_messages_jsonl_and_tavo(msgs in messages()) {
        let chat = Chat { name: "c".into(), ..Default::default() };
        for (f, file) in [(ExportFormat::Jsonl, "c.jsonl"), (ExportFormat::Tavo, "c.json")] {
            let bytes = export_chat(&chat, &msgs, f).expect("export");
            match reimport(&bytes, file) {
                Imported::Chat(c) => prop_assert_eq!(&c.messages, &msgs, "format {}", f),
                other => prop_assert!(false, "{:?}", other.kind()),
            }
        }
    }

    #[test]
    fn preset_st_and_tavo(p in preset()) {
        for f in [ExportFormat::St, ExportFormat::Tavo] {
            let bytes = export_preset(&p, None, f).expect("export");
            match reimport(&bytes, "p.json") {
                Imported::Preset { preset, .. } => {
                    prop_assert_eq!(&preset.name, &p.name);
                    prop_assert_eq!(&preset.basic_prompts, &p.basic_prompts, "format {}", f);
                    prop_assert_eq!(&preset.entries, &p.entries, "format {}", f);
                }
                other => prop_assert!(false, "{:?}", other.kind()),
            }
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256), png_prefix in any::<bool>()) {
        let mut input = if png_prefix { tavo_formats::png::SIGNATURE.to_vec() } else { Vec::new() };
        input.extend_from_slice(&bytes);
        let _ = import_bytes(&input, "fuzz.bin", None);
    }
}
