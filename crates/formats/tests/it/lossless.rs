//! Nothing is lost relative to the original file: after import → export in the file's own
//! format, every key path and every value of the original is still in the export (the export
//! may add keys, e.g. defaults; a V2 card exported as `ccv3-json` is labelled V3).

use serde_json::Value;
use std::path::{Path, PathBuf};
use tavo_formats::{
    ExportFormat, Imported, export_character, export_chat, export_lorebook, export_preset,
    export_regex, import_bytes,
};

fn corpus(sub: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus")
        .join(sub);
    // A missing corpus must fail the run, not pass it with nothing checked.
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e}; the tests need ../shared beside the checkout",
                dir.display()
            )
        });
    v.sort();
    assert!(!v.is_empty(), "{} is empty", dir.display());
    v
}

/// Key paths of `orig` missing from `out`; arrays are compared element-wise, and objects
/// keyed by uid (world info `entries`) key by key.
fn missing(orig: &Value, out: &Value, path: &str, acc: &mut Vec<String>) {
    match (orig, out) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in a {
                match b.get(k) {
                    Some(w) => missing(v, w, &format!("{path}.{k}"), acc),
                    None => acc.push(format!("{path}.{k}")),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.iter().all(|v| v.get("identifier").is_some()) => {
            // Preset prompts: SillyTavern orders by `prompt_order`, so match by identifier.
            for v in a {
                let id = v.get("identifier");
                match b.iter().find(|w| w.get("identifier") == id) {
                    Some(w) => missing(
                        v,
                        w,
                        &format!("{path}[{}]", id.and_then(Value::as_str).unwrap_or("?")),
                        acc,
                    ),
                    None => acc.push(format!(
                        "{path}[{}]",
                        id.and_then(Value::as_str).unwrap_or("?")
                    )),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            if a.len() != b.len() {
                acc.push(format!("{path}: {} items became {}", a.len(), b.len()));
            }
            for (i, (v, w)) in a.iter().zip(b).enumerate() {
                missing(v, w, &format!("{path}[{i}]"), acc);
            }
        }
        (a, b) => {
            // Exporting a V2 card as `ccv3-json` upgrades its spec label; nothing else may change.
            let upgraded = path == ".spec" || path == ".spec_version";
            if a != b && !upgraded {
                acc.push(format!("{path}: {a} -> {b}"));
            }
        }
    }
}

fn export_same_family(imp: &Imported) -> Vec<u8> {
    match imp {
        Imported::Character {
            character,
            avatar,
            lorebook,
            regex,
            ..
        } => export_character(
            character,
            lorebook.as_ref(),
            regex.as_ref(),
            avatar.as_deref(),
            ExportFormat::Ccv3Json,
        )
        .expect("export"),
        Imported::Lorebook(b) => export_lorebook(b, ExportFormat::St).expect("export"),
        Imported::Preset { preset, regex } => {
            export_preset(preset, regex.as_ref(), ExportFormat::St).expect("export")
        }
        Imported::Regex(r) => export_regex(r, ExportFormat::St).expect("export"),
        Imported::Chat(c) => {
            export_chat(&c.chat, &c.messages, ExportFormat::Jsonl).expect("export")
        }
        Imported::Persona(_) | Imported::Personas(_) | Imported::Group(_) => Vec::new(),
    }
}

fn original_json(path: &Path) -> Option<Value> {
    use base64::Engine as _;
    let bytes = std::fs::read(path).ok()?;
    let mut w = Vec::new();
    if tavo_formats::png::is_png(&bytes) {
        // The chunk the importer prefers: `ccv3`, else `chara`.
        let chunks = tavo_formats::png::text_chunks(&bytes, &mut w).ok()?;
        let pick = chunks
            .iter()
            .find(|c| c.keyword == "ccv3")
            .or_else(|| chunks.iter().find(|c| c.keyword == "chara"))?;
        let json = base64::engine::general_purpose::STANDARD
            .decode(pick.text.trim())
            .ok()?;
        return tavo_formats::text::bytes_to_json(&json, &mut w).ok();
    }
    tavo_formats::text::bytes_to_json(&bytes, &mut w).ok()
}

#[test]
fn json_files_keep_every_key() {
    let mut problems = Vec::new();
    for sub in ["cards", "lorebooks", "presets", "regex"] {
        for path in corpus(sub) {
            if !matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("json" | "png")
            ) {
                continue;
            }
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default()
                .to_owned();
            let Some(orig) = original_json(&path) else {
                continue;
            };
            let bytes = std::fs::read(&path).expect("read");
            let imp = import_bytes(&bytes, &name, None).expect("import");
            let out: Value =
                serde_json::from_slice(&export_same_family(&imp.imported)).expect("json");
            let mut acc = Vec::new();
            missing(&orig, &out, "", &mut acc);
            if !acc.is_empty() {
                problems.push(format!(
                    "{name}: {} lost, e.g. {:?}",
                    acc.len(),
                    &acc[..acc.len().min(5)]
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn chats_keep_every_key_and_line() {
    let mut problems = Vec::new();
    for path in corpus("chats") {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_owned();
        let bytes = std::fs::read(&path).expect("read");
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let orig: Vec<Value> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let imp = import_bytes(&bytes, &name, None).expect("import");
        let out_bytes = export_same_family(&imp.imported);
        let out: Vec<Value> = String::from_utf8_lossy(&out_bytes)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let has_header = orig.first().is_some_and(|v| v.get("mes").is_none());
        let out_msgs = if has_header { &out[..] } else { &out[1..] };
        let mut acc = Vec::new();
        missing(
            &Value::Array(orig),
            &Value::Array(out_msgs.to_vec()),
            "",
            &mut acc,
        );
        if !acc.is_empty() {
            problems.push(format!(
                "{name}: {} lost, e.g. {:?}",
                acc.len(),
                &acc[..acc.len().min(5)]
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
