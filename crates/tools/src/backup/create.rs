//! Writing a backup: snapshot, secrets out, zip with the library trees, then one rename.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};
use tavo_store::Store;
use zip::CompressionMethod;
use zip::write::{SimpleFileOptions, ZipWriter};

use super::secrets::{self, Secret};
use super::{
    APP_VERSION, BackupError, DATABASE_ENTRY, FORMAT, FORMAT_VERSION, KEYS_ENTRY, MANIFEST_ENTRY,
    Manifest, TREES,
};

/// What to put in a backup.
#[derive(Debug, Clone, Default)]
pub struct BackupOptions {
    /// Include the API keys, encrypted with this passphrase. `None`: no keys in the backup.
    pub passphrase: Option<String>,
}

/// What a backup holds (printed by the doors).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BackupSummary {
    /// Where it was written.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// Its manifest.
    pub manifest: Manifest,
    /// Secrets left out (no `--with-keys`) or sealed (with it).
    pub secrets: usize,
}

/// A scratch directory removed when dropped.
pub(crate) struct Scratch(pub(crate) PathBuf);

impl Scratch {
    pub(crate) fn new(store: &Store, what: &str) -> Result<Self, BackupError> {
        let dir = store
            .data_dir()
            .join("tmp")
            .join(format!("{what}-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| BackupError::io(format!("cannot create {}", dir.display()), e))?;
        Ok(Self(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.0)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(error = %e, dir = %self.0.display(), "cannot remove a scratch directory");
        }
    }
}

/// Row counts of a few tables, for the manifest.
fn counts(db: &Store) -> serde_json::Map<String, serde_json::Value> {
    let mut out = serde_json::Map::new();
    for (name, kind) in [
        ("characters", tavo_store::AssetKind::Character),
        ("chats", tavo_store::AssetKind::Chat),
        ("lorebooks", tavo_store::AssetKind::Lorebook),
        ("presets", tavo_store::AssetKind::Preset),
        ("personas", tavo_store::AssetKind::Persona),
    ] {
        if let Ok(list) = db.asset_summaries(kind) {
            out.insert(name.into(), list.len().into());
            if kind == tavo_store::AssetKind::Chat {
                let messages: u64 = list
                    .iter()
                    .filter_map(|c| db.message_count(tavo_model::ChatId(c.id)).ok())
                    .sum();
                out.insert("messages".into(), messages.into());
            }
        }
    }
    out
}

/// The settings prefix of the engine's reply records (`engine.reply.<chat>`: the chat's latest
/// reply, and the claim of a live one by its process).
const REPLY_RECORDS: &str = "engine.reply.";

/// Takes the secrets out of the snapshot's settings, and the process out of the claims of
/// replies that were live when it was taken: a restored library must not look busy because the
/// process that made the backup still runs. Such a reply is then an interrupted one, which the
/// engine marks cancelled at its next start, as after a crash.
fn strip_snapshot(db: &Store) -> Result<Vec<Secret>, BackupError> {
    let mut taken = Vec::new();
    db.write(|tx| {
        for (key, mut value) in tx.setting_list(REPLY_RECORDS)? {
            let live = matches!(
                value.get("status").and_then(|s| s.as_str()),
                Some("running" | "waiting")
            );
            if let (true, Some(record)) = (live, value.as_object_mut()) {
                record.insert("pid".into(), 0.into());
                record.remove("processStart");
                record.remove("bootId");
                tx.setting_set(&key, &value)?;
            }
        }
        for (key, mut value) in tx.setting_list("")? {
            let found = secrets::strip(&key, &mut value);
            if !found.is_empty() {
                if value.is_null() {
                    tx.setting_delete(&key)?;
                } else {
                    tx.setting_set(&key, &value)?;
                }
                taken.extend(found);
            }
        }
        Ok(())
    })?;
    Ok(taken)
}

/// Where a backed-up file's bytes come from.
enum Source {
    /// A file under the data directory.
    Disk(PathBuf),
    /// A file of a library that keeps its files in its database: its path below `files/`,
    /// read through the store ([`tavo_store::FileStore::copy_tree_file`]).
    Store(String),
}

/// The files of one library tree, as (zip entry name, source), sorted by name. A library that
/// keeps its files in its database (PostgreSQL) lists its `files/` tree through the store, so
/// its backup holds the same entries a SQLite library's would.
fn library_tree(store: &Store, tree: &str) -> Result<Vec<(String, Source)>, BackupError> {
    if tree == "files" && store.files().kept_in_database() {
        return Ok(store
            .files()
            .tree_files()?
            .into_iter()
            .map(|f| (format!("files/{}", f.path), Source::Store(f.path)))
            .collect());
    }
    Ok(tree_files(store.data_dir(), tree)?
        .into_iter()
        .map(|(name, path)| (name, Source::Disk(path)))
        .collect())
}

/// Every regular file under `root`, as paths relative to the data directory, sorted.
fn tree_files(data_dir: &Path, tree: &str) -> Result<Vec<(String, PathBuf)>, BackupError> {
    let mut out = Vec::new();
    let mut stack = vec![data_dir.join(tree)];
    while let Some(dir) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(BackupError::io(format!("cannot read {}", dir.display()), e)),
        };
        for entry in entries {
            let entry = entry.map_err(|e| BackupError::io(dir.display(), e))?;
            let path = entry.path();
            let kind = entry
                .file_type()
                .map_err(|e| BackupError::io(path.display(), e))?;
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                let rel = path
                    .strip_prefix(data_dir)
                    .map_err(|e| BackupError::Internal(e.to_string()))?;
                let Some(name) = rel.to_str() else {
                    tracing::warn!(path = %path.display(), "skipping a file whose name is not UTF-8");
                    continue;
                };
                out.push((name.replace('\\', "/"), path));
            }
        }
    }
    out.sort();
    Ok(out)
}

fn copy_into(zip: &mut ZipWriter<BufWriter<File>>, path: &Path) -> Result<u64, BackupError> {
    let mut f = File::open(path).map_err(|e| BackupError::io(path.display(), e))?;
    let mut buf = vec![0u8; 256 * 1024];
    let mut total = 0u64;
    loop {
        let n = f
            .read(&mut buf)
            .map_err(|e| BackupError::io(path.display(), e))?;
        if n == 0 {
            return Ok(total);
        }
        zip.write_all(&buf[..n])
            .map_err(|e| BackupError::io("writing the backup", e))?;
        total += n as u64;
    }
}

fn sha256_of(path: &Path) -> Result<(String, u64), BackupError> {
    let mut f = File::open(path).map_err(|e| BackupError::io(path.display(), e))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 256 * 1024];
    let mut total = 0u64;
    loop {
        let n = f
            .read(&mut buf)
            .map_err(|e| BackupError::io(path.display(), e))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
        total += n as u64;
    }
    Ok((hex::encode(h.finalize()), total))
}

/// Writes a backup of `store` to `out` (replaced only once the backup is complete: a failed
/// backup leaves no partial file). Blocking; safe while a server uses the library.
pub fn create_backup(
    store: &Store,
    out: &Path,
    options: &BackupOptions,
) -> Result<BackupSummary, BackupError> {
    let scratch = Scratch::new(store, "backup")?;
    let raw_dir = scratch.0.join("raw");
    let snap_dir = scratch.0.join("db");
    for dir in [&raw_dir, &snap_dir] {
        std::fs::create_dir_all(dir)
            .map_err(|e| BackupError::io(format!("cannot create {}", dir.display()), e))?;
    }
    store.snapshot_into(&raw_dir.join(tavo_store::DATABASE_FILE))?;
    let (taken, counts, schema_version) = {
        let db = Store::open(&raw_dir)?;
        let taken = strip_snapshot(&db)?;
        let counts = counts(&db);
        let version = db.library_schema_version()?;
        (taken, counts, version)
    };
    // A second copy of the stripped snapshot: SQLite keeps deleted values in free pages and
    // page slack, and `VACUUM INTO` writes only live rows, so no removed key survives.
    let snap = snap_dir.join(tavo_store::DATABASE_FILE);
    Store::open(&raw_dir)?.snapshot_into(&snap)?;
    let (sha, db_bytes) = sha256_of(&snap)?;
    let sealed = match &options.passphrase {
        Some(p) => Some(secrets::seal(&taken, p)?),
        None => None,
    };
    let mut files = Vec::new();
    for tree in TREES {
        files.extend(library_tree(store, tree)?);
    }
    let manifest = Manifest {
        format: FORMAT.into(),
        format_version: FORMAT_VERSION,
        app_version: APP_VERSION.into(),
        schema_version,
        created_at: chrono::Utc::now().to_rfc3339(),
        database_bytes: db_bytes,
        database_sha256: sha,
        files: files.len() as u64,
        file_bytes: 0,
        counts,
        with_keys: sealed.is_some(),
        sealing: sealed.as_ref().map(|(s, _)| s.clone()),
    };
    let parent = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let partial = parent.join(format!(
        ".{}.partial-{}",
        out.file_name().and_then(|n| n.to_str()).unwrap_or("backup"),
        uuid::Uuid::new_v4().simple()
    ));
    let written = write_zip(
        &partial,
        store,
        manifest,
        &snap,
        &files,
        sealed.as_ref().map(|(_, b)| b),
    );
    let manifest = match written {
        Ok(m) => m,
        Err(e) => {
            let _ = std::fs::remove_file(&partial);
            return Err(e);
        }
    };
    std::fs::rename(&partial, out).map_err(|e| {
        let _ = std::fs::remove_file(&partial);
        BackupError::io(format!("cannot write {}", out.display()), e)
    })?;
    let bytes = std::fs::metadata(out).map(|m| m.len()).unwrap_or(0);
    Ok(BackupSummary {
        path: out.to_path_buf(),
        bytes,
        manifest,
        secrets: taken.len(),
    })
}

fn write_zip(
    path: &Path,
    store: &Store,
    mut manifest: Manifest,
    snap: &Path,
    files: &[(String, Source)],
    keys: Option<&Vec<u8>>,
) -> Result<Manifest, BackupError> {
    let file = File::create(path)
        .map_err(|e| BackupError::io(format!("cannot create {}", path.display()), e))?;
    let mut zip = ZipWriter::new(BufWriter::with_capacity(1 << 20, file));
    let deflate = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Deflated)
        .compression_level(Some(1))
        .large_file(true);
    // Entries carry the snapshot's time (local clock), so `unzip -l` shows when it was taken.
    let now = chrono::Local::now().naive_local();
    let stamp = {
        use chrono::{Datelike, Timelike};
        zip::DateTime::from_date_and_time(
            u16::try_from(now.year()).unwrap_or(1980),
            now.month() as u8,
            now.day() as u8,
            now.hour() as u8,
            now.minute() as u8,
            now.second() as u8,
        )
        .unwrap_or_default()
    };
    let deflate = deflate.last_modified_time(stamp);
    let plain = SimpleFileOptions::default().last_modified_time(stamp);
    let zerr = |e: zip::result::ZipError| BackupError::io("writing the backup", e);
    // The database first and the manifest last: the manifest's file byte count is known only
    // after the files are in, and a reader finds every entry through the central directory.
    zip.start_file(DATABASE_ENTRY, deflate).map_err(zerr)?;
    copy_into(&mut zip, snap)?;
    let mut file_bytes = 0;
    for (name, source) in files {
        // Already-compressed media gain nothing from deflate.
        let stored = [
            ".png", ".jpg", ".jpeg", ".webp", ".gif", ".mp3", ".ogg", ".wav", ".zip",
        ]
        .iter()
        .any(|ext| name.to_ascii_lowercase().ends_with(ext));
        let opts = if stored {
            plain
                .compression_method(CompressionMethod::Stored)
                .large_file(true)
        } else {
            deflate
        };
        zip.start_file(name.as_str(), opts).map_err(zerr)?;
        file_bytes += match source {
            Source::Disk(p) => copy_into(&mut zip, p)?,
            Source::Store(p) => store.files().copy_tree_file(p, &mut zip)?,
        };
    }
    if let Some(keys) = keys {
        zip.start_file(KEYS_ENTRY, plain).map_err(zerr)?;
        zip.write_all(keys)
            .map_err(|e| BackupError::io("writing the backup", e))?;
    }
    manifest.file_bytes = file_bytes;
    zip.start_file(MANIFEST_ENTRY, plain).map_err(zerr)?;
    let text =
        serde_json::to_vec_pretty(&manifest).map_err(|e| BackupError::Internal(e.to_string()))?;
    zip.write_all(&text)
        .map_err(|e| BackupError::io("writing the backup", e))?;
    let writer = zip.finish().map_err(zerr)?;
    let file = writer
        .into_inner()
        .map_err(|e| BackupError::io("writing the backup", e.error()))?;
    file.sync_all()
        .map_err(|e| BackupError::io("writing the backup", e))?;
    Ok(manifest)
}
