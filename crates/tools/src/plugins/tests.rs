use std::collections::BTreeMap;

use serde_json::{Value, json};
use tavo_formats::plugin::write_package;
use tavo_store::Store;

use super::*;

fn package(version: &str, schema: Value) -> Vec<u8> {
    let manifest = json!({
        "id": "org.test.hello", "name": {"$t": "name"}, "version": version, "specVersion": 2,
        "entry": "entry.js", "author": "Ann", "cover": "cover.png",
        "localization": {"defaultLocale": "en", "resources": {"en": "locales/en.json", "zh-CN": "locales/zh.json"}},
        "contributes": {"inputActions": [{"id": "greet", "label": {"$t": "greet"}}], "settings": {"schema": schema}}
    });
    let files = BTreeMap::from([
        (
            "manifest.json".to_owned(),
            serde_json::to_vec(&manifest).unwrap(),
        ),
        ("entry.js".to_owned(), b"".to_vec()),
        ("cover.png".to_owned(), b"\x89PNG".to_vec()),
        (
            "locales/en.json".to_owned(),
            br#"{"name": "Hello", "greet": "Greet", "hi": "Hi"}"#.to_vec(),
        ),
        (
            "locales/zh.json".to_owned(),
            "{\"name\": \"你好\", \"greet\": \"问候\", \"hi\": \"嗨\"}"
                .as_bytes()
                .to_vec(),
        ),
    ]);
    write_package(&files).unwrap()
}

fn schema() -> Value {
    json!([{"type": "slider", "key": "n", "label": "N", "min": 0, "max": 10, "default": 3},
           {"type": "text", "key": "greeting", "label": {"$t": "greet"}, "default": {"$t": "hi"}}])
}

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    (dir, store)
}

#[test]
fn dry_run_stores_nothing_and_install_lists_with_locale() {
    let (_d, store) = store();
    let dry = install(&store, &package("1.0.0", schema()), "hello.tpg", true, "en").unwrap();
    assert!(!dry.installed && dry.plugin.has_cover);
    assert!(list(&store, "", "en").unwrap().is_empty());
    let done = install(
        &store,
        &package("1.0.0", schema()),
        "hello.tpg",
        false,
        "zh-CN",
    )
    .unwrap();
    assert_eq!(done.plugin.name, "你好");
    assert_eq!(list(&store, "", "en").unwrap()[0].name, "Hello");
    assert_eq!(list(&store, "ANN", "en").unwrap().len(), 1);
    assert!(list(&store, "nobody", "en").unwrap().is_empty());
    let detail = get(&store, "ORG.test.hello", "zh-CN").unwrap();
    assert_eq!(detail.contributes["inputActions"][0]["label"], "问候");
    assert_eq!(detail.i18n.as_ref().unwrap()["locale"], "zh-CN");
    assert_eq!(detail.config.config["greeting"], "嗨");
}

#[test]
fn a_refused_package_names_file_member_and_field_and_changes_nothing() {
    let (_d, store) = store();
    let err = install(&store, &package("01.0", schema()), "bad.tpg", false, "en").unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArguments);
    assert!(
        err.message.starts_with("bad.tpg: manifest.json: version: "),
        "{}",
        err.message
    );
    assert_eq!(err.details.unwrap()["field"], "version");
    assert!(list(&store, "", "en").unwrap().is_empty());
}

#[test]
fn settings_are_checked_saved_reset_and_survive_a_reinstall() {
    let (_d, store) = store();
    install(&store, &package("1.0.0", schema()), "p.tpg", false, "en").unwrap();
    assert!(
        set_config(&store, "org.test.hello", "n", json!(11), "en")
            .unwrap_err()
            .message
            .contains("outside")
    );
    assert!(
        set_config(&store, "org.test.hello", "nope", json!(1), "en")
            .unwrap_err()
            .message
            .contains("no setting")
    );
    let v = set_config(&store, "org.test.hello", "greeting", json!("Yo"), "zh-CN").unwrap();
    assert_eq!(v.config["greeting"], "Yo");
    set_enabled(&store, "org.test.hello", false, "en").unwrap();
    let again = install(&store, &package("1.1.0", schema()), "p.tpg", false, "en").unwrap();
    assert_eq!(again.replaces.unwrap().version, "1.0.0");
    assert!(!again.plugin.enabled);
    assert_eq!(
        config(&store, "org.test.hello", "en").unwrap().config["greeting"],
        "Yo"
    );
    let v = reset_config(&store, "org.test.hello", None, "zh-CN").unwrap();
    assert_eq!(
        (v.config["greeting"].clone(), v.config["n"].clone()),
        (json!("嗨"), json!(3.0))
    );
    assert!(runtime(&store, "en").unwrap().is_empty());
    set_enabled(&store, "org.test.hello", true, "en").unwrap();
    assert_eq!(runtime(&store, "en").unwrap().len(), 1);
    uninstall(&store, "org.test.hello").unwrap();
    assert_eq!(
        uninstall(&store, "org.test.hello").unwrap_err().code,
        ErrorCode::ResourceNotFound
    );
}

#[test]
fn posix_locales_become_tags() {
    let env = |v: &'static str| move |k: &str| (k == "LANG").then(|| v.to_owned());
    assert_eq!(locale_from_env(env("zh_CN.UTF-8")), "zh-CN");
    assert_eq!(locale_from_env(env("C")), "en");
    assert_eq!(locale_from_env(|_| None), "en");
}

#[test]
fn a_backup_round_trips_plugins_with_their_settings_and_state() {
    use crate::backup::{BackupOptions, RestoreOptions, create_backup, restore_backup};
    let (dir, store) = store();
    install(&store, &package("1.0.0", schema()), "p.tpg", false, "en").unwrap();
    set_config(&store, "org.test.hello", "n", json!(8), "en").unwrap();
    set_enabled(&store, "org.test.hello", false, "en").unwrap();
    let file = dir.path().join("lib.tavobackup");
    create_backup(&store, &file, &BackupOptions::default()).unwrap();
    let (_d2, target) = self::store();
    restore_backup(&target, &file, &RestoreOptions::default()).unwrap();
    let p = get(&target, "org.test.hello", "en").unwrap();
    assert_eq!(
        (p.summary.version.as_str(), p.summary.enabled),
        ("1.0.0", false)
    );
    assert_eq!(p.config.overrides.get("n"), Some(&json!(8)));
    assert_eq!(file_of(&target), file_of(&store));
}

fn file_of(store: &Store) -> Vec<u8> {
    file(store, "org.test.hello", "entry.js").unwrap()
}
