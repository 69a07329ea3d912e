//! Table tests: every secondary-logic case, every gate, timed effects across generations,
//! recursion, budget, regex keys and the scan window.

use chrono::{FixedOffset, TimeZone};
use tavo_model::{Lorebook, LorebookEntry, LorebookId, LorebookStrategy, SecondaryKeywordStrategy};

use super::*;
use crate::macros::{MacroContext, MacroState, Variables};
use crate::regex::JsRegex;

fn ctx() -> MacroContext {
    let tz = FixedOffset::east_opt(0).unwrap_or_else(|| unreachable!());
    let now = tz
        .with_ymd_and_hms(2026, 1, 1, 0, 0, 0)
        .single()
        .unwrap_or_else(|| unreachable!());
    MacroContext::new("Alex", "Sera", now)
}

fn entry(id: &str, keys: &[&str]) -> LorebookEntry {
    LorebookEntry {
        identifier: id.into(),
        name: format!("name {id}"),
        content: format!("content {id}"),
        keywords: keys.iter().map(|k| (*k).to_owned()).collect(),
        scan_depth: 2,
        ..LorebookEntry::default()
    }
}

fn book(entries: Vec<LorebookEntry>) -> Lorebook {
    Lorebook {
        id: Some(LorebookId(1)),
        revision: 1,
        name: "b".into(),
        entries,
        ..Lorebook::default()
    }
}

struct Run {
    activated: Vec<String>,
    skipped: Vec<(String, Gate)>,
    activation: Activation,
}

fn run_with(
    books: &[Lorebook],
    texts: &[&str],
    clock: u64,
    timed: &mut TimedEffects,
    options: LorebookOptions,
) -> Run {
    run_scoped(books, texts, clock, timed, options, EntryScope::default())
}

/// One generation at `clock` 10 with fresh timed effects and the roll seeded by `seed`.
fn run_seeded(books: &[Lorebook], texts: &[&str], seed: u64) -> Run {
    let options = LorebookOptions {
        seed,
        ..LorebookOptions::default()
    };
    run_with(books, texts, 10, &mut TimedEffects::default(), options)
}

fn run_scoped(
    books: &[Lorebook],
    texts: &[&str],
    clock: u64,
    timed: &mut TimedEffects,
    options: LorebookOptions,
    scope: EntryScope<'_>,
) -> Run {
    let index = LorebookIndex::build(books).unwrap_or_else(|e| panic!("{e}"));
    let texts: Vec<String> = texts.iter().map(|t| (*t).to_owned()).collect();
    let c = ctx();
    let input = ActivationInput {
        books,
        index: &index,
        texts: &texts,
        clock,
        ctx: &c,
        js: JsRegex::shared().ok(),
        scope,
    };
    let mut macros = MacroState::new(Variables::default(), 1);
    let activation = activate(
        &input,
        timed,
        &mut macros,
        &|t: &str| t.split_whitespace().count(),
        options,
    );
    Run {
        activated: activation
            .activated
            .iter()
            .map(|a| a.identifier.clone())
            .collect(),
        skipped: activation
            .skipped
            .iter()
            .map(|s| (s.identifier.clone(), s.gate))
            .collect(),
        activation,
    }
}

fn run(books: &[Lorebook], texts: &[&str]) -> Run {
    run_with(
        books,
        texts,
        10,
        &mut TimedEffects::default(),
        LorebookOptions::default(),
    )
}

#[test]
fn secondary_logic_table() {
    use SecondaryKeywordStrategy as S;
    // text contains: primary "dragon", secondaries "fire" (present) and "ice" (absent).
    let text = "Sera: a dragon breathes fire";
    // (strategy, secondaries, activates)
    let table: &[(S, &[&str], bool)] = &[
        (S::None, &["ice"], true),
        (S::AndAny, &["fire", "ice"], true),
        (S::AndAny, &["ice"], false),
        (S::AndAll, &["fire"], true),
        (S::AndAll, &["fire", "ice"], false),
        (S::NotAny, &["ice"], true),
        (S::NotAny, &["fire", "ice"], false),
        (S::NotAll, &["fire", "ice"], true),
        (S::NotAll, &["fire"], false),
        (S::AndAll, &[], true),
        (S::NotAny, &["  "], true),
    ];
    for (strategy, secondaries, expected) in table {
        let mut e = entry("e", &["dragon"]);
        e.secondary_keyword_strategy = *strategy;
        e.secondary_keywords = secondaries.iter().map(|k| (*k).to_owned()).collect();
        let r = run(&[book(vec![e])], &[text]);
        assert_eq!(
            r.activated == ["e"],
            *expected,
            "{strategy:?} {secondaries:?}"
        );
        if !expected {
            assert_eq!(r.skipped, vec![("e".to_owned(), Gate::SecondaryLogic)]);
        }
    }
    // Primary keys are required by every strategy.
    let mut e = entry("e", &["griffin"]);
    e.secondary_keyword_strategy = S::NotAny;
    e.secondary_keywords = vec!["ice".into()];
    assert!(run(&[book(vec![e])], &[text]).activated.is_empty());
}

#[test]
fn gates_disabled_no_key_constant() {
    let mut disabled = entry("off", &["dragon"]);
    disabled.enabled = false;
    let no_key = entry("nokey", &[]);
    let mut constant = entry("const", &[]);
    constant.strategy = LorebookStrategy::Constant;
    let r = run(&[book(vec![disabled, no_key, constant])], &["nothing here"]);
    assert_eq!(r.activated, vec!["const"]);
    assert_eq!(
        r.skipped,
        vec![
            ("off".into(), Gate::Disabled),
            ("nokey".into(), Gate::NoKey)
        ]
    );
    assert_eq!(r.activation.activated[0].reason, Reason::Constant);
}

#[test]
fn scan_depth_case_and_whole_words() {
    let texts = [
        "Alex: hello",
        "Sera: the Dragon sleeps",
        "Alex: catalog 小猫咪",
    ];
    let mut shallow = entry("shallow", &["dragon"]);
    shallow.scan_depth = 1;
    let deep = entry("deep", &["dragon"]);
    let mut cs = entry("cs", &["dragon"]);
    cs.case_sensitive = true;
    let mut cs_upper = entry("csUpper", &["Dragon"]);
    cs_upper.case_sensitive = true;
    let mut cat = entry("cat", &["cat"]);
    cat.scan_depth = 3;
    let mut cat_sub = entry("catSub", &["cat"]);
    cat_sub.scan_depth = 3;
    cat_sub.match_whole_word = false;
    let mut cjk = entry("cjk", &["猫"]);
    cjk.scan_depth = 3;
    let mut zero = entry("zero", &["hello"]);
    zero.scan_depth = 0;
    let r = run(
        &[book(vec![
            shallow, deep, cs, cs_upper, cat, cat_sub, cjk, zero,
        ])],
        &texts,
    );
    assert_eq!(r.activated, vec!["deep", "csUpper", "catSub", "cjk"]);
    assert_eq!(
        r.activation.activated[0].reason,
        Reason::Keyword {
            key: "dragon".into(),
            message_depth: 1
        }
    );
}

#[test]
fn regex_keys_and_macro_keys() {
    let re = entry("re", &["/drag(on|ons)\\b/i"]);
    let bad = entry("bad", &["/(unclosed/"]);
    let user = entry("user", &["{{user}}"]);
    let r = run(&[book(vec![re, bad, user])], &["Sera: DRAGONS! alex waves"]);
    assert_eq!(r.activated, vec!["re", "user"]);
    assert_eq!(
        r.activation.key_errors.len(),
        1,
        "{:?}",
        r.activation.key_errors
    );
}

#[test]
fn use_probability_false_always_passes_the_roll() {
    // SillyTavern ignores `probability` when `useProbability` is false (issue 30, item 17):
    // from a world-info file (top-level extra) and from a CCv3 book (under `extensions`).
    let ignored = |id: &str, extra: serde_json::Value| {
        let mut e = with_extra(entry(id, &["dragon"]), extra);
        e.probability = 0;
        e
    };
    let st = ignored("st", serde_json::json!({"useProbability": false}));
    let ccv3 = ignored(
        "ccv3",
        serde_json::json!({"extensions": {"useProbability": false}}),
    );
    let rolled = ignored("rolled", serde_json::json!({"useProbability": true}));
    let books = [book(vec![st, ccv3, rolled])];
    for seed in 0..8 {
        let r = run_seeded(&books, &["dragon"], seed);
        assert!(r.activated.contains(&"st".to_owned()), "{:?}", r.activated);
        assert!(
            r.activated.contains(&"ccv3".to_owned()),
            "{:?}",
            r.activated
        );
        assert!(r.skipped.contains(&("rolled".into(), Gate::Probability)));
    }
}

#[test]
fn probability_is_seeded_and_reported() {
    let mut never = entry("never", &["dragon"]);
    never.probability = 0;
    let mut half = entry("half", &["dragon"]);
    half.probability = 50;
    let books = [book(vec![never, half])];
    let outcomes: Vec<bool> = (0..32)
        .map(|seed| {
            let r = run_seeded(&books, &["dragon"], seed);
            assert!(r.skipped.contains(&("never".into(), Gate::Probability)));
            r.activated.contains(&"half".to_owned())
        })
        .collect();
    assert!(outcomes.iter().any(|x| *x) && outcomes.iter().any(|x| !*x));
    let again: Vec<bool> = (0..32)
        .map(|seed| {
            run_seeded(&books, &["dragon"], seed)
                .activated
                .contains(&"half".to_owned())
        })
        .collect();
    assert_eq!(outcomes, again, "same seed, same result");
}

#[test]
fn budget_admits_by_order_and_stops_at_first_overflow() {
    let mut low = entry("low", &["dragon"]);
    low.order = 10;
    low.content = "one two three".into();
    let mut high = entry("high", &["dragon"]);
    high.order = 200;
    high.content = "one two".into();
    let mut mid = entry("mid", &["dragon"]);
    mid.order = 100;
    mid.content = "a b c d".into();
    let options = LorebookOptions {
        budget_tokens: Some(6),
        ..LorebookOptions::default()
    };
    let r = run_with(
        &[book(vec![low, high, mid])],
        &["dragon"],
        10,
        &mut TimedEffects::default(),
        options,
    );
    // high (2) + mid (4) = 6 fit; low overflows.
    assert_eq!(
        r.activated,
        vec!["mid", "high"],
        "output is order ascending"
    );
    assert_eq!(r.skipped, vec![("low".into(), Gate::Budget)]);
}

#[test]
fn recursion_activates_entries_from_activated_content() {
    let mut a = entry("a", &["dragon"]);
    a.content = "The dragon guards the castle.".into();
    let mut b = entry("b", &["castle"]);
    b.content = "The castle is old.".into();
    let mut c = entry("c", &["old"]);
    c.extra.insert("excludeRecursion".into(), true.into());
    let r = run(&[book(vec![a.clone(), b.clone(), c])], &["dragon"]);
    assert_eq!(r.activated, vec!["a", "b"]);
    assert_eq!(
        r.activation.activated[1].reason,
        Reason::Recursion {
            key: "castle".into()
        }
    );
    let mut a_prevent = a;
    a_prevent
        .extra
        .insert("preventRecursion".into(), true.into());
    assert_eq!(
        run(&[book(vec![a_prevent, b.clone()])], &["dragon"]).activated,
        vec!["a"]
    );
    let mut delayed = b;
    delayed
        .extra
        .insert("delayUntilRecursion".into(), true.into());
    let only_b_text = run(&[book(vec![delayed])], &["castle"]);
    assert!(
        only_b_text.activated.is_empty(),
        "delayUntilRecursion waits for a recursion pass"
    );
    let off = LorebookOptions {
        recursive: false,
        ..LorebookOptions::default()
    };
    let mut a2 = entry("a", &["dragon"]);
    a2.content = "castle".into();
    let r = run_with(
        &[book(vec![a2, entry("b", &["castle"])])],
        &["dragon"],
        10,
        &mut TimedEffects::default(),
        off,
    );
    assert_eq!(r.activated, vec!["a"]);
}

#[test]
fn delay_holds_until_the_chat_is_long_enough() {
    let mut e = entry("e", &["dragon"]);
    e.delay = 4;
    let books = [book(vec![e])];
    // (clock, activates)
    for (clock, expected) in [(1, false), (3, false), (4, true), (9, true)] {
        let r = run_with(
            &books,
            &["dragon"],
            clock,
            &mut TimedEffects::default(),
            LorebookOptions::default(),
        );
        assert_eq!(!r.activated.is_empty(), expected, "clock {clock}");
        if !expected {
            assert_eq!(r.skipped, vec![("e".into(), Gate::Delay)]);
        }
    }
}

#[test]
fn sticky_then_cooldown_across_generations() {
    let mut e = entry("e", &["dragon"]);
    e.sticky = 2;
    e.cooldown = 2;
    let books = [book(vec![e])];
    let mut timed = TimedEffects::default();
    // (clock, text, expected activation, expected reason/gate)
    let script: &[(u64, &str, bool, &str)] = &[
        (2, "dragon", true, "keyword"),
        (3, "nothing", true, "sticky"),
        (4, "dragon", false, "cooldown"),
        (5, "dragon", false, "cooldown"),
        (6, "dragon", true, "keyword"),
    ];
    for (clock, text, expected, why) in script {
        let r = run_with(
            &books,
            &[text],
            *clock,
            &mut timed,
            LorebookOptions::default(),
        );
        assert_eq!(
            !r.activated.is_empty(),
            *expected,
            "clock {clock}: {r:?}",
            r = r.skipped
        );
        match *why {
            "keyword" => assert!(matches!(
                r.activation.activated[0].reason,
                Reason::Keyword { .. }
            )),
            "sticky" => assert_eq!(r.activation.activated[0].reason, Reason::Sticky),
            _ => assert_eq!(
                r.skipped,
                vec![("e".into(), Gate::Cooldown)],
                "clock {clock}"
            ),
        }
    }
}

#[test]
fn cooldown_without_sticky_and_regenerate_does_not_consume_turns() {
    let mut e = entry("e", &["dragon"]);
    e.cooldown = 3;
    let books = [book(vec![e])];
    let mut timed = TimedEffects::default();
    assert_eq!(
        run_with(
            &books,
            &["dragon"],
            4,
            &mut timed,
            LorebookOptions::default()
        )
        .activated,
        vec!["e"]
    );
    // Regenerating at the same clock drops the unprotected record: the entry fires again.
    assert_eq!(
        run_with(
            &books,
            &["dragon"],
            4,
            &mut timed,
            LorebookOptions::default()
        )
        .activated,
        vec!["e"]
    );
    let r = run_with(
        &books,
        &["dragon"],
        5,
        &mut timed,
        LorebookOptions::default(),
    );
    assert_eq!(r.skipped, vec![("e".into(), Gate::Cooldown)]);
    assert!(
        run_with(
            &books,
            &["dragon"],
            6,
            &mut timed,
            LorebookOptions::default()
        )
        .activated
        .is_empty()
    );
    assert_eq!(
        run_with(
            &books,
            &["dragon"],
            7,
            &mut timed,
            LorebookOptions::default()
        )
        .activated,
        vec!["e"]
    );
}

#[test]
fn state_round_trips_as_json() {
    let mut e = entry("e", &["dragon"]);
    e.sticky = 3;
    let mut timed = TimedEffects::default();
    run_with(
        &[book(vec![e])],
        &["dragon"],
        2,
        &mut timed,
        LorebookOptions::default(),
    );
    let json = serde_json::to_value(&timed).unwrap_or_default();
    assert_eq!(json["sticky"]["1.e"]["end"], 5);
    let back: TimedEffects = serde_json::from_value(json).unwrap_or_default();
    assert_eq!(back, timed);
}

#[test]
fn macros_in_content_render_and_only_activated_entries_have_side_effects() {
    let mut hit = entry("hit", &["dragon"]);
    hit.content = "{{setvar::seen::yes}}Dragon lore for {{user}}".into();
    let mut miss = entry("miss", &["griffin"]);
    miss.content = "{{setvar::griffin::yes}}".into();
    let books = [book(vec![hit, miss])];
    let index = LorebookIndex::build(&books).unwrap_or_else(|e| panic!("{e}"));
    let texts = vec!["dragon".to_owned()];
    let c = ctx();
    let input = ActivationInput {
        books: &books,
        index: &index,
        texts: &texts,
        clock: 1,
        ctx: &c,
        js: None,
        scope: EntryScope::default(),
    };
    let mut macros = MacroState::new(Variables::default(), 1);
    let a = activate(
        &input,
        &mut TimedEffects::default(),
        &mut macros,
        &|t: &str| t.len(),
        LorebookOptions::default(),
    );
    assert_eq!(a.activated[0].content, "Dragon lore for Alex");
    assert!(macros.variables().chat.contains_key("seen"));
    assert!(!macros.variables().chat.contains_key("griffin"));
}

fn with_extra(mut e: LorebookEntry, extra: serde_json::Value) -> LorebookEntry {
    e.extra = extra.as_object().cloned().unwrap_or_default();
    e
}

#[test]
fn an_inclusion_group_admits_one_member_per_generation() {
    use serde_json::json;
    let members: Vec<LorebookEntry> = ["a", "b", "c"]
        .iter()
        .map(|id| with_extra(entry(id, &["dragon"]), json!({"group": "mood"})))
        .collect();
    let loner = entry("loner", &["dragon"]);
    let mut all = members.clone();
    all.push(loner);
    let books = [book(all)];
    let mut winners = std::collections::BTreeSet::new();
    for seed in 0..40 {
        let r = run_seeded(&books, &["a dragon"], seed);
        assert_eq!(r.activated.len(), 2, "{:?}", r.activated);
        assert!(r.activated.contains(&"loner".to_owned()));
        let lost: Vec<&(String, Gate)> = r
            .skipped
            .iter()
            .filter(|(_, g)| *g == Gate::InclusionGroup)
            .collect();
        assert_eq!(lost.len(), 2);
        winners.extend(r.activated.into_iter().filter(|id| id != "loner"));
    }
    assert_eq!(winners.len(), 3, "each member wins under some seed");

    // groupOverride: the highest order wins, whatever the seed.
    let mut low = with_extra(
        entry("low", &["dragon"]),
        json!({"group": "g", "groupOverride": true}),
    );
    low.order = 1;
    let mut high = with_extra(
        entry("high", &["dragon"]),
        json!({"group": "g", "groupOverride": true}),
    );
    high.order = 5;
    let r = run(&[book(vec![low, high])], &["dragon"]);
    assert_eq!(r.activated, ["high"]);

    // Scoring: the member matching more keys wins.
    let one = with_extra(
        entry("one", &["dragon"]),
        json!({"group": "g", "useGroupScoring": true}),
    );
    let two = with_extra(
        entry("two", &["dragon", "fire"]),
        json!({"group": "g", "useGroupScoring": true}),
    );
    let r = run(&[book(vec![one, two])], &["dragon fire"]);
    assert_eq!(r.activated, ["two"]);
}

#[test]
fn character_filter_and_triggers_of_st_entries() {
    use serde_json::json;
    let only_sera = with_extra(
        entry("sera", &["dragon"]),
        json!({"characterFilter": {"isExclude": false, "names": ["Sera"], "tags": []}}),
    );
    let not_sera = with_extra(
        entry("notsera", &["dragon"]),
        json!({"characterFilter": {"isExclude": true, "names": ["Sera"], "tags": []}}),
    );
    // Tag filters name tag ids of the creator's install: never applied.
    let tagged = with_extra(
        entry("tagged", &["dragon"]),
        json!({"characterFilter": {"isExclude": false, "names": [], "tags": ["0b2c-uuid"]}}),
    );
    let on_continue = with_extra(
        entry("cont", &["dragon"]),
        json!({"triggers": ["continue"]}),
    );
    let books = [book(vec![only_sera, not_sera, tagged, on_continue])];
    let run_as = |character, trigger| {
        run_scoped(
            &books,
            &["dragon"],
            10,
            &mut TimedEffects::default(),
            LorebookOptions::default(),
            EntryScope {
                character: Some(character),
                trigger,
            },
        )
    };
    let r = run_as("Sera", "normal");
    assert_eq!(r.activated, ["sera", "tagged"]);
    assert_eq!(
        r.skipped,
        vec![
            ("notsera".to_owned(), Gate::CharacterFilter),
            ("cont".to_owned(), Gate::Trigger)
        ]
    );
    let r = run_as("Alex", "continue");
    assert_eq!(r.activated, ["notsera", "tagged", "cont"]);
}

#[test]
fn unmentioned_entries_cost_nothing_but_disabled_ones_are_still_reported() {
    // 5,000 entries whose keys never occur, one that does, one disabled: the outcome is
    // the same as if the silent ones did not exist.
    let mut entries: Vec<LorebookEntry> = (0..5_000)
        .map(|i| entry(&format!("quiet{i}"), &[&format!("zzkey{i}")]))
        .collect();
    entries.push(entry("hit", &["dragon"]));
    let mut off = entry("off", &["dragon"]);
    off.enabled = false;
    entries.push(off);
    let r = run(&[book(entries)], &["a dragon"]);
    assert_eq!(r.activated, ["hit"]);
    assert_eq!(r.skipped, vec![("off".to_owned(), Gate::Disabled)]);
}

/// A lorebook imported from SillyTavern (`wordCharacters: "ascii"`) matches whole-word keys
/// with SillyTavern's ASCII-only `\W`; a native lorebook keeps Tavo's Unicode rule. The same
/// key in both books is matched under each book's own rule.
#[test]
fn whole_words_follow_the_lorebooks_word_rule() {
    // (text, key, native activates, SillyTavern import activates)
    let cases = [
        ("Alex: un café noir", "caf", false, true),
        ("Alex: котик спит", "кот", false, true),
        ("Alex: the catalog", "cat", false, false),
        ("Alex: a cat_toy", "cat", false, false),
        ("Alex: the cat sat", "cat", true, true),
        ("Alex: 小猫咪", "猫", true, true),
        ("Alex: naïve", "na", false, true),
        // Dynamic (macro) keys take the same rule: {{char}} is "Sera".
        ("Alex: Seraé", "{{char}}", false, true),
        ("Alex: Seraphina", "{{char}}", false, false),
    ];
    for (text, key, native, st) in cases {
        let native_book = book(vec![entry("native", &[key])]);
        let mut st_book = book(vec![entry("st", &[key])]);
        st_book.id = Some(LorebookId(2));
        st_book
            .extra
            .insert(WORD_CHARACTERS_KEY.into(), serde_json::json!("ascii"));
        let r = run(&[native_book, st_book], &[text]);
        let want: Vec<&str> = [("native", native), ("st", st)]
            .iter()
            .filter(|(_, on)| *on)
            .map(|(id, _)| *id)
            .collect();
        assert_eq!(r.activated, want, "{key} in {text:?}");
    }
}

/// SillyTavern's `delayUntilRecursion` levels: `true` is level 1; the lowest level opens with
/// the first recursion pass; when a pass brings nothing new, the next level opens a pass of its
/// own that rescans the chat (also with recursion off).
#[test]
fn delayed_recursion_levels_open_one_after_another() {
    let delayed = |id: &str, key: &str, level: serde_json::Value| {
        let mut e = entry(id, &[key]);
        e.extra.insert("delayUntilRecursion".into(), level);
        e
    };
    let mut tower = entry("x", &["dragon"]);
    tower.content = "a tower".into();
    let off = LorebookOptions {
        recursive: false,
        ..LorebookOptions::default()
    };
    // (entries, chat, options, activated in order of activation)
    let cases: Vec<(Vec<LorebookEntry>, &str, LorebookOptions, Vec<&str>)> = vec![
        // Level 1 alone, nothing recursing: never reached (the first level is the first
        // recursion pass, and there is none).
        (
            vec![delayed("b", "castle", true.into())],
            "castle",
            LorebookOptions::default(),
            vec![],
        ),
        // Two levels: the second opens a pass that reads the chat, for levels 1 and 2.
        (
            vec![
                delayed("b1", "castle", true.into()),
                delayed("b2", "castle", 2.into()),
            ],
            "castle",
            LorebookOptions::default(),
            vec!["b1", "b2"],
        ),
        // The lowest level present opens with the first recursion pass, whatever its number.
        (
            vec![tower.clone(), delayed("y", "tower", 2.into())],
            "dragon",
            LorebookOptions::default(),
            vec!["x", "y"],
        ),
        // Level 2 waits until the level-1 passes bring nothing new.
        (
            vec![
                tower.clone(),
                delayed("y1", "tower", 1.into()),
                delayed("y2", "tower", 2.into()),
            ],
            "dragon",
            LorebookOptions {
                max_recursion: 1,
                ..LorebookOptions::default()
            },
            vec!["x", "y1"],
        ),
        (
            vec![
                tower.clone(),
                delayed("y1", "tower", 1.into()),
                delayed("y2", "tower", 2.into()),
            ],
            "dragon",
            LorebookOptions::default(),
            vec!["x", "y1", "y2"],
        ),
        // Level 1 is reached by ordinary recursion.
        (
            vec![tower.clone(), delayed("y", "tower", true.into())],
            "dragon",
            LorebookOptions::default(),
            vec!["x", "y"],
        ),
        // Recursion off: no recursion text, but the delay-level pass still runs.
        (
            vec![
                delayed("b1", "castle", 1.into()),
                delayed("b2", "castle", 2.into()),
            ],
            "castle",
            off,
            vec!["b1", "b2"],
        ),
        (
            vec![tower, delayed("y", "tower", 2.into())],
            "dragon",
            off,
            vec!["x"],
        ),
        // `false` and 0 are not delayed.
        (
            vec![
                delayed("f", "castle", false.into()),
                delayed("z", "castle", 0.into()),
            ],
            "castle",
            LorebookOptions::default(),
            vec!["f", "z"],
        ),
    ];
    for (i, (entries, chat, options, want)) in cases.into_iter().enumerate() {
        let r = run_with(
            &[book(entries)],
            &[chat],
            10,
            &mut TimedEffects::default(),
            options,
        );
        let mut got = r.activated.clone();
        got.sort();
        let mut want: Vec<String> = want.iter().map(|s| (*s).to_owned()).collect();
        want.sort();
        assert_eq!(got, want, "case {i}");
    }
}

/// A book whose CCv3 `recursive_scanning` is `false` takes no part in recursion: its entries'
/// content activates nothing, and nothing activates its entries through recursion; another
/// book of the same chat still recurses.
#[test]
fn a_book_with_recursive_scanning_false_does_not_recurse() {
    let mut a = entry("a", &["dragon"]);
    a.content = "The dragon guards the castle.".into();
    let b = entry("b", &["castle"]);
    let mut quiet = book(vec![a.clone(), b.clone()]);
    quiet
        .extra
        .insert("recursive_scanning".into(), false.into());
    assert_eq!(run(&[quiet.clone()], &["dragon"]).activated, vec!["a"]);
    // Said true (or not said): recursion as usual.
    let mut loud = quiet.clone();
    loud.extra.insert("recursive_scanning".into(), true.into());
    assert_eq!(run(&[loud], &["dragon"]).activated, vec!["a", "b"]);
    // An open book's entry is not activated by the quiet book's content, and the quiet
    // book's entry not by the open book's.
    let mut open_a = entry("open-a", &["dragon"]);
    open_a.content = "A tower stands here.".into();
    let quiet_b = {
        let mut q = book(vec![a, entry("quiet-tower", &["tower"])]);
        q.extra.insert("recursive_scanning".into(), false.into());
        q
    };
    let open = book(vec![open_a, b]);
    assert_eq!(
        run(&[quiet_b, open], &["dragon"]).activated,
        vec!["a", "open-a"]
    );
}
