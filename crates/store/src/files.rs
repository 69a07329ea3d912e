//! Chat-scope and global-scope file storage on disk, beside the database.
//!
//! Layout: `<data>/files/global/<name>` and `<data>/files/chat/<chatId>/<name>`. Scripts and
//! tools address a file by its *virtual path* `files/chat/<name>` or `files/global/<name>`,
//! which deliberately does not contain the chat id: a cloned chat gets a copy of the files and
//! the paths stored in its variables and messages keep working unchanged (seed, `tavo.file`).
//!
//! Names are single file names: no `/`, `\`, `:` and no `..` anywhere, so a name can never
//! leave its scope's directory. Writes go to a temporary file in `<data>/files/.tmp` first and
//! are renamed into place, so a reader never sees half a file.

use std::io::Write;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use crate::error::{Result, StoreError};

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

/// The file storage under one data directory.
#[derive(Debug, Clone)]
pub struct FileStore {
    root: PathBuf,
}

impl FileStore {
    /// File storage rooted at `root` (normally `<data>/files`). Directories are created lazily.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The storage's root directory (`<data>/files`).
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    fn scope_dir(&self, scope: FileScope) -> PathBuf {
        match scope {
            FileScope::Chat(id) => self.root.join("chat").join(id.to_string()),
            FileScope::Global => self.root.join("global"),
        }
    }

    /// Where a file is (or would be) on disk. Validates the name first.
    pub fn physical_path(&self, scope: FileScope, name: &str) -> Result<PathBuf> {
        validate_name(name)?;
        Ok(self.scope_dir(scope).join(name))
    }

    /// Writes `bytes` under `name`, replacing a file of the same name; returns the virtual path.
    pub fn save(&self, scope: FileScope, name: &str, bytes: &[u8]) -> Result<String> {
        let target = self.physical_path(scope, name)?;
        let dir = self.scope_dir(scope);
        std::fs::create_dir_all(&dir).map_err(|e| StoreError::io("cannot create", &dir, e))?;
        let tmp_dir = self.root.join(".tmp");
        std::fs::create_dir_all(&tmp_dir)
            .map_err(|e| StoreError::io("cannot create", &tmp_dir, e))?;
        let mut tmp = tempfile_in(&tmp_dir)?;
        tmp.1
            .write_all(bytes)
            .map_err(|e| StoreError::io("cannot write", &tmp.0, e))?;
        tmp.1
            .sync_all()
            .map_err(|e| StoreError::io("cannot write", &tmp.0, e))?;
        drop(tmp.1);
        std::fs::rename(&tmp.0, &target).map_err(|e| {
            let _ = std::fs::remove_file(&tmp.0);
            StoreError::io("cannot write", &target, e)
        })?;
        Ok(virtual_path(scope, name))
    }

    /// The file's bytes, or `None` when it does not exist.
    pub fn load(&self, scope: FileScope, name: &str) -> Result<Option<Vec<u8>>> {
        let path = self.physical_path(scope, name)?;
        match std::fs::read(&path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(StoreError::io("cannot read", &path, e)),
        }
    }

    /// Deletes the file; returns whether it existed (TavoJS ignores `false`, the model tool
    /// reports `resource_not_found`).
    pub fn delete(&self, scope: FileScope, name: &str) -> Result<bool> {
        let path = self.physical_path(scope, name)?;
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(StoreError::io("cannot delete", &path, e)),
        }
    }

    /// Whether a regular file of that name exists.
    pub fn exists(&self, scope: FileScope, name: &str) -> Result<bool> {
        let path = self.physical_path(scope, name)?;
        Ok(path.is_file())
    }

    /// Metadata of one file, or `None`.
    pub fn stat(&self, scope: FileScope, name: &str) -> Result<Option<FileEntry>> {
        let path = self.physical_path(scope, name)?;
        match std::fs::metadata(&path) {
            Ok(meta) if meta.is_file() => Ok(Some(entry(scope, name, &meta))),
            Ok(_) => Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(StoreError::io("cannot read", &path, e)),
        }
    }

    /// One page of the scope's files, sorted by name (case-sensitive, byte order). `cursor` is
    /// the `next_cursor` of the previous page of the same scope; the listing reads the live
    /// directory, so files added or removed between pages are seen or skipped accordingly.
    pub fn list(&self, scope: FileScope, limit: usize, cursor: Option<&str>) -> Result<FilePage> {
        if limit == 0 {
            return Err(StoreError::InvalidArgument(
                "options.limit must be at least 1".into(),
            ));
        }
        let after = cursor.map(|c| decode_cursor(scope, c)).transpose()?;
        let dir = self.scope_dir(scope);
        let reader = match std::fs::read_dir(&dir) {
            Ok(reader) => reader,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(FilePage {
                    files: Vec::new(),
                    next_cursor: None,
                });
            }
            Err(e) => return Err(StoreError::io("cannot list", &dir, e)),
        };
        let mut names = Vec::new();
        for item in reader {
            let item = item.map_err(|e| StoreError::io("cannot list", &dir, e))?;
            let Ok(name) = item.file_name().into_string() else {
                continue;
            };
            if validate_name(&name).is_err() || after.as_deref().is_some_and(|a| name.as_str() <= a)
            {
                continue;
            }
            names.push(name);
        }
        names.sort_unstable();
        let mut files = Vec::with_capacity(limit.min(names.len()));
        let mut more = false;
        for name in names {
            if files.len() == limit {
                more = true;
                break;
            }
            // A file deleted between read_dir and stat is simply skipped.
            if let Some(found) = self.stat(scope, &name)? {
                files.push(found);
            }
        }
        let next_cursor = match (more, files.last()) {
            (true, Some(last)) => Some(encode_cursor(scope, &last.name)),
            _ => None,
        };
        Ok(FilePage { files, next_cursor })
    }

    /// Removes every file of a chat (called after the chat itself is deleted).
    pub fn delete_chat_files(&self, chat_id: i64) -> Result<()> {
        let dir = self.scope_dir(FileScope::Chat(chat_id));
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(StoreError::io("cannot delete", &dir, e)),
        }
    }

    /// Copies every file of chat `from` into chat `to` (cloning a chat), replacing same names.
    pub fn copy_chat_files(&self, from: i64, to: i64) -> Result<usize> {
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

fn entry(scope: FileScope, name: &str, meta: &std::fs::Metadata) -> FileEntry {
    let modified_at = meta
        .modified()
        .map(|t| {
            chrono::DateTime::<chrono::Utc>::from(t)
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
        })
        .unwrap_or_default();
    FileEntry {
        path: virtual_path(scope, name),
        name: name.to_owned(),
        size: meta.len(),
        mime_type: mime_guess::from_path(name)
            .first_or_octet_stream()
            .essence_str()
            .to_owned(),
        modified_at,
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

/// A uniquely named temporary file, created exclusively so two writers never share one.
fn tempfile_in(dir: &Path) -> Result<(PathBuf, std::fs::File)> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let path = dir.join(format!("{}-{n}-{nanos}.part", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(file) => return Ok((path, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(StoreError::io("cannot create", &path, e)),
        }
    }
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
