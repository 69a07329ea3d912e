//! The store's half of backup and restore (a snapshot of a live library, every row replaced in
//! one transaction) and the memory row's revision checks.

use tavo_model::{Character, Chat, ChatId, Message, Role};
use tavo_store::{DATABASE_FILE, Store, StoreError};

fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

fn with_chat(store: &Store, name: &str, messages: usize) -> ChatId {
    let chat = ok(store.chat_create(&Chat {
        name: name.into(),
        ..Chat::default()
    }));
    for i in 0..messages {
        ok(store.message_append(chat, &Message::new(Role::User, format!("{name} {i}"))));
    }
    chat
}

/// A snapshot of `source` replaces every row of `target` (either may be on either database).
fn a_snapshot_replaces_every_row_and_raises_revisions(source: &Store, target: &Store) {
    let a = ok(tempfile::tempdir());
    let chat = with_chat(source, "kept", 30);
    ok(source.memory_update(chat, Some(true), Some(&["likes tea".to_owned()])));
    ok(source.setting_set("ui.theme", &serde_json::json!({"dark": true})));
    ok(source.create(&Character {
        name: "Bytes".into(),
        ..Character::default()
    }));
    let snap = a.path().join("snap.db");
    ok(source.snapshot_into(&snap));
    assert!(source.snapshot_into(&snap).is_err(), "never overwrites");

    let gone = with_chat(target, "replaced", 3);
    let character = ok(target.create(&Character {
        name: "Old".into(),
        ..Character::default()
    }));
    // Raise the target's chat revisions so the restored ones must be raised above them.
    let mut c = ok(target.require::<Chat>(gone));
    for _ in 0..4 {
        c.revision = ok(target.update(&c, Some(c.revision)));
    }
    let replaced = ok(target.replace_from(&snap));
    assert!(
        replaced
            .tables
            .iter()
            .any(|(t, n)| t == "messages" && *n == 30)
    );
    assert_eq!(
        ok(target.chat_get(gone)).map(|c| c.name),
        Some("kept".into())
    );
    assert_eq!(
        ok(target.get::<Character>(character)).map(|c| c.name),
        Some("Bytes".into())
    );
    assert_eq!(ok(target.message_count(chat)), 30);
    assert_eq!(
        ok(target.messages_all(chat)),
        ok(source.messages_all(chat)),
        "every message as it was"
    );
    assert_eq!(
        ok(target.setting_get("ui.theme")),
        Some(serde_json::json!({"dark": true}))
    );
    let restored = ok(target.require::<Chat>(chat));
    assert!(restored.revision > 5, "revision {}", restored.revision);
    assert_eq!(ok(target.memory_peek(chat)).memories, vec!["likes tea"]);
    // Still one consistent library that takes new rows with fresh ids.
    let next = with_chat(target, "new", 1);
    assert_eq!(next.0, chat.0 + 1);
}

/// Runs the snapshot test from `source` to `target` databases (`true`: PostgreSQL), when the
/// run has a PostgreSQL server for the sides that need one.
fn snapshot_between(source: bool, target: bool) {
    let (Some(s), Some(t)) = (
        crate::support::library(source),
        crate::support::library(target),
    ) else {
        return;
    };
    a_snapshot_replaces_every_row_and_raises_revisions(&s.store, &t.store);
}

#[test]
fn a_snapshot_replaces_every_row_sqlite_to_sqlite() {
    snapshot_between(false, false);
}

#[test]
fn a_snapshot_replaces_every_row_postgres_to_sqlite() {
    snapshot_between(true, false);
}

#[test]
fn a_snapshot_replaces_every_row_sqlite_to_postgres() {
    snapshot_between(false, true);
}

#[test]
fn a_snapshot_replaces_every_row_postgres_to_postgres() {
    snapshot_between(true, true);
}

#[test]
fn a_newer_or_damaged_database_is_refused_untouched() {
    let (a, b) = (ok(tempfile::tempdir()), ok(tempfile::tempdir()));
    let source = ok(Store::open(a.path()));
    with_chat(&source, "x", 2);
    let target = ok(Store::open(b.path()));
    let mine = with_chat(&target, "mine", 2);

    let newer = a.path().join("newer.db");
    ok(source.snapshot_into(&newer));
    {
        let conn = ok(rusqlite::Connection::open(&newer));
        ok(conn.execute_batch(&format!(
            "PRAGMA user_version = {}",
            tavo_store::schema_version() + 1
        )));
    }
    let refused = target.replace_from(&newer);
    assert!(
        matches!(&refused, Err(StoreError::InvalidArgument(m)) if m.contains("schema version")),
        "{refused:?}"
    );

    let garbage = a.path().join("garbage.db");
    let mut bytes = ok(std::fs::read(a.path().join(DATABASE_FILE)));
    bytes.truncate(bytes.len().min(4096));
    for b in bytes.iter_mut().skip(100) {
        *b = 0xAB;
    }
    ok(std::fs::write(&garbage, &bytes));
    assert!(target.replace_from(&garbage).is_err());
    assert_eq!(
        ok(target.chat_get(mine)).map(|c| c.name),
        Some("mine".into())
    );
    assert_eq!(ok(target.message_count(mine)), 2);
}

#[test]
fn memory_writes_check_the_row_revision() {
    let dir = ok(tempfile::tempdir());
    let store = ok(Store::open(dir.path()));
    let chat = with_chat(&store, "m", 0);
    let row = ok(store.memory_row(chat));
    assert_eq!(row.revision, 0, "no row yet");
    let written = ok(store.memory_replace_if(chat, 0, &["a".to_owned()]));
    assert_eq!(written.memory.memories, vec!["a"]);
    // A user's edit moves the revision on: a writer holding the old one is refused.
    ok(store.memory_update(chat, None, Some(&["edited".to_owned()])));
    let stale = store.memory_replace_if(chat, written.revision, &["b".to_owned()]);
    assert!(
        matches!(stale, Err(StoreError::Conflict { .. })),
        "{stale:?}"
    );
    assert_eq!(ok(store.memory_peek(chat)).memories, vec!["edited"]);
    let now = ok(store.memory_row(chat));
    let merged =
        ok(store.memory_replace_if(chat, now.revision, &["edited".to_owned(), "b".to_owned()]));
    assert_eq!(merged.revision, now.revision + 1);
}
