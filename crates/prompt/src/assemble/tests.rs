//! Assembly tests on hand-built fixtures: preset order, markers, overrides, injections,
//! lorebook placement, examples, budget, group chats, continue/impersonate, memory.

use chrono::{FixedOffset, TimeZone};
use tavo_model::{
    Character, CharacterId, Chat, Lorebook, LorebookEntry, LorebookId, LorebookPosition,
    LorebookStrategy, Memory, Message, Persona, Preset, PresetEntry, PresetInjectionPosition, Role,
};

use super::*;
use crate::lorebook::TimedEffects;
use crate::macros::Variables;

pub(super) fn options() -> PromptOptions {
    let tz = FixedOffset::east_opt(0).unwrap_or_else(|| unreachable!());
    let now = tz
        .with_ymd_and_hms(2026, 1, 1, 12, 0, 0)
        .single()
        .unwrap_or_else(|| unreachable!());
    PromptOptions::new(now)
}

fn character() -> Character {
    Character {
        id: Some(CharacterId(1)),
        name: "Sera".into(),
        description: "{{char}} is a guardian.".into(),
        personality: "kind".into(),
        scenario: "A forest".into(),
        mes_example: "<START>\n{{user}}: hi\n{{char}}: hello".into(),
        ..Character::default()
    }
}

fn persona() -> Persona {
    Persona {
        name: "Alex".into(),
        description: "A traveller.".into(),
        ..Persona::default()
    }
}

fn preset() -> Preset {
    let mut p = Preset {
        name: "p".into(),
        entries: Preset::default_entries(),
        ..Preset::default()
    };
    for e in &mut p.entries {
        match e.identifier.as_str() {
            "main" => e.content = Some("Write {{char}}'s next reply.".into()),
            "jailbreak" => e.content = Some("Stay in character.".into()),
            _ => {}
        }
    }
    p
}

fn msg(role: Role, text: &str) -> Message {
    Message::new(role, text)
}

pub(super) struct Fixture {
    pub(super) chat: Chat,
    pub(super) characters: Vec<Character>,
    pub(super) persona: Persona,
    pub(super) preset: Preset,
    pub(super) lorebooks: Vec<Lorebook>,
    pub(super) regex: Vec<tavo_model::RegexGroup>,
    pub(super) messages: Vec<Message>,
    pub(super) memory: Option<Memory>,
    pub(super) variables: Variables,
    pub(super) timed: TimedEffects,
}

impl Fixture {
    pub(super) fn new() -> Self {
        Self {
            chat: Chat::default(),
            characters: vec![character()],
            persona: persona(),
            preset: preset(),
            lorebooks: Vec::new(),
            regex: Vec::new(),
            messages: vec![
                msg(Role::Assistant, "Welcome."),
                msg(Role::User, "Hello there."),
            ],
            memory: None,
            variables: Variables::default(),
            timed: TimedEffects::default(),
        }
    }

    pub(super) fn build(&self, options: &PromptOptions) -> PromptOutput {
        let input = PromptInput {
            chat: Some(&self.chat),
            characters: &self.characters,
            speaker: 0,
            persona: Some(&self.persona),
            preset: Some(&self.preset),
            lorebooks: &self.lorebooks,
            regex_groups: &self.regex,
            messages: &self.messages,
            memory: self.memory.as_ref(),
            variables: &self.variables,
            timed: &self.timed,
        };
        crate::build(&input, options)
    }
}

pub(super) fn texts(out: &PromptOutput) -> Vec<String> {
    out.messages
        .iter()
        .map(|m| {
            format!(
                "{}:{}{}",
                m.role.as_str(),
                m.name
                    .as_deref()
                    .map(|n| format!("[{n}]"))
                    .unwrap_or_default(),
                m.content
            )
        })
        .collect()
}

#[test]
fn default_order_with_markers() {
    let out = Fixture::new().build(&options());
    assert_eq!(
        texts(&out),
        vec![
            "system:Write Sera's next reply.",
            "system:A traveller.",
            "system:Sera is a guardian.",
            "system:kind",
            "system:A forest",
            "system:[Example Chat]",
            "system:[example_user]hi",
            "system:[example_assistant]hello",
            "system:[Start a new Chat]",
            "assistant:Welcome.",
            "user:Hello there.",
            "system:Stay in character.",
        ]
    );
    let parts: Vec<&str> = out
        .explain
        .tokens
        .parts
        .iter()
        .map(|p| p.part.as_str())
        .collect();
    assert_eq!(
        parts,
        vec![
            "main",
            "personaDescription",
            "charDescription",
            "charPersonality",
            "scenario",
            "dialogueExamples",
            "chatHistory",
            "jailbreak"
        ]
    );
    assert_eq!(out.explain.tokens.history_included, 2);
}

#[test]
fn list_order_active_and_enabled() {
    let mut f = Fixture::new();
    // Move jailbreak first, archive charPersonality, switch off scenario.
    let jb = f.preset.entries.pop().unwrap_or_default();
    f.preset.entries.insert(0, jb);
    for e in &mut f.preset.entries {
        if e.identifier == "charPersonality" {
            e.active = false;
        }
        if e.identifier == "scenario" {
            e.enabled = false;
        }
    }
    f.preset.entries.push(PresetEntry {
        identifier: "custom1".into(),
        name: "Custom".into(),
        content: Some("Custom as {{user}}".into()),
        role: Some(Role::User),
        ..PresetEntry::default()
    });
    let out = f.build(&options());
    let t = texts(&out);
    assert_eq!(t[0], "system:Stay in character.");
    assert!(
        !t.iter()
            .any(|x| x == "system:kind" || x == "system:A forest")
    );
    assert_eq!(t.last().map(String::as_str), Some("user:Custom as Alex"));
}

#[test]
fn character_overrides_and_forbid() {
    let mut f = Fixture::new();
    f.characters[0].system_prompt = "Card main. {{original}}".into();
    f.characters[0].post_history_instructions = "Card PHI only.".into();
    let out = f.build(&options());
    let t = texts(&out);
    assert_eq!(t[0], "system:Card main. Write Sera's next reply.");
    assert_eq!(t.last().map(String::as_str), Some("system:Card PHI only."));
    for e in &mut f.preset.entries {
        e.forbid_overrides = true;
    }
    let t = texts(&f.build(&options()));
    assert_eq!(t[0], "system:Write Sera's next reply.");
    assert_eq!(
        t.last().map(String::as_str),
        Some("system:Stay in character.")
    );
}

#[test]
fn absolute_entries_at_depth() {
    let mut f = Fixture::new();
    f.messages = vec![
        msg(Role::Assistant, "m1"),
        msg(Role::User, "m2"),
        msg(Role::Assistant, "m3"),
        msg(Role::User, "m4"),
    ];
    for (id, depth) in [("d0", 0), ("d1", 1), ("d9", 9)] {
        f.preset.entries.push(PresetEntry {
            identifier: id.into(),
            content: Some(format!("inject {id}")),
            role: Some(Role::System),
            injection_position: PresetInjectionPosition::Absolute,
            injection_depth: depth,
            ..PresetEntry::default()
        });
    }
    let t = texts(&f.build(&options()));
    let start = t
        .iter()
        .position(|x| x == "system:[Start a new Chat]")
        .unwrap_or(0);
    assert_eq!(
        &t[start..],
        &[
            "system:[Start a new Chat]",
            "system:inject d9",
            "assistant:m1",
            "user:m2",
            "assistant:m3",
            "system:inject d1",
            "user:m4",
            "system:inject d0",
            "system:Stay in character.",
        ]
    );
}

pub(super) fn lore_entry(id: &str, position: LorebookPosition) -> LorebookEntry {
    LorebookEntry {
        identifier: id.into(),
        name: id.into(),
        content: format!("lore {id} for {{{{user}}}}"),
        strategy: LorebookStrategy::Constant,
        injection_position: position,
        injection_depth: 1,
        injection_role: Role::User,
        ..LorebookEntry::default()
    }
}

#[test]
fn lorebook_positions_and_wrapper() {
    let mut f = Fixture::new();
    f.preset.basic_prompts.lorebook = "<lore>{0}</lore>".into();
    f.lorebooks = vec![Lorebook {
        id: Some(LorebookId(3)),
        revision: 1,
        name: "w".into(),
        entries: vec![
            lore_entry("b", LorebookPosition::LorebookBefore),
            lore_entry("a", LorebookPosition::LorebookAfter),
            lore_entry("top", LorebookPosition::TopOfExampleMessages),
            lore_entry("bottom", LorebookPosition::BottomOfExampleMessages),
            lore_entry("deep", LorebookPosition::AtDepth),
        ],
        ..Lorebook::default()
    }];
    let out = f.build(&options());
    let t = texts(&out);
    let pos = |s: &str| {
        t.iter()
            .position(|x| x == s)
            .unwrap_or_else(|| panic!("{s} missing in {t:#?}"))
    };
    assert_eq!(
        pos("system:<lore>lore b for Alex</lore>"),
        1,
        "worldInfoBefore follows main"
    );
    assert!(pos("system:<lore>lore a for Alex</lore>") > pos("system:A forest"));
    assert!(pos("system:<lore>lore top for Alex</lore>") < pos("system:[example_user]hi"));
    assert!(
        pos("system:<lore>lore bottom for Alex</lore>") > pos("system:[example_assistant]hello")
    );
    assert_eq!(
        pos("user:<lore>lore deep for Alex</lore>") + 1,
        pos("user:Hello there.")
    );
    assert_eq!(out.explain.activated_entries.len(), 5);
    assert_eq!(
        out.explain.activated_entries[0].lorebook_id,
        Some(LorebookId(3))
    );
}

#[test]
fn budget_drops_oldest_history_first_never_pinned() {
    let mut f = Fixture::new();
    f.messages = (0..200)
        .map(|i| {
            msg(
                if i % 2 == 0 {
                    Role::User
                } else {
                    Role::Assistant
                },
                &format!("message number {i} with some words"),
            )
        })
        .collect();
    let mut o = options();
    o.max_context_tokens = 400;
    o.max_response_tokens = 100;
    let out = f.build(&o);
    let t = texts(&out);
    assert_eq!(t[0], "system:Write Sera's next reply.");
    assert_eq!(
        t.last().map(String::as_str),
        Some("system:Stay in character.")
    );
    assert!(t.contains(&"assistant:message number 199 with some words".to_owned()));
    assert!(!t.contains(&"user:message number 0 with some words".to_owned()));
    let included = out.explain.tokens.history_included;
    assert!(included > 5 && included < 200, "{included}");
    assert_eq!(out.explain.tokens.history_available, 200);
    assert!(
        out.explain.tokens.total <= 300,
        "{}",
        out.explain.tokens.total
    );
    // The included history is a contiguous newest run.
    let first_kept = 200 - included;
    assert!(
        t.iter()
            .any(|x| x.ends_with(&format!("message number {first_kept} with some words")))
    );
}

#[test]
fn hidden_messages_are_excluded() {
    let mut f = Fixture::new();
    let mut hidden = msg(Role::User, "secret");
    hidden.hidden = true;
    f.messages.insert(1, hidden);
    let t = texts(&f.build(&options()));
    assert!(!t.iter().any(|x| x.contains("secret")));
}

#[test]
fn group_chat_start_nudge_names_and_muted() {
    let mut f = Fixture::new();
    let mut other = character();
    other.id = Some(CharacterId(2));
    other.name = "Bram".into();
    f.characters.push(other);
    f.chat
        .extra
        .insert("mutedCharacterIds".into(), serde_json::json!([2]));
    let mut from_bram = msg(Role::Assistant, "I am Bram.");
    from_bram.character_id = Some(CharacterId(2));
    f.messages.push(from_bram);
    f.preset.entries.push(PresetEntry {
        identifier: "members".into(),
        content: Some("{{group}} / {{groupNotMuted}}".into()),
        ..PresetEntry::default()
    });
    let t = texts(&f.build(&options()));
    assert!(
        t.contains(&"system:[Start a new group chat. Group members: Sera, Bram]".to_owned()),
        "{t:#?}"
    );
    assert!(t.contains(&"assistant:Bram: I am Bram.".to_owned()));
    assert!(t.contains(&"system:[Write the next reply only as Sera.]".to_owned()));
    assert!(t.contains(&"system:Sera, Bram / Sera".to_owned()));
}

#[test]
fn continue_and_impersonate() {
    let mut f = Fixture::new();
    f.messages.push(msg(Role::Assistant, "Half a sen"));
    let mut o = options();
    o.generation = GenerationType::Continue;
    let t = texts(&f.build(&o));
    let n = t.len();
    assert_eq!(t[n - 3], "system:Stay in character.");
    assert_eq!(t[n - 2], "assistant:Half a sen");
    assert_eq!(
        t[n - 1],
        "system:[Continue your last message without repeating its original content.]"
    );
    assert_eq!(t.iter().filter(|x| x.contains("Half a sen")).count(), 1);
    o.generation = GenerationType::Impersonate;
    let t = texts(&f.build(&o));
    assert!(t.last().is_some_and(|x| {
        x.starts_with("system:[Write your next reply from the point of view of Alex")
    }));
}

#[test]
fn memory_goes_before_history_when_enabled() {
    let mut f = Fixture::new();
    f.memory = Some(Memory {
        id: None,
        enabled: true,
        memories: vec!["likes tea".into(), " ".into()],
        ..Memory::default()
    });
    let t = texts(&f.build(&options()));
    let m = t
        .iter()
        .position(|x| x == "system:[Long-term memory]\n- likes tea")
        .unwrap_or(usize::MAX);
    let h = t
        .iter()
        .position(|x| x == "system:[Start a new Chat]")
        .unwrap_or(0);
    assert_eq!(m + 1, h);
    f.memory = Some(Memory {
        id: None,
        enabled: false,
        memories: vec!["likes tea".into()],
        ..Memory::default()
    });
    assert!(
        !texts(&f.build(&options()))
            .iter()
            .any(|x| x.contains("likes tea"))
    );
}

#[test]
fn side_effects_only_from_used_text_and_diagnostics_located() {
    let mut f = Fixture::new();
    f.preset.entries[0].content = Some("{{setvar::mood::calm}}Main {{roll::oops}}".into());
    f.lorebooks = vec![Lorebook {
        id: Some(LorebookId(1)),
        revision: 1,
        name: "w".into(),
        entries: vec![LorebookEntry {
            identifier: "never".into(),
            content: "{{setvar::leak::1}}".into(),
            keywords: vec!["zzz".into()],
            ..LorebookEntry::default()
        }],
        ..Lorebook::default()
    }];
    let out = f.build(&options());
    assert!(out.variables_changed);
    assert!(out.variables.chat.contains_key("mood"));
    assert!(!out.variables.chat.contains_key("leak"));
    let d = &out.explain.diagnostics[0];
    assert_eq!(d.location, "preset.entries[main].content");
    assert_eq!(d.text.as_deref(), Some("{{roll::oops}}"));
    assert!(texts(&out)[0].contains("{{roll::oops}}"));
}

#[test]
fn unknown_macros_are_listed_in_the_explain_diagnostics() {
    let mut f = Fixture::new();
    f.preset.entries[0].content = Some("Reply as {{charr}}.".into());
    let out = f.build(&options());
    let d = out
        .explain
        .diagnostics
        .iter()
        .find(|d| d.text.as_deref() == Some("{{charr}}"))
        .unwrap_or_else(|| panic!("{:?}", out.explain.diagnostics));
    assert_eq!(d.location, "preset.entries[main].content");
    assert!(d.message.contains("unknown macro"), "{}", d.message);
    assert!(texts(&out)[0].contains("{{charr}}"));
}

#[test]
fn converters_apply_last() {
    let f = Fixture::new();
    let mut o = options();
    o.converter = PromptConverter::SingleSystem;
    let out = f.build(&o);
    assert_eq!(
        out.messages
            .iter()
            .filter(|m| m.role == Role::System)
            .count(),
        1
    );
    assert_eq!(out.messages[0].role, Role::System);
}

#[test]
fn explain_serializes_the_contract_fields() {
    let out = Fixture::new().build(&options());
    let json = serde_json::to_value(&out.explain).unwrap_or_default();
    for key in [
        "activatedEntries",
        "skippedEntries",
        "regexApplied",
        "tokens",
        "diagnostics",
    ] {
        assert!(json.get(key).is_some(), "{key}");
    }
    assert!(json["tokens"]["parts"].is_array());
}

/// A reply does not wait for the tokenizer: before it is loaded, a build counts with the
/// byte upper bound. Kept only when the budget left nothing out, so the messages are always
/// those of an exact count; a cut prompt is built again with the exact count.
#[test]
fn the_byte_bound_build_is_kept_only_when_nothing_was_cut() {
    let mut f = Fixture::new();
    f.messages = (0..40)
        .map(|i| {
            let role = if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            };
            msg(
                role,
                &format!("message {i}: Привет, 猫 and the quick brown fox"),
            )
        })
        .collect();
    let input = PromptInput {
        chat: Some(&f.chat),
        characters: &f.characters,
        speaker: 0,
        persona: Some(&f.persona),
        preset: Some(&f.preset),
        lorebooks: &f.lorebooks,
        regex_groups: &f.regex,
        messages: &f.messages,
        memory: None,
        variables: &f.variables,
        timed: &f.timed,
    };
    let engine = crate::PromptEngine::new();
    for (context, cut_by_bound) in [(16_384, false), (1_000, true)] {
        let mut o = options();
        o.max_context_tokens = context;
        o.max_response_tokens = 100;
        let exact = TokenCounter::for_model(&o.model);
        let bound = TokenCounter::upper_bound(&o.model);
        let (by_exact, _) = build::assemble(&engine, &input, &o, &exact);
        let (by_bound, cut) = build::assemble(&engine, &input, &o, &bound);
        assert_eq!(cut, cut_by_bound, "context {context}");
        assert!(by_bound.explain.tokens.total >= by_exact.explain.tokens.total);
        if !cut {
            assert_eq!(texts(&by_bound), texts(&by_exact));
            assert_eq!(by_bound.explain.tokens.encoding, "utf8-bytes (upper bound)");
            assert!(by_bound.explain.tokens.estimated);
        }
        // Whichever way the reply's build went, it sends the exact count's messages.
        o.wait_for_tokenizer = false;
        assert_eq!(texts(&engine.build(&input, &o)), texts(&by_exact));
    }
}

/// Every message names where it came from, in step with the messages: preset entries by
/// identifier, the history, a lorebook entry at a depth as `lorebook:<id>/<entry>`; a
/// converter that merges messages merges their sources.
#[test]
fn each_message_names_its_sources() {
    let mut f = Fixture::new();
    f.lorebooks = vec![Lorebook {
        id: Some(LorebookId(3)),
        revision: 1,
        name: "w".into(),
        entries: vec![
            lore_entry("b", LorebookPosition::LorebookBefore),
            lore_entry("deep", LorebookPosition::AtDepth),
        ],
        ..Lorebook::default()
    }];
    let out = f.build(&options());
    let sources = &out.explain.message_sources;
    assert_eq!(sources.len(), out.messages.len());
    assert!(sources.iter().all(|s| !s.is_empty()), "{sources:?}");
    let at = |text: &str| {
        let i = out
            .messages
            .iter()
            .position(|m| m.content.contains(text))
            .unwrap_or_else(|| panic!("{text} missing"));
        sources[i].clone()
    };
    assert_eq!(at("lore b for Alex"), ["worldInfoBefore"]);
    assert_eq!(at("lore deep for Alex"), ["lorebook:3/deep"]);
    assert_eq!(at("Hello there."), ["chatHistory"]);
    assert_eq!(at("A forest"), ["scenario"]);

    let mut o = options();
    o.converter = PromptConverter::SingleSystem;
    let merged = f.build(&o);
    let first = &merged.explain.message_sources[0];
    assert_eq!(merged.explain.message_sources.len(), merged.messages.len());
    assert!(
        first.iter().any(|s| s == "main") && first.iter().any(|s| s == "worldInfoBefore"),
        "{first:?}"
    );
}
