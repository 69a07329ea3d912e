//! Restoring a backup: check everything, stage everything, then swap — or change nothing.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};
use tavo_store::{AssetKind, Store};
use zip::ZipArchive;

use super::create::Scratch;
use super::secrets::{self, Secret};
use super::{
    APP_VERSION, BackupError, DATABASE_ENTRY, FORMAT, FORMAT_VERSION, KEYS_ENTRY, MANIFEST_ENTRY,
    Manifest, TREES, version_newer,
};

/// How to restore.
#[derive(Debug, Clone, Default)]
pub struct RestoreOptions {
    /// Replace a library that is not empty (without it such a restore is refused).
    pub yes: bool,
    /// The passphrase of a backup made with keys; without it the keys are not restored.
    pub passphrase: Option<String>,
}

/// What a restore did.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RestoreSummary {
    /// The backup's manifest.
    pub manifest: Manifest,
    /// Rows now in each table.
    pub tables: serde_json::Map<String, serde_json::Value>,
    /// Files restored.
    pub files: u64,
    /// API keys put back.
    pub keys: usize,
    /// Things the user should know (keys not restored, entries skipped).
    pub warnings: Vec<String>,
}

type Archive = ZipArchive<File>;

fn corrupt(e: impl std::fmt::Display) -> BackupError {
    BackupError::Corrupt(e.to_string())
}

fn open_archive(path: &Path) -> Result<Archive, BackupError> {
    let file = File::open(path)
        .map_err(|e| BackupError::io(format!("cannot open {}", path.display()), e))?;
    ZipArchive::new(file).map_err(|e| {
        BackupError::Corrupt(format!(
            "{} is not a complete backup file ({e}); it may be cut short",
            path.display()
        ))
    })
}

fn read_manifest(archive: &mut Archive) -> Result<Manifest, BackupError> {
    let mut entry = archive
        .by_name(MANIFEST_ENTRY)
        .map_err(|_| BackupError::Corrupt(format!("it has no {MANIFEST_ENTRY}")))?;
    let mut text = Vec::new();
    entry
        .by_ref()
        .take(1 << 20)
        .read_to_end(&mut text)
        .map_err(corrupt)?;
    let manifest: Manifest = serde_json::from_slice(&text)
        .map_err(|e| BackupError::Corrupt(format!("{MANIFEST_ENTRY}: {e}")))?;
    if manifest.format != FORMAT {
        return Err(BackupError::Corrupt(format!(
            "{MANIFEST_ENTRY}: format {:?} is not {FORMAT:?}",
            manifest.format
        )));
    }
    Ok(manifest)
}

/// The manifest of the backup at `path`, checked against this program's versions.
pub fn inspect_backup(path: &Path) -> Result<Manifest, BackupError> {
    let mut archive = open_archive(path)?;
    let manifest = read_manifest(&mut archive)?;
    check_versions(&manifest)?;
    Ok(manifest)
}

fn check_versions(m: &Manifest) -> Result<(), BackupError> {
    if m.format_version > FORMAT_VERSION {
        return Err(BackupError::Newer {
            what: format!("backup format {}", m.format_version),
        });
    }
    if version_newer(&m.app_version, APP_VERSION) {
        return Err(BackupError::Newer {
            what: format!("version {}", m.app_version),
        });
    }
    if m.schema_version > tavo_store::schema_version() {
        return Err(BackupError::Newer {
            what: format!("schema {}", m.schema_version),
        });
    }
    Ok(())
}

/// Whether the library holds anything a restore would replace.
fn library_is_empty(store: &Store) -> Result<bool, BackupError> {
    for kind in [
        AssetKind::Character,
        AssetKind::Chat,
        AssetKind::Persona,
        AssetKind::Preset,
        AssetKind::Lorebook,
        AssetKind::Regex,
    ] {
        if !store.asset_summaries(kind)?.is_empty() {
            return Ok(false);
        }
    }
    for tree in TREES {
        let has_files = if in_database(store, tree) {
            !store.files().tree_files()?.is_empty()
        } else {
            walk_has_file(&store.data_dir().join(tree))
        };
        if has_files {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Whether `tree` of this library is kept in its database rather than under its data
/// directory: the `files/` tree of a PostgreSQL library. Such a tree is not swapped in by a
/// rename; the store replaces it with the rows, in one transaction.
fn in_database(store: &Store, tree: &str) -> bool {
    tree == "files" && store.files().kept_in_database()
}

fn walk_has_file(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| match e.file_type() {
        Ok(t) if t.is_dir() => walk_has_file(&e.path()),
        Ok(t) => t.is_file(),
        Err(_) => false,
    })
}

/// Copies one entry to `dest`, returning its SHA-256 (hex) and size. The zip reader checks
/// the entry's CRC when it reaches the end, so a damaged entry fails here.
fn extract(archive: &mut Archive, index: usize, dest: &Path) -> Result<(String, u64), BackupError> {
    let mut entry = archive.by_index(index).map_err(corrupt)?;
    let name = entry.name().map_err(corrupt)?.into_owned();
    if let Some(parent) = dest.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| BackupError::io(format!("cannot create {}", parent.display()), e))?;
    }
    let mut out = File::create(dest)
        .map_err(|e| BackupError::io(format!("cannot create {}", dest.display()), e))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 256 * 1024];
    let mut total = 0u64;
    loop {
        let n = entry
            .read(&mut buf)
            .map_err(|e| BackupError::Corrupt(format!("{name}: {e}")))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
        out.write_all(&buf[..n])
            .map_err(|e| BackupError::io(format!("cannot write {}", dest.display()), e))?;
        total += n as u64;
    }
    out.sync_all()
        .map_err(|e| BackupError::io(format!("cannot write {}", dest.display()), e))?;
    Ok((hex::encode(h.finalize()), total))
}

/// Everything unpacked into the staging directory.
struct Staged {
    db_dir: PathBuf,
    trees: PathBuf,
    files: u64,
    secrets: Vec<Secret>,
    warnings: Vec<String>,
}

fn stage(
    archive: &mut Archive,
    manifest: &Manifest,
    options: &RestoreOptions,
    scratch: &Path,
) -> Result<Staged, BackupError> {
    let mut warnings = Vec::new();
    // Keys first: a wrong passphrase costs no unpacking.
    let secrets = match (manifest.with_keys, &options.passphrase, &manifest.sealing) {
        (true, Some(pass), Some(sealing)) => {
            let mut entry = archive
                .by_name(KEYS_ENTRY)
                .map_err(|_| BackupError::Corrupt(format!("it has no {KEYS_ENTRY}")))?;
            let mut sealed = Vec::new();
            entry
                .by_ref()
                .take(16 << 20)
                .read_to_end(&mut sealed)
                .map_err(corrupt)?;
            secrets::open(sealing, &sealed, pass)?
        }
        (true, None, _) => {
            warnings.push(
                "the backup holds API keys, but no passphrase was given: they were not restored"
                    .into(),
            );
            Vec::new()
        }
        (true, Some(_), None) => {
            return Err(BackupError::Corrupt(
                "the manifest says the backup has keys but not how they were sealed".into(),
            ));
        }
        (false, Some(_), _) => {
            warnings.push("the backup was made without API keys; none were restored".into());
            Vec::new()
        }
        (false, None, _) => Vec::new(),
    };
    let db_dir = scratch.join("db");
    let trees = scratch.join("trees");
    let index = archive
        .index_for_name(DATABASE_ENTRY)
        .ok_or_else(|| BackupError::Corrupt(format!("it has no {DATABASE_ENTRY}")))?;
    let (sha, bytes) = extract(archive, index, &db_dir.join(tavo_store::DATABASE_FILE))?;
    if sha != manifest.database_sha256 || bytes != manifest.database_bytes {
        return Err(BackupError::Corrupt(format!(
            "{DATABASE_ENTRY} does not match its checksum in the manifest"
        )));
    }
    let mut files = 0;
    for i in 0..archive.len() {
        let (name, rel) = {
            let entry = archive.by_index_raw(i).map_err(corrupt)?;
            let name = entry.name().map_err(corrupt)?.into_owned();
            if entry.is_dir()
                || [MANIFEST_ENTRY, DATABASE_ENTRY, KEYS_ENTRY].contains(&name.as_str())
            {
                continue;
            }
            (name, entry.enclosed_name())
        };
        let Some(rel) = rel.filter(|r| {
            r.components()
                .next()
                .and_then(|c| c.as_os_str().to_str())
                .is_some_and(|first| TREES.contains(&first))
        }) else {
            warnings.push(format!("skipped {name:?}: not part of a library tree"));
            continue;
        };
        extract(archive, i, &trees.join(rel))?;
        files += 1;
    }
    if files != manifest.files {
        return Err(BackupError::Corrupt(format!(
            "the manifest lists {} files, the backup holds {files}",
            manifest.files
        )));
    }
    Ok(Staged {
        db_dir,
        trees,
        files,
        secrets,
        warnings,
    })
}

/// Writes the decrypted secrets into the staged database's settings.
fn apply_secrets(db_dir: &Path, secrets: &[Secret]) -> Result<(), BackupError> {
    if secrets.is_empty() {
        return Ok(());
    }
    let db = Store::open(db_dir)?;
    db.write(|tx| {
        for s in secrets {
            let mut value = tx
                .setting_get(&s.setting)?
                .unwrap_or(serde_json::Value::Null);
            secrets::put_back(&mut value, s);
            tx.setting_set(&s.setting, &value)?;
        }
        Ok(())
    })?;
    Ok(())
}

/// A rename done during the swap, undone if the database step fails.
struct Moved {
    from: PathBuf,
    to: PathBuf,
}

fn rename(from: &Path, to: &Path, done: &mut Vec<Moved>) -> Result<(), BackupError> {
    std::fs::rename(from, to).map_err(|e| {
        BackupError::io(
            format!("cannot move {} to {}", from.display(), to.display()),
            e,
        )
    })?;
    done.push(Moved {
        from: from.to_path_buf(),
        to: to.to_path_buf(),
    });
    Ok(())
}

fn undo(done: Vec<Moved>) {
    for m in done.into_iter().rev() {
        if let Err(e) = std::fs::rename(&m.to, &m.from) {
            tracing::error!(error = %e, from = %m.to.display(), to = %m.from.display(),
                "cannot move a library tree back after a failed restore");
        }
    }
}

/// Restores the backup at `path` into `store`'s library: every row and every file of the
/// library trees is replaced by the backup's. Blocking. A library that is not empty is
/// replaced only with `options.yes`. Nothing changes unless everything checks out.
pub fn restore_backup(
    store: &Store,
    path: &Path,
    options: &RestoreOptions,
) -> Result<RestoreSummary, BackupError> {
    let mut archive = open_archive(path)?;
    let manifest = read_manifest(&mut archive)?;
    check_versions(&manifest)?;
    if !options.yes && !library_is_empty(store)? {
        return Err(BackupError::NeedsConfirmation(format!(
            "the library in {} is not empty; restoring replaces everything in it with the backup \
             (pass --yes to do so)",
            store.data_dir().display()
        )));
    }
    let scratch = Scratch::new(store, "restore")?;
    let staged = stage(&mut archive, &manifest, options, &scratch.0)?;
    apply_secrets(&staged.db_dir, &staged.secrets)?;
    let old = scratch.0.join("old");
    std::fs::create_dir_all(&old)
        .map_err(|e| BackupError::io(format!("cannot create {}", old.display()), e))?;
    let mut done = Vec::new();
    let swapped = (|| {
        for tree in TREES.iter().filter(|t| !in_database(store, t)) {
            let live = store.data_dir().join(tree);
            if live.exists() {
                rename(&live, &old.join(tree), &mut done)?;
            }
            let new = staged.trees.join(tree);
            if new.exists() {
                rename(&new, &live, &mut done)?;
            }
        }
        Ok::<(), BackupError>(())
    })();
    if let Err(e) = swapped {
        undo(done);
        return Err(e);
    }
    let db = staged.db_dir.join(tavo_store::DATABASE_FILE);
    let files = staged.trees.join("files");
    let replaced = match store.replace_library_from(&db, Some(&files)) {
        Ok(r) => r,
        Err(e) => {
            undo(done);
            return Err(e.into());
        }
    };
    // The old trees go with the scratch directory.
    let tables = replaced
        .tables
        .into_iter()
        .map(|(t, n)| (t, serde_json::Value::from(n)))
        .collect();
    Ok(RestoreSummary {
        manifest,
        tables,
        files: staged.files,
        keys: staged.secrets.len(),
        warnings: staged.warnings,
    })
}
