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
fn probability_is_seeded_and_reported() {
    let mut never = entry("never", &["dragon"]);
    never.probability = 0;
    let mut half = entry("half", &["dragon"]);
    half.probability = 50;
    let books = [book(vec![never, half])];
    let outcomes: Vec<bool> = (0..32)
        .map(|seed| {
            let options = LorebookOptions {
                seed,
                ..LorebookOptions::default()
            };
            let r = run_with(
                &books,
                &["dragon"],
                10,
                &mut TimedEffects::default(),
                options,
            );
            assert!(r.skipped.contains(&("never".into(), Gate::Probability)));
            r.activated.contains(&"half".to_owned())
        })
        .collect();
    assert!(outcomes.iter().any(|x| *x) && outcomes.iter().any(|x| !*x));
    let again: Vec<bool> = (0..32)
        .map(|seed| {
            let options = LorebookOptions {
                seed,
                ..LorebookOptions::default()
            };
            run_with(
                &books,
                &["dragon"],
                10,
                &mut TimedEffects::default(),
                options,
            )
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
