use std::time::{Duration, Instant};

use serde_json::json;

use super::*;
use crate::macros::{MacroState, VarScope};

fn now() -> chrono::DateTime<chrono::FixedOffset> {
    chrono::DateTime::parse_from_rfc3339("2026-11-29T20:37:00+01:00")
        .unwrap_or_else(|e| panic!("{e}"))
}

fn ctx() -> MacroContext {
    let mut ctx = MacroContext::new("Alice", "Seraphina", now());
    ctx.character_id = Some(7);
    ctx.last_user_message = "hello there".into();
    ctx.last_char_message = "greetings".into();
    ctx.description = "Desc <%= 1 + 1 %> of {{char}}".into();
    ctx
}

fn state() -> MacroState {
    let mut vars = Variables::default();
    vars.chat.insert("hp".into(), json!(10));
    vars.global.insert("gold".into(), json!(5));
    vars.global.insert("hp".into(), json!(99));
    MacroState::new(vars, 3)
}

fn render(text: &str) -> String {
    state().render(text, &ctx()).text
}

#[test]
fn output_forms_and_escaping() {
    assert_eq!(render("<%= '<b>' + \"&'\" %>"), "&lt;b&gt;&amp;&#39;");
    assert_eq!(render("<%- '<b>' %>"), "<b>");
    assert_eq!(
        render("a<% if (1) { %>yes<% } else { %>no<% } %>b"),
        "ayesb"
    );
    assert_eq!(render("<%# ignored %>x"), "x");
    assert_eq!(render("<% print('p', 1, null) %>"), "p1");
    assert_eq!(render("<%= undefined %>|<%- null %>"), "|");
    assert_eq!(render("<%% literal %%>"), "<% literal %>");
    assert_eq!(render("<#escape-ejs><%= 1 %></#escape-ejs>"), "<%= 1 %>");
    assert_eq!(
        render("<% for (const i of [1,2]) { -%>\nrow <%= i %>\n<% } -%>\n"),
        "row 1\nrow 2\n"
    );
}

#[test]
fn ejs_runs_before_macros() {
    assert_eq!(
        render("<%= '{{' + 'user}}' %> and {{char}}"),
        "Alice and Seraphina"
    );
    assert_eq!(render("{{description}}"), "Desc 2 of Seraphina");
}

#[test]
fn constants_are_injected() {
    assert_eq!(
        render(
            "<%= charName %>/<%= userName %>/<%= characterId %>/<%= lastUserMessage %>/<%= lastCharMessage %>"
        ),
        "Seraphina/Alice/7/hello there/greetings"
    );
}

#[test]
fn getvar_scopes_and_defaults() {
    assert_eq!(render("<%= getvar('hp') %>"), "10");
    assert_eq!(render("<%= getvar('gold') %>"), "5");
    assert_eq!(render("<%= getvar('hp', {scope: 'global'}) %>"), "99");
    assert_eq!(render("<%= getvar('gold', {scope: 'chat'}) %>|"), "|");
    assert_eq!(render("<%= getvar('gold', {scope: 'message'}) %>|"), "|");
    assert_eq!(render("<%= getvar('nope') %>|"), "|");
    assert_eq!(render("<%= getvar('nope', 'dflt') %>"), "dflt");
    assert_eq!(
        render("<%= getvar('nope', {scope: 'local', defaults: 3}) %>"),
        "3"
    );
}

#[test]
fn setvar_keeps_values_as_is_and_stages_them() {
    let mut s = state();
    let mut r = s.render(
        "<% setvar('code', '007'); setvar('o.a.b', 42); setvar('g', [1], {scope: 'global'}) %><%= getvar('o.a.b') %>",
        &ctx(),
    );
    assert_eq!(r.text, "42");
    assert!(
        s.variables().get(VarScope::Chat, "code").is_none(),
        "staged only"
    );
    s.commit(&mut r);
    assert_eq!(
        s.variables().get(VarScope::Chat, "code"),
        Some(&json!("007"))
    );
    assert_eq!(
        s.variables().get(VarScope::Chat, "o"),
        Some(&json!({"a": {"b": 42}}))
    );
    assert_eq!(s.variables().get(VarScope::Global, "g"), Some(&json!([1])));
    // Any scope but global writes chat.
    let mut r = s.render("<% setvar('m', 1, {scope: 'message'}) %>", &ctx());
    s.commit(&mut r);
    assert_eq!(s.variables().get(VarScope::Chat, "m"), Some(&json!(1)));
}

#[test]
fn inc_dec_del() {
    let mut s = state();
    let mut r = s.render(
        "<%= incvar('hp') %> <%= incvar('hp', 5) %> <%= decvar('n', 2) %><% delvar('gold', {scope: 'global'}) %>",
        &ctx(),
    );
    assert_eq!(r.text, "11 16 -2");
    s.commit(&mut r);
    assert_eq!(s.variables().get(VarScope::Chat, "hp"), Some(&json!(16)));
    assert_eq!(s.variables().get(VarScope::Chat, "n"), Some(&json!(-2)));
    assert_eq!(s.variables().get(VarScope::Global, "gold"), None);
}

#[test]
fn lodash_helpers() {
    assert_eq!(
        render(
            "<% const o = {a: {b: [{c: 1}]}} %><%= _.get(o, 'a.b[0].c') %><%= _.get(o, 'a.b.0.c') %><%= _.get(o, 'x.y', 'd') %>"
        ),
        "11d"
    );
    assert_eq!(
        render(
            "<% const o = {} %><% _.set(o, 'a.b[1]', 2) %><%- JSON.stringify(o) %> <%= _.has(o, 'a.b') %> <% _.unset(o, 'a.b') %><%- JSON.stringify(o) %>"
        ),
        "{\"a\":{\"b\":[null,2]}} true {\"a\":{}}"
    );
    assert_eq!(
        render("<% const a = {x: [1]}; const b = _.cloneDeep(a); b.x.push(2) %><%= a.x.length %>"),
        "1"
    );
}

#[test]
fn a_failing_field_falls_back_whole_with_macros_applied() {
    let r = state().render("Kept <%= 1 %> <%= nosuchfn() %> as {{char}}.", &ctx());
    assert_eq!(r.text, "Kept <%= 1 %> <%= nosuchfn() %> as Seraphina.");
    let d = &r.diagnostics[0];
    assert_eq!(d.offset, 14);
    assert_eq!(d.text, "<%= nosuchfn() %>");
    assert!(d.message.contains("nosuchfn"), "{}", d.message);
    // A syntax error, an unclosed tag, a throw: the same.
    for broken in ["<% if ( %>x", "<%= 1 ", "<% throw new Error('no') %>"] {
        let r = state().render(&format!("{broken} {{{{user}}}}"), &ctx());
        assert_eq!(r.text, format!("{broken} Alice"), "{broken}");
        assert!(r.diagnostics.iter().any(|d| d.message.starts_with("EJS")));
    }
    // No write of a failed field is staged.
    let r = state().render("<% setvar('x', 1); nosuch() %>", &ctx());
    assert!(!r.has_side_effects());
}

#[test]
fn a_failing_card_field_names_the_field() {
    let mut c = ctx();
    c.description = "<%= broken( %>".into();
    let r = state().render("{{description}}", &c);
    assert_eq!(r.text, "<%= broken( %>");
    assert_eq!(
        r.diagnostics[0].field.as_deref(),
        Some("character.description")
    );
}

#[test]
fn switched_off_leaves_tags() {
    let mut s = state();
    s.set_templates(Templates::off());
    assert_eq!(s.render("<%= 1 %> {{user}}", &ctx()).text, "<%= 1 %> Alice");
}

#[test]
fn globals_do_not_leak_between_fields() {
    let mut s = state();
    let c = ctx();
    s.render(
        "<% globalThis.leak = 1; String.prototype.trim = null %>",
        &c,
    );
    assert_eq!(s.render("<%= typeof leak %>", &c).text, "undefined");
}

#[test]
fn math_random_is_seeded() {
    let a = render("<%= Math.random() %>");
    assert_eq!(a, render("<%= Math.random() %>"));
    let other = MacroState::new(Variables::default(), 4)
        .render("<%= Math.random() %>", &ctx())
        .text;
    assert_ne!(a, other);
}

#[test]
fn an_endless_loop_is_stopped_and_not_retried() {
    let engine = Ejs::start(JsLimits {
        deadline: Duration::from_millis(150),
        memory_mib: 32,
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let mut s = state();
    s.set_templates(Templates::with_engine(engine));
    let c = ctx();
    let started = Instant::now();
    let r = s.render("<% while (true) {} %>stuck {{user}}", &c);
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(r.text, "<% while (true) {} %>stuck Alice");
    assert!(r.diagnostics[0].message.contains("stopped after 150 ms"));
    // The same template again in this generation falls back at once.
    let again = Instant::now();
    let r = s.render("<% while (true) {} %>stuck {{user}}", &c);
    assert!(again.elapsed() < Duration::from_millis(100));
    assert!(r.diagnostics[0].message.contains("already ran out of time"));
    // The engine recovered.
    assert_eq!(s.render("<%= 6 * 7 %>", &c).text, "42");
}

#[test]
fn memory_hog_is_stopped() {
    let engine = Ejs::start(JsLimits {
        deadline: Duration::from_millis(2000),
        memory_mib: 16,
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let mut s = state();
    s.set_templates(Templates::with_engine(engine));
    let r = s.render(
        "<% let a = []; while (true) a.push('x'.repeat(1000)) %>ok",
        &ctx(),
    );
    assert!(r.text.starts_with("<% let a"), "{}", r.text);
    assert!(
        r.diagnostics[0].message.contains("memory") || r.diagnostics[0].message.contains("stopped"),
        "{}",
        r.diagnostics[0].message
    );
    assert_eq!(s.render("<%= 'fine' %>", &ctx()).text, "fine");
}

#[test]
fn regex_escaped_outputs() {
    let mut s = state();
    let r = s.render_with(
        "<%= 'a.b' %>",
        &ctx(),
        crate::macros::RenderOptions {
            regex_escape_results: true,
            ..Default::default()
        },
    );
    assert_eq!(r.text, "a\\.b");
}
