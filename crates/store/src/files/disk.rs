//! The files of a SQLite library, on disk beside `tavo.db`: `<data>/files/global/<name>` and
//! `<data>/files/chat/<chatId>/<name>` — the layout every SQLite library has always had, kept
//! unchanged so no existing library needs migrating.
//!
//! Writes go to a temporary file in `<data>/files/.tmp` first and are renamed into place, so a
//! reader never sees half a file.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::{FileEntry, FileScope, validate_name};
use crate::error::{Result, StoreError};

/// The directory of a scope under the files root.
pub(super) fn scope_dir(root: &Path, scope: FileScope) -> PathBuf {
    match scope {
        FileScope::Chat(id) => root.join("chat").join(id.to_string()),
        FileScope::Global => root.join("global"),
    }
}

/// Writes `bytes` to `target` through a temporary file under `root/.tmp` and a rename.
pub(super) fn write_atomically(root: &Path, target: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(dir) = target.parent() {
        std::fs::create_dir_all(dir).map_err(|e| StoreError::io("cannot create", dir, e))?;
    }
    let tmp_dir = root.join(".tmp");
    std::fs::create_dir_all(&tmp_dir).map_err(|e| StoreError::io("cannot create", &tmp_dir, e))?;
    let (tmp, mut file) = tempfile_in(&tmp_dir)?;
    file.write_all(bytes)
        .map_err(|e| StoreError::io("cannot write", &tmp, e))?;
    file.sync_all()
        .map_err(|e| StoreError::io("cannot write", &tmp, e))?;
    drop(file);
    std::fs::rename(&tmp, target).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        StoreError::io("cannot write", target, e)
    })
}

/// The file's bytes, or `None` when it does not exist.
pub(super) fn read(path: &Path) -> Result<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(StoreError::io("cannot read", path, e)),
    }
}

/// Deletes one file; whether it existed.
pub(super) fn remove(path: &Path) -> Result<bool> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(StoreError::io("cannot delete", path, e)),
    }
}

/// Deletes a directory and everything below it; a missing one is not an error.
pub(super) fn remove_dir(dir: &Path) -> Result<()> {
    match std::fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(StoreError::io("cannot delete", dir, e)),
    }
}

/// Metadata of one file, or `None`.
pub(super) fn stat(path: &Path, scope: FileScope, name: &str) -> Result<Option<FileEntry>> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => Ok(Some(entry(scope, name, &meta))),
        Ok(_) => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(StoreError::io("cannot read", path, e)),
    }
}

/// The valid file names in `dir` after `after`, sorted by bytes; empty when `dir` is missing.
pub(super) fn names_after(dir: &Path, after: Option<&str>) -> Result<Vec<String>> {
    let reader = match std::fs::read_dir(dir) {
        Ok(reader) => reader,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(StoreError::io("cannot list", dir, e)),
    };
    let mut names = Vec::new();
    for item in reader {
        let item = item.map_err(|e| StoreError::io("cannot list", dir, e))?;
        let Ok(name) = item.file_name().into_string() else {
            continue;
        };
        if validate_name(&name).is_err() || after.is_some_and(|a| name.as_str() <= a) {
            continue;
        }
        names.push(name);
    }
    names.sort_unstable();
    Ok(names)
}

fn entry(scope: FileScope, name: &str, meta: &std::fs::Metadata) -> FileEntry {
    let modified_at = meta
        .modified()
        .map(|t| {
            chrono::DateTime::<chrono::Utc>::from(t)
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
        })
        .unwrap_or_default();
    super::file_entry(scope, name, meta.len(), modified_at)
}

/// Every regular file below `dir` as (`/`-separated path relative to `dir`, size), unsorted.
pub(crate) fn walk(dir: &Path, out: &mut Vec<(String, u64)>) -> Result<()> {
    fn go(root: &Path, dir: &Path, out: &mut Vec<(String, u64)>) -> Result<()> {
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(StoreError::io("cannot read", dir, e)),
        };
        for entry in entries {
            let entry = entry.map_err(|e| StoreError::io("cannot read", dir, e))?;
            let path = entry.path();
            let kind = entry
                .file_type()
                .map_err(|e| StoreError::io("cannot read", &path, e))?;
            if kind.is_dir() {
                go(root, &path, out)?;
            } else if kind.is_file() {
                let Ok(rel) = path.strip_prefix(root) else {
                    continue;
                };
                let rel: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                let size = entry
                    .metadata()
                    .map_err(|e| StoreError::io("cannot read", &path, e))?
                    .len();
                out.push((rel.join("/"), size));
            }
        }
        Ok(())
    }
    go(dir, dir, out)
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
