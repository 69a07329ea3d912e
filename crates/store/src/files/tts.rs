//! The TTS cache's storage: synthesized audio kept under names its caller chooses (the engine's
//! `<sha256>.<ext>`), replayed instead of synthesized again, clearable at any time.
//!
//! On a SQLite library it is `<data>/cache/tts/<name>` on disk, as it always was; on a
//! PostgreSQL library it is the `tts` area of the schema's files ([`super::db`]), so every
//! replica replays what one of them synthesized. Either way it is no library data: backups
//! leave it out, and a restore keeps it.

use super::db::{self, Area};
use super::{Backing, FileStore, check_size, disk, validate_name};
use crate::error::Result;

impl FileStore {
    /// The first of `names` the TTS cache holds, with its size.
    pub fn tts_find(&self, names: &[String]) -> Result<Option<(String, u64)>> {
        for name in names {
            validate_name(name)?;
        }
        match &self.backing {
            Backing::Disk { tts, .. } => Ok(names.iter().find_map(|name| {
                let meta = std::fs::metadata(tts.join(name)).ok()?;
                meta.is_file().then(|| (name.clone(), meta.len()))
            })),
            Backing::Database(l) => Self::in_db(l, false, |tx| {
                for name in names {
                    if let Some(found) = db::stat(tx, Area::Tts, 0, name)? {
                        return Ok(Some((found.name, found.size)));
                    }
                }
                Ok(None)
            }),
        }
    }

    /// Stores audio in the TTS cache under `name`, replacing an entry of that name.
    pub fn tts_save(&self, name: &str, bytes: &[u8]) -> Result<()> {
        validate_name(name)?;
        check_size(name, bytes.len())?;
        match &self.backing {
            Backing::Disk { tts, .. } => disk::write_atomically(tts, &tts.join(name), bytes),
            Backing::Database(l) => {
                Self::in_db(l, true, |tx| db::put(tx, Area::Tts, 0, name, bytes))
            }
        }
    }

    /// The bytes of the TTS cache's entry `name`, or `None`.
    pub fn tts_load(&self, name: &str) -> Result<Option<Vec<u8>>> {
        validate_name(name)?;
        match &self.backing {
            Backing::Disk { tts, .. } => disk::read(&tts.join(name)),
            Backing::Database(l) => Self::in_db(l, false, |tx| db::load(tx, Area::Tts, 0, name)),
        }
    }

    /// Entries and bytes in the TTS cache.
    pub fn tts_usage(&self) -> Result<(u64, u64)> {
        match &self.backing {
            Backing::Disk { tts, .. } => {
                let mut files = 0;
                let mut bytes = 0;
                for name in disk::names_after(tts, None)? {
                    if let Ok(meta) = std::fs::metadata(tts.join(&name))
                        && meta.is_file()
                    {
                        files += 1;
                        bytes += meta.len();
                    }
                }
                Ok((files, bytes))
            }
            Backing::Database(l) => Self::in_db(l, false, |tx| db::usage(tx, Area::Tts)),
        }
    }

    /// Empties the TTS cache; how many entries and bytes went.
    pub fn tts_clear(&self) -> Result<(u64, u64)> {
        match &self.backing {
            Backing::Disk { tts, .. } => {
                let gone = self.tts_usage()?;
                disk::remove_dir(tts)?;
                Ok(gone)
            }
            Backing::Database(l) => Self::in_db(l, true, |tx| db::clear_area(tx, Area::Tts)),
        }
    }
}
