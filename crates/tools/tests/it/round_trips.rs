//! get → modify → update on every asset kind, with the real files people import (issue 31,
//! item 3): what `tavo_<kind>_get` returned is accepted by `tavo_<kind>_update` as it is, the
//! change lands, and nothing else of the stored object moves — SillyTavern's extra keys
//! included.

use serde_json::{Value, json};
use tavo_tools::ReplyBudget;

use crate::support::Lib;

/// A call as the app makes it: whole results (a bubble's `get` is not cut to a model's budget).
async fn call(lib: &Lib, tool: &str, args: Value) -> Value {
    lib.call_with(None, tool, args, &mut ReplyBudget::whole())
        .await
        .envelope
}

async fn ok(lib: &Lib, tool: &str, args: Value) -> Value {
    let env = call(lib, tool, args.clone()).await;
    assert_eq!(env["ok"], json!(true), "{tool} {args} -> {env}");
    env["result"].clone()
}

/// The corpus files of one folder (`../shared/corpus/<dir>`), JSON only, by name.
fn corpus(dir: &str) -> Vec<(String, Value)> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/corpus/");
    let mut out = Vec::new();
    let entries = std::fs::read_dir(format!("{root}{dir}"))
        .expect("the shared corpus (../shared/corpus) must be present for this test");
    for entry in entries {
        let path = entry.expect("a corpus entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let bytes = std::fs::read(&path).expect("a corpus file");
        // A file in a legacy encoding is the importer's business (tested there), not this one's.
        let Ok(value) = serde_json::from_slice::<Value>(&bytes) else {
            continue;
        };
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        out.push((name.unwrap_or_default(), value));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Imports `file` as `kind`, then reads it, renames it and writes the read object back;
/// answers what went wrong, if anything.
async fn round_trip(
    lib: &Lib,
    kind: &str,
    field: &str,
    id_key: &str,
    file: &Value,
) -> Option<String> {
    let imported = call(lib, &format!("tavo_{kind}_import"), json!({ field: file })).await;
    if imported["ok"] != json!(true) {
        return Some(format!("import failed: {}", imported["error"]));
    }
    let id = imported["result"][id_key].clone();
    let got = ok(lib, &format!("tavo_{kind}_get"), json!({"id": id})).await;
    let mut edited = got.clone();
    let name = format!("{} (edited)", got["name"].as_str().unwrap_or(""));
    edited["name"] = json!(name);
    let updated = call(lib, &format!("tavo_{kind}_update"), json!({ kind: edited })).await;
    if updated["ok"] != json!(true) {
        return Some(format!(
            "update of what get returned failed: {}",
            updated["error"]
        ));
    }
    let after = ok(lib, &format!("tavo_{kind}_get"), json!({"id": id})).await;
    if after["name"] != json!(name) {
        return Some(format!("the new name did not land: {}", after["name"]));
    }
    let (Some(before), Some(now)) = (got.as_object(), after.as_object()) else {
        return Some("get did not answer an object".into());
    };
    for (k, v) in before {
        if matches!(
            k.as_str(),
            "name" | "revision" | "updatedAt" | "modifiedAt" | "modificationDate"
        ) {
            continue;
        }
        if now.get(k) != Some(v) {
            return Some(format!(
                "{k} changed: {} -> {}",
                short(v),
                now.get(k).map_or("(gone)".into(), short)
            ));
        }
    }
    None
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 160 {
        format!("{}…", &s[..s.floor_char_boundary(160)])
    } else {
        s
    }
}

#[tokio::test]
async fn what_get_returns_update_takes_for_every_corpus_asset() {
    let lib = Lib::new();
    let mut failures = Vec::new();
    let kinds = [
        ("presets", "preset", "preset", "presetId"),
        ("lorebooks", "lorebook", "lorebook", "lorebookId"),
        ("regex", "regex", "regex", "regexId"),
        ("cards", "character", "card", "characterId"),
    ];
    let mut tried = 0;
    for (dir, kind, field, id_key) in kinds {
        for (name, file) in corpus(dir) {
            tried += 1;
            if let Some(why) = round_trip(&lib, kind, field, id_key, &file).await {
                failures.push(format!("{dir}/{name}: {why}"));
            }
        }
    }
    assert!(
        tried >= 20,
        "the corpus holds the assets this test reads ({tried})"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test]
async fn a_created_asset_round_trips_too() {
    let lib = Lib::new();
    for (kind, obj) in [
        ("persona", json!({"name": "P", "description": "a persona"})),
        ("preset", json!({"name": "P"})),
        (
            "lorebook",
            json!({"name": "L", "entries": [{"keywords": ["k"], "content": "c"}]}),
        ),
        ("regex", json!({"name": "R"})),
        ("character", json!({"name": "C", "firstMes": "Hi"})),
    ] {
        let made = ok(&lib, &format!("tavo_{kind}_create"), json!({ kind: obj })).await;
        let got = ok(&lib, &format!("tavo_{kind}_get"), json!({"id": made["id"]})).await;
        let env = call(&lib, &format!("tavo_{kind}_update"), json!({ kind: got })).await;
        assert_eq!(env["ok"], json!(true), "{kind}: {env}");
    }
}

#[tokio::test]
async fn lorebook_writes_take_the_ccv3_entry_names() {
    let lib = Lib::new();
    let entry = json!({"keys": ["a"], "secondary_keys": ["b"], "constant": true,
        "position": "before_char", "selective": false, "content": "x"});
    let made = ok(
        &lib,
        "tavo_lorebook_create",
        json!({"lorebook": {"name": "L", "entries": [entry]}}),
    )
    .await;
    let got = ok(&lib, "tavo_lorebook_get", json!({"id": made["id"]})).await;
    let e = &got["entries"][0];
    assert_eq!(e["keywords"], json!(["a"]));
    assert_eq!(e["secondaryKeywords"], json!(["b"]));
    assert_eq!(e["strategy"], json!("constant"));
    assert_eq!(e["injectionPosition"], json!("lorebookBefore"));
    assert_eq!(e["secondaryKeywordStrategy"], json!("none"));
    assert!(
        e.get("keys").is_none() && e.get("constant").is_none(),
        "{e}"
    );

    // A place CCv3 does not name, and two names of one field that disagree, are refused.
    for (bad, path) in [
        (
            json!({"position": "at_depth", "content": "x"}),
            "lorebook.entries[0].position",
        ),
        (
            json!({"constant": true, "strategy": "keyword", "content": "x"}),
            "lorebook.entries[0].constant",
        ),
    ] {
        let env = call(
            &lib,
            "tavo_lorebook_update",
            json!({"lorebook": {"id": made["id"], "entries": [bad]}}),
        )
        .await;
        assert_eq!(env["error"]["details"]["path"], json!(path), "{env}");
    }
    let still = ok(&lib, "tavo_lorebook_get", json!({"id": made["id"]})).await;
    assert_eq!(
        still["entries"], got["entries"],
        "a refused update changes nothing"
    );
}
