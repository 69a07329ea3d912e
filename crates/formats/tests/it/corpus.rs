//! Every file of the shared real-world corpus imports, and export → import → export is a
//! fixpoint after removing volatile keys (exactly what `/shared/checks/import-corpus` compares),
//! for the SillyTavern/CCv3 formats and for Tavo-native JSON, PNG and charx.

use serde_json::Value;
use std::path::{Path, PathBuf};
use tavo_formats::{
    ExportFormat, Imported, export_character, export_chat, export_lorebook, export_preset,
    export_regex, import_bytes,
};

const VOLATILE: &[&str] = &[
    "id",
    "revision",
    "creationDate",
    "modificationDate",
    "create_date",
    "creation_date",
    "modification_date",
    "identifier",
    "uid",
    "chatId",
    "characterId",
    "lorebookId",
    "regexId",
];

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus")
}

fn corpus_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![corpus_dir()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if !matches!(
                p.extension().and_then(|x| x.to_str()),
                Some("md" | "tsv" | "txt")
            ) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn strip(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !VOLATILE.contains(&k.as_str()))
                .map(|(k, x)| (k.clone(), strip(x)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip).collect()),
        other => other.clone(),
    }
}

fn canon(bytes: &[u8], jsonl: bool) -> Value {
    let text = std::str::from_utf8(bytes).expect("exports are UTF-8");
    if jsonl {
        Value::Array(
            text.lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| strip(&serde_json::from_str(l).expect("jsonl line")))
                .collect(),
        )
    } else {
        strip(&serde_json::from_str(text).expect("export is JSON"))
    }
}

/// Exports the imported value in `f`, for each object it holds (a card yields up to three).
fn export_all(imp: &Imported, f: ExportFormat) -> Vec<(&'static str, Vec<u8>)> {
    let mut out = Vec::new();
    match imp {
        Imported::Character {
            character,
            avatar,
            lorebook,
            regex,
            ..
        } => {
            let cf = match f {
                ExportFormat::St | ExportFormat::Jsonl | ExportFormat::Ccv3 => {
                    ExportFormat::Ccv3Json
                }
                other => other,
            };
            out.push((
                "character",
                export_character(
                    character,
                    lorebook.as_ref(),
                    regex.as_ref(),
                    avatar.as_deref(),
                    cf,
                )
                .expect("export character"),
            ));
            if let Some(b) = lorebook {
                out.push((
                    "lorebook",
                    export_lorebook(b, lorebook_format(f)).expect("export lorebook"),
                ));
            }
            if let Some(r) = regex {
                out.push((
                    "regex",
                    export_regex(r, st_or_tavo(f)).expect("export regex"),
                ));
            }
        }
        Imported::Lorebook(b) => out.push((
            "lorebook",
            export_lorebook(b, lorebook_format(f)).expect("export lorebook"),
        )),
        Imported::Preset { preset, regex } => {
            out.push((
                "preset",
                export_preset(preset, regex.as_ref(), st_or_tavo(f)).expect("export preset"),
            ));
            if let Some(r) = regex {
                out.push((
                    "regex",
                    export_regex(r, st_or_tavo(f)).expect("export regex"),
                ));
            }
        }
        Imported::Regex(r) => out.push((
            "regex",
            export_regex(r, st_or_tavo(f)).expect("export regex"),
        )),
        Imported::Persona(_) | Imported::Personas(_) | Imported::Group(_) => {}
        Imported::Chat(c) => {
            let cf = if f == ExportFormat::Tavo {
                ExportFormat::Tavo
            } else {
                ExportFormat::Jsonl
            };
            out.push((
                "chat",
                export_chat(&c.chat, &c.messages, cf).expect("export chat"),
            ));
        }
    }
    out
}

fn lorebook_format(f: ExportFormat) -> ExportFormat {
    match f {
        ExportFormat::Tavo => ExportFormat::Tavo,
        ExportFormat::Ccv3 => ExportFormat::Ccv3,
        _ => ExportFormat::St,
    }
}

fn st_or_tavo(f: ExportFormat) -> ExportFormat {
    if f == ExportFormat::Tavo {
        ExportFormat::Tavo
    } else {
        ExportFormat::St
    }
}

fn fixpoint(name: &str, first: &[u8], kind: &str, f: ExportFormat) -> Result<(), String> {
    let file = format!(
        "rt-{kind}.{}",
        if kind == "chat" && f != ExportFormat::Tavo {
            "jsonl"
        } else {
            "out"
        }
    );
    let again = import_bytes(first, &file, None)
        .map_err(|e| format!("{name}: re-import of exported {kind} ({f}) failed: {e}"))?;
    let second = export_all(&again.imported, f);
    let (_, b) = second
        .iter()
        .find(|(k, _)| *k == kind)
        .ok_or_else(|| format!("{name}: re-import of {kind} yielded no {kind}"))?;
    let binary = matches!(f, ExportFormat::Png | ExportFormat::Charx) && kind == "character";
    if binary {
        if first != b.as_slice() {
            return Err(format!(
                "{name}: {kind} {f} export→import→export changed the bytes"
            ));
        }
        return Ok(());
    }
    let jsonl = kind == "chat" && f != ExportFormat::Tavo;
    if canon(first, jsonl) != canon(b, jsonl) {
        return Err(format!(
            "{name}: {kind} export→import→export ({f}) changed the data"
        ));
    }
    Ok(())
}

fn run_round_trips(formats: &[ExportFormat]) -> (usize, Vec<String>) {
    let files = corpus_files();
    assert!(
        files.len() >= 40,
        "shared corpus not found at {}",
        corpus_dir().display()
    );
    let mut checked = 0;
    let mut problems = Vec::new();
    for path in &files {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_owned();
        let bytes = std::fs::read(path).expect("read corpus file");
        let outcome = match import_bytes(&bytes, &name, None) {
            Ok(o) => o,
            Err(e) => {
                problems.push(format!("{name}: import failed: {e}"));
                continue;
            }
        };
        for &f in formats {
            for (kind, first) in export_all(&outcome.imported, f) {
                checked += 1;
                if let Err(p) = fixpoint(&name, &first, kind, f) {
                    problems.push(p);
                }
            }
        }
    }
    (checked, problems)
}

#[test]
fn every_corpus_file_round_trips_in_its_own_format() {
    let (checked, problems) = run_round_trips(&[ExportFormat::St]);
    assert!(
        problems.is_empty(),
        "{} of {checked} round trips failed:\n{}",
        problems.len(),
        problems.join("\n")
    );
    assert!(checked >= 48, "only {checked} round trips");
}

#[test]
fn every_corpus_file_round_trips_as_tavo_native() {
    let (checked, problems) = run_round_trips(&[ExportFormat::Tavo]);
    assert!(
        problems.is_empty(),
        "{} of {checked} round trips failed:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn corpus_cards_round_trip_as_png_charx_and_ccv3_lorebooks() {
    let (checked, problems) =
        run_round_trips(&[ExportFormat::Png, ExportFormat::Charx, ExportFormat::Ccv3]);
    assert!(
        problems.is_empty(),
        "{} of {checked} round trips failed:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn the_cp1252_preset_is_recovered_with_warnings() {
    let path = corpus_dir().join("presets/atelier-v5-cp1252.json");
    let bytes = std::fs::read(path).expect("corpus preset");
    let out = import_bytes(&bytes, "atelier-v5-cp1252.json", None).expect("recovered");
    let codes: Vec<&str> = out.warnings.iter().map(|w| w.code.as_str()).collect();
    assert!(codes.contains(&"encoding.cp1252"), "{codes:?}");
    assert!(codes.contains(&"json.control-chars"), "{codes:?}");
    assert!(matches!(out.imported, Imported::Preset { .. }));
}

#[test]
fn card_import_yields_lorebook_and_regex_like_tavo_character_import() {
    let bytes = std::fs::read(corpus_dir().join("cards/lide-ai-v3.json")).expect("card");
    let out = import_bytes(&bytes, "lide-ai-v3.json", None).expect("import");
    let Imported::Character {
        character,
        lorebook,
        regex,
        ..
    } = out.imported
    else {
        panic!("not a character")
    };
    assert_eq!(character.name, "爱");
    assert_eq!(lorebook.map(|b| b.entries.len()), Some(27));
    assert_eq!(regex.map(|r| r.entries.len()), Some(5));
    assert!(character.extensions.contains_key("depth_prompt"));
    assert!(!character.extensions.contains_key("regex_scripts"));
}

#[test]
fn png_cards_prefer_ccv3_and_keep_the_image() {
    let bytes = std::fs::read(corpus_dir().join("cards/stbackload-fangzejun-v2chara-crlf.png"))
        .expect("card");
    let out = import_bytes(&bytes, "x.png", None).expect("import");
    let Imported::Character {
        character,
        avatar,
        lorebook,
        ..
    } = out.imported
    else {
        panic!("not a character")
    };
    assert_eq!(character.name, "方则均");
    assert_eq!(lorebook.map(|b| b.entries.len()), Some(15));
    let avatar = avatar.expect("avatar");
    assert!(avatar.len() < bytes.len());
    // Re-exported PNG keeps every image chunk byte for byte.
    let png =
        export_character(&character, None, None, Some(&avatar), ExportFormat::Png).expect("png");
    assert_eq!(
        tavo_formats::png::strip_card_chunks(&png).expect("strip"),
        avatar
    );
}

#[test]
fn chats_keep_reasoning_swipes_and_hidden_messages() {
    let bytes = std::fs::read(corpus_dir().join("chats/stbackload-kitten-reasoning-swipes.jsonl"))
        .expect("chat");
    let out = import_bytes(&bytes, "kitten.jsonl", None).expect("import");
    let Imported::Chat(c) = out.imported else {
        panic!("not a chat")
    };
    assert!(c.messages.iter().any(|m| m.reasoning.is_some()));
    assert!(c.messages.iter().any(|m| !m.swipes.is_empty()));
    let bytes = std::fs::read(corpus_dir().join("chats/mgb-group-villain-pub-noheader.jsonl"))
        .expect("chat");
    let out = import_bytes(&bytes, "g.jsonl", None).expect("import");
    let Imported::Chat(c) = out.imported else {
        panic!("not a chat")
    };
    assert!(c.character_names.len() >= 2, "{:?}", c.character_names);
    assert!(out.warnings.iter().any(|w| w.code == "chat.no-header"));
}
