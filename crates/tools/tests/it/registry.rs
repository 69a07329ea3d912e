//! The registry as a whole: names, strict schemas, exposure rules, discovery.

use crate::support::Lib;
use serde_json::{Value, json};
use tavo_tools::exposure::{Availability, hint_for_round, initial_tools};
use tavo_tools::{ExposedSet, GenerationKind, Safety, ToolSettings};

/// Every object schema with properties is closed; with `extras`, one may instead keep its
/// extras open (a library update takes back what get returned, unknown keys kept).
fn assert_closed(path: &str, schema: &Value, extras: bool) {
    match schema {
        Value::Object(map) => {
            if map.contains_key("properties") {
                let open = map.get("additionalProperties");
                assert!(
                    open == Some(&json!(false)) || (extras && open == Some(&json!(true))),
                    "open object at {path}: {open:?}"
                );
            }
            for (k, v) in map {
                if !matches!(k.as_str(), "enum" | "const" | "default") {
                    assert_closed(&format!("{path}/{k}"), v, extras);
                }
            }
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .for_each(|(i, v)| assert_closed(&format!("{path}/{i}"), v, extras)),
        _ => {}
    }
}

/// The library updates, whose assets keep the keys they do not know.
const KEEP_EXTRAS: &[&str] = &[
    "tavo_character_update",
    "tavo_persona_update",
    "tavo_preset_update",
    "tavo_lorebook_update",
    "tavo_regex_update",
];

#[test]
fn every_tool_is_named_for_the_model_door_and_strict() {
    let lib = Lib::new();
    let mut count = 0;
    for op in lib.registry.operations() {
        count += 1;
        let tool = op.tool_name();
        assert!(
            tool.starts_with("tavo_") || tool == "extension_tool_search",
            "{tool}"
        );
        assert!(
            tool.len() <= 64 && tool.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
            "{tool}"
        );
        assert_eq!(op.schema()["type"], json!("object"), "{tool}");
        assert_closed(tool, op.schema(), KEEP_EXTRAS.contains(&tool));
        assert!(!op.description().is_empty());
        assert!(
            !serde_json::to_string(op.schema())
                .unwrap_or_default()
                .contains("x-tavo-open")
        );
    }
    assert!(count >= 70, "only {count} tools");
    for name in [
        "tavo_variable_get",
        "tavo_message_find",
        "tavo_chat_current",
        "tavo_character_find",
        "tavo_persona_create",
        "tavo_theme_import",
        "tavo_preset_update",
        "tavo_lorebook_import",
        "tavo_regex_delete",
        "tavo_memory_append",
        "tavo_input_append",
        "tavo_image_generate",
        "tavo_tts_play",
        "tavo_file_list",
        "tavo_ask_user",
        "tavo_tool_search",
        "extension_tool_search",
        "tavo_web_fetch",
        "tavo_web_search",
    ] {
        assert!(lib.registry.get(name).is_some(), "{name} missing");
    }
    // The seed's removed tools stay removed.
    for gone in [
        "tavo_utils_toast",
        "tavo_app_version",
        "tavo_javascript_eval",
        "tavo_file_import",
        "tavo_file_export",
    ] {
        assert!(lib.registry.get(gone).is_none(), "{gone} must not exist");
    }
}

#[test]
fn write_safety_follows_the_seed() {
    let lib = Lib::new();
    let safety = |n: &str| lib.registry.safety(n);
    assert_eq!(
        safety("tavo_file_save"),
        Some(Safety::Write),
        "files save without confirmation"
    );
    assert_eq!(safety("tavo_file_delete"), Some(Safety::Write));
    assert_eq!(safety("tavo_character_create"), Some(Safety::Confirm));
    assert_eq!(safety("tavo_character_import"), Some(Safety::Confirm));
    assert_eq!(safety("tavo_regex_update"), Some(Safety::Confirm));
    assert_eq!(safety("tavo_preset_import"), Some(Safety::Confirm));
    assert_eq!(safety("tavo_memory_get"), Some(Safety::Read));
}

#[test]
fn exposure_rules() {
    let lib = Lib::new();
    let on = ToolSettings {
        enabled: true,
        ..Default::default()
    };
    let first = initial_tools(
        &lib.registry,
        &on,
        GenerationKind::Normal,
        Availability::default(),
    );
    assert_eq!(
        first,
        vec!["tavo_tool_search", "tavo_ask_user", "tavo_web_fetch"]
    );
    let with_search = initial_tools(
        &lib.registry,
        &on,
        GenerationKind::Normal,
        Availability {
            web_search: true,
            extensions: true,
        },
    );
    assert_eq!(
        with_search,
        vec![
            "tavo_tool_search",
            "tavo_ask_user",
            "tavo_web_fetch",
            "tavo_web_search",
            "extension_tool_search"
        ]
    );
    let direct = ToolSettings {
        enabled: true,
        dynamic_loading: false,
        ..Default::default()
    };
    let all = initial_tools(
        &lib.registry,
        &direct,
        GenerationKind::Normal,
        Availability::default(),
    );
    assert!(
        all.contains(&"tavo_file_save".to_owned()) && all.contains(&"tavo_theme_update".to_owned())
    );
    assert!(
        !all.contains(&"tavo_tool_search".to_owned()),
        "nothing to discover when everything is sent"
    );
    assert!(
        !all.contains(&"tavo_web_search".to_owned()),
        "no search API, no search tool"
    );
    assert!(
        initial_tools(
            &lib.registry,
            &ToolSettings::default(),
            GenerationKind::Normal,
            Availability::default()
        )
        .is_empty()
    );
    for kind in [
        GenerationKind::Continue,
        GenerationKind::Impersonate,
        GenerationKind::Quiet,
    ] {
        assert!(
            initial_tools(&lib.registry, &on, kind, Availability::default()).is_empty(),
            "{kind:?}"
        );
    }
    assert!(hint_for_round(0).is_none());
    assert!(hint_for_round(3).is_some_and(|h| h.contains("tool")));
}

#[tokio::test]
async fn tool_search_finds_hidden_tools_and_exposes_them_for_the_rest_of_the_reply() {
    let lib = Lib::new();
    let on = ToolSettings {
        enabled: true,
        ..Default::default()
    };
    let mut exposed = ExposedSet::initial(
        &lib.registry,
        &on,
        GenerationKind::Normal,
        Availability::default(),
    );
    assert!(exposed.check_callable("tavo_file_save").is_err());
    let mut ctx = lib.ctx(None);
    ctx.shown = exposed.snapshot();
    let mut budget = tavo_tools::ReplyBudget::default();
    let step = lib
        .registry
        .call(
            "tavo_tool_search",
            json!({"query": "list files in the current chat", "limit": 3}),
            ctx,
            &mut budget,
        )
        .await;
    let tavo_tools::CallStep::Finished(done) = step else {
        panic!("paused")
    };
    let names: Vec<&str> = done.envelope["result"]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names.first(), Some(&"tavo_file_list"), "{names:?}");
    assert!(names.len() <= 3);
    exposed.expose(done.expose);
    assert!(exposed.check_callable("tavo_file_list").is_ok());
    // Already-visible tools are not found again.
    let mut ctx = lib.ctx(None);
    ctx.shown = exposed.snapshot();
    let again = lib
        .registry
        .call(
            "tavo_tool_search",
            json!({"query": "list files"}),
            ctx,
            &mut budget,
        )
        .await;
    let tavo_tools::CallStep::Finished(again) = again else {
        panic!("paused")
    };
    let names: Vec<String> = again.envelope["result"]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect();
    assert!(!names.contains(&"tavo_file_list".to_owned()));
    assert_eq!(
        lib.err(None, "tavo_tool_search", json!({"query": "x", "limit": 9}))
            .await["details"]["path"],
        json!("limit")
    );
}

#[tokio::test]
async fn extension_tools_are_searchable_through_the_seam() {
    let lib = Lib::new();
    let services = tavo_tools::Services::default();
    services
        .extensions
        .register(
            "get_weather",
            None,
            "Get the current weather for a given location",
            json!({"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}),
            false,
            tavo_tools::ExtensionSource::Page { id: "p".into() },
        )
        .expect("register");
    // The page shows chat 1, the chat of the call: its tools are this chat's to find.
    services
        .extensions
        .set_page_chat("p", Some(tavo_model::ChatId(1)));
    let mut ctx = lib.ctx(Some(tavo_model::ChatId(1)));
    ctx.services = std::sync::Arc::new(services);
    let mut budget = tavo_tools::ReplyBudget::default();
    let step = lib
        .registry
        .call(
            "extension_tool_search",
            json!({"query": "weather in London"}),
            ctx,
            &mut budget,
        )
        .await;
    let tavo_tools::CallStep::Finished(done) = step else {
        panic!("paused")
    };
    assert_eq!(done.expose, vec!["get_weather".to_owned()]);
}

#[tokio::test]
async fn unknown_tools_and_missing_providers() {
    let lib = Lib::new();
    assert_eq!(
        lib.err(None, "tavo_nope", json!({})).await["code"],
        json!("unknown_tool")
    );
    let e = lib
        .err(
            None,
            "tavo_web_fetch",
            json!({"url": "http://127.0.0.1:1/"}),
        )
        .await;
    assert_eq!(e["code"], json!("resource_not_found"));
    assert_eq!(
        lib.err(None, "tavo_web_fetch", json!({})).await["code"],
        json!("invalid_arguments")
    );
}
