//! Chat-scope and global-scope file storage: on disk beside a SQLite database ([`disk`]), in
//! the schema of a PostgreSQL library ([`db`]).
//!
//! Disk layout: `<data>/files/global/<name>` and `<data>/files/chat/<chatId>/<name>`. Scripts and
//! tools address a file by its *virtual path* `files/chat/<name>` or `files/global/<name>`,
//! which deliberately does not contain the chat id: a cloned chat gets a copy of the files and
//! the paths stored in its variables and messages keep working unchanged (seed, `tavo.file`).
//!
//! Names are single file names: no `/`, `\`, `:` and no `..` anywhere, so a name can never
//! leave its scope's directory. A reader never sees half a file: on disk a write is renamed into
//! place, in the database it is one transaction.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use crate::error::{Result, StoreError};
use crate::postgres::PgLibrary;
use crate::store::{Conn, Tx};

pub(crate) mod db;
mod disk;
pub(crate) use disk::walk as walk_tree;
mod tree;
mod tts;

pub use db::BlobStats;
pub use tree::TreeFile;
pub(crate) use tree::store_tree;

/// Longest accepted file name, in bytes (the common file-system limit).
pub const MAX_NAME_BYTES: usize = 255;

/// Which storage a file lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileScope {
    /// Belongs to one chat; deleted with it, copied when it is cloned.
    Chat(i64),
    /// Shared by every chat; deleted only on request.
    Global,
}

impl FileScope {
    /// The scope's name as the seed spells it: `chat` or `global`.
    pub fn as_str(&self) -> &'static str {
        match self {
            FileScope::Chat(_) => "chat",
            FileScope::Global => "global",
        }
    }

    fn cursor_tag(&self) -> String {
        match self {
            FileScope::Chat(id) => format!("chat:{id}"),
            FileScope::Global => "global".to_owned(),
        }
    }
}

/// One stored file, as `tavo_file_list` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileEntry {
    /// The virtual path (`files/chat/cat.png`), usable as an `<img src>`.
    pub path: String,
    /// The file name alone, without the scope's directory.
    pub name: String,
    /// Size in bytes.
    pub size: u64,
    /// Guessed from the extension; `application/octet-stream` when unknown.
    pub mime_type: String,
    /// Last modification, RFC 3339 UTC.
    pub modified_at: String,
}

/// One page of a listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FilePage {
    /// The files of this page, sorted by name (byte order).
    pub files: Vec<FileEntry>,
    /// Pass back to continue after the last file of this page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// Checks a file name against the seed's rules; the error says which rule it broke.
pub fn validate_name(name: &str) -> Result<()> {
    let reason = if name.is_empty() {
        Some("the name is empty")
    } else if name.contains('/') || name.contains('\\') {
        Some("a file name must not contain a path separator (/ or \\)")
    } else if name.contains(':') {
        Some("a file name must not contain ':'")
    } else if name.contains("..") {
        Some("a file name must not contain '..'")
    } else if name == "." {
        Some("'.' is not a file name")
    } else if name.chars().any(char::is_control) {
        Some("a file name must not contain control characters")
    } else if name.len() > MAX_NAME_BYTES {
        Some("a file name must be at most 255 bytes long")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(StoreError::InvalidFileName {
            name: name.to_owned(),
            reason,
        }),
        None => Ok(()),
    }
}

/// The virtual path of a file: what `tavo.file.url(name, scope)` returns. It does not check
/// that the file exists.
pub fn virtual_path(scope: FileScope, name: &str) -> String {
    format!("files/{}/{name}", scope.as_str())
}

/// The largest file the store keeps, in bytes (40 MiB): the largest cap its callers set (a file
/// saved by `tavo_file_save` holds at most 40 MiB, a card's asset 32 MiB). Checked before
/// anything is written, on both databases, so a caller that forgot its own cap still cannot
/// make one write hold a PostgreSQL library's lock for long, or grow one of its rows without
/// bound.
pub const MAX_FILE_BYTES: u64 = 40 * 1024 * 1024;

/// Refuses `size` bytes over [`MAX_FILE_BYTES`], naming the file.
pub(crate) fn check_size(what: &str, size: usize) -> Result<()> {
    let size = u64::try_from(size).unwrap_or(u64::MAX);
    if size > MAX_FILE_BYTES {
        return Err(StoreError::FileTooLarge {
            what: what.to_owned(),
            size,
            limit: MAX_FILE_BYTES,
        });
    }
    Ok(())
}

/// A [`FileEntry`] for a file of `scope`, its type guessed from the name.
pub(crate) fn file_entry(
    scope: FileScope,
    name: &str,
    size: u64,
    modified_at: String,
) -> FileEntry {
    FileEntry {
        path: virtual_path(scope, name),
        name: name.to_owned(),
        size,
        mime_type: mime_guess::from_path(name)
            .first_or_octet_stream()
            .essence_str()
            .to_owned(),
        modified_at,
    }
}

/// Where a library's files are kept.
#[derive(Clone)]
enum Backing {
    /// Under the data directory (a SQLite library): `root` is `<data>/files`, `tts` is
    /// `<data>/cache/tts`.
    Disk { root: PathBuf, tts: PathBuf },
    /// In the library's own PostgreSQL schema ([`db`]), so a replica needs no shared disk.
    Database(PgLibrary),
}

/// The file storage of one library: chat and global files, a card's own files
/// ([`crate::card_files`]) and the TTS cache ([`FileStore::tts_find`]).
///
/// The public methods are the same whichever [`Backing`] holds the bytes: a SQLite library
/// keeps them on disk in the layout it always had; a PostgreSQL library keeps them in its
/// schema, content-addressed and in chunks ([`db`]).
#[derive(Clone)]
pub struct FileStore {
    backing: Backing,
}

impl std::fmt::Debug for FileStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.backing {
            Backing::Disk { root, .. } => f.debug_struct("FileStore").field("root", root).finish(),
            Backing::Database(l) => f
                .debug_struct("FileStore")
                .field("schema", &l.schema())
                .finish(),
        }
    }
}

impl FileStore {
    /// File storage on disk rooted at `root` (normally `<data>/files`; the TTS cache goes to
    /// `cache/tts` beside it). Directories are created lazily.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        let tts = root
            .parent()
            .unwrap_or(Path::new(""))
            .join("cache")
            .join("tts");
        Self {
            backing: Backing::Disk { root, tts },
        }
    }

    /// File storage in a PostgreSQL library's schema.
    pub(crate) fn in_database(library: PgLibrary) -> Self {
        Self {
            backing: Backing::Database(library),
        }
    }

    /// Whether the files are in the database (a PostgreSQL library) rather than on disk: a
    /// backup then reads them through [`FileStore::tree_files`], not from the data directory.
    pub fn kept_in_database(&self) -> bool {
        matches!(self.backing, Backing::Database(_))
    }

    /// What the database holds for the files — distinct contents, chunks, names, bytes — to
    /// see deduplication at work; `None` on disk.
    pub fn blob_stats(&self) -> Result<Option<BlobStats>> {
        match &self.backing {
            Backing::Disk { .. } => Ok(None),
            Backing::Database(l) => Self::in_db(l, false, db::stats).map(Some),
        }
    }

    /// The disk root, `None` when the files are in the database.
    pub(crate) fn disk_root(&self) -> Option<&Path> {
        match &self.backing {
            Backing::Disk { root, .. } => Some(root),
            Backing::Database(_) => None,
        }
    }

    /// Runs `f` in one transaction of the library's database (`write`: holding its lock).
    fn in_db<T>(
        library: &PgLibrary,
        write: bool,
        f: impl FnOnce(&Tx<'_>) -> Result<T>,
    ) -> Result<T> {
        library.transaction(write, |session| {
            f(&Tx {
                conn: Conn::Postgres(session),
            })
        })
    }

    /// Runs `f` in a read transaction of the library's database; an error on disk.
    pub(crate) fn in_database_read<T>(&self, f: impl FnOnce(&Tx<'_>) -> Result<T>) -> Result<T> {
        self.on_database(false, f)
    }

    /// Runs `f` in a write transaction of the library's database; an error on disk.
    pub(crate) fn in_database_write<T>(&self, f: impl FnOnce(&Tx<'_>) -> Result<T>) -> Result<T> {
        self.on_database(true, f)
    }

    fn on_database<T>(&self, write: bool, f: impl FnOnce(&Tx<'_>) -> Result<T>) -> Result<T> {
        match &self.backing {
            Backing::Database(l) => Self::in_db(l, write, f),
            Backing::Disk { .. } => Err(StoreError::Database(
                "this library's files are on disk, not in a database".into(),
            )),
        }
    }

    /// Where a file is (or would be) on disk. Validates the name first. A PostgreSQL library's
    /// files have no path: asking is an error.
    pub fn physical_path(&self, scope: FileScope, name: &str) -> Result<PathBuf> {
        validate_name(name)?;
        match &self.backing {
            Backing::Disk { root, .. } => Ok(disk::scope_dir(root, scope).join(name)),
            Backing::Database(_) => Err(StoreError::InvalidArgument(
                "the files of a PostgreSQL library are in the database, not on disk".into(),
            )),
        }
    }

    /// Writes `bytes` under `name`, replacing a file of the same name; returns the virtual path.
    /// A file over [`MAX_FILE_BYTES`] is refused before anything is written.
    pub fn save(&self, scope: FileScope, name: &str, bytes: &[u8]) -> Result<String> {
        validate_name(name)?;
        check_size(name, bytes.len())?;
        match &self.backing {
            Backing::Disk { root, .. } => {
                disk::write_atomically(root, &disk::scope_dir(root, scope).join(name), bytes)?
            }
            Backing::Database(l) => Self::in_db(l, true, |tx| {
                let (area, owner) = db::scope_key(scope);
                db::put(tx, area, owner, name, bytes)
            })?,
        }
        Ok(virtual_path(scope, name))
    }

    /// The file's bytes, or `None` when it does not exist.
    pub fn load(&self, scope: FileScope, name: &str) -> Result<Option<Vec<u8>>> {
        validate_name(name)?;
        match &self.backing {
            Backing::Disk { root, .. } => disk::read(&disk::scope_dir(root, scope).join(name)),
            Backing::Database(l) => Self::in_db(l, false, |tx| {
                let (area, owner) = db::scope_key(scope);
                db::load(tx, area, owner, name)
            }),
        }
    }

    /// Deletes the file; returns whether it existed (TavoJS ignores `false`, the model tool
    /// reports `resource_not_found`).
    pub fn delete(&self, scope: FileScope, name: &str) -> Result<bool> {
        validate_name(name)?;
        match &self.backing {
            Backing::Disk { root, .. } => disk::remove(&disk::scope_dir(root, scope).join(name)),
            Backing::Database(l) => Self::in_db(l, true, |tx| {
                let (area, owner) = db::scope_key(scope);
                db::delete(tx, area, owner, name)
            }),
        }
    }

    /// Whether a file of that name exists.
    pub fn exists(&self, scope: FileScope, name: &str) -> Result<bool> {
        Ok(self.stat(scope, name)?.is_some())
    }

    /// Metadata of one file, or `None`.
    pub fn stat(&self, scope: FileScope, name: &str) -> Result<Option<FileEntry>> {
        validate_name(name)?;
        match &self.backing {
            Backing::Disk { root, .. } => {
                disk::stat(&disk::scope_dir(root, scope).join(name), scope, name)
            }
            Backing::Database(l) => Self::in_db(l, false, |tx| {
                let (area, owner) = db::scope_key(scope);
                Ok(db::stat(tx, area, owner, name)?
                    .map(|n| file_entry(scope, name, n.size, n.modified_at)))
            }),
        }
    }

    /// One page of the scope's files, sorted by name (case-sensitive, byte order). `cursor` is
    /// the `next_cursor` of the previous page of the same scope; the listing reads the live
    /// storage, so files added or removed between pages are seen or skipped accordingly.
    pub fn list(&self, scope: FileScope, limit: usize, cursor: Option<&str>) -> Result<FilePage> {
        if limit == 0 {
            return Err(StoreError::InvalidArgument(
                "options.limit must be at least 1".into(),
            ));
        }
        let after = cursor.map(|c| decode_cursor(scope, c)).transpose()?;
        let mut files = match &self.backing {
            Backing::Disk { root, .. } => {
                let dir = disk::scope_dir(root, scope);
                let mut found = Vec::with_capacity(limit.min(64) + 1);
                for name in disk::names_after(&dir, after.as_deref())? {
                    if found.len() > limit {
                        break;
                    }
                    // A file deleted between read_dir and stat is simply skipped.
                    if let Some(entry) = disk::stat(&dir.join(&name), scope, &name)? {
                        found.push(entry);
                    }
                }
                found
            }
            Backing::Database(l) => Self::in_db(l, false, |tx| {
                let (area, owner) = db::scope_key(scope);
                let rows = db::list(tx, area, owner, after.as_deref(), limit + 1)?;
                Ok(rows
                    .into_iter()
                    .map(|n| file_entry(scope, &n.name, n.size, n.modified_at))
                    .collect())
            })?,
        };
        let more = files.len() > limit;
        files.truncate(limit);
        let next_cursor = match (more, files.last()) {
            (true, Some(last)) => Some(encode_cursor(scope, &last.name)),
            _ => None,
        };
        Ok(FilePage { files, next_cursor })
    }

    /// Removes every file of a chat (called after the chat itself is deleted).
    pub fn delete_chat_files(&self, chat_id: i64) -> Result<()> {
        match &self.backing {
            Backing::Disk { root, .. } => {
                disk::remove_dir(&disk::scope_dir(root, FileScope::Chat(chat_id)))
            }
            Backing::Database(l) => {
                Self::in_db(l, true, |tx| db::delete_owner(tx, db::Area::Chat, chat_id))
            }
        }
    }

    /// Copies every file of chat `from` into chat `to` (cloning a chat), replacing same names.
    /// In the database a copy is a new name for the same bytes: nothing is duplicated.
    pub fn copy_chat_files(&self, from: i64, to: i64) -> Result<usize> {
        if let Backing::Database(l) = &self.backing {
            return Self::in_db(l, true, |tx| db::copy_owner(tx, db::Area::Chat, from, to));
        }
        let mut copied = 0;
        let mut cursor = None;
        loop {
            let page = self.list(FileScope::Chat(from), 200, cursor.as_deref())?;
            for file in &page.files {
                if let Some(bytes) = self.load(FileScope::Chat(from), &file.name)? {
                    self.save(FileScope::Chat(to), &file.name, &bytes)?;
                    copied += 1;
                }
            }
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(copied),
            }
        }
    }
}

fn encode_cursor(scope: FileScope, last: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(format!("{}\n{last}", scope.cursor_tag()))
}

fn decode_cursor(scope: FileScope, cursor: &str) -> Result<String> {
    let invalid = || {
        StoreError::InvalidArgument(
            "options.cursor is not a cursor of this scope; pass the nextCursor of the previous page".into(),
        )
    };
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .map_err(|_| invalid())?;
    let text = String::from_utf8(bytes).map_err(|_| invalid())?;
    let (tag, last) = text.split_once('\n').ok_or_else(invalid)?;
    if tag != scope.cursor_tag() {
        return Err(invalid());
    }
    Ok(last.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_seed_rules() {
        for bad in [
            "", "a/b", "a\\b", "c:d", "..", "a..b", "../x", ".", "a\0b", "a\nb",
        ] {
            assert!(validate_name(bad).is_err(), "{bad:?} should be refused");
        }
        assert!(validate_name(&"x".repeat(256)).is_err());
        for good in [
            "cat.png",
            ".env",
            "a.b.c",
            "中文.md",
            "with space.txt",
            &"x".repeat(255),
        ] {
            assert!(validate_name(good).is_ok(), "{good:?} should be accepted");
        }
    }

    #[test]
    fn virtual_paths_do_not_carry_the_chat_id() {
        assert_eq!(
            virtual_path(FileScope::Chat(42), "bg.png"),
            "files/chat/bg.png"
        );
        assert_eq!(
            virtual_path(FileScope::Global, "logo.png"),
            "files/global/logo.png"
        );
    }

    #[test]
    fn a_cursor_only_continues_in_its_own_scope() {
        let c = encode_cursor(FileScope::Chat(1), "b.txt");
        assert_eq!(decode_cursor(FileScope::Chat(1), &c).unwrap(), "b.txt");
        assert!(decode_cursor(FileScope::Chat(2), &c).is_err());
        assert!(decode_cursor(FileScope::Global, &c).is_err());
        assert!(decode_cursor(FileScope::Global, "!!!").is_err());
    }

    proptest::proptest! {
        /// Whatever the name, an accepted one stays a direct child of its scope's directory.
        #[test]
        fn accepted_names_never_leave_the_scope(name in "\\PC{0,40}") {
            let store = FileStore::new("/data/files");
            if let Ok(path) = store.physical_path(FileScope::Chat(3), &name) {
                proptest::prop_assert_eq!(path.parent(), Some(Path::new("/data/files/chat/3")));
                proptest::prop_assert_eq!(path.file_name().and_then(|n| n.to_str()), Some(name.as_str()));
            }
        }

        #[test]
        fn cursors_round_trip(name in "\\PC{1,40}") {
            let cursor = encode_cursor(FileScope::Global, &name);
            proptest::prop_assert_eq!(decode_cursor(FileScope::Global, &cursor).ok(), Some(name));
        }
    }
}
