//! Whole-package validation: the refusals of §6.3–6.5 and the data a valid package yields.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::*;

fn manifest(over: Value) -> Value {
    let mut m = json!({
        "id": "Org.Check.Hello", "name": {"$t": "name"}, "version": "1.2.0", "specVersion": 2,
        "entry": "entry.js",
        "localization": {"defaultLocale": "en", "resources": {"en": "locales/en.json", "zh-CN": "locales/zh.json"}},
        "contributes": {"inputActions": [{"id": "greet", "label": {"$t": "greet"}}]}
    });
    for (k, v) in over.as_object().unwrap() {
        if v.is_null() {
            m.as_object_mut().unwrap().remove(k);
        } else {
            m[k] = v.clone();
        }
    }
    m
}

fn files(m: Value, extra: &[(&str, &str)]) -> BTreeMap<String, Vec<u8>> {
    let mut f = BTreeMap::from([
        ("manifest.json".to_owned(), serde_json::to_vec(&m).unwrap()),
        (
            "entry.js".to_owned(),
            b"tavo.plugin.onInputAction('greet', () => {});".to_vec(),
        ),
        (
            "locales/en.json".to_owned(),
            br#"{"name": "Hello", "greet": "Greet"}"#.to_vec(),
        ),
        (
            "locales/zh.json".to_owned(),
            "{\"name\": \"你好\", \"greet\": \"问候\"}"
                .as_bytes()
                .to_vec(),
        ),
    ]);
    for (k, v) in extra {
        f.insert((*k).to_owned(), v.as_bytes().to_vec());
    }
    f
}

fn refused(over: Value) -> PluginError {
    from_files(files(manifest(over), &[]), Vec::new()).unwrap_err()
}

#[test]
fn a_valid_spec2_package_reads_with_names_resolved() {
    let zip = write_package(&files(manifest(json!({})), &[])).unwrap();
    let p = read_package(&zip).unwrap();
    assert_eq!(p.manifest.id, "org.check.hello");
    assert_eq!(p.catalogs.text(&p.manifest.name, "zh-CN"), "你好");
    assert_eq!(p.catalogs.text(&p.manifest.name, "de-DE"), "Hello");
    assert_eq!(p.manifest.contributes.input_actions[0].id, "greet");
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
}

#[test]
fn spec1_is_compat_mode() {
    let m = json!({"id": "a.b", "name": "A", "version": "whatever 3", "minAppVersion": "99.0.0"});
    let p = from_files(
        BTreeMap::from([("manifest.json".to_owned(), serde_json::to_vec(&m).unwrap())]),
        Vec::new(),
    )
    .unwrap();
    assert_eq!(p.manifest.spec_version, 1);
    assert!(p.warnings.iter().any(|w| w.code == "plugin.spec1-min-app"));
    let m = json!({"id": "a.b", "name": {"$t": "n"}, "version": "1"});
    let e = from_files(
        BTreeMap::from([("manifest.json".to_owned(), serde_json::to_vec(&m).unwrap())]),
        Vec::new(),
    )
    .unwrap_err();
    assert_eq!(e.field, "name");
}

#[test]
fn each_install_rule_refuses_with_the_field() {
    let cases: &[(Value, &str)] = &[
        (json!({"entry": "/etc/passwd"}), "entry"),
        (json!({"entry": "ui\\entry.js"}), "entry"),
        (json!({"entry": "https://x.org/e.js"}), "entry"),
        (json!({"entry": "../e.js"}), "entry"),
        (json!({"entry": "nope.js"}), "entry"),
        (json!({"entry": null}), "entry"),
        (json!({"specVersion": 99}), "specVersion"),
        (json!({"specVersion": "2"}), "specVersion"),
        (json!({"version": "01.2"}), "version"),
        (json!({"version": "v1.2.0"}), "version"),
        (json!({"version": "1.2"}), "version"),
        (json!({"id": "has space"}), "id"),
        (json!({"id": "a..b"}), "id"),
        (json!({"name": {"$t": "name", "x": 1}}), "name"),
        (json!({"minAppVersion": "9.0.0"}), "minAppVersion"),
        (json!({"localization": null}), "localization"),
        (
            json!({"localization": {"defaultLocale": "zh_CN"}}),
            "localization.defaultLocale",
        ),
        (json!({"contributes": {"tools": []}}), "contributes.tools"),
        (
            json!({"contributes": {"inputActions": [{"id": "a", "label": "A", "color": "red"}]}}),
            "contributes.inputActions[0].color",
        ),
        (
            json!({"contributes": {"inputActions": [{"id": "a", "label": "A"}, {"id": "a", "label": "B"}]}}),
            "contributes.inputActions[1].id",
        ),
        (
            json!({"contributes": {"htmlFragments": [{"id": "f", "src": "f.html", "mount": "/header"}]}}),
            "contributes.htmlFragments[0].mount",
        ),
        (
            json!({"contributes": {"htmlFragments": [{"id": "f", "src": "f.html", "mount": "/chat?role=user"}]}}),
            "contributes.htmlFragments[0].mount",
        ),
        (
            json!({"contributes": {"settings": {"schema": [{"type": "slider", "key": "s", "label": "S", "min": 5, "max": 5}]}}}),
            "contributes.settings.schema[0].max",
        ),
        (
            json!({"contributes": {"settings": {"schema": [{"type": "select", "key": "s", "label": "S", "options": []}]}}}),
            "contributes.settings.schema[0].options",
        ),
        (
            json!({"contributes": {"settings": {"schema": [{"type": "color", "key": "s", "label": "S"}]}}}),
            "contributes.settings.schema[0].type",
        ),
    ];
    for (over, field) in cases {
        let e = refused(over.clone());
        assert_eq!(&e.field, field, "{over}: {e}");
        assert_eq!(e.member, "manifest.json");
    }
}

#[test]
fn archive_refusals_name_the_member() {
    let e = from_files(
        files(manifest(json!({})), &[("../evil.js", "x")]),
        Vec::new(),
    )
    .unwrap_err();
    assert_eq!(e.member, "../evil.js");
    let e = read_package(b"not a zip").unwrap_err();
    assert!(e.to_string().contains("zip"));
    let mut f = files(manifest(json!({})), &[]);
    f.insert("manifest.json".into(), b"  ".to_vec());
    assert!(
        from_files(f.clone(), Vec::new())
            .unwrap_err()
            .problem
            .contains("empty")
    );
    f.insert("manifest.json".into(), b"{nope".to_vec());
    assert!(
        from_files(f, Vec::new())
            .unwrap_err()
            .problem
            .contains("JSON")
    );
}

#[test]
fn missing_resources_are_warnings_not_refusals() {
    let m = manifest(json!({"cover": "cover.png", "contributes": {
        "inputActions": [{"id": "greet", "label": {"$t": "greet"}, "icon": "icons/g.png"}],
        "htmlFragments": [{"id": "bar", "src": "ui/bar.html", "mount": "/messages/end?role=character&position=last"}]
    }}));
    let mut f = files(m, &[]);
    f.insert("locales/zh.json".into(), b"[1]".to_vec());
    let p = from_files(f, Vec::new()).unwrap();
    let codes: Vec<&str> = p.warnings.iter().map(|w| w.code.as_str()).collect();
    assert!(codes.contains(&"plugin.image-missing"), "{codes:?}");
    assert!(codes.contains(&"plugin.fragment-missing"), "{codes:?}");
    assert!(codes.contains(&"plugin.catalog-invalid"), "{codes:?}");
    let mount = &p.manifest.contributes.html_fragments[0].mount;
    assert_eq!(
        (
            mount.point.as_str(),
            mount.role.as_deref(),
            mount.position.as_deref()
        ),
        ("/messages/end", Some("character"), Some("last"))
    );
}

#[test]
fn entry_wins_over_the_legacy_alias() {
    let p = from_files(
        files(manifest(json!({"scripts": {"actions": "old.js"}})), &[]),
        Vec::new(),
    )
    .unwrap();
    assert_eq!(p.manifest.entry.as_deref(), Some("entry.js"));
    let p = from_files(
        files(
            manifest(json!({"entry": null, "scripts": {"actions": "entry.js"}})),
            &[],
        ),
        Vec::new(),
    )
    .unwrap();
    assert_eq!(p.manifest.entry.as_deref(), Some("entry.js"));
}

#[test]
fn settings_defaults_values_and_localised_text_defaults() {
    let m = manifest(json!({"contributes": {"settings": {"schema": [
        {"type": "switch", "key": "on", "label": "On", "default": true},
        {"type": "select", "key": "mode", "label": "Mode", "options": ["Fast", {"value": "slow", "label": {"$t": "slow"}}], "default": "slow"},
        {"type": "slider", "key": "n", "label": "N", "min": 0, "max": 10, "step": 1, "default": 3},
        {"type": "text", "key": "greeting", "label": "G", "default": {"$t": "greet"}},
        {"type": "textarea", "key": "notes", "label": "Notes"},
        {"type": "info", "text": "Read me", "icon": "warning"},
        {"type": "divider"}, {"type": "break"}
    ]}}}));
    let p = from_files(files(m, &[]), Vec::new()).unwrap();
    let schema = &p.manifest.contributes.settings;
    let saved = serde_json::Map::from_iter([("n".to_owned(), json!(7))]);
    let eff = settings::effective(schema, &saved, &p.catalogs, "zh-CN");
    assert_eq!(
        Value::Object(eff),
        json!({"on": true, "mode": "slow", "n": 7, "greeting": "问候", "notes": null})
    );
    let mode = &schema.elements[1];
    assert!(mode.check_value(&json!("Fast")).is_ok());
    assert!(mode.check_value(&json!("fast")).is_err());
    assert!(schema.elements[2].check_value(&json!(11)).is_err());
    assert!(schema.elements[0].check_value(&json!("true")).is_err());
}

#[test]
fn nested_root_is_installed_from_its_folder() {
    let inner = files(manifest(json!({})), &[]);
    let nested: BTreeMap<String, Vec<u8>> = inner
        .into_iter()
        .map(|(k, v)| (format!("hello/{k}"), v))
        .collect();
    let p = read_package(&write_package(&nested).unwrap()).unwrap();
    assert!(p.files.contains_key("entry.js"));
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
            let _ = read_package(&bytes);
        }

        #[test]
        fn arbitrary_manifests_never_panic(json in "\\PC{0,400}") {
            let f = BTreeMap::from([("manifest.json".to_owned(), json.into_bytes())]);
            let _ = from_files(f, Vec::new());
        }
    }
}
