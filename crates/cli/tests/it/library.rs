//! The library commands run as a user runs them: the built `tavo` binary against a temporary
//! data directory, over the real files of the shared corpus.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::{stderr, tavo};
use serde_json::Value;

fn corpus() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/corpus"
    ))
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The main id of a plain `tavo import` of one file, whose stdout line is `KIND ID`.
fn created_id(out: &Output, kind: &str) -> String {
    let line = stdout(out);
    let (k, id) = line
        .trim()
        .split_once(' ')
        .unwrap_or_else(|| panic!("`KIND ID` on stdout: {line:?}"));
    assert_eq!(k, kind, "{line:?}");
    id.to_owned()
}

fn json_lines(out: &Output) -> Vec<Value> {
    stdout(out)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// Drops the keys that legitimately differ between two imports of the same data.
fn strip(v: &Value) -> Value {
    const VOLATILE: &[&str] = &[
        "id",
        "revision",
        "creationDate",
        "modificationDate",
        "create_date",
        "chatId",
    ];
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !VOLATILE.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), strip(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip).collect()),
        other => other.clone(),
    }
}

#[test]
fn the_whole_corpus_imports_with_one_json_line_per_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = tavo(
        dir.path(),
        &["import", "--json", corpus().to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = json_lines(&out);
    assert_eq!(
        lines.len(),
        48,
        "one line per data file (SOURCES.md lists 48)"
    );
    for line in &lines {
        for key in ["path", "kind", "name", "warnings"] {
            assert!(line.get(key).is_some(), "{key} missing in {line}");
        }
        let main_id = match line["kind"].as_str().unwrap() {
            "character" => "characterId",
            "chat" => "chatId",
            "preset" => "presetId",
            "lorebook" => "lorebookId",
            "regex" => "regexId",
            "persona" => "personaId",
            other => panic!("unexpected kind {other}"),
        };
        assert!(line[main_id].as_i64().is_some_and(|id| id > 0), "{line}");
        // The main id comes first among the ids, so scripts taking the first id get it.
        let first_id = line
            .as_object()
            .unwrap()
            .keys()
            .find(|k| k.ends_with("Id"))
            .unwrap();
        assert_eq!(first_id, main_id);
    }
    let seraphina = lines.iter().find(|l| l["name"] == "Seraphina").unwrap();
    assert!(
        seraphina["lorebookId"].as_i64().is_some(),
        "the card's character_book became a lorebook"
    );
    assert!(
        stderr(&out).contains("imported 48 of 48"),
        "{}",
        stderr(&out)
    );

    let listed: Value = serde_json::from_str(&stdout(&tavo(
        dir.path(),
        &["list", "characters", "--json"],
    )))
    .unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 15);
}

#[test]
fn without_json_stdout_names_each_files_kind_and_id() {
    let dir = tempfile::tempdir().unwrap();
    let regex = corpus().join("regex");
    let out = tavo(dir.path(), &["import", regex.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<String> = stdout(&out).lines().map(str::to_owned).collect();
    let want: Vec<String> = (1..=10).map(|i| format!("regex {i}")).collect();
    assert_eq!(lines, want);
    // A card's line names the character; its lorebook and regex group go to stderr.
    let card = corpus().join("cards/stbackload-koenig-krueger.png");
    let out = tavo(dir.path(), &["import", card.to_str().unwrap()]);
    assert_eq!(stdout(&out), "character 1\n");
    assert!(
        stderr(&out).contains("also created lorebook 1"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn export_then_import_then_export_is_a_fixpoint_for_every_kind() {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        (
            "cards/st-default_Seraphina.png",
            "character",
            "ccv3-json",
            "characterId",
        ),
        (
            "cards/stagedog-card-writer-assistant.png",
            "character",
            "ccv2-json",
            "characterId",
        ),
        ("lorebooks", "lorebook", "st", "lorebookId"),
        ("presets/st-openai-Default.json", "preset", "st", "presetId"),
        (
            "presets/stbackload-kemini-5.03.json",
            "preset",
            "tavo",
            "presetId",
        ),
        ("regex/weyland-regex-trim.json", "regex", "st", "regexId"),
        (
            "chats/mgb-checkpoint-hidden-msgs.jsonl",
            "chat",
            "jsonl",
            "chatId",
        ),
        ("chats/mgb-claude-2024.jsonl", "chat", "tavo", "chatId"),
    ];
    for (file, kind, format, key) in files {
        let out = tavo(
            dir.path(),
            &["import", "--json", corpus().join(file).to_str().unwrap()],
        );
        assert!(out.status.success(), "{file}: {}", stderr(&out));
        for line in json_lines(&out).iter().filter(|l| l["kind"] == kind) {
            let id = line[key].to_string();
            let a = dir.path().join(format!("a-{kind}-{id}.out"));
            let b = dir.path().join(format!("b-{kind}-{id}.out"));
            let exported = tavo(
                dir.path(),
                &[
                    "export",
                    kind,
                    &id,
                    "--format",
                    format,
                    "-o",
                    a.to_str().unwrap(),
                ],
            );
            assert!(exported.status.success(), "{file}: {}", stderr(&exported));
            let again = tavo(dir.path(), &["import", "--json", a.to_str().unwrap()]);
            assert!(again.status.success(), "{file}: {}", stderr(&again));
            let new_id = json_lines(&again)[0][key].to_string();
            assert_ne!(new_id, id);
            assert!(
                tavo(
                    dir.path(),
                    &[
                        "export",
                        kind,
                        &new_id,
                        "--format",
                        format,
                        "-o",
                        b.to_str().unwrap()
                    ]
                )
                .status
                .success()
            );
            let parse = |p: &Path| -> Vec<Value> {
                let text = std::fs::read_to_string(p).unwrap();
                if format == "jsonl" {
                    text.lines()
                        .filter(|l| !l.trim().is_empty())
                        .map(|l| strip(&serde_json::from_str(l).unwrap()))
                        .collect()
                } else {
                    vec![strip(&serde_json::from_str(&text).unwrap())]
                }
            };
            assert_eq!(
                parse(&a),
                parse(&b),
                "{file} as {format} changed on a round trip"
            );
        }
    }
}

#[test]
fn a_bad_file_is_refused_by_name_and_changes_nothing_while_the_folder_import_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input");
    std::fs::create_dir_all(&input).unwrap();
    std::fs::write(
        input.join("truncated.png"),
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00",
    )
    .unwrap();
    std::fs::write(
        input.join("wrongtype.json"),
        r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"X","first_mes":"hi","character_book":{"entries":[{"keys":5}]}}}"#,
    )
    .unwrap();
    std::fs::copy(
        corpus().join("regex/weyland-regex-trim.json"),
        input.join("ok.json"),
    )
    .unwrap();
    std::fs::write(input.join("notes.md"), "not data").unwrap();
    let data = dir.path().join("data");

    let out = tavo(&data, &["import", "--json", input.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "any failed file makes the exit code 1"
    );
    let err = stderr(&out);
    assert!(err.contains("truncated.png"), "{err}");
    assert!(
        err.contains("wrongtype.json") && err.contains("keys"),
        "the error names the file and the JSON path: {err}"
    );
    let lines = json_lines(&out);
    assert_eq!(
        lines.len(),
        1,
        "the good file was imported, the .md skipped"
    );
    assert_eq!(lines[0]["kind"], "regex");
    let characters: Value =
        serde_json::from_str(&stdout(&tavo(&data, &["list", "character", "--json"]))).unwrap();
    assert_eq!(
        characters,
        Value::Array(vec![]),
        "the refused card left nothing behind (no lorebook either)"
    );
    let lorebooks: Value =
        serde_json::from_str(&stdout(&tavo(&data, &["list", "lorebook", "--json"]))).unwrap();
    assert_eq!(lorebooks, Value::Array(vec![]));
}

#[test]
fn a_chat_is_linked_to_a_character_of_the_same_name_and_nothing_else_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let card = corpus().join("cards/st-default_Seraphina.png");
    let character_id = created_id(
        &tavo(dir.path(), &["import", card.to_str().unwrap()]),
        "character",
    );
    let chat = dir.path().join("chat.jsonl");
    std::fs::write(
        &chat,
        concat!(
            r#"{"user_name":"You","character_name":"Seraphina","create_date":"2024-6-14@08h18m03s","chat_metadata":{}}"#,
            "\n",
            r#"{"name":"Seraphina","is_user":false,"is_system":false,"send_date":"June 14, 2024 8:43am","mes":"Hello"}"#,
            "\n",
            r#"{"name":"You","is_user":true,"is_system":false,"send_date":"June 14, 2024 8:44am","mes":"Hi"}"#,
            "\n",
            r#"{"name":"Stranger","is_user":false,"send_date":"June 14, 2024 8:45am","mes":"Who?"}"#
        ),
    )
    .unwrap();
    let out = tavo(dir.path(), &["import", "--json", chat.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let line = &json_lines(&out)[0];
    let warnings = line["warnings"].to_string();
    assert!(
        warnings.contains("Stranger"),
        "an unmatched speaker is a warning: {warnings}"
    );
    let shown: Value = serde_json::from_str(&stdout(&tavo(
        dir.path(),
        &["show", "chat", &line["chatId"].to_string(), "--json"],
    )))
    .unwrap();
    assert_eq!(shown["characters"][0]["id"].to_string(), character_id);
    assert_eq!(shown["characters"].as_array().unwrap().len(), 1);
    let characters: Value =
        serde_json::from_str(&stdout(&tavo(dir.path(), &["list", "character", "--json"]))).unwrap();
    assert_eq!(
        characters.as_array().unwrap().len(),
        1,
        "no character was created for the stranger"
    );
}

#[test]
fn show_list_and_delete() {
    let dir = tempfile::tempdir().unwrap();
    let file = corpus().join("cards/serioustavern-selene-v2.json");
    let id = created_id(
        &tavo(dir.path(), &["import", file.to_str().unwrap()]),
        "character",
    );
    let shown: Value = serde_json::from_str(&stdout(&tavo(
        dir.path(),
        &["show", "character", &id, "--json"],
    )))
    .unwrap();
    assert_eq!(shown["id"].to_string(), id);
    assert_eq!(shown["name"], "Selene the Scraper");
    assert!(
        shown.get("firstMes").is_some(),
        "TavoJS field names: {shown}"
    );
    let human = stdout(&tavo(dir.path(), &["list", "character"]));
    assert!(
        human.starts_with(&format!("{id}\tSelene the Scraper")),
        "{human}"
    );

    let deleted = tavo(dir.path(), &["delete", "characters", &id]);
    assert!(deleted.status.success(), "{}", stderr(&deleted));
    assert!(stdout(&deleted).is_empty());
    assert_eq!(
        tavo(dir.path(), &["show", "character", &id]).status.code(),
        Some(1)
    );
    assert_eq!(
        tavo(dir.path(), &["delete", "character", &id])
            .status
            .code(),
        Some(1)
    );
    assert_eq!(
        tavo(
            dir.path(),
            &["export", "character", &id, "--format", "png", "-o", "-"]
        )
        .status
        .code(),
        Some(1)
    );
}

#[test]
fn usage_errors_exit_with_2() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        tavo(dir.path(), &["list", "widgets"]).status.code(),
        Some(2)
    );
    assert_eq!(tavo(dir.path(), &["import"]).status.code(), Some(2));
    let wrong_format = tavo(
        dir.path(),
        &["export", "regex", "1", "--format", "png", "-o", "x.png"],
    );
    assert_eq!(wrong_format.status.code(), Some(2));
    assert!(
        stderr(&wrong_format).contains("st"),
        "{}",
        stderr(&wrong_format)
    );
}

#[test]
fn data_dir_flag_wins_over_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let env_dir = dir.path().join("env");
    let flag_dir = dir.path().join("flag");
    let file = corpus().join("regex/weyland-regex-trim.json");
    let out = Command::new(env!("CARGO_BIN_EXE_tavo"))
        .args([
            "--data-dir",
            flag_dir.to_str().unwrap(),
            "import",
            file.to_str().unwrap(),
        ])
        .env("TAVO_DATA_DIR", &env_dir)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(flag_dir.join(tavo_store::DATABASE_FILE).exists());
    assert!(!env_dir.exists());
}

#[test]
fn a_png_card_exports_to_png_and_charx_and_comes_back() {
    let dir = tempfile::tempdir().unwrap();
    let card = corpus().join("cards/stbackload-koenig-krueger.png");
    let id = created_id(
        &tavo(dir.path(), &["import", card.to_str().unwrap()]),
        "character",
    );
    for format in ["png", "charx", "tavo"] {
        let out_file = dir.path().join(format!("out.{format}"));
        let exported = tavo(
            dir.path(),
            &[
                "export",
                "character",
                &id,
                "--format",
                format,
                "-o",
                out_file.to_str().unwrap(),
            ],
        );
        assert!(exported.status.success(), "{format}: {}", stderr(&exported));
        let again = tavo(
            dir.path(),
            &["import", "--json", out_file.to_str().unwrap()],
        );
        assert!(again.status.success(), "{format}: {}", stderr(&again));
        let line = &json_lines(&again)[0];
        assert_eq!(line["name"], "König -Krueger");
        assert!(
            line["lorebookId"].as_i64().is_some(),
            "{format}: the card's lorebook came back"
        );
    }
}
