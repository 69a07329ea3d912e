//! `.charx` cards: a zip holding `card.json` (CCv3) and asset files.
//!
//! Guards: at most [`MAX_ENTRIES`] members, `card.json` and the avatar capped in size (checked
//! both on the declared size and while inflating, so a zip bomb stops early), member names
//! resolved with `enclosed_name` (no `..` or absolute paths).

use crate::error::{FormatError, Result, Warning};
use std::io::{Cursor, Read, Write};
use tavo_model::ImageType;

/// Most zip members read.
pub const MAX_ENTRIES: usize = 10_000;
/// Largest `card.json` accepted.
pub const MAX_CARD_JSON: u64 = 64 * 1024 * 1024;
/// Largest avatar image accepted.
pub const MAX_AVATAR: u64 = 32 * 1024 * 1024;

/// Path of a PNG avatar written into exported charx files (see [`avatar_path`]).
pub const AVATAR_PATH: &str = "assets/icon/image/main.png";

/// Path of the avatar written into exported charx files: `assets/icon/image/main.<ext>`, with
/// the extension of the image's own type (RisuAI names icons this way).
pub fn avatar_path(image: ImageType) -> String {
    format!("assets/icon/image/main.{}", image.extension())
}

/// What a charx file holds that the importer uses.
#[derive(Debug, Clone)]
pub struct CharxContents {
    /// Raw `card.json` bytes.
    pub card_json: Vec<u8>,
    /// Avatar bytes (the `icon` asset named `main`, else the first icon), byte for byte, when
    /// it is an image ([`ImageType`]: PNG, JPEG, GIF or WebP; RisuAI writes WebP icons).
    pub avatar: Option<Vec<u8>>,
}

/// Whether the bytes start like a zip archive.
pub fn is_zip(bytes: &[u8]) -> bool {
    bytes.starts_with(b"PK\x03\x04")
}

fn read_member(
    archive: &mut zip::ZipArchive<Cursor<&[u8]>>,
    name: &str,
    cap: u64,
) -> Result<Vec<u8>> {
    let file = archive
        .by_name(name)
        .map_err(|e| FormatError::at(name, format!("cannot read zip member: {e}")))?;
    if file.size() > cap {
        return Err(FormatError::at(
            name,
            format!("is {} bytes, more than the {cap}-byte limit", file.size()),
        ));
    }
    let mut out = Vec::new();
    file.take(cap + 1)
        .read_to_end(&mut out)
        .map_err(|e| FormatError::at(name, format!("cannot inflate zip member: {e}")))?;
    if out.len() as u64 > cap {
        return Err(FormatError::at(
            name,
            format!("inflates to more than the {cap}-byte limit (zip bomb?)"),
        ));
    }
    Ok(out)
}

/// Strips RisuAI's `embeded://` (sic), `embedded://` and `__asset:` prefixes.
fn asset_path(uri: &str) -> Option<&str> {
    ["embeded://", "embedded://", "__asset:"]
        .iter()
        .find_map(|p| uri.strip_prefix(p))
}

/// Reads `card.json` and the avatar from a charx archive.
pub fn read(bytes: &[u8], warnings: &mut Vec<Warning>) -> Result<CharxContents> {
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes))
        .map_err(|e| FormatError::whole(format!("not a readable zip (charx) file: {e}")))?;
    if archive.len() > MAX_ENTRIES {
        return Err(FormatError::whole(format!(
            "the archive has {} members, more than the {MAX_ENTRIES} allowed",
            archive.len()
        )));
    }
    let mut names = Vec::with_capacity(archive.len());
    for i in 0..archive.len() {
        let f = archive
            .by_index_raw(i)
            .map_err(|e| FormatError::whole(format!("broken zip directory: {e}")))?;
        match f.enclosed_name() {
            Some(p) => names.push(p.to_string_lossy().replace('\\', "/")),
            None => warnings.push(Warning::new(
                "charx.unsafe-path",
                format!(
                    "member '{}' has an unsafe path and was ignored",
                    f.name().map(|n| n.into_owned()).unwrap_or_default()
                ),
            )),
        }
    }
    let card_name = names
        .iter()
        .find(|n| n.as_str() == "card.json")
        .cloned()
        .ok_or_else(|| FormatError::whole("the charx archive has no card.json"))?;
    let card_json = read_member(&mut archive, &card_name, MAX_CARD_JSON)?;
    // Find the avatar from the card's assets list.
    let mut avatar = None;
    let parsed: Option<serde_json::Value> =
        serde_json::from_slice(crate::text::strip_bom(&card_json)).ok();
    let assets = parsed
        .as_ref()
        .and_then(|v| v.get("data"))
        .and_then(|d| d.get("assets"))
        .and_then(|a| a.as_array())
        .cloned()
        .unwrap_or_default();
    let icons: Vec<&serde_json::Value> = assets
        .iter()
        .filter(|a| a.get("type").and_then(|t| t.as_str()) == Some("icon"))
        .collect();
    let main = icons
        .iter()
        .find(|a| a.get("name").and_then(|n| n.as_str()) == Some("main"))
        .or_else(|| icons.first());
    if let Some(uri) = main.and_then(|a| a.get("uri")).and_then(|u| u.as_str()) {
        match asset_path(uri).filter(|p| names.iter().any(|n| n == p)) {
            Some(p) => {
                let data = read_member(&mut archive, p, MAX_AVATAR)?;
                if ImageType::sniff(&data).is_some() {
                    avatar = Some(data);
                } else {
                    warnings.push(Warning::new(
                        "charx.avatar",
                        format!(
                            "the avatar '{p}' is not a PNG, JPEG, GIF or WebP image; it was not imported"
                        ),
                    ));
                }
            }
            None if uri.starts_with("ccdefault:") => {}
            None => warnings.push(Warning::new(
                "charx.avatar",
                format!("the avatar '{uri}' is not in the archive"),
            )),
        }
    }
    let others = names
        .iter()
        .filter(|n| n.as_str() != "card.json")
        .count()
        .saturating_sub(usize::from(avatar.is_some()));
    if others > 0 {
        warnings.push(Warning::new(
            "charx.assets",
            format!("{others} other archive members (emotion images, modules …) were not imported; the card's `assets` list is kept"),
        ));
    }
    Ok(CharxContents { card_json, avatar })
}

/// Writes a charx archive with `card.json` and, when given, the avatar image at
/// [`avatar_path`] of its type (bytes that are no image are not written).
pub fn write(card_json: &[u8], avatar: Option<&[u8]>) -> Result<Vec<u8>> {
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let err = |e: &dyn std::fmt::Display| FormatError::whole(format!("cannot write charx: {e}"));
    w.start_file("card.json", opts).map_err(|e| err(&e))?;
    w.write_all(card_json).map_err(|e| err(&e))?;
    if let Some((a, image)) = avatar.and_then(|a| Some((a, ImageType::sniff(a)?))) {
        let stored = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        w.start_file(avatar_path(image), stored)
            .map_err(|e| err(&e))?;
        w.write_all(a).map_err(|e| err(&e))?;
    }
    let cur = w.finish().map_err(|e| err(&e))?;
    Ok(cur.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_then_read() {
        let png = crate::png::placeholder_png().unwrap();
        let card = br#"{"spec":"chara_card_v3","data":{"name":"X","assets":[{"type":"icon","uri":"embeded://assets/icon/image/main.png","name":"main","ext":"png"}]}}"#;
        let z = write(card, Some(&png)).unwrap();
        let mut w = Vec::new();
        let c = read(&z, &mut w).unwrap();
        assert_eq!(c.card_json, card.to_vec());
        assert_eq!(c.avatar, Some(png));
        assert!(w.is_empty(), "{w:?}");
    }

    #[test]
    fn missing_card_json_is_refused() {
        let z = {
            let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
            w.start_file("x.txt", zip::write::SimpleFileOptions::default())
                .unwrap();
            w.write_all(b"x").unwrap();
            w.finish().unwrap().into_inner()
        };
        assert!(
            read(&z, &mut Vec::new())
                .unwrap_err()
                .message
                .contains("card.json")
        );
        assert!(read(b"PK\x03\x04garbage", &mut Vec::new()).is_err());
    }
}
