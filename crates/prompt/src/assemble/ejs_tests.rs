//! EJS through the whole build: every kind of prompt field, staged writes, the switch, the
//! deadline, `{{outlet}}` and `{{if}}`.

use serde_json::json;
use tavo_model::{
    Lorebook, LorebookEntry, LorebookId, LorebookPosition, LorebookStrategy, RegexEntry,
    RegexGroup, RegexId, RegexPlacement, RegexTiming,
};

use super::tests::{Fixture, lore_entry, options, texts};

fn book(entries: Vec<LorebookEntry>) -> Vec<Lorebook> {
    vec![Lorebook {
        id: Some(LorebookId(2)),
        revision: 1,
        name: "w".into(),
        entries,
        ..Lorebook::default()
    }]
}

#[test]
fn every_kind_of_field_renders_ejs_before_macros() {
    let mut f = Fixture::new();
    let c = &mut f.characters[0];
    c.description = "Sum is <%= 40 + 2 %> for {{user}}.".into();
    c.personality = "<%- ['kind', 'brave'].join(' and ') %>".into();
    c.mes_example = "<START>\n{{user}}: <%= 'hi' %>\n{{char}}: <%= 'hello'.toUpperCase() %>".into();
    c.system_prompt = "<%= 'Card' %> main, then: {{original}}".into();
    f.preset.entries[0].content = Some("Write <%= charName %>'s reply.".into());
    let mut entry = lore_entry("l", LorebookPosition::LorebookBefore);
    entry.content = "<% if (userName === 'Alex') { %>Alex knows<% } %> {{char}}".into();
    f.lorebooks = book(vec![entry]);
    f.regex = vec![RegexGroup {
        id: Some(RegexId(1)),
        name: "g".into(),
        entries: vec![RegexEntry {
            identifier: "r".into(),
            find_regex: "/Hello there/".into(),
            replace_string: "<%= 'Hi' + '!' %> {{user}}".into(),
            placements: vec![RegexPlacement::User],
            timing: RegexTiming::Send,
            ..RegexEntry::default()
        }],
        ..RegexGroup::default()
    }];
    let out = f.build(&options());
    let t = texts(&out);
    let all = t.join("\n");
    for want in [
        "system:Card main, then: Write Sera's reply.",
        "system:Alex knows Sera",
        "system:Sum is 42 for Alex.",
        "system:kind and brave",
        "system:[example_user]hi",
        "system:[example_assistant]HELLO",
        "user:Hi! Alex.",
    ] {
        assert!(t.iter().any(|x| x == want), "{want} missing in {t:#?}");
    }
    assert!(!all.contains("<%"), "{all}");
    assert!(
        out.explain.diagnostics.is_empty(),
        "{:?}",
        out.explain.diagnostics
    );
}

#[test]
fn a_failing_card_field_falls_back_with_a_located_diagnostic() {
    let mut f = Fixture::new();
    f.characters[0].name = "Broken".into();
    f.characters[0].description = "Kept <%= nosuchfn() %> as {{char}}.".into();
    let out = f.build(&options());
    assert!(texts(&out).contains(&"system:Kept <%= nosuchfn() %> as Broken.".to_owned()));
    let d = out
        .explain
        .diagnostics
        .iter()
        .find(|d| d.location == "character.description")
        .unwrap_or_else(|| panic!("{:?}", out.explain.diagnostics));
    assert_eq!(d.text.as_deref(), Some("<%= nosuchfn() %>"));
    assert_eq!(d.offset, Some(5));
    assert!(
        d.message.contains("nosuchfn is not defined"),
        "{}",
        d.message
    );
}

#[test]
fn writes_happen_only_for_text_that_reaches_the_prompt() {
    let mut f = Fixture::new();
    f.variables.chat.insert("hp".into(), json!(10));
    f.characters[0].description = "<% incvar('hp') %>{{char}}".into();
    f.preset.entries[0].content = Some("<% setvar('used', '007') %>main".into());
    let disabled = f
        .preset
        .entries
        .iter_mut()
        .find(|e| e.identifier == "jailbreak")
        .unwrap_or_else(|| panic!("no jailbreak entry"));
    disabled.enabled = false;
    disabled.content = Some("<% setvar('off', 1) %>".into());
    let mut active = lore_entry("on", LorebookPosition::LorebookAfter);
    active.content = "<% setvar('lore', {a: [1]}, {scope: 'global'}) %>lore".into();
    let never = LorebookEntry {
        identifier: "never".into(),
        content: "<% setvar('leak', 1) %>".into(),
        keywords: vec!["zzz".into()],
        strategy: LorebookStrategy::Keyword,
        ..LorebookEntry::default()
    };
    f.lorebooks = book(vec![active, never]);
    let out = f.build(&options());
    assert!(out.variables_changed);
    assert_eq!(out.variables.chat.get("used"), Some(&json!("007")));
    assert_eq!(out.variables.chat.get("hp"), Some(&json!(11)), "once");
    assert_eq!(out.variables.global.get("lore"), Some(&json!({"a": [1]})));
    assert!(!out.variables.chat.contains_key("leak"));
    assert!(!out.variables.chat.contains_key("off"));
}

#[test]
fn the_switch_leaves_tags_as_written() {
    let mut f = Fixture::new();
    f.characters[0].description = "Sum is <%= 40 + 2 %> for {{user}}.".into();
    let mut o = options();
    o.ejs = false;
    let out = f.build(&o);
    assert!(texts(&out).contains(&"system:Sum is <%= 40 + 2 %> for Alex.".to_owned()));
}

#[test]
fn an_endless_loop_in_a_card_cannot_stall_the_build() {
    let mut f = Fixture::new();
    f.characters[0].description = "<% while (true) {} %>Loop {{char}}".into();
    f.characters[0].personality = "<% for (;;) {} %>again".into();
    f.preset.entries[0].content = Some("{{description}} / {{description}}".into());
    // The build ending at all is the proof: each looping template is stopped at the js
    // deadline and left as written. (How long that takes is the deadline's business, measured
    // by benches, not asserted here: a loaded machine made the old wall-clock bound flaky.)
    let out = f.build(&options());
    let t = texts(&out);
    assert!(
        t.contains(
            &"system:<% while (true) {} %>Loop Sera / <% while (true) {} %>Loop Sera".to_owned()
        ),
        "{t:#?}"
    );
    assert!(
        out.explain
            .diagnostics
            .iter()
            .any(|d| d.location == "character.description" && d.message.contains("stopped after")),
        "{:?}",
        out.explain.diagnostics
    );
}

#[test]
fn outlet_entries_are_shown_by_the_outlet_macro_only() {
    let mut f = Fixture::new();
    let mut outlet = lore_entry("o", LorebookPosition::LorebookAfter);
    outlet.content = "the harbour".into();
    outlet.extra.insert("sillyTavernPosition".into(), json!(7));
    outlet.extra.insert("outletName".into(), json!("places"));
    let mut nameless = lore_entry("n", LorebookPosition::LorebookAfter);
    nameless.content = "dropped".into();
    nameless
        .extra
        .insert("sillyTavernPosition".into(), json!(7));
    f.lorebooks = book(vec![outlet, nameless]);
    f.preset.entries[0].content = Some("Places: {{outlet::places}}.{{outlet::none}}".into());
    let out = f.build(&options());
    let t = texts(&out);
    assert_eq!(t[0], "system:Places: the harbour.");
    assert!(!t.join("\n").contains("dropped"), "{t:#?}");
    assert_eq!(t.iter().filter(|x| x.contains("the harbour")).count(), 1);
    let o = &out.explain.activated_entries[0];
    assert_eq!(o.outlet.as_deref(), Some("places"));
}

#[test]
fn if_blocks_choose_one_branch() {
    let mut f = Fixture::new();
    f.variables.chat.insert("met".into(), json!(true));
    f.preset.entries[0].content = Some(
        "{{if .met}}Old friends.{{else}}{{setvar::x::1}}Strangers.{{/if}} {{if !persona}}no persona{{else}}{{persona}}{{/if}}".into(),
    );
    let out = f.build(&options());
    assert_eq!(texts(&out)[0], "system:Old friends. A traveller.");
    assert!(
        !out.variables.chat.contains_key("x"),
        "the other branch never ran"
    );
}

#[test]
fn lorebook_keys_are_templates_without_side_effects() {
    let mut f = Fixture::new();
    f.messages.push(tavo_model::Message::new(
        tavo_model::Role::User,
        "A dragon lands.",
    ));
    let entry = LorebookEntry {
        identifier: "k".into(),
        content: "dragons breathe fire".into(),
        keywords: vec!["<% setvar('probe', 1) %><%= 'dra' + 'gon' %>".into()],
        strategy: LorebookStrategy::Keyword,
        ..LorebookEntry::default()
    };
    f.lorebooks = book(vec![entry]);
    let out = f.build(&options());
    assert!(
        texts(&out)
            .iter()
            .any(|t| t.contains("dragons breathe fire")),
        "{:#?}",
        texts(&out)
    );
    assert!(
        !out.variables.chat.contains_key("probe"),
        "a key never writes"
    );
}
