//! Table tests of the pipeline: every timing × stage, every placement, depth bounds,
//! substitution modes, macros in replacements, invalid rules and the cache.

use chrono::{FixedOffset, TimeZone};
use tavo_model::{
    Message, RegexEntry, RegexGroup, RegexId, RegexPlacement, RegexTiming, Role, Substitution,
};

use super::*;
use crate::macros::{MacroContext, MacroState, Variables};

fn ctx() -> MacroContext {
    let tz = FixedOffset::east_opt(0).unwrap_or_else(|| unreachable!());
    let now = tz
        .with_ymd_and_hms(2026, 1, 1, 0, 0, 0)
        .single()
        .unwrap_or_else(|| unreachable!());
    MacroContext::new("Alex", "Sera", now)
}

fn rule(
    find: &str,
    replace: &str,
    timing: RegexTiming,
    placements: &[RegexPlacement],
) -> RegexEntry {
    RegexEntry {
        identifier: format!("r-{find}"),
        name: format!("rule {find}"),
        find_regex: find.into(),
        replace_string: replace.into(),
        placements: placements.to_vec(),
        timing,
        ..RegexEntry::default()
    }
}

fn rules(entries: Vec<RegexEntry>) -> RegexRules {
    RegexRules::from_groups(&[RegexGroup {
        id: Some(RegexId(7)),
        name: "g".into(),
        entries,
        ..RegexGroup::default()
    }])
}

fn js() -> &'static JsRegex {
    JsRegex::shared().unwrap_or_else(|e| panic!("{e}"))
}

fn msg(role: Role, content: &str, reasoning: Option<&str>) -> Message {
    Message {
        role,
        content: content.into(),
        reasoning: reasoning.map(str::to_owned),
        ..Message::default()
    }
}

#[test]
fn every_timing_reaches_exactly_its_outputs() {
    use RegexTiming as T;
    // (timing, display changed, model changed, stored on receive, stored on edit)
    let table = [
        (T::Display, true, false, false, false),
        (T::Send, false, true, false, false),
        (T::SendAndDisplay, true, true, false, false),
        (T::Receive, false, false, true, false),
        (T::EditAndReceive, false, false, true, true),
    ];
    let c = ctx();
    for (timing, display, model, receive, edit) in table {
        let rs = rules(vec![rule("/cat/g", "dog", timing, &[RegexPlacement::Char])]);
        let run = RegexRun {
            rules: &rs,
            js: js(),
            ctx: &c,
        };
        let mut macros = MacroState::new(Variables::default(), 1);
        let mut report = RegexReport::default();
        let m = msg(Role::Assistant, "a cat", None);
        let views = message_views(&run, &m, 0, &mut macros, &mut report);
        assert_eq!(
            views.display_content == "a dog",
            display,
            "{timing:?} display"
        );
        assert_eq!(views.model_content == "a dog", model, "{timing:?} model");
        let (stored, _) = persist_rewrite(&run, Stage::Receive, &m, &mut macros, &mut report);
        assert_eq!(stored == "a dog", receive, "{timing:?} receive");
        let (edited, _) = persist_rewrite(&run, Stage::Edit, &m, &mut macros, &mut report);
        assert_eq!(edited == "a dog", edit, "{timing:?} edit");
    }
}

#[test]
fn placements_select_texts() {
    use RegexPlacement as P;
    let c = ctx();
    // (placements, user changed, char changed, reasoning changed)
    let table: [(&[P], bool, bool, bool); 5] = [
        (&[P::User], true, false, false),
        (&[P::Char], false, true, false),
        (&[P::Reasoning], false, false, true),
        (&[P::Lorebook], false, false, false),
        (&[P::User, P::Char, P::Reasoning], true, true, true),
    ];
    for (placements, user, char, reasoning) in table {
        let rs = rules(vec![rule(
            "x",
            "y",
            RegexTiming::SendAndDisplay,
            placements,
        )]);
        let run = RegexRun {
            rules: &rs,
            js: js(),
            ctx: &c,
        };
        let mut macros = MacroState::new(Variables::default(), 1);
        let mut report = RegexReport::default();
        let u = message_views(
            &run,
            &msg(Role::User, "x", None),
            0,
            &mut macros,
            &mut report,
        );
        let a = message_views(
            &run,
            &msg(Role::Assistant, "x", Some("x")),
            0,
            &mut macros,
            &mut report,
        );
        assert_eq!(u.model_content == "y", user, "{placements:?} user");
        assert_eq!(a.model_content == "y", char, "{placements:?} char");
        assert_eq!(
            a.display_reasoning.as_deref() == Some("y"),
            reasoning,
            "{placements:?} reasoning"
        );
        let sys = message_views(
            &run,
            &msg(Role::System, "x", None),
            0,
            &mut macros,
            &mut report,
        );
        assert_eq!(sys.model_content, "x", "system messages are never targeted");
    }
    // Lorebook placement applies to lorebook targets only.
    let rs = rules(vec![rule("x", "y", RegexTiming::Send, &[P::Lorebook])]);
    let run = RegexRun {
        rules: &rs,
        js: js(),
        ctx: &c,
    };
    let mut targets = vec![RegexTarget {
        text: "x".into(),
        placement: P::Lorebook,
        depth: None,
        label: "lorebook:1/a".into(),
    }];
    let mut report = RegexReport::default();
    run.apply(
        Stage::Send,
        &mut targets,
        &mut MacroState::new(Variables::default(), 1),
        None,
        &mut report,
    );
    assert_eq!(targets[0].text, "y");
    assert_eq!(report.applied[0].target, "lorebook:1/a");
}

#[test]
fn depth_bounds_are_inclusive() {
    let c = ctx();
    let mut entry = rule("x", "y", RegexTiming::Send, &[RegexPlacement::Char]);
    entry.min_depth = Some(1);
    entry.max_depth = Some(2);
    let rs = rules(vec![entry]);
    let run = RegexRun {
        rules: &rs,
        js: js(),
        ctx: &c,
    };
    let mut targets: Vec<RegexTarget> = (0..4)
        .map(|d| RegexTarget {
            text: "x".into(),
            placement: RegexPlacement::Char,
            depth: Some(d),
            label: format!("d{d}"),
        })
        .collect();
    let mut report = RegexReport::default();
    run.apply(
        Stage::Send,
        &mut targets,
        &mut MacroState::new(Variables::default(), 1),
        None,
        &mut report,
    );
    let texts: Vec<&str> = targets.iter().map(|t| t.text.as_str()).collect();
    assert_eq!(texts, vec!["x", "y", "y", "x"]);
}

#[test]
fn substitution_modes() {
    let mut c = ctx();
    c.user = "A.B".into();
    let table = [
        // Without substitution the braces are literal pattern text.
        (Substitution::None, "{{user}} A.B AxB", "Z A.B AxB"),
        (Substitution::Raw, "{{user}} A.B AxB", "{{user}} Z Z"),
        (Substitution::Escaped, "{{user}} A.B AxB", "{{user}} Z AxB"),
    ];
    for (mode, input, expected) in table {
        let mut entry = rule(
            "/{{user}}/g",
            "Z",
            RegexTiming::Send,
            &[RegexPlacement::Char],
        );
        entry.substitution = mode;
        let rs = rules(vec![entry]);
        let run = RegexRun {
            rules: &rs,
            js: js(),
            ctx: &c,
        };
        let mut targets = vec![RegexTarget {
            text: input.into(),
            placement: RegexPlacement::Char,
            depth: Some(0),
            label: "m".into(),
        }];
        let mut report = RegexReport::default();
        run.apply(
            Stage::Send,
            &mut targets,
            &mut MacroState::new(Variables::default(), 1),
            None,
            &mut report,
        );
        assert_eq!(targets[0].text, expected, "{mode:?}");
    }
}

#[test]
fn replacement_macros_run_after_captures() {
    let c = ctx();
    let rs = rules(vec![
        rule(
            "/\\+gold(\\d+)/g",
            "{{addvar::gold::$1}}",
            RegexTiming::Send,
            &[RegexPlacement::User],
        ),
        rule(
            "/-hp/g",
            "{{decvar::hp}}({{user}})",
            RegexTiming::Send,
            &[RegexPlacement::User],
        ),
    ]);
    let run = RegexRun {
        rules: &rs,
        js: js(),
        ctx: &c,
    };
    let mut macros = MacroState::new(Variables::default(), 1);
    let mut report = RegexReport::default();
    let views = message_views(
        &run,
        &msg(Role::User, "loot +gold20 +gold5 -hp", None),
        0,
        &mut macros,
        &mut report,
    );
    assert_eq!(views.model_content, "loot   (Alex)");
    assert_eq!(
        macros.variables().chat.get("gold"),
        Some(&serde_json::json!(25))
    );
    assert_eq!(
        macros.variables().chat.get("hp"),
        Some(&serde_json::json!(-1))
    );
}

#[test]
fn invalid_rule_is_skipped_and_reported_others_still_run() {
    let c = ctx();
    let rs = rules(vec![
        rule(
            "/(broken/g",
            "x",
            RegexTiming::Send,
            &[RegexPlacement::Char],
        ),
        rule("/ok/g", "fine", RegexTiming::Send, &[RegexPlacement::Char]),
    ]);
    let run = RegexRun {
        rules: &rs,
        js: js(),
        ctx: &c,
    };
    let mut report = RegexReport::default();
    let mut macros = MacroState::new(Variables::default(), 1);
    let views = message_views(
        &run,
        &msg(Role::Assistant, "ok", None),
        0,
        &mut macros,
        &mut report,
    );
    assert_eq!(views.model_content, "fine");
    assert_eq!(report.issues.len(), 1);
    assert!(
        report.issues[0].location.contains("findRegex"),
        "{:?}",
        report.issues[0]
    );
}

#[test]
fn disabled_rules_never_run_and_cache_replays_reports() {
    let c = ctx();
    let mut off = rule("a", "b", RegexTiming::Send, &[RegexPlacement::Char]);
    off.enabled = false;
    let rs = rules(vec![
        off,
        rule("/c/g", "d", RegexTiming::Send, &[RegexPlacement::Char]),
    ]);
    let run = RegexRun {
        rules: &rs,
        js: js(),
        ctx: &c,
    };
    let mut cache = RegexCache::default();
    for round in 0..2 {
        let mut targets = vec![RegexTarget {
            text: "acc".into(),
            placement: RegexPlacement::Char,
            depth: Some(0),
            label: "m".into(),
        }];
        let mut report = RegexReport::default();
        run.apply(
            Stage::Send,
            &mut targets,
            &mut MacroState::new(Variables::default(), 1),
            Some(&mut cache),
            &mut report,
        );
        assert_eq!(targets[0].text, "add", "round {round}");
        assert_eq!(report.applied.len(), 1);
        assert_eq!(report.applied[0].replacements, 2);
    }
    assert_eq!(cache.len(), 1);
}

#[test]
fn ejs_in_replacement_runs_once_and_writes_only_on_a_match() {
    let c = ctx();
    let rs = rules(vec![rule(
        "/hp-(\\d)/g",
        "<% incvar('hits') %><%= 'HP' %>=$1 {{user}}",
        RegexTiming::Send,
        &[RegexPlacement::Char],
    )]);
    let run = RegexRun {
        rules: &rs,
        js: js(),
        ctx: &c,
    };
    let mut macros = MacroState::new(Variables::default(), 1);
    let mut report = RegexReport::default();
    let mut targets = vec![RegexTarget {
        text: "hp-3 and hp-4".into(),
        placement: RegexPlacement::Char,
        depth: Some(0),
        label: "m".into(),
    }];
    run.apply(Stage::Send, &mut targets, &mut macros, None, &mut report);
    assert_eq!(targets[0].text, "HP=3 Alex and HP=4 Alex");
    assert_eq!(
        macros.variables().chat.get("hits"),
        Some(&serde_json::json!(1)),
        "once per rule"
    );
    let mut none = vec![RegexTarget {
        text: "nothing".into(),
        placement: RegexPlacement::Char,
        depth: Some(0),
        label: "m".into(),
    }];
    run.apply(Stage::Send, &mut none, &mut macros, None, &mut report);
    assert_eq!(
        macros.variables().chat.get("hits"),
        Some(&serde_json::json!(1))
    );
    // A failing template in the replacement is used as written and reported.
    let bad = rules(vec![rule(
        "/x/",
        "<%= nope() %>",
        RegexTiming::Send,
        &[RegexPlacement::Char],
    )]);
    let run = RegexRun {
        rules: &bad,
        js: js(),
        ctx: &c,
    };
    let mut targets = vec![RegexTarget {
        text: "x".into(),
        placement: RegexPlacement::Char,
        depth: Some(0),
        label: "m".into(),
    }];
    let mut report = RegexReport::default();
    run.apply(Stage::Send, &mut targets, &mut macros, None, &mut report);
    assert_eq!(targets[0].text, "<%= nope() %>");
    assert!(
        report.issues[0].location.ends_with(".replaceString"),
        "{:?}",
        report.issues
    );
}

#[test]
fn captured_chat_text_is_never_a_template() {
    let c = ctx();
    let rs = rules(vec![rule(
        "/^(.+)$/",
        "[$1] {{user}}",
        RegexTiming::Send,
        &[RegexPlacement::User],
    )]);
    let run = RegexRun {
        rules: &rs,
        js: js(),
        ctx: &c,
    };
    let mut macros = MacroState::new(Variables::default(), 1);
    let mut report = RegexReport::default();
    let mut targets = vec![RegexTarget {
        text: "say <%= 1 + 1 %>".into(),
        placement: RegexPlacement::User,
        depth: Some(0),
        label: "m".into(),
    }];
    run.apply(Stage::Send, &mut targets, &mut macros, None, &mut report);
    assert_eq!(targets[0].text, "[say <%= 1 + 1 %>] Alex");
}
