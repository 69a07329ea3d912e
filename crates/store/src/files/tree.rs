//! The library's files as a backup holds them: a `files/` tree of relative paths, the same on
//! both databases, so a backup of a SQLite library restores into a PostgreSQL one and back
//! with every file byte for byte.
//!
//! A path maps onto the database's keys as the disk layout has it: `chat/<id>/<name>`,
//! `global/<name>`, `character/<id>/<card path>`; anything else (a file some other tool left in
//! the tree) is kept under its own path, and `.tmp/` (half-written files on disk) is skipped.

use std::io::Read;
use std::path::Path;

use super::db::{self, Area, CHUNK_BYTES};
use super::{Backing, FileStore, check_size, disk, validate_name};
use crate::card_files::check_card_path;
use crate::error::{Result, StoreError};
use crate::store::Tx;

/// One file of the library's `files/` tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeFile {
    /// Its path below `files/`, `/`-separated (`chat/3/cat.png`).
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
}

/// The database key of a tree path, `None` for what is not kept (`.tmp/`).
fn key_of(path: &str) -> Option<(Area, i64, String)> {
    if path.starts_with(".tmp/") {
        return None;
    }
    let owned = |rest: &str| -> Option<(i64, String)> {
        let (id, name) = rest.split_once('/')?;
        let n: i64 = id.parse().ok()?;
        // Only the id as it is written back (`7`, not `07`): the tree round-trips exactly.
        (n.to_string() == id).then(|| (n, name.to_owned()))
    };
    let key = if let Some((id, name)) = path.strip_prefix("chat/").and_then(owned) {
        validate_name(&name).ok().map(|()| (Area::Chat, id, name))
    } else if let Some(name) = path.strip_prefix("global/") {
        validate_name(name)
            .ok()
            .map(|()| (Area::Global, 0, name.to_owned()))
    } else if let Some((id, rest)) = path.strip_prefix("character/").and_then(owned) {
        check_card_path(&rest).ok().map(|()| (Area::Card, id, rest))
    } else {
        None
    };
    Some(key.unwrap_or_else(|| (Area::Other, 0, path.to_owned())))
}

/// The tree path of a database key.
fn path_of(area: Area, owner: i64, name: &str) -> String {
    match area {
        Area::Chat => format!("chat/{owner}/{name}"),
        Area::Global => format!("global/{name}"),
        Area::Card => format!("character/{owner}/{name}"),
        Area::Tts => format!("../cache/tts/{name}"),
        Area::Other => name.to_owned(),
    }
}

impl FileStore {
    /// Every file of the library's `files/` tree (chat, global and card files; not the TTS
    /// cache, which is no library data), sorted by path.
    pub fn tree_files(&self) -> Result<Vec<TreeFile>> {
        let mut out: Vec<TreeFile> = match &self.backing {
            Backing::Disk { root, .. } => {
                let mut found = Vec::new();
                disk::walk(root, &mut found)?;
                found
                    .into_iter()
                    .filter(|(path, _)| key_of(path).is_some())
                    .map(|(path, size)| TreeFile { path, size })
                    .collect()
            }
            Backing::Database(l) => Self::in_db(l, false, |tx| {
                Ok(db::all_except(tx, Area::Tts)?
                    .into_iter()
                    .map(|(area, owner, name, size)| TreeFile {
                        path: path_of(area, owner, &name),
                        size,
                    })
                    .collect())
            })?,
        };
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    /// Streams the tree file at `path` (as [`FileStore::tree_files`] names it) into `out`, one
    /// chunk at a time; how many bytes. A file that is gone is `NotFound`.
    pub fn copy_tree_file(&self, path: &str, out: &mut dyn std::io::Write) -> Result<u64> {
        let mut written = 0u64;
        let mut emit = |chunk: &[u8]| -> Result<()> {
            out.write_all(chunk)
                .map_err(|e| StoreError::io("cannot write", path, e))?;
            written += chunk.len() as u64;
            Ok(())
        };
        match &self.backing {
            Backing::Disk { root, .. } => {
                let full = root.join(path);
                let mut file = std::fs::File::open(&full).map_err(|e| match e.kind() {
                    std::io::ErrorKind::NotFound => StoreError::not_found("file", path),
                    _ => StoreError::io("cannot read", &full, e),
                })?;
                let mut buf = vec![0u8; CHUNK_BYTES];
                loop {
                    let n = file
                        .read(&mut buf)
                        .map_err(|e| StoreError::io("cannot read", &full, e))?;
                    if n == 0 {
                        break;
                    }
                    emit(&buf[..n])?;
                }
            }
            Backing::Database(l) => Self::in_db(l, false, |tx| {
                let (area, owner, name) =
                    key_of(path).ok_or_else(|| StoreError::not_found("file", path))?;
                let found = db::stat(tx, area, owner, &name)?
                    .ok_or_else(|| StoreError::not_found("file", path))?;
                db::read_into(tx, &found.hash, found.size, &mut emit)
            })?,
        }
        Ok(written)
    }
}

/// Stores every file below `dir` (a directory laid out like `<data>/files`, a restore's staged
/// tree) into the database through `tx`, each streamed in chunks. Files over
/// [`super::MAX_FILE_BYTES`] are refused, naming the file.
pub(crate) fn store_tree(tx: &Tx<'_>, dir: &Path) -> Result<u64> {
    let mut found = Vec::new();
    disk::walk(dir, &mut found)?;
    found.sort();
    let mut stored = 0;
    for (path, size) in found {
        let Some((area, owner, name)) = key_of(&path) else {
            continue;
        };
        check_size(&path, usize::try_from(size).unwrap_or(usize::MAX))?;
        let full = dir.join(&path);
        let hash = hash_file(&full)?;
        db::ensure_blob(tx, &hash, size, &mut |emit: &mut db::Sink<'_>| {
            stream_file(&full, emit)
        })?;
        db::bind(tx, area, owner, &name, &hash, size)?;
        stored += 1;
    }
    Ok(stored)
}

fn hash_file(path: &Path) -> Result<String> {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    stream_file(path, &mut |chunk| {
        h.update(chunk);
        Ok(())
    })?;
    Ok(hex::encode(h.finalize()))
}

fn stream_file(path: &Path, emit: &mut db::Sink<'_>) -> Result<()> {
    let mut file = std::fs::File::open(path).map_err(|e| StoreError::io("cannot read", path, e))?;
    let mut buf = vec![0u8; CHUNK_BYTES];
    loop {
        // A full chunk per row (but the last): read until the buffer is full or the file ends.
        let mut filled = 0;
        while filled < buf.len() {
            let n = file
                .read(&mut buf[filled..])
                .map_err(|e| StoreError::io("cannot read", path, e))?;
            if n == 0 {
                break;
            }
            filled += n;
        }
        if filled == 0 {
            return Ok(());
        }
        emit(&buf[..filled])?;
        if filled < buf.len() {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_paths_round_trip_through_keys() {
        for path in [
            "chat/3/cat.png",
            "global/logo.png",
            "character/12/assets/other/image/a.png",
            "odd/thing.bin",
            "chat/07/x.txt",
            "chat/x/y.txt",
            "chat/3/a/b.txt",
        ] {
            let (area, owner, name) = key_of(path).expect("kept");
            assert_eq!(path_of(area, owner, &name), path, "{path}");
        }
        assert_eq!(key_of("chat/07/x.txt").map(|k| k.0), Some(Area::Other));
        assert_eq!(key_of(".tmp/1-2-3.part"), None);
    }
}
