//! Table tests: one row per macro (and alias), plus side-effect and diagnostics behaviour.

use chrono::{FixedOffset, TimeZone};
use serde_json::json;

use super::*;

fn ctx() -> MacroContext {
    let tz = FixedOffset::east_opt(0).unwrap_or_else(|| unreachable!());
    let now = tz
        .with_ymd_and_hms(2026, 11, 29, 21, 5, 0)
        .single()
        .unwrap_or_else(|| unreachable!());
    let mut ctx = MacroContext::new("Alex", "Seraphina", now);
    ctx.description = "A guardian".into();
    ctx.personality = "kind".into();
    ctx.char_scenario = "forest".into();
    ctx.persona = "a traveller".into();
    ctx.char_prompt = "card main".into();
    ctx.char_instruction = "card phi".into();
    ctx.mes_examples_raw = "<START>\n{{user}}: hi\n{{char}}: hello".into();
    ctx.char_version = "1.2".into();
    ctx.creator_notes = "notes".into();
    ctx.depth_prompt = "depth".into();
    ctx.greetings = vec!["first".into(), "alt one".into()];
    ctx.last_message = "last".into();
    ctx.last_user_message = "from user".into();
    ctx.last_char_message = "from char".into();
    ctx.last_message_index = Some(4);
    ctx.model = "gpt-4o".into();
    ctx.idle_since = Some(now - chrono::TimeDelta::hours(3));
    ctx
}

fn render(text: &str) -> String {
    MacroState::new(Variables::default(), 1)
        .render_used(text, &ctx())
        .text
}

#[test]
fn every_read_macro() {
    let cases = [
        ("{{user}}", "Alex"),
        ("{{USER}}", "Alex"),
        ("<USER>", "Alex"),
        ("{{char}}", "Seraphina"),
        ("<BOT> <char>", "Seraphina Seraphina"),
        ("{{group}}", "Seraphina"),
        ("{{charIfNotGroup}}", "Seraphina"),
        ("<CHARIFNOTGROUP>", "Seraphina"),
        ("{{groupNotMuted}}", "Seraphina"),
        ("{{charDescription}}", "A guardian"),
        ("{{description}}", "A guardian"),
        ("{{charPersonality}}", "kind"),
        ("{{personality}}", "kind"),
        ("{{charScenario}}", "forest"),
        ("{{scenario}}", "forest"),
        ("{{persona}}", "a traveller"),
        ("{{charPrompt}}", "card main"),
        ("{{charInstruction}}", "card phi"),
        ("{{charJailbreak}}", "card phi"),
        (
            "{{mesExamplesRaw}}",
            "<START>\n{{user}}: hi\n{{char}}: hello",
        ),
        ("{{mesExamples}}", "<START>\nAlex: hi\nSeraphina: hello"),
        ("{{charVersion}}", "1.2"),
        ("{{charCreatorNotes}}", "notes"),
        ("{{creatorNotes}}", "notes"),
        ("{{charDepthPrompt}}", "depth"),
        ("{{charFirstMessage}}", "first"),
        ("{{charFirstMessage::1}}", "alt one"),
        ("{{lastMessage}}", "last"),
        ("{{input}}", "from user"),
        ("{{lastUserMessage}}", "from user"),
        ("{{lastCharMessage}}", "from char"),
        ("{{lastMessageId}}", "4"),
        ("{{model}}", "gpt-4o"),
        ("{{time}}", "9:05 PM"),
        ("{{date}}", "November 29, 2026"),
        ("{{weekday}}", "Sunday"),
        ("{{isotime}}", "21:05"),
        ("{{isodate}}", "2026-11-29"),
        ("{{time::UTC+9}}", "06:05"),
        ("{{time_UTC-5}}", "16:05"),
        ("{{idleDuration}}", "3 hours"),
        ("{{idle_duration}}", "3 hours"),
        ("a{{noop}}b", "ab"),
        ("a{{// a comment :: with {{user}} }}b", "ab"),
        ("a{{newline}}b", "a\nb"),
        ("a{{newline::3}}b", "a\n\n\nb"),
        ("a{{space::2}}b", "a  b"),
        ("{{reverse::abc}}", "cba"),
        ("line  \n {{trim}} \n next", "linenext"),
        ("\\{\\{char\\}\\}", "{{char}}"),
        ("{{unknownMacro::{{user}}}}", "{{unknownMacro::Alex}}"),
        ("{{match}}", "{{match}}"),
        ("{{original}}", ""),
        ("no macros", "no macros"),
    ];
    for (input, expected) in cases {
        assert_eq!(render(input), expected, "input: {input}");
    }
}

#[test]
fn scenario_override_wins_only_for_scenario() {
    let mut c = ctx();
    c.scenario_override = Some("chat override".into());
    let mut state = MacroState::new(Variables::default(), 1);
    assert_eq!(
        state.render("{{scenario}}|{{charScenario}}", &c).text,
        "chat override|forest"
    );
}

#[test]
fn group_macros() {
    let mut c = ctx();
    c.group_members = vec!["A".into(), "Seraphina".into(), "M".into()];
    c.group_not_muted = vec!["A".into(), "Seraphina".into()];
    let mut state = MacroState::new(Variables::default(), 1);
    let out = state.render(
        "{{group}}|{{charIfNotGroup}}|{{groupNotMuted}}|{{notChar}}",
        &c,
    );
    assert_eq!(
        out.text,
        "A, Seraphina, M|A, Seraphina, M|A, Seraphina|A, M, Alex"
    );
}

#[test]
fn variable_macros_chat_and_global() {
    let mut state = MacroState::new(Variables::default(), 1);
    let c = ctx();
    let out = state.render_used(
        "{{setvar::hp::100}}{{decvar::hp}}{{decvar::hp}}{{addvar::hp::-10}}{{incvar::hp}}\
         {{setvar::bag::[\"sword\"]}}{{addvar::bag::\"哥布林耳朵\"}}\
         {{setvar::note::a: b}}{{addvar::note:: c}}\
         {{setglobalvar::g::{\"x\":{\"y\":1}}}}{{addglobalvar::characters::[\"苏雾\"]}}\
         hp={{getvar::hp}} bag={{getvar::bag}} note={{getvar::note}} y={{getglobalvar::g.x.y}} \
         missing=[{{getvar::nope}}] cross=[{{getglobalvar::hp}}] has={{hasvar::hp}}",
        &c,
    );
    assert_eq!(
        out.text,
        "hp=89 bag=[\"sword\",\"哥布林耳朵\"] note=a: bc y=1 missing=[] cross=[] has=true"
    );
    let vars = state.variables();
    assert_eq!(vars.chat.get("hp"), Some(&json!(89)));
    assert_eq!(vars.global.get("characters"), Some(&json!(["苏雾"])));
    assert!(state.variables_changed());
}

#[test]
fn uncommitted_rendering_changes_nothing() {
    let mut state = MacroState::new(Variables::default(), 1);
    let c = ctx();
    let rendered = state.render("{{setvar::x::1}}", &c);
    assert!(rendered.has_side_effects());
    drop(rendered);
    assert_eq!(state.render("{{getvar::x}}", &c).text, "");
    assert!(!state.variables_changed());
}

#[test]
fn reads_see_writes_within_one_text_and_after_commit() {
    let mut state = MacroState::new(Variables::default(), 1);
    let c = ctx();
    let mut first = state.render("{{setvar::x::5}}{{getvar::x}}", &c);
    assert_eq!(first.text, "5");
    state.commit(&mut first);
    assert_eq!(state.render("{{getvar::x}}", &c).text, "5");
}

#[test]
fn nested_macros_resolve_inside_arguments_first() {
    let mut state = MacroState::new(Variables::default(), 1);
    let out = state.render_used("{{setvar::who::{{user}}}}{{getvar::who}}", &ctx());
    assert_eq!(out.text, "Alex");
}

#[test]
fn random_forms_are_seeded() {
    let c = ctx();
    let a = MacroState::new(Variables::default(), 42).render(
        "{{random::a::b::c::d}} {{random::1,2,3}} {{random: x, y}} {{roll::3d6}} {{dice::d20}}",
        &c,
    );
    let b = MacroState::new(Variables::default(), 42).render(
        "{{random::a::b::c::d}} {{random::1,2,3}} {{random: x, y}} {{roll::3d6}} {{dice::d20}}",
        &c,
    );
    assert_eq!(a.text, b.text);
    let parts: Vec<&str> = a.text.split(' ').collect();
    assert!(["a", "b", "c", "d"].contains(&parts[0]));
    assert!(["1", "2", "3"].contains(&parts[1]));
    assert!(["x", "y"].contains(&parts[2]));
    let roll: i64 = parts[3].parse().unwrap_or(-1);
    assert!((3..=18).contains(&roll));
    let d20: i64 = parts[4].parse().unwrap_or(-1);
    assert!((1..=20).contains(&d20));
    let many: std::collections::BTreeSet<String> = (0..40)
        .map(|seed| {
            MacroState::new(Variables::default(), seed)
                .render("{{random::a::b::c::d}}", &c)
                .text
        })
        .collect();
    assert!(many.len() > 1, "different seeds give different picks");
}

#[test]
fn wrong_arguments_are_left_as_written_and_reported() {
    let cases = [
        ("x {{roll::banana}} y", "{{roll::banana}}", 2),
        ("{{setvar::onlyname}}", "{{setvar::onlyname}}", 0),
        ("{{newline::many}}", "{{newline::many}}", 0),
        ("{{time::Mars}}", "{{time::Mars}}", 0),
        ("{{getvar}}", "{{getvar}}", 0),
        ("{{user::extra}}", "{{user::extra}}", 0),
    ];
    for (input, macro_text, offset) in cases {
        let out = MacroState::new(Variables::default(), 1).render(input, &ctx());
        assert!(out.text.contains(macro_text), "{input} -> {}", out.text);
        assert_eq!(out.diagnostics.len(), 1, "{input}");
        assert_eq!(out.diagnostics[0].offset, offset, "{input}");
        assert_eq!(out.diagnostics[0].text, macro_text);
    }
}

#[test]
fn unknown_macro_names_are_reported_and_left_as_written() {
    let out =
        MacroState::new(Variables::default(), 1).render("Hi {{usr}}, {{ }} {{match}}", &ctx());
    assert_eq!(out.text, "Hi {{usr}}, {{ }} {{match}}");
    assert_eq!(out.diagnostics.len(), 1, "{:?}", out.diagnostics);
    assert_eq!(out.diagnostics[0].offset, 3);
    assert_eq!(out.diagnostics[0].text, "{{usr}}");
    assert!(out.diagnostics[0].message.contains("unknown macro {{usr}}"));
    // Nested known macros still resolve inside an unknown one, which alone is reported.
    let out = MacroState::new(Variables::default(), 1).render("{{nope::{{user}}}}", &ctx());
    assert_eq!(out.text, "{{nope::Alex}}");
    assert_eq!(out.diagnostics.len(), 1);
}

#[test]
fn incvar_on_text_is_reported() {
    let mut state = MacroState::new(Variables::default(), 1);
    let out = state.render_used("{{setvar::t::abc}}{{incvar::t}}", &ctx());
    assert_eq!(out.diagnostics.len(), 1);
    assert!(out.diagnostics[0].message.contains("not a number"));
}

#[test]
fn escaped_results_for_regex_fields() {
    let mut c = ctx();
    c.user = "A.B (x)".into();
    let mut state = MacroState::new(Variables::default(), 1);
    let out = state.render_with(
        "^{{user}}$",
        &c,
        RenderOptions {
            regex_escape_results: true,
            ..Default::default()
        },
    );
    assert_eq!(out.text, "^A\\.B \\(x\\)$");
}

mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn never_panics_and_plain_text_round_trips(text in "\\PC{0,80}") {
            let mut state = MacroState::new(Variables::default(), 3);
            let out = state.render(&text, &ctx());
            if !text.contains('{') && !text.contains('<') && !text.contains('\\') {
                prop_assert_eq!(out.text, text);
            }
        }

        #[test]
        fn arbitrary_macro_soup_never_panics(parts in proptest::collection::vec(prop_oneof![
            Just("{{".to_string()), Just("}}".to_string()), Just("::".to_string()),
            Just("\\{\\{".to_string()), Just("{{trim}}".to_string()), Just("<USER>".to_string()),
            Just("setvar".to_string()), Just("getvar".to_string()), Just("roll".to_string()),
            "[a-z0-9 :é猫]{0,4}"
        ], 0..24)) {
            let text = parts.concat();
            let mut state = MacroState::new(Variables::default(), 3);
            let _ = state.render_used(&text, &ctx());
        }
    }
}

#[test]
fn card_fields_expand_their_own_macros_without_looping() {
    let mut c = ctx();
    c.description = "{{char}} guards {{user}}. {{description}}".into();
    let out = MacroState::new(Variables::default(), 1).render("{{description}}", &c);
    assert!(
        out.text
            .starts_with("Seraphina guards Alex. Seraphina guards Alex."),
        "{}",
        out.text
    );
}

#[test]
fn json_around_and_inside_macros() {
    let mut state = MacroState::new(Variables::default(), 1);
    let c = ctx();
    let out = state.render_used(
        "{{setvar::s::{\"a\":{\"b\":1}}}}{\"hp\": {{getvar::s.a.b}}}",
        &c,
    );
    assert_eq!(out.text, "{\"hp\": 1}");
}

#[test]
fn if_conditions_and_branches() {
    let mut vars = Variables::default();
    vars.chat.insert("on".into(), json!("yes"));
    vars.chat.insert("zero".into(), json!(0));
    vars.global.insert("g".into(), json!("off"));
    let cases = [
        ("{{if .on}}A{{else}}B{{/if}}", "A"),
        ("{{if .zero}}A{{else}}B{{/if}}", "B"),
        ("{{if $g}}A{{else}}B{{/if}}", "B"),
        ("{{if !$g}}A{{/if}}", "A"),
        (
            "{{if description}}has {{description}}{{/if}}",
            "has A guardian",
        ),
        ("{{if {{getvar::on}}}}nested{{/if}}", "nested"),
        ("{{if FALSE}}x{{else}}y{{/if}}", "y"),
        ("{{if::.on}}spelled{{/if}}", "spelled"),
        (
            "[{{if .on::inline {{user}}}}][{{if 0::no}}]",
            "[inline Alex][]",
        ),
        (
            "{{if .on}}\n  outer {{if .zero}}in{{else}}out{{/if}}\n{{/if}}",
            "outer out",
        ),
        ("{{if .on}}no end", "{{if .on}}no end"),
        ("stray {{else}} and {{/if}}", "stray {{else}} and {{/if}}"),
    ];
    for (text, expected) in cases {
        let out = MacroState::new(vars.clone(), 1).render(text, &ctx()).text;
        assert_eq!(out, expected, "{text}");
    }
    let r = MacroState::new(vars.clone(), 1).render("{{if .on}}open", &ctx());
    assert!(
        r.diagnostics[0].message.contains("{{/if}}"),
        "{:?}",
        r.diagnostics
    );
    let mut state = MacroState::new(vars, 1);
    let mut r = state.render(
        "{{if .zero}}{{setvar::a::1}}{{else}}{{setvar::b::1}}{{/if}}",
        &ctx(),
    );
    state.commit(&mut r);
    assert!(state.variables().chat.contains_key("b"));
    assert!(
        !state.variables().chat.contains_key("a"),
        "only the chosen branch ran"
    );
}

#[test]
fn outlet_reads_the_context() {
    let mut c = ctx();
    c.outlets.insert("places".into(), "harbour\nmarket".into());
    let out = MacroState::new(Variables::default(), 1)
        .render("{{outlet::places}}|{{outlet::other}}", &c)
        .text;
    assert_eq!(out, "harbour\nmarket|");
}
