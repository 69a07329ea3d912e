//! Data-driven EJS cases: every `tests/ejs_cases/NAME.ejs` is rendered (EJS, then macros) with
//! a fixed context and fixed variables and must give `NAME.out` exactly; when
//! `NAME.vars.json` exists, the variables after committing the rendering must equal it.
//! Adding a case is adding files.
//!
//! Also: property tests that the EJS parser, and the whole rendering, never panic.

use std::path::Path;

use proptest::prelude::*;
use serde_json::{Value, json};
use tavo_prompt::ejs;
use tavo_prompt::macros::{MacroContext, MacroState, Variables};

fn ctx() -> MacroContext {
    let now = chrono::DateTime::parse_from_rfc3339("2026-11-29T20:37:00+01:00")
        .unwrap_or_else(|e| panic!("{e}"));
    let mut ctx = MacroContext::new("Alice", "Seraphina", now);
    ctx.character_id = Some(7);
    ctx.last_user_message = "hi <there>".into();
    ctx.last_char_message = "welcome".into();
    ctx
}

fn vars() -> Variables {
    let object = |v: Value| match v {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    Variables {
        chat: object(json!({"hp": 10, "name": "Ann"})),
        global: object(json!({"gold": 5, "hp": 99})),
    }
}

#[test]
fn every_case_renders_as_expected() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ejs_cases");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".ejs"))
                .map(str::to_owned)
        })
        .collect();
    names.sort();
    assert!(names.len() >= 20, "only {} cases found", names.len());
    let mut failures = Vec::new();
    for name in &names {
        let read = |ext: &str| std::fs::read_to_string(dir.join(format!("{name}{ext}")));
        let template = read(".ejs").unwrap_or_else(|e| panic!("{name}.ejs: {e}"));
        let expected = read(".out").unwrap_or_else(|e| panic!("{name}.out: {e}"));
        let mut state = MacroState::new(vars(), 1);
        let mut rendered = state.render(&template, &ctx());
        if rendered.text != expected {
            failures.push(format!(
                "{name}: got {:?}, expected {expected:?} ({:?})",
                rendered.text, rendered.diagnostics
            ));
            continue;
        }
        if let Ok(raw) = read(".vars.json") {
            let want: Value = serde_json::from_str(&raw).unwrap_or_else(|e| panic!("{name}: {e}"));
            state.commit(&mut rendered);
            let got = json!({"chat": state.variables().chat, "global": state.variables().global});
            if got != want {
                failures.push(format!("{name}: variables {got}, expected {want}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn fallback_cases_report_a_diagnostic() {
    let mut state = MacroState::new(vars(), 1);
    let r = state.render("Kept <%= nosuchfn() %> as {{char}}.", &ctx());
    assert_eq!(r.diagnostics.len(), 1, "{:?}", r.diagnostics);
    assert_eq!(r.diagnostics[0].text, "<%= nosuchfn() %>");
    assert_eq!(r.diagnostics[0].offset, 5);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn the_parser_never_panics(src in "(<%|%>|<%%|%%>|<%=|<%-|<%#|<%_|_%>|-%>|<#escape-ejs>|</#escape-ejs>|[a-z \n\r\t'\"\\\\]|[^\u{0}-\u{7f}]){0,40}") {
        if let Ok(segments) = ejs::parse(&src) {
            let _ = ejs::compile(&segments);
        }
    }

    #[test]
    fn the_parser_never_panics_on_any_text(src in any::<String>()) {
        if let Ok(segments) = ejs::parse(&src) {
            let _ = ejs::compile(&segments);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Any template renders to something: either its output or the field as written.
    #[test]
    fn rendering_never_panics(src in "(<%|%>|<%=|<%-|<%#|-%>|\\{\\{user\\}\\}|getvar\\('x'\\)|setvar\\('x', 1\\)|[a-z0-9 ;()+'\n]){0,24}") {
        let mut state = MacroState::new(vars(), 1);
        let _ = state.render(&src, &ctx());
    }
}
