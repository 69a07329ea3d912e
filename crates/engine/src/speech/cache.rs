//! The TTS cache (Tavo §20 "storage": a clearable category — replaying re-calls the API once
//! it is cleared): synthesized audio under `<data>/cache/tts/<sha256>.<ext>`, named by the
//! hash of everything that decides the sound (platform, base URL, model, voice, options,
//! text). The same text in the same voice is synthesized once and served from here; the
//! browser app plays it from `GET /api/tts/audio/{name}`.
//!
//! `cache/` is not library data: backups leave it out, and clearing it loses nothing.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use tavo_llm::media::Platform;
use tavo_llm::media::speech::{Audio, VoiceConnection, extension_for, mime_for};

/// Extensions a cached file may have.
const EXTENSIONS: [&str; 6] = ["mp3", "wav", "opus", "aac", "flac", "pcm"];

/// The cache directory of a library.
pub fn dir(data_dir: &Path) -> PathBuf {
    data_dir.join("cache").join("tts")
}

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

/// A cached file for `key`, if any: its name.
pub fn find(dir: &Path, key: &str) -> Option<String> {
    EXTENSIONS
        .iter()
        .map(|ext| format!("{key}.{ext}"))
        .find(|name| dir.join(name).is_file())
}

/// Stores `audio` under `key` (written whole, then renamed into place); answers its name.
pub fn store(dir: &Path, key: &str, audio: &Audio) -> std::io::Result<String> {
    std::fs::create_dir_all(dir)?;
    let name = format!("{key}.{}", extension_for(&audio.mime));
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, &audio.bytes)?;
    std::fs::rename(&tmp, dir.join(&name))?;
    Ok(name)
}

/// The bytes and MIME type of a cached file.
pub fn read(dir: &Path, name: &str) -> std::io::Result<Option<(Vec<u8>, &'static str)>> {
    if !valid_name(name) {
        return Ok(None);
    }
    let ext = name.rsplit('.').next().unwrap_or("mp3");
    match std::fs::read(dir.join(name)) {
        Ok(bytes) => Ok(Some((bytes, mime_for(ext)))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Files and bytes in the cache.
pub fn usage(dir: &Path) -> std::io::Result<(u64, u64)> {
    let mut files = 0;
    let mut bytes = 0;
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((0, 0)),
        Err(e) => return Err(e),
    };
    for entry in entries {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            files += 1;
            bytes += entry.metadata()?.len();
        }
    }
    Ok((files, bytes))
}

/// Removes every cached file; answers how many files and bytes went.
pub fn clear(dir: &Path) -> std::io::Result<(u64, u64)> {
    let (files, bytes) = usage(dir)?;
    match std::fs::remove_dir_all(dir) {
        Ok(()) => Ok((files, bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((0, 0)),
        Err(e) => Err(e),
    }
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
        let d = super::dir(dir.path());
        assert_eq!(find(&d, &k), None);
        let name = store(
            &d,
            &k,
            &Audio {
                bytes: b"ID3".to_vec(),
                mime: "audio/mpeg".into(),
            },
        )
        .expect("stored");
        assert_eq!(find(&d, &k).as_deref(), Some(name.as_str()));
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
