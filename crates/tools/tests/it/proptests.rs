//! Property tests for everything that parses outside input: arguments from a model, data URLs,
//! theme files, and the UTF-8-safe cutting of results.

use proptest::prelude::*;
use serde_json::{Value, json};
use tavo_tools::budget::{ToolResult, json_safe_prefix, shape};
use tavo_tools::ops::files::decode_data_url;
use tavo_tools::ops::themes::parse_theme_file;

static REGISTRY: std::sync::LazyLock<Option<std::sync::Arc<tavo_tools::Registry>>> =
    std::sync::LazyLock::new(|| tavo_tools::builtin_registry().ok());

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map("[a-zA-Z]{1,8}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn validation_never_panics_and_errors_always_carry_a_path(args in arb_json()) {
        let Some(registry) = REGISTRY.as_ref() else { return Err(TestCaseError::fail("registry")) };
        for name in ["tavo_file_save", "tavo_preset_update", "tavo_ask_user", "tavo_theme_create", "tavo_image_generate"] {
            let Some(op) = registry.get(name) else { return Err(TestCaseError::fail("missing")) };
            if let Err(e) = op.validate(&args) {
                prop_assert_eq!(e.code, tavo_tools::ErrorCode::InvalidArguments);
                let details = e.details.unwrap_or_default();
                prop_assert!(details.get("path").is_some_and(Value::is_string));
                prop_assert!(details.get("expected").is_some_and(Value::is_string));
                prop_assert!(details.get("actualType").is_some_and(Value::is_string));
            }
        }
    }

    #[test]
    fn data_urls_never_panic(s in ".{0,64}") {
        let _ = decode_data_url(&s);
        let _ = decode_data_url(&format!("data:{s}"));
        let _ = decode_data_url(&format!("data:text/plain,{s}%"));
    }

    #[test]
    fn theme_files_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200), v in arb_json()) {
        let _ = parse_theme_file(&bytes);
        let _ = parse_theme_file(v.to_string().as_bytes());
    }

    #[test]
    fn prefixes_are_char_boundaries_that_fit(text in "\\PC{0,200}", room in 0usize..300) {
        let p = json_safe_prefix(&text, room);
        prop_assert!(text.starts_with(p));
        let escaped = serde_json::to_string(p).map(|s| s.len() - 2).unwrap_or(usize::MAX);
        prop_assert!(escaped <= room);
    }

    #[test]
    fn shaped_results_never_exceed_the_limit(v in arb_json(), text in "\\PC{0,400}", limit in 64usize..512) {
        let s = shape(ToolResult::Value(v), limit);
        prop_assert!(s.bytes <= limit);
        let t = shape(ToolResult::Text { meta: Default::default(), field: "content", text }, limit);
        prop_assert!(t.bytes <= limit);
    }
}
