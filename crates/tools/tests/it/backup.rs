//! Backup and restore of a whole library: the round trip (rows, memory, files), API keys left
//! out by default and sealed with a passphrase on request, and every refusal — a newer
//! version, a wrong passphrase, a cut-short or damaged file, a library that is not empty —
//! leaving the target library exactly as it was.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tavo_model::{Character, CharacterSummary, Chat, ChatId, Message, Role};
use tavo_store::{FileScope, Store};
use tavo_tools::backup::{
    BackupError, BackupOptions, Manifest, RestoreOptions, create_backup, inspect_backup,
    restore_backup,
};

fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

const KEY: &str = "sk-live-very-secret-0123456789";

/// A library with a character, `chats` chats of `messages` messages, memory, files and a
/// connection with a key.
fn library(dir: &Path, chats: usize, messages: usize) -> Store {
    let store = ok(Store::open(dir));
    let character = ok(store.create(&Character {
        name: "Ann".into(),
        description: "A lighthouse keeper.".into(),
        ..Character::default()
    }));
    for c in 0..chats {
        let chat = ok(store.chat_create(&Chat {
            name: format!("chat {c}"),
            characters: vec![CharacterSummary {
                id: character,
                name: "Ann".into(),
                avatar: None,
            }],
            ..Chat::default()
        }));
        let batch: Vec<Message> = (0..messages)
            .map(|i| Message::new(Role::User, format!("message {i} of chat {c}")))
            .collect();
        ok(store.messages_append(chat, &batch));
        ok(store.memory_update(chat, Some(true), Some(&[format!("memory of chat {c}")])));
        ok(store
            .files()
            .save(FileScope::Chat(chat.0), "notes.txt", b"chat notes"));
    }
    ok(store.files().save(
        FileScope::Global,
        "bg.png",
        &[0x89, b'P', b'N', b'G', 1, 2, 3],
    ));
    ok(store.setting_set(
        "llm.connections",
        &json!({"default": "main", "connections": [{"name": "main", "source": "custom",
            "protocol": "openai-chat", "baseUrl": "http://127.0.0.1:9/v1", "model": "m",
            "apiKey": KEY}]}),
    ));
    ok(store.setting_set("mcp.token", &json!("tavo_token_0123456789abcdef")));
    store
}

fn chat_names(store: &Store) -> Vec<String> {
    let mut names: Vec<String> = ok(store.asset_summaries(tavo_store::AssetKind::Chat))
        .into_iter()
        .map(|s| s.name)
        .collect();
    names.sort();
    names
}

fn entry_bytes(path: &Path, name: &str) -> Vec<u8> {
    let mut zip = ok(zip::ZipArchive::new(ok(std::fs::File::open(path))));
    let mut entry = ok(zip.by_name(name));
    let mut out = Vec::new();
    ok(entry.read_to_end(&mut out));
    out
}

/// Rewrites a backup with its manifest changed by `f` (entries copied as they are).
fn with_manifest(src: &Path, dst: &Path, f: impl Fn(&mut Value)) {
    let mut zip = ok(zip::ZipArchive::new(ok(std::fs::File::open(src))));
    let mut out = zip::ZipWriter::new(ok(std::fs::File::create(dst)));
    for i in 0..zip.len() {
        let entry = ok(zip.by_index_raw(i));
        if ok(entry.name()) == "manifest.json" {
            continue;
        }
        drop(entry);
        let entry = ok(zip.by_index_raw(i));
        ok(out.raw_copy_file(entry));
    }
    let mut manifest: Value = ok(serde_json::from_slice(&entry_bytes(src, "manifest.json")));
    f(&mut manifest);
    ok(out.start_file("manifest.json", zip::write::SimpleFileOptions::default()));
    ok(out.write_all(&ok(serde_json::to_vec(&manifest))));
    ok(out.finish());
}

struct Pair {
    _dirs: (tempfile::TempDir, tempfile::TempDir, tempfile::TempDir),
    source: Store,
    target: PathBuf,
    backup: PathBuf,
    scratch: PathBuf,
}

fn pair(chats: usize, messages: usize, options: &BackupOptions) -> Pair {
    let (a, b, c) = (
        ok(tempfile::tempdir()),
        ok(tempfile::tempdir()),
        ok(tempfile::tempdir()),
    );
    let source = library(a.path(), chats, messages);
    let backup = c.path().join("lib.tavobackup");
    ok(create_backup(&source, &backup, options));
    Pair {
        target: b.path().join("restored"),
        scratch: c.path().to_path_buf(),
        _dirs: (a, b, c),
        source,
        backup,
    }
}

#[test]
fn a_backup_restores_into_an_empty_library_without_its_keys() {
    let p = pair(3, 25, &BackupOptions::default());
    // A reply that was running in this (live) process when a second backup is taken.
    ok(p.source.setting_set(
        "engine.reply.1",
        &json!({"id": "rpl_1", "chatId": 1, "status": "running", "pid": std::process::id(),
                "processStart": 12345, "startedAt": "x", "updatedAt": "x"}),
    ));
    ok(std::fs::remove_file(&p.backup));
    ok(create_backup(
        &p.source,
        &p.backup,
        &BackupOptions::default(),
    ));
    let manifest = ok(inspect_backup(&p.backup));
    assert_eq!(manifest.format, "tavo-backup");
    assert!(!manifest.with_keys);
    assert_eq!(manifest.files, 4);
    assert_eq!(manifest.counts["chats"], json!(3));
    assert_eq!(manifest.counts["messages"], json!(75));
    let db = entry_bytes(&p.backup, "tavo.db");
    let text = String::from_utf8_lossy(&db);
    assert!(!text.contains(KEY), "the key is not in the backup");
    assert!(!text.contains("tavo_token_0123456789abcdef"));
    assert!(text.contains("message 24 of chat 2"));

    let target = ok(Store::open(&p.target));
    let summary = ok(restore_backup(
        &target,
        &p.backup,
        &RestoreOptions::default(),
    ));
    assert_eq!(summary.files, 4);
    assert_eq!(summary.tables["messages"], json!(75));
    assert_eq!(chat_names(&target), chat_names(&p.source));
    let chat = ChatId(1);
    assert_eq!(ok(target.message_count(chat)), 25);
    assert_eq!(
        ok(target.memory_peek(chat)).memories,
        vec!["memory of chat 0"]
    );
    assert_eq!(
        ok(target.files().load(FileScope::Chat(1), "notes.txt")),
        Some(b"chat notes".to_vec())
    );
    assert!(ok(target.files().exists(FileScope::Global, "bg.png")));
    let connections = ok(target.setting_get("llm.connections")).unwrap_or_default();
    assert_eq!(connections["connections"][0]["name"], json!("main"));
    assert!(connections["connections"][0].get("apiKey").is_none());
    assert_eq!(ok(target.setting_get("mcp.token")), None);
    let record = ok(target.setting_get("engine.reply.1")).unwrap_or_default();
    assert_eq!(record["status"], json!("running"));
    assert_eq!(
        record["pid"],
        json!(0),
        "no live process claims a restored chat"
    );
    assert!(record.get("processStart").is_none());
    // New rows keep counting from the restored ids.
    let next = ok(target.chat_create(&Chat {
        name: "after".into(),
        ..Chat::default()
    }));
    assert_eq!(next.0, 4);
}

#[test]
fn keys_come_back_only_with_the_passphrase() {
    let options = BackupOptions {
        passphrase: Some("correct horse battery".into()),
    };
    let p = pair(1, 3, &options);
    let manifest: Manifest = ok(inspect_backup(&p.backup));
    assert!(manifest.with_keys && manifest.sealing.is_some());
    let sealed = entry_bytes(&p.backup, "keys.bin");
    assert!(!String::from_utf8_lossy(&sealed).contains(KEY));

    // The target has a chat of its own, which a refused restore must keep.
    let target = library(&p.target, 1, 1);
    ok(target.chat_create(&Chat {
        name: "mine".into(),
        ..Chat::default()
    }));
    let before = chat_names(&target);
    let wrong = restore_backup(
        &target,
        &p.backup,
        &RestoreOptions {
            yes: true,
            passphrase: Some("wrong".into()),
        },
    );
    assert!(
        matches!(wrong, Err(BackupError::Passphrase(_))),
        "{wrong:?}"
    );
    assert_eq!(chat_names(&target), before);

    let right = ok(restore_backup(
        &target,
        &p.backup,
        &RestoreOptions {
            yes: true,
            passphrase: Some("correct horse battery".into()),
        },
    ));
    assert_eq!(right.keys, 2);
    let connections = ok(target.setting_get("llm.connections")).unwrap_or_default();
    assert_eq!(connections["connections"][0]["apiKey"], json!(KEY));
    assert_eq!(
        ok(target.setting_get("mcp.token")),
        Some(json!("tavo_token_0123456789abcdef"))
    );
    assert_eq!(chat_names(&target), vec!["chat 0"]);

    // Without the passphrase it restores, without keys, and says so.
    let third = ok(restore_backup(
        &target,
        &p.backup,
        &RestoreOptions {
            yes: true,
            passphrase: None,
        },
    ));
    assert_eq!(third.keys, 0);
    assert!(third.warnings.iter().any(|w| w.contains("API keys")));
}

#[test]
fn a_library_that_is_not_empty_is_replaced_only_when_confirmed() {
    let p = pair(2, 2, &BackupOptions::default());
    let target = library(&p.target, 1, 1);
    let refused = restore_backup(&target, &p.backup, &RestoreOptions::default());
    assert!(matches!(refused, Err(BackupError::NeedsConfirmation(_))));
    assert_eq!(chat_names(&target), vec!["chat 0"]);
    let done = restore_backup(
        &target,
        &p.backup,
        &RestoreOptions {
            yes: true,
            passphrase: None,
        },
    );
    assert!(done.is_ok());
    assert_eq!(chat_names(&target), vec!["chat 0", "chat 1"]);
}

/// The target library before and after a refused restore.
fn assert_refused_unchanged(p: &Pair, file: &Path, check: impl Fn(&BackupError) -> bool) {
    let target = library(&p.target, 1, 5);
    ok(target.chat_create(&Chat {
        name: "only here".into(),
        ..Chat::default()
    }));
    let names = chat_names(&target);
    let files = ok(target.files().list(FileScope::Global, 100, None));
    let refused = restore_backup(
        &target,
        file,
        &RestoreOptions {
            yes: true,
            passphrase: None,
        },
    );
    match refused {
        Err(e) => assert!(check(&e), "unexpected error: {e}"),
        Ok(_) => panic!("{} was restored", file.display()),
    }
    assert_eq!(chat_names(&target), names);
    assert_eq!(ok(target.message_count(ChatId(1))), 5);
    assert_eq!(
        ok(target.files().list(FileScope::Global, 100, None))
            .files
            .len(),
        files.files.len()
    );
    assert!(ok(target.files().exists(FileScope::Chat(1), "notes.txt")));
    let leftovers = std::fs::read_dir(p.target.join("tmp"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(leftovers, 0, "no staging directory is left behind");
}

#[test]
fn a_backup_of_a_newer_tavo_is_refused() {
    let p = pair(1, 2, &BackupOptions::default());
    let newer_app = p.scratch.join("newer-app.tavobackup");
    with_manifest(&p.backup, &newer_app, |m| m["appVersion"] = json!("99.0.0"));
    assert_refused_unchanged(&p, &newer_app, |e| {
        matches!(e, BackupError::Newer { .. }) && e.to_string().contains("99.0.0")
    });
    let newer_schema = p.scratch.join("newer-schema.tavobackup");
    with_manifest(&p.backup, &newer_schema, |m| {
        m["schemaVersion"] = json!(tavo_store::schema_version() + 1)
    });
    assert_refused_unchanged(&p, &newer_schema, |e| {
        matches!(e, BackupError::Newer { .. })
    });
    let newer_format = p.scratch.join("newer-format.tavobackup");
    with_manifest(&p.backup, &newer_format, |m| m["formatVersion"] = json!(2));
    assert!(matches!(
        inspect_backup(&newer_format),
        Err(BackupError::Newer { .. })
    ));
}

#[test]
fn a_cut_short_or_damaged_backup_is_refused_and_changes_nothing() {
    let p = pair(2, 40, &BackupOptions::default());
    let bytes = ok(std::fs::read(&p.backup));
    let truncated = p.scratch.join("truncated.tavobackup");
    ok(std::fs::write(&truncated, &bytes[..bytes.len() / 2]));
    assert_refused_unchanged(&p, &truncated, |e| matches!(e, BackupError::Corrupt(_)));

    // One flipped byte inside the database entry: the zip CRC (or the manifest's SHA-256)
    // catches it.
    let damaged = p.scratch.join("damaged.tavobackup");
    let mut flipped = bytes.clone();
    let at = 200.min(flipped.len() - 1);
    flipped[at] ^= 0x55;
    ok(std::fs::write(&damaged, &flipped));
    assert_refused_unchanged(&p, &damaged, |e| matches!(e, BackupError::Corrupt(_)));

    let not_a_backup = p.scratch.join("notes.txt");
    ok(std::fs::write(&not_a_backup, b"hello"));
    assert_refused_unchanged(&p, &not_a_backup, |e| matches!(e, BackupError::Corrupt(_)));

    // A manifest whose checksum does not match the database.
    let wrong_sum = p.scratch.join("wrong-sum.tavobackup");
    with_manifest(&p.backup, &wrong_sum, |m| m["databaseSha256"] = json!("00"));
    assert_refused_unchanged(&p, &wrong_sum, |e| {
        matches!(e, BackupError::Corrupt(_)) && e.to_string().contains("checksum")
    });
}

#[test]
fn a_backup_is_consistent_while_another_thread_writes() {
    let dir = ok(tempfile::tempdir());
    let store = library(dir.path(), 1, 10);
    let writer = {
        let store = store.clone();
        std::thread::spawn(move || {
            for i in 0..300 {
                ok(store.message_append(ChatId(1), &Message::new(Role::User, format!("live {i}"))));
            }
        })
    };
    let out = dir.path().join("live.tavobackup");
    ok(create_backup(&store, &out, &BackupOptions::default()));
    ok(writer.join().map_err(|_| "writer panicked"));
    let target_dir = ok(tempfile::tempdir());
    let target = ok(Store::open(target_dir.path()));
    ok(restore_backup(&target, &out, &RestoreOptions::default()));
    let n = ok(target.message_count(ChatId(1)));
    assert!((10..=310).contains(&n), "{n}");
    // Dense positions: the snapshot holds a prefix of the writes, never a torn one.
    let all = ok(target.messages_all(ChatId(1)));
    assert_eq!(all.len() as u64, n);
}
