//! The TTS cache (Tavo §20 "storage": a clearable category — replaying re-calls the API once
//! it is cleared): synthesized audio named `<sha256>.<ext>` by the hash of everything that
//! decides the sound (platform, base URL, model, voice, options, text). The same text in the
//! same voice is synthesized once and served from here; the browser app plays it from
//! `GET /api/tts/audio/{name}`.
//!
//! The bytes are kept by the store ([`FileStore::tts_save`] and its siblings): under
//! `<data>/cache/tts/` on a SQLite library, in the database on a PostgreSQL one, so every
//! replica replays what one of them synthesized. The cache is not library data: backups leave
//! it out, and clearing it loses nothing.

use sha2::{Digest, Sha256};
use tavo_llm::media::Platform;
use tavo_llm::media::speech::{Audio, VoiceConnection, extension_for, mime_for};
use tavo_store::{FileStore, StoreError};

/// Extensions a cached file may have.
const EXTENSIONS: [&str; 6] = ["mp3", "wav", "opus", "aac", "flac", "pcm"];

/// The key of one synthesis.
pub fn key(conn: &VoiceConnection, voice: &str, text: &str) -> String {
    let mut h = Sha256::new();
    for part in [
        conn.platform.id(),
        conn.base(),
        conn.model.as_str(),
        voice,
        &serde_json::to_string(&conn.options).unwrap_or_default(),
        text,
    ] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    hex::encode(h.finalize())
}

/// Whether `name` is a cache file name (`<64 hex>.<ext>`): the only names the audio route
/// serves, so no path can leave the directory.
pub fn valid_name(name: &str) -> bool {
    let Some((stem, ext)) = name.split_once('.') else {
        return false;
    };
    stem.len() == 64
        && stem
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        && EXTENSIONS.contains(&ext)
}

/// A cached file for `key`, if any: its name and size.
pub fn find(files: &FileStore, key: &str) -> Result<Option<(String, u64)>, StoreError> {
    let names: Vec<String> = EXTENSIONS
        .iter()
        .map(|ext| format!("{key}.{ext}"))
        .collect();
    files.tts_find(&names)
}

/// Stores `audio` under `key` (whole or not at all); answers its name.
pub fn store(files: &FileStore, key: &str, audio: &Audio) -> Result<String, StoreError> {
    let name = format!("{key}.{}", extension_for(&audio.mime));
    files.tts_save(&name, &audio.bytes)?;
    Ok(name)
}

/// The bytes and MIME type of a cached file; `None` for a name that is not a cache name.
pub fn read(files: &FileStore, name: &str) -> Result<Option<(Vec<u8>, &'static str)>, StoreError> {
    if !valid_name(name) {
        return Ok(None);
    }
    let ext = name.rsplit('.').next().unwrap_or("mp3");
    Ok(files.tts_load(name)?.map(|bytes| (bytes, mime_for(ext))))
}

/// Files and bytes in the cache.
pub fn usage(files: &FileStore) -> Result<(u64, u64), StoreError> {
    files.tts_usage()
}

/// Removes every cached file; answers how many files and bytes went.
pub fn clear(files: &FileStore) -> Result<(u64, u64), StoreError> {
    files.tts_clear()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tavo_llm::media::speech::VoicePlatform;

    #[test]
    fn names_are_hashes_and_only_they_are_served() {
        let conn = VoiceConnection::new("v", VoicePlatform::Openai, "tts-1");
        let k = key(&conn, "alloy", "hi");
        assert_eq!(k.len(), 64);
        assert_ne!(k, key(&conn, "nova", "hi"), "the voice changes the sound");
        assert_ne!(k, key(&conn, "alloy", "hi!"));
        assert!(valid_name(&format!("{k}.mp3")));
        for bad in [
            "../x.mp3",
            "abc.mp3",
            &format!("{k}.exe"),
            &format!("{k}.mp3/.."),
        ] {
            assert!(!valid_name(bad), "{bad}");
        }
        let dir = tempfile::tempdir().expect("dir");
        let d = FileStore::new(dir.path().join("files"));
        assert_eq!(find(&d, &k).expect("find"), None);
        let name = store(
            &d,
            &k,
            &Audio {
                bytes: b"ID3".to_vec(),
                mime: "audio/mpeg".into(),
            },
        )
        .expect("stored");
        assert_eq!(find(&d, &k).expect("find"), Some((name.clone(), 3)));
        assert!(dir.path().join("cache/tts").join(&name).is_file());
        assert_eq!(
            read(&d, &name).expect("read"),
            Some((b"ID3".to_vec(), "audio/mpeg"))
        );
        assert_eq!(usage(&d).expect("usage"), (1, 3));
        assert_eq!(clear(&d).expect("cleared"), (1, 3));
        assert_eq!(usage(&d).expect("usage"), (0, 0));
        assert_eq!(read(&d, &name).expect("read"), None);
    }
}
