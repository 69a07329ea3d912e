//! The files of a PostgreSQL library, in its own schema, so a replica needs no shared disk.
//!
//! - **Content-addressed.** `blobs(hash, size)` holds each distinct content once, keyed by the
//!   lower-case hex SHA-256 of its bytes; `file_names(area, owner, name) → hash` gives it
//!   names. The same image saved in ten chats, a cloned chat's files, a card imported twice:
//!   one blob, several names.
//! - **Chunked.** The bytes are in `blob_chunks(hash, seq, bytes)`, [`CHUNK_BYTES`] a row, so no
//!   single value is large and a reader holds one chunk at a time ([`read_into`]).
//! - **Collected in the same transaction.** A write or delete that leaves a blob without a
//!   name deletes it (its chunks go by cascade) before it commits. Every write holds the
//!   library's lock (see `postgres.rs`), so no other writer can name a blob between the check
//!   and the delete.
//! - **Size-capped** by the callers of this module ([`super::check_size`]), before anything is
//!   written.
//!
//! The tables are PostgreSQL's only (`migrations::PG_FILES`): a SQLite library keeps its files
//! on disk, and a backup carries them in its `files/` tree on both databases.

use sha2::{Digest, Sha256};

use super::FileScope;
use crate::error::{Result, StoreError};
use crate::sql::params;
use crate::store::{Tx, now};

/// Bytes per `blob_chunks` row (the last chunk of a blob may be shorter).
pub(crate) const CHUNK_BYTES: usize = 256 * 1024;

/// What a name row names: its `area` column. `owner` is the chat's id (`Chat`), the
/// character's (`Card`), else 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Area {
    /// A chat's file (`files/chat/<id>/<name>` on disk).
    Chat,
    /// A global file (`files/global/<name>`).
    Global,
    /// A card's own file; the name is its archive path (`files/character/<id>/<path>`).
    Card,
    /// A TTS cache entry (`cache/tts/<name>`): not library data, left out of backups.
    Tts,
    /// Any other file a backup's `files/` tree held, kept under its path so a restore and a
    /// new backup give back the same tree.
    Other,
}

impl Area {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Area::Chat => "chat",
            Area::Global => "global",
            Area::Card => "card",
            Area::Tts => "tts",
            Area::Other => "other",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Area> {
        [Area::Chat, Area::Global, Area::Card, Area::Tts, Area::Other]
            .into_iter()
            .find(|a| a.as_str() == s)
    }
}

/// The area and owner of a chat or global file.
pub(crate) fn scope_key(scope: FileScope) -> (Area, i64) {
    match scope {
        FileScope::Chat(id) => (Area::Chat, id),
        FileScope::Global => (Area::Global, 0),
    }
}

/// One name row.
#[derive(Debug, Clone)]
pub(crate) struct Named {
    pub(crate) name: String,
    pub(crate) size: u64,
    pub(crate) modified_at: String,
    pub(crate) hash: String,
}

/// The lower-case hex SHA-256 of `bytes`: a blob's key.
pub(crate) fn hash_of(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn size_of(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

/// Takes a blob's bytes one chunk at a time, in order.
pub(crate) type Sink<'a> = dyn FnMut(&[u8]) -> Result<()> + 'a;

/// Stores the blob `hash` of `size` bytes unless it is there already; `chunks` yields its
/// bytes in order and is called only for a new blob. Whether the blob was new.
pub(crate) fn ensure_blob(
    tx: &Tx<'_>,
    hash: &str,
    size: u64,
    chunks: &mut dyn FnMut(&mut Sink<'_>) -> Result<()>,
) -> Result<bool> {
    let inserted = tx.execute(
        "INSERT INTO blobs (hash, size) VALUES (?1, ?2) ON CONFLICT (hash) DO NOTHING",
        params![hash, size],
    )?;
    if inserted == 0 {
        return Ok(false);
    }
    let mut seq: i64 = 0;
    let mut written: u64 = 0;
    chunks(&mut |chunk: &[u8]| {
        tx.execute(
            "INSERT INTO blob_chunks (hash, seq, bytes) VALUES (?1, ?2, ?3)",
            params![hash, seq, chunk],
        )?;
        seq += 1;
        written += chunk.len() as u64;
        Ok(())
    })?;
    if written != size {
        return Err(StoreError::Database(format!(
            "blob {hash}: {written} bytes written where {size} were announced"
        )));
    }
    Ok(true)
}

/// Gives `name` the blob `hash`, replacing what it named before (collected if now unnamed).
pub(crate) fn bind(
    tx: &Tx<'_>,
    area: Area,
    owner: i64,
    name: &str,
    hash: &str,
    size: u64,
) -> Result<()> {
    let old = stat(tx, area, owner, name)?;
    tx.execute(
        "INSERT INTO file_names (area, owner, name, hash, size, modified_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (area, owner, name)
         DO UPDATE SET hash = excluded.hash, size = excluded.size, modified_at = excluded.modified_at",
        params![area.as_str(), owner, name, hash, size, now()],
    )?;
    if let Some(old) = old.filter(|o| o.hash != hash) {
        collect(tx, &[old.hash])?;
    }
    Ok(())
}

/// Stores `bytes` under `name` (already checked by the caller), replacing a file of that name.
pub(crate) fn put(tx: &Tx<'_>, area: Area, owner: i64, name: &str, bytes: &[u8]) -> Result<()> {
    let hash = hash_of(bytes);
    ensure_blob(tx, &hash, bytes.len() as u64, &mut |emit: &mut Sink<'_>| {
        bytes.chunks(CHUNK_BYTES).try_for_each(&mut *emit)
    })?;
    bind(tx, area, owner, name, &hash, bytes.len() as u64)
}

/// The name row of one file, or `None`.
pub(crate) fn stat(tx: &Tx<'_>, area: Area, owner: i64, name: &str) -> Result<Option<Named>> {
    tx.query_opt(
        "SELECT name, size, modified_at, hash FROM file_names
         WHERE area = ?1 AND owner = ?2 AND name = ?3",
        params![area.as_str(), owner, name],
        named,
    )
}

fn named(r: &crate::sql::Row<'_>) -> Result<Named> {
    Ok(Named {
        name: r.get(0)?,
        size: size_of(r.get(1)?),
        modified_at: r.get(2)?,
        hash: r.get(3)?,
    })
}

/// Passes the blob's bytes to `out` one chunk at a time, in order; checks they add up to its
/// size (a missing chunk is an error, not a short file).
pub(crate) fn read_into(tx: &Tx<'_>, hash: &str, size: u64, out: &mut Sink<'_>) -> Result<()> {
    let mut read = 0u64;
    let mut seq: i64 = 0;
    while read < size {
        let bytes: Vec<u8> = tx
            .query_opt(
                "SELECT bytes FROM blob_chunks WHERE hash = ?1 AND seq = ?2",
                params![hash, seq],
                |r| r.get(0),
            )?
            .ok_or_else(|| StoreError::Database(format!("blob {hash} has no chunk {seq}")))?;
        if bytes.is_empty() {
            break;
        }
        read += bytes.len() as u64;
        out(&bytes)?;
        seq += 1;
    }
    if read != size {
        return Err(StoreError::Database(format!(
            "blob {hash} holds {read} bytes where {size} were stored"
        )));
    }
    Ok(())
}

/// A file's bytes, or `None`.
pub(crate) fn load(tx: &Tx<'_>, area: Area, owner: i64, name: &str) -> Result<Option<Vec<u8>>> {
    let Some(found) = stat(tx, area, owner, name)? else {
        return Ok(None);
    };
    let mut bytes = Vec::with_capacity(usize::try_from(found.size).unwrap_or(0));
    read_into(tx, &found.hash, found.size, &mut |c| {
        bytes.extend_from_slice(c);
        Ok(())
    })?;
    Ok(Some(bytes))
}

/// Deletes one name; whether it existed. Its blob goes when nothing else names it.
pub(crate) fn delete(tx: &Tx<'_>, area: Area, owner: i64, name: &str) -> Result<bool> {
    let Some(found) = stat(tx, area, owner, name)? else {
        return Ok(false);
    };
    tx.execute(
        "DELETE FROM file_names WHERE area = ?1 AND owner = ?2 AND name = ?3",
        params![area.as_str(), owner, name],
    )?;
    collect(tx, &[found.hash])?;
    Ok(true)
}

/// Up to `limit` names of one owner after `after`, in byte order.
pub(crate) fn list(
    tx: &Tx<'_>,
    area: Area,
    owner: i64,
    after: Option<&str>,
    limit: usize,
) -> Result<Vec<Named>> {
    tx.query_map(
        "SELECT name, size, modified_at, hash FROM file_names
         WHERE area = ?1 AND owner = ?2 AND name > ?3 ORDER BY name LIMIT ?4",
        params![area.as_str(), owner, after.unwrap_or(""), limit],
        named,
    )
}

/// Deletes every name of one owner (a deleted chat's files, a character's card files).
pub(crate) fn delete_owner(tx: &Tx<'_>, area: Area, owner: i64) -> Result<()> {
    let hashes = owner_hashes(tx, area, owner)?;
    tx.execute(
        "DELETE FROM file_names WHERE area = ?1 AND owner = ?2",
        params![area.as_str(), owner],
    )?;
    collect(tx, &hashes)
}

fn owner_hashes(tx: &Tx<'_>, area: Area, owner: i64) -> Result<Vec<String>> {
    tx.query_map(
        "SELECT DISTINCT hash FROM file_names WHERE area = ?1 AND owner = ?2",
        params![area.as_str(), owner],
        |r| r.get(0),
    )
}

/// Names every file of owner `from` for owner `to` too (a cloned chat), replacing same names;
/// how many. The bytes are shared, not copied.
pub(crate) fn copy_owner(tx: &Tx<'_>, area: Area, from: i64, to: i64) -> Result<usize> {
    let replaced = owner_hashes(tx, area, to)?;
    let copied = tx.execute(
        "INSERT INTO file_names (area, owner, name, hash, size, modified_at)
         SELECT area, ?3, name, hash, size, ?4 FROM file_names WHERE area = ?1 AND owner = ?2
         ON CONFLICT (area, owner, name)
         DO UPDATE SET hash = excluded.hash, size = excluded.size, modified_at = excluded.modified_at",
        params![area.as_str(), from, to, now()],
    )?;
    collect(tx, &replaced)?;
    Ok(copied)
}

/// Files and bytes of one area (the TTS cache's usage).
pub(crate) fn usage(tx: &Tx<'_>, area: Area) -> Result<(u64, u64)> {
    let (files, bytes) = tx
        .query_opt(
            // SUM of BIGINT is NUMERIC on PostgreSQL, hence the cast.
            "SELECT COUNT(*), CAST(COALESCE(SUM(size), 0) AS BIGINT) FROM file_names
             WHERE area = ?1",
            params![area.as_str()],
            |r| Ok((r.get::<i64>(0)?, size_of(r.get::<i64>(1)?))),
        )?
        .unwrap_or((0, 0));
    Ok((size_of(files), bytes))
}

/// Deletes every name of one area (clearing the TTS cache); how many files and bytes went.
pub(crate) fn clear_area(tx: &Tx<'_>, area: Area) -> Result<(u64, u64)> {
    let gone = usage(tx, area)?;
    let hashes: Vec<String> = tx.query_map(
        "SELECT DISTINCT hash FROM file_names WHERE area = ?1",
        params![area.as_str()],
        |r| r.get(0),
    )?;
    tx.execute(
        "DELETE FROM file_names WHERE area = ?1",
        params![area.as_str()],
    )?;
    collect(tx, &hashes)?;
    Ok(gone)
}

/// Every name of every area but `except`, as (area, owner, name, size), in key order.
pub(crate) fn all_except(tx: &Tx<'_>, except: Area) -> Result<Vec<(Area, i64, String, u64)>> {
    let rows = tx.query_map(
        "SELECT area, owner, name, size FROM file_names WHERE area <> ?1
         ORDER BY area, owner, name",
        params![except.as_str()],
        |r| {
            let area: String = r.get(0)?;
            Ok((
                area,
                r.get::<i64>(1)?,
                r.get::<String>(2)?,
                r.get::<i64>(3)?,
            ))
        },
    )?;
    rows.into_iter()
        .map(|(area, owner, name, size)| {
            let area = Area::parse(&area).ok_or_else(|| {
                StoreError::Database(format!("file_names has an unknown area {area:?}"))
            })?;
            Ok((area, owner, name, size_of(size)))
        })
        .collect()
}

/// Deletes every name but the TTS cache's, and every blob left unnamed (a restore, before the
/// backup's files go in).
pub(crate) fn clear_library(tx: &Tx<'_>) -> Result<()> {
    tx.execute(
        "DELETE FROM file_names WHERE area <> ?1",
        params![Area::Tts.as_str()],
    )?;
    tx.execute(
        "DELETE FROM blobs b WHERE NOT EXISTS (SELECT 1 FROM file_names f WHERE f.hash = b.hash)",
        params![],
    )?;
    Ok(())
}

/// Deletes those of `hashes` no name refers to any more (their chunks go by cascade).
fn collect(tx: &Tx<'_>, hashes: &[String]) -> Result<()> {
    for hash in hashes {
        tx.execute(
            "DELETE FROM blobs WHERE hash = ?1
             AND NOT EXISTS (SELECT 1 FROM file_names WHERE hash = ?1)",
            params![hash],
        )?;
    }
    Ok(())
}

/// What a PostgreSQL library's file tables hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlobStats {
    /// Distinct contents (`blobs`).
    pub blobs: u64,
    /// Chunk rows (`blob_chunks`).
    pub chunks: u64,
    /// Names (`file_names`), the TTS cache's included.
    pub names: u64,
    /// Bytes stored once each (the sum of the blobs' sizes).
    pub bytes: u64,
}

/// The counts of [`BlobStats`].
pub(crate) fn stats(tx: &Tx<'_>) -> Result<BlobStats> {
    tx.query_opt(
        "SELECT (SELECT COUNT(*) FROM blobs), (SELECT COUNT(*) FROM blob_chunks),
                (SELECT COUNT(*) FROM file_names),
                (SELECT CAST(COALESCE(SUM(size), 0) AS BIGINT) FROM blobs)",
        params![],
        |r| {
            Ok(BlobStats {
                blobs: size_of(r.get(0)?),
                chunks: size_of(r.get(1)?),
                names: size_of(r.get(2)?),
                bytes: size_of(r.get(3)?),
            })
        },
    )?
    .ok_or_else(|| StoreError::Database("no answer to a count".into()))
}
