//! `.charx` cards: a zip holding `card.json` (CCv3) and asset files.
//!
//! Guards: at most [`MAX_ENTRIES`] members, `card.json`, the avatar and every other member capped
//! in size, and all members together capped at [`MAX_ASSETS_TOTAL`] (checked on the declared
//! sizes before anything is inflated, and again while inflating, so a zip bomb stops early),
//! member names resolved with `enclosed_name` (no `..` or absolute paths).
//!
//! Every member besides `card.json` and the avatar (sprites, backgrounds, `x_meta/*.json`,
//! `module.risum`, …) is returned as a [`CharxAsset`] under its archive path, so a store can keep
//! it and [`write`] can put it back where it was: the card's `assets` list (`embeded://` URIs)
//! keeps pointing at the same members.

use crate::error::{FormatError, Result, Warning};
use std::io::{Cursor, Read, Write};
use tavo_model::ImageType;

/// Most zip members read.
pub const MAX_ENTRIES: usize = 10_000;
/// Largest `card.json` accepted.
pub const MAX_CARD_JSON: u64 = 64 * 1024 * 1024;
/// Largest avatar image accepted.
pub const MAX_AVATAR: u64 = 32 * 1024 * 1024;
/// Largest single asset member (sprite, background, module …) accepted.
pub const MAX_ASSET: u64 = 32 * 1024 * 1024;
/// Most bytes all members of one archive may inflate to together.
pub const MAX_ASSETS_TOTAL: u64 = 256 * 1024 * 1024;
/// Deepest member path kept (`assets/other/image/x.png` is 4).
pub const MAX_ASSET_DEPTH: usize = 16;

/// One archive member kept as it is: its path inside the archive (`/`-separated, checked: no
/// `..`, no absolute path, no empty or `.` component, no `\` or `:`) and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CharxAsset {
    /// The member's path, e.g. `assets/other/image/smile.png` or `x_meta/smile.json`.
    pub path: String,
    /// The member's bytes.
    pub bytes: Vec<u8>,
}

/// Whether `path` is a member path an asset may have (see [`CharxAsset::path`]); the store
/// applies the same rule before it writes a file under it.
pub fn is_safe_asset_path(path: &str) -> bool {
    let parts: Vec<&str> = path.split('/').collect();
    !path.is_empty()
        && parts.len() <= MAX_ASSET_DEPTH
        && parts.iter().all(|p| {
            !p.is_empty()
                && *p != "."
                && *p != ".."
                && p.len() <= 255
                && !p.contains(['\\', ':', '\0'])
        })
}

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
    /// Every other member, in archive order, byte for byte.
    pub assets: Vec<CharxAsset>,
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

/// The archive path of a card's main icon: the `uri` of the `icon` asset named `main` (else the
/// first icon) in `data.assets`, when it points into the archive (`embeded://`, `embedded://`,
/// `__asset:`).
pub fn main_icon_path(card: &serde_json::Value) -> Option<String> {
    let assets = card.get("data")?.get("assets")?.as_array()?;
    let icons: Vec<&serde_json::Value> = assets
        .iter()
        .filter(|a| a.get("type").and_then(|t| t.as_str()) == Some("icon"))
        .collect();
    let main = icons
        .iter()
        .find(|a| a.get("name").and_then(|n| n.as_str()) == Some("main"))
        .or_else(|| icons.first())?;
    asset_path(main.get("uri")?.as_str()?).map(str::to_owned)
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
    let avatar_member = avatar
        .is_some()
        .then(|| main.and_then(|a| a.get("uri")).and_then(|u| u.as_str()))
        .flatten()
        .and_then(asset_path)
        .map(str::to_owned);
    let assets = read_assets(&mut archive, &names, avatar_member.as_deref(), warnings)?;
    Ok(CharxContents {
        card_json,
        avatar,
        assets,
    })
}

/// Reads every member but `card.json` and the avatar. The declared sizes are summed first, so
/// an archive whose members claim more than [`MAX_ASSETS_TOTAL`] is refused before anything is
/// inflated; each member is then read with its own cap and the running total re-checked.
fn read_assets(
    archive: &mut zip::ZipArchive<Cursor<&[u8]>>,
    names: &[String],
    avatar: Option<&str>,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<CharxAsset>> {
    let mut wanted = Vec::new();
    let mut declared: u64 = 0;
    for name in names {
        if name == "card.json" || Some(name.as_str()) == avatar || name.ends_with('/') {
            continue;
        }
        if !is_safe_asset_path(name) {
            warnings.push(Warning::new(
                "charx.unsafe-path",
                format!("member '{name}' has an unsafe path and was ignored"),
            ));
            continue;
        }
        let file = archive
            .by_name(name)
            .map_err(|e| FormatError::at(name, format!("cannot read zip member: {e}")))?;
        if file.is_dir() {
            continue;
        }
        declared = declared.saturating_add(file.size());
        if declared > MAX_ASSETS_TOTAL {
            return Err(FormatError::whole(format!(
                "the archive's members are larger than the {MAX_ASSETS_TOTAL}-byte limit together"
            )));
        }
        wanted.push(name.clone());
    }
    let mut total: u64 = 0;
    let mut assets = Vec::with_capacity(wanted.len());
    for name in wanted {
        let bytes = read_member(archive, &name, MAX_ASSET)?;
        total += bytes.len() as u64;
        if total > MAX_ASSETS_TOTAL {
            return Err(FormatError::whole(format!(
                "the archive's members inflate to more than the {MAX_ASSETS_TOTAL}-byte limit together (zip bomb?)"
            )));
        }
        assets.push(CharxAsset { path: name, bytes });
    }
    Ok(assets)
}

/// Writes a charx archive with `card.json`, the assets at their own paths (an unsafe path or a
/// repeated one is skipped) and, when given, the avatar image at `avatar_at` (a path, e.g. the
/// one the card's `assets` list names for its main icon), else at [`avatar_path`] of its type
/// (bytes that are no image are not written).
pub fn write(
    card_json: &[u8],
    avatar: Option<&[u8]>,
    avatar_at: Option<&str>,
    assets: &[CharxAsset],
) -> Result<Vec<u8>> {
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let err = |e: &dyn std::fmt::Display| FormatError::whole(format!("cannot write charx: {e}"));
    w.start_file("card.json", opts).map_err(|e| err(&e))?;
    w.write_all(card_json).map_err(|e| err(&e))?;
    let mut written = std::collections::HashSet::new();
    if let Some((a, image)) = avatar.and_then(|a| Some((a, ImageType::sniff(a)?))) {
        let stored = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        let at = avatar_at
            .filter(|p| is_safe_asset_path(p) && *p != "card.json")
            .map_or_else(|| avatar_path(image), str::to_owned);
        w.start_file(at.as_str(), stored).map_err(|e| err(&e))?;
        w.write_all(a).map_err(|e| err(&e))?;
        written.insert(at);
    }
    for asset in assets {
        if asset.path == "card.json"
            || !is_safe_asset_path(&asset.path)
            || !written.insert(asset.path.clone())
        {
            continue;
        }
        w.start_file(asset.path.as_str(), opts)
            .map_err(|e| err(&e))?;
        w.write_all(&asset.bytes).map_err(|e| err(&e))?;
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
        let sprite = CharxAsset {
            path: "assets/other/image/smile.png".into(),
            bytes: b"not really a png".to_vec(),
        };
        let meta = CharxAsset {
            path: "x_meta/smile.json".into(),
            bytes: br#"{"type":"png"}"#.to_vec(),
        };
        let z = write(card, Some(&png), None, &[sprite.clone(), meta.clone()]).unwrap();
        let mut w = Vec::new();
        let c = read(&z, &mut w).unwrap();
        assert_eq!(c.card_json, card.to_vec());
        assert_eq!(c.avatar, Some(png));
        assert_eq!(c.assets, vec![sprite, meta]);
        assert!(w.is_empty(), "{w:?}");
    }

    #[test]
    fn asset_paths_are_checked() {
        for ok in ["a.png", "assets/icon/image/main.png", "x_meta/한글.json"] {
            assert!(is_safe_asset_path(ok), "{ok}");
        }
        for bad in [
            "", "/a", "a//b", "../a", "a/../b", "./a", "a\\b", "c:/a", "a/",
        ] {
            assert!(!is_safe_asset_path(bad), "{bad}");
        }
    }

    #[test]
    fn members_claiming_too_much_together_are_refused_before_inflating() {
        // Nine members of 32 MiB of zeros each: every one under the per-member cap, together
        // over the total; the declared sizes stop the read before any is inflated.
        let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        w.start_file("card.json", opts).unwrap();
        w.write_all(br#"{"spec":"chara_card_v3","data":{"name":"X"}}"#)
            .unwrap();
        let zeros = vec![0u8; 1 << 20];
        for i in 0..9 {
            w.start_file(format!("assets/other/image/{i}.bin"), opts)
                .unwrap();
            for _ in 0..32 {
                w.write_all(&zeros).unwrap();
            }
        }
        let z = w.finish().unwrap().into_inner();
        assert!(z.len() < 2 << 20, "{}", z.len());
        let e = read(&z, &mut Vec::new()).unwrap_err();
        assert!(e.message.contains("limit together"), "{e:?}");
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
