//! A card's own files: what a charx card carries besides `card.json` and its avatar (sprites,
//! backgrounds, `x_meta/*.json`, RisuAI modules), kept byte for byte so a charx export can write
//! them back.
//!
//! Layout on disk (a SQLite library): `<data>/files/character/<characterId>/<archive path>`,
//! e.g. `files/character/3/assets/other/image/smile.png` and `files/character/3/x_meta/smile.json`:
//! the member paths of the archive, below a directory of the character's own. A character's set
//! is written whole (into `<data>/files/.tmp` first, then renamed into place), replaced whole and
//! deleted with the character, after its row ([`crate::Store::asset_delete`]). On a PostgreSQL
//! library the same paths are names of the `card` area of its files ([`crate::files::db`]),
//! written, replaced and deleted in one transaction each, and a backup's tree holds them at the
//! same paths.
//!
//! Paths are `/`-separated relative paths checked component by component ([`check_card_path`]:
//! no empty, `.` or `..` component, no `\`, `:` or NUL, at most [`MAX_DEPTH`] deep), so a
//! member name can never leave the character's directory.

use std::path::{Path, PathBuf};

use tavo_model::{AssetKind, Character, CharacterImportResult, Lorebook, RegexGroup};

use crate::error::{Result, StoreError};
use crate::files::db::{self, Area};
use crate::files::{FileStore, check_size};
use crate::store::Store;

/// Deepest path kept.
pub const MAX_DEPTH: usize = 16;

/// Checks one card file path; the error names the path and the rule it broke.
pub fn check_card_path(path: &str) -> Result<()> {
    let parts: Vec<&str> = path.split('/').collect();
    let problem = if path.is_empty() {
        Some("the path is empty")
    } else if parts.len() > MAX_DEPTH {
        Some("the path is too deep")
    } else if parts
        .iter()
        .any(|p| p.is_empty() || *p == "." || *p == "..")
    {
        Some("a path component is empty, `.` or `..`")
    } else if parts
        .iter()
        .any(|p| p.len() > crate::files::MAX_NAME_BYTES || p.contains(['\\', ':', '\0']))
    {
        Some("a path component is too long or holds `\\`, `:` or NUL")
    } else {
        None
    };
    match problem {
        Some(p) => Err(StoreError::InvalidArgument(format!(
            "card file {path:?}: {p}"
        ))),
        None => Ok(()),
    }
}

impl FileStore {
    /// Replaces a character's card files with `files` (path, bytes). Every path and size is
    /// checked before anything is written. On disk the new set is built beside the old one and
    /// renamed into place; in the database it is one transaction: either way a reader sees the
    /// old set or the new one. An empty list removes the set.
    pub fn save_card_files(&self, character_id: i64, files: &[(String, Vec<u8>)]) -> Result<()> {
        for (path, bytes) in files {
            check_card_path(path)?;
            check_size(path, bytes.len())?;
        }
        let Some(root) = self.disk_root() else {
            return self.in_database_write(|tx| {
                db::delete_owner(tx, Area::Card, character_id)?;
                for (path, bytes) in files {
                    db::put(tx, Area::Card, character_id, path, bytes)?;
                }
                Ok(())
            });
        };
        self.delete_card_files(character_id)?;
        if files.is_empty() {
            return Ok(());
        }
        let staging = root.join(".tmp").join(format!(
            "card-{character_id}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        let written = (|| {
            for (path, bytes) in files {
                let target = staging.join(path);
                if let Some(dir) = target.parent() {
                    std::fs::create_dir_all(dir)
                        .map_err(|e| StoreError::io("cannot create", dir, e))?;
                }
                std::fs::write(&target, bytes)
                    .map_err(|e| StoreError::io("cannot write", &target, e))?;
            }
            let dir = card_files_dir(root, character_id);
            if let Some(parent) = dir.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| StoreError::io("cannot create", parent, e))?;
            }
            std::fs::rename(&staging, &dir).map_err(|e| StoreError::io("cannot write", &dir, e))
        })();
        if written.is_err() {
            let _ = std::fs::remove_dir_all(&staging);
        }
        written
    }

    /// A character's card files (path, bytes), sorted by path; empty when it has none.
    pub fn load_card_files(&self, character_id: i64) -> Result<Vec<(String, Vec<u8>)>> {
        let Some(root) = self.disk_root() else {
            return self.in_database_read(|tx| {
                let mut out = Vec::new();
                for named in db::list(tx, Area::Card, character_id, None, usize::MAX)? {
                    if let Some(bytes) = db::load(tx, Area::Card, character_id, &named.name)? {
                        out.push((named.name, bytes));
                    }
                }
                Ok(out)
            });
        };
        let root = card_files_dir(root, character_id);
        // The same walk as the files tree's (a missing folder is no files).
        let mut found = Vec::new();
        crate::files::walk_tree(&root, &mut found)?;
        found.sort_by(|a, b| a.0.cmp(&b.0));
        found
            .into_iter()
            .map(|(rel, _)| {
                let path = root.join(&rel);
                let bytes =
                    std::fs::read(&path).map_err(|e| StoreError::io("cannot read", &path, e))?;
                Ok((rel, bytes))
            })
            .collect()
    }

    /// Removes a character's card files (called after the character itself is deleted).
    pub fn delete_card_files(&self, character_id: i64) -> Result<()> {
        let Some(root) = self.disk_root() else {
            return self.in_database_write(|tx| db::delete_owner(tx, Area::Card, character_id));
        };
        let dir = card_files_dir(root, character_id);
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(StoreError::io("cannot delete", &dir, e)),
        }
    }
}

/// The directory of a character's card files on disk.
fn card_files_dir(root: &Path, character_id: i64) -> PathBuf {
    root.join("character").join(character_id.to_string())
}

impl Store {
    /// [`crate::Tx::import_character`] in one transaction, then the card's own `files` (path,
    /// bytes) under the new character ([`FileStore::save_card_files`]). The paths are checked
    /// before anything is stored; when the files cannot be written, the rows just created are
    /// deleted again and the error returned, so a failed import leaves nothing behind.
    pub fn import_character_with_files(
        &self,
        character: &Character,
        avatar: Option<&[u8]>,
        lorebook: Option<&Lorebook>,
        regex: Option<&RegexGroup>,
        files: &[(String, Vec<u8>)],
    ) -> Result<CharacterImportResult> {
        for (path, _) in files {
            check_card_path(path)?;
        }
        let r = self.write(|tx| tx.import_character(character, avatar, lorebook, regex))?;
        if files.is_empty() {
            return Ok(r);
        }
        if let Err(e) = self.files().save_card_files(r.character_id.0, files) {
            let _ = self.write(|tx| {
                tx.asset_delete(AssetKind::Character, r.character_id.0)?;
                if let Some(id) = r.lorebook_id {
                    tx.asset_delete(AssetKind::Lorebook, id.0)?;
                }
                if let Some(id) = r.regex_id {
                    tx.asset_delete(AssetKind::Regex, id.0)?;
                }
                Ok(())
            });
            return Err(e);
        }
        Ok(r)
    }

    /// A character's card files (path, bytes), sorted by path, for a charx export.
    pub fn character_card_files(
        &self,
        id: tavo_model::CharacterId,
    ) -> Result<Vec<(String, Vec<u8>)>> {
        self.files().load_card_files(id.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_inside_the_character_directory() {
        for ok in ["a.png", "assets/other/image/a..b.png", "x_meta/표정.json"] {
            assert!(check_card_path(ok).is_ok(), "{ok}");
        }
        for bad in [
            "", "/a", "a//b", "../a", "a/../b", "./a", "a\\b", "c:/a", "a/",
        ] {
            assert!(check_card_path(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn save_load_replace_delete() {
        let dir = tempfile::tempdir().expect("dir");
        let files = FileStore::new(dir.path().join("files"));
        let set = vec![
            ("x_meta/a.json".to_owned(), b"{}".to_vec()),
            ("assets/other/image/a.png".to_owned(), b"png".to_vec()),
        ];
        files.save_card_files(7, &set).expect("save");
        let mut sorted = set.clone();
        sorted.sort();
        assert_eq!(files.load_card_files(7).expect("load"), sorted);
        assert!(
            dir.path()
                .join("files/character/7/assets/other/image/a.png")
                .is_file()
        );
        files
            .save_card_files(7, &[("b.bin".to_owned(), vec![1])])
            .expect("replace");
        assert_eq!(
            files.load_card_files(7).expect("load"),
            vec![("b.bin".to_owned(), vec![1])]
        );
        assert!(
            files
                .save_card_files(7, &[("../escape".to_owned(), vec![1])])
                .is_err()
        );
        assert_eq!(files.load_card_files(7).expect("load").len(), 1);
        files.delete_card_files(7).expect("delete");
        assert!(files.load_card_files(7).expect("load").is_empty());
    }
}
