//! SillyTavern `settings.json` personas and group definitions: each `tests/data/st/X.json` beside
//! the `X.expected.json` of what it imports as, and a proptest that no JSON shape makes either
//! reader panic.

use proptest::prelude::*;
use serde_json::{Value, json};
use std::path::Path;
use tavo_formats::{Imported, import_bytes};

fn summary(out: &tavo_formats::ImportOutcome, file: &str) -> Value {
    let warnings: Vec<&str> = out.warnings.iter().map(|w| w.code.as_str()).collect();
    match &out.imported {
        Imported::Personas(list) => json!({
            "kind": out.imported.kind(),
            "personas": list,
            "warnings": warnings,
        }),
        Imported::Group(g) => json!({
            "kind": out.imported.kind(),
            "name": g.chat.chat.name,
            "replyMode": g.chat.chat.reply_mode,
            "members": g.chat.character_names,
            "muted": g.muted,
            "chatFiles": g.chat_files,
            "warnings": warnings,
        }),
        other => panic!("{file}: read as a {}", other.kind()),
    }
}

#[test]
fn fixtures_import_as_expected() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/st");
    let mut checked = 0;
    for name in ["settings", "group", "group-pooled"] {
        let input = std::fs::read(dir.join(format!("{name}.json"))).expect("input");
        let expected: Value = serde_json::from_slice(
            &std::fs::read(dir.join(format!("{name}.expected.json"))).expect("expected"),
        )
        .expect("expected json");
        let file = format!("{name}.json");
        let out = import_bytes(&input, &file, None).expect("import");
        assert_eq!(summary(&out, &file), expected, "{file}");
        checked += 1;
    }
    assert_eq!(checked, 3);
}

#[test]
fn the_group_chat_file_reads_as_a_headerless_chat() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/st");
    let bytes = std::fs::read(dir.join("2024-7-19@22h51m00s.jsonl")).expect("chat");
    let out = import_bytes(&bytes, "2024-7-19@22h51m00s.jsonl", None).expect("import");
    let Imported::Chat(chat) = out.imported else {
        panic!("a chat")
    };
    assert_eq!(chat.messages.len(), 3);
    assert_eq!(chat.character_names, ["Ann", "Bo"]);
}

#[test]
fn errors_name_the_file_and_path() {
    let e = import_bytes(br#"{"power_user":{"personas":{}}}"#, "settings.json", None).unwrap_err();
    assert_eq!(
        e.to_string(),
        "settings.json: power_user.personas: the settings hold no personas"
    );
    let e = import_bytes(br#"{"members":{"a":1},"chats":[]}"#, "g.json", None).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("g.json: members: expected an array"),
        "{e}"
    );
    // A forced kind that is not the file's is refused.
    assert!(
        import_bytes(
            br#"{"power_user":{"personas":{"a.png":"A"}}}"#,
            "s.json",
            Some(tavo_model::AssetKind::Preset)
        )
        .is_err()
    );
}

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        "[a-z.]{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map("[a-z.]{0,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn no_settings_or_group_shape_panics(
        personas in any_json(), descriptions in any_json(), default in any_json(),
        members in any_json(), disabled in any_json(), strategy in any_json(), chats in any_json(),
    ) {
        let settings = json!({"power_user": {"personas": personas, "persona_descriptions": descriptions, "default_persona": default}});
        let _ = import_bytes(settings.to_string().as_bytes(), "settings.json", None);
        let group = json!({"members": members, "disabled_members": disabled, "activation_strategy": strategy, "chats": chats, "chat_id": default});
        let _ = import_bytes(group.to_string().as_bytes(), "group.json", None);
        let _ = tavo_formats::st_group::chat_file_names(group.to_string().as_bytes());
    }
}
