//! The schema, as an ordered list of embedded migrations applied at open.
//!
//! Rules for editing: never change a migration that has shipped; append a new one. Every asset
//! table has the same shape — the canonical model JSON in `data` plus the columns we query by —
//! so that fields this program does not understand survive a round trip untouched.

use rusqlite_migration::{M, Migrations};

const V1: &str = r#"
CREATE TABLE settings (
    key        TEXT PRIMARY KEY NOT NULL,
    value      TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;

CREATE TABLE characters (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT NOT NULL,
    revision   INTEGER NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    data       TEXT NOT NULL
) STRICT;
CREATE INDEX characters_name ON characters(name);

CREATE TABLE character_avatars (
    character_id INTEGER PRIMARY KEY NOT NULL REFERENCES characters(id) ON DELETE CASCADE,
    mime_type    TEXT NOT NULL,
    bytes        BLOB NOT NULL
) STRICT;

CREATE TABLE personas (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT NOT NULL,
    revision   INTEGER NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    data       TEXT NOT NULL
) STRICT;
CREATE INDEX personas_name ON personas(name);

CREATE TABLE persona_avatars (
    persona_id INTEGER PRIMARY KEY NOT NULL REFERENCES personas(id) ON DELETE CASCADE,
    mime_type  TEXT NOT NULL,
    bytes      BLOB NOT NULL
) STRICT;

CREATE TABLE presets (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT NOT NULL,
    revision   INTEGER NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    data       TEXT NOT NULL
) STRICT;
CREATE INDEX presets_name ON presets(name);

CREATE TABLE lorebooks (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT NOT NULL,
    revision   INTEGER NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    data       TEXT NOT NULL
) STRICT;
CREATE INDEX lorebooks_name ON lorebooks(name);

CREATE TABLE regex_groups (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT NOT NULL,
    revision   INTEGER NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    data       TEXT NOT NULL
) STRICT;
CREATE INDEX regex_groups_name ON regex_groups(name);

CREATE TABLE chats (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT NOT NULL,
    revision   INTEGER NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    data       TEXT NOT NULL
) STRICT;
CREATE INDEX chats_name ON chats(name);

-- Messages are rows: a chat is never rewritten whole. `position` is the 0-based floor and is
-- kept dense (0..count) so that an index range is a range scan of this index, never a scan of
-- the chat.
CREATE TABLE messages (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    chat_id      INTEGER NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
    position     INTEGER NOT NULL,
    role         TEXT NOT NULL,
    character_id INTEGER,
    hidden       INTEGER NOT NULL DEFAULT 0,
    revision     INTEGER NOT NULL DEFAULT 1,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    data         TEXT NOT NULL
) STRICT;
CREATE UNIQUE INDEX messages_chat_position ON messages(chat_id, position);

CREATE TABLE global_variables (
    name  TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
) STRICT;

CREATE TABLE chat_variables (
    chat_id INTEGER NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
    name    TEXT NOT NULL,
    value   TEXT NOT NULL,
    PRIMARY KEY (chat_id, name)
) STRICT, WITHOUT ROWID;

CREATE TABLE message_variables (
    message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    value      TEXT NOT NULL,
    PRIMARY KEY (message_id, name)
) STRICT, WITHOUT ROWID;

CREATE TABLE chat_state (
    chat_id INTEGER NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
    key     TEXT NOT NULL,
    value   TEXT NOT NULL,
    PRIMARY KEY (chat_id, key)
) STRICT, WITHOUT ROWID;

CREATE TABLE memories (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    chat_id    INTEGER NOT NULL UNIQUE REFERENCES chats(id) ON DELETE CASCADE,
    enabled    INTEGER NOT NULL DEFAULT 0,
    memories   TEXT NOT NULL DEFAULT '[]',
    revision   INTEGER NOT NULL DEFAULT 1,
    updated_at TEXT NOT NULL
) STRICT;

CREATE TABLE audit_log (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    at      TEXT NOT NULL,
    action  TEXT NOT NULL,
    target  TEXT,
    details TEXT NOT NULL
) STRICT;
"#;

/// Which lorebook and regex group came with a character card (its `character_book` and
/// `extensions.regex_scripts`), and which regex group came with a preset, so that an export
/// writes them back into the card or preset. The linked assets stay standalone: deleting one
/// only clears the link.
const V2: &str = r#"
CREATE TABLE character_links (
    character_id INTEGER PRIMARY KEY NOT NULL REFERENCES characters(id) ON DELETE CASCADE,
    lorebook_id  INTEGER REFERENCES lorebooks(id) ON DELETE SET NULL,
    regex_id     INTEGER REFERENCES regex_groups(id) ON DELETE SET NULL
) STRICT;

CREATE TABLE preset_links (
    preset_id INTEGER PRIMARY KEY NOT NULL REFERENCES presets(id) ON DELETE CASCADE,
    regex_id  INTEGER REFERENCES regex_groups(id) ON DELETE SET NULL
) STRICT;
"#;

/// The answers to writes sent with a `clientRequestId` (MCP write safety), so a retried write
/// happens once, even across a restart.
const V3: &str = r#"
CREATE TABLE client_requests (
    id        TEXT PRIMARY KEY NOT NULL,
    operation TEXT NOT NULL,
    digest    TEXT NOT NULL,
    result    TEXT NOT NULL,
    at        TEXT NOT NULL
) STRICT;
CREATE INDEX client_requests_at ON client_requests (at);
"#;

/// Installed plugins (Tavo `.tpg`): the manifest, state and saved settings, and the package
/// files, which go with their plugin.
const V4: &str = r#"
CREATE TABLE plugins (
    id           TEXT PRIMARY KEY NOT NULL,
    version      TEXT NOT NULL,
    spec_version INTEGER NOT NULL,
    manifest     TEXT NOT NULL,
    enabled      INTEGER NOT NULL DEFAULT 1,
    config       TEXT NOT NULL DEFAULT '{}',
    installed_at TEXT NOT NULL,
    updated_at   TEXT NOT NULL
) STRICT;
CREATE TABLE plugin_files (
    plugin_id TEXT NOT NULL REFERENCES plugins(id) ON DELETE CASCADE,
    path      TEXT NOT NULL,
    data      BLOB NOT NULL,
    PRIMARY KEY (plugin_id, path)
) STRICT, WITHOUT ROWID;
"#;

/// The tool rounds of replies, beside their messages (cleared with the audit log).
const V5: &str = r#"
CREATE TABLE tool_rounds (
    message_id INTEGER PRIMARY KEY NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    chat_id    INTEGER NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
    at         TEXT NOT NULL,
    rounds     TEXT NOT NULL
) STRICT;
CREATE INDEX tool_rounds_chat ON tool_rounds (chat_id);
"#;

/// The files of a PostgreSQL library (chat, global and card files, the TTS cache), in its own
/// schema so a replica needs no shared disk: see `files/db.rs`. PostgreSQL's only — the sixth
/// of `postgres_migrations`, and no SQLite migration — because a SQLite library keeps its files
/// on disk in the layout it always had: an existing SQLite library is not migrated, its
/// schema version and its backups' `tavo.db` do not change, and there is no empty table on
/// SQLite to keep in step. Written in PostgreSQL's own spelling (it is not translated).
///
/// - `blobs`: one row per distinct content, keyed by the lower-case hex SHA-256 of its bytes.
/// - `blob_chunks`: the bytes, 256 KiB a row, in `seq` order; deleted with their blob.
/// - `file_names`: what names a blob — `area` (`chat`, `global`, `card`, `tts`, `other`),
///   `owner` (the chat's or the character's id, else 0) and `name` (the file name, or a card
///   file's archive path). No foreign key to `chats` or `characters`: a restore truncates those
///   tables (`TRUNCATE … CASCADE` would empty this one behind the restore's back), and files
///   are deleted with their chat or character by the store, as on disk.
pub(crate) const PG_FILES: &str = r#"
CREATE TABLE blobs (
    hash TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    size BIGINT NOT NULL
);
CREATE TABLE blob_chunks (
    hash  TEXT COLLATE "C" NOT NULL REFERENCES blobs(hash) ON DELETE CASCADE,
    seq   BIGINT NOT NULL,
    bytes BYTEA NOT NULL,
    PRIMARY KEY (hash, seq)
);
CREATE TABLE file_names (
    area        TEXT COLLATE "C" NOT NULL,
    owner       BIGINT NOT NULL,
    name        TEXT COLLATE "C" NOT NULL,
    hash        TEXT COLLATE "C" NOT NULL REFERENCES blobs(hash),
    size        BIGINT NOT NULL,
    modified_at TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (area, owner, name)
);
CREATE INDEX file_names_hash ON file_names (hash);
"#;

/// The tables of [`PG_FILES`]: in a PostgreSQL library's schema, and never copied as rows (a
/// backup carries the files in its `files/` tree).
pub(crate) const PG_FILE_TABLES: &[&str] = &["blobs", "blob_chunks", "file_names"];

/// Every migration, oldest first. The database's `user_version` records how many ran.
pub(crate) fn migrations() -> Migrations<'static> {
    Migrations::new(vec![
        M::up(V1).comment("library, messages, variables, state, audit"),
        M::up(V2).comment("card and preset links to their lorebook and regex group"),
        M::up(V3).comment("answers to idempotent writes (clientRequestId)"),
        M::up(V4).comment("installed plugins and their package files"),
        M::up(V5).comment("tool rounds of replies, replayed in later prompts"),
    ])
}

/// The same migrations in PostgreSQL's spelling: one schema, two dialects. The translation is
/// mechanical and covers exactly what the SQLite text uses (tested below): integer keys become
/// identity columns, integers `BIGINT`, blobs `BYTEA`; `STRICT` and `WITHOUT ROWID` (SQLite's
/// storage options) go; text columns sort by bytes, as on SQLite. PostgreSQL-only migrations
/// ([`PG_FILES`]) keep their place in this list: a library's version counts this list, so a
/// later SQLite migration is appended after them, never inserted before.
pub(crate) fn postgres_migrations() -> Vec<String> {
    let mut all: Vec<String> = [V1, V2, V3, V4, V5]
        .iter()
        .map(|m| to_postgres(m))
        .collect();
    all.push(PG_FILES.to_owned());
    all
}

pub(crate) fn to_postgres(sqlite: &str) -> String {
    sqlite
        .replace(
            "INTEGER PRIMARY KEY AUTOINCREMENT",
            "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
        )
        .replace("INTEGER", "BIGINT")
        .replace("BLOB", "BYTEA")
        // SQLite compares and sorts text by its bytes; so does PostgreSQL's "C" collation,
        // whatever the database's own is.
        .replace(" TEXT", " TEXT COLLATE \"C\"")
        .replace(") STRICT, WITHOUT ROWID;", ");")
        .replace(") STRICT;", ");")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_postgres_spelling_keeps_no_sqlite_words() {
        for m in postgres_migrations() {
            for word in ["AUTOINCREMENT", "STRICT", "ROWID", "INTEGER", "BLOB"] {
                assert!(!m.contains(word), "{word} in {m}");
            }
        }
        assert!(
            postgres_migrations()[0]
                .contains("id         BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY")
        );
    }

    #[test]
    fn migrations_are_valid() {
        assert!(migrations().validate().is_ok());
    }
}
