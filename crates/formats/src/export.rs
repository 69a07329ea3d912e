//! The `export_*` entry points.

use crate::card::{self, CardSpec};
use crate::charx::CharxAsset;
use crate::error::{FormatError, Result};
use crate::{charx, chat, lorebook, native, png, preset, regex};
use serde_json::{Value, json};
use std::fmt;
use std::str::FromStr;
use tavo_model::{Character, Chat, ImageType, Lorebook, Message, Persona, Preset, RegexGroup};

/// Output formats (`--format` values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExportFormat {
    /// `ccv3-json`: character card V3 JSON (with V1 mirrors, as SillyTavern writes it).
    Ccv3Json,
    /// `ccv2-json`: character card V2 JSON.
    Ccv2Json,
    /// `png`: card embedded in the avatar (or a placeholder) as `chara` + `ccv3` chunks.
    Png,
    /// `charx`: zip with `card.json` and the avatar.
    Charx,
    /// `tavo`: Tavo-native JSON envelope (every kind).
    Tavo,
    /// `st`: SillyTavern form (world info, chat-completion preset, regex scripts).
    St,
    /// `ccv3`: CCv3 `lorebook_v3` for lorebooks.
    Ccv3,
    /// `jsonl`: SillyTavern chat.
    Jsonl,
}

impl ExportFormat {
    /// The `--format` string.
    pub fn as_str(self) -> &'static str {
        match self {
            ExportFormat::Ccv3Json => "ccv3-json",
            ExportFormat::Ccv2Json => "ccv2-json",
            ExportFormat::Png => "png",
            ExportFormat::Charx => "charx",
            ExportFormat::Tavo => "tavo",
            ExportFormat::St => "st",
            ExportFormat::Ccv3 => "ccv3",
            ExportFormat::Jsonl => "jsonl",
        }
    }

    /// File extension for this format.
    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Png => "png",
            ExportFormat::Charx => "charx",
            ExportFormat::Jsonl => "jsonl",
            _ => "json",
        }
    }
}

impl fmt::Display for ExportFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ExportFormat {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        Ok(match s.trim().to_ascii_lowercase().as_str() {
            "ccv3-json" => ExportFormat::Ccv3Json,
            "ccv2-json" => ExportFormat::Ccv2Json,
            "png" => ExportFormat::Png,
            "charx" => ExportFormat::Charx,
            "tavo" => ExportFormat::Tavo,
            "st" => ExportFormat::St,
            "ccv3" => ExportFormat::Ccv3,
            "jsonl" => ExportFormat::Jsonl,
            _ => {
                return Err(format!(
                    "unknown format '{s}': use ccv3-json, ccv2-json, png, charx, tavo, st, ccv3 or jsonl"
                ));
            }
        })
    }
}

fn unsupported(kind: &str, f: ExportFormat, allowed: &str) -> FormatError {
    FormatError::whole(format!(
        "a {kind} cannot be exported as '{f}'; use {allowed}"
    ))
}

fn pretty(v: &Value) -> Result<Vec<u8>> {
    let mut out = serde_json::to_vec_pretty(v)
        .map_err(|e| FormatError::whole(format!("cannot serialize: {e}")))?;
    out.push(b'\n');
    Ok(out)
}

fn compact(v: &Value) -> Result<Vec<u8>> {
    serde_json::to_vec(v).map_err(|e| FormatError::whole(format!("cannot serialize: {e}")))
}

/// Exports a character (with its lorebook, regex group and avatar image).
/// Formats: `ccv3-json`, `ccv2-json`, `png`, `charx`, `tavo`. `charx` and `tavo` carry the
/// avatar as stored, whatever its type (PNG, JPEG, GIF, WebP); `png` embeds the card into a
/// PNG avatar, and uses a placeholder image when the avatar is missing or of another type
/// (pixels are never decoded, so a WebP avatar cannot become the PNG).
pub fn export_character(
    c: &Character,
    lorebook: Option<&Lorebook>,
    regex: Option<&RegexGroup>,
    avatar: Option<&[u8]>,
    f: ExportFormat,
) -> Result<Vec<u8>> {
    export_character_with_assets(c, lorebook, regex, avatar, &[], f)
}

/// Whether a file extension names image type `t` (`jpeg` and `jpg` both name JPEG).
fn extension_fits(t: ImageType, ext: &str) -> bool {
    ext.eq_ignore_ascii_case(t.extension())
        || (t == ImageType::Jpeg
            && (ext.eq_ignore_ascii_case("jpg") || ext.eq_ignore_ascii_case("jpeg")))
}

/// [`export_character`] with the files a charx card carried besides its avatar (sprites,
/// backgrounds, `x_meta/`, modules): a `charx` export writes each back at its own path, and the
/// avatar where the card's `assets` list puts its main icon when that path has the avatar's
/// image type, so import → export keeps the archive's members and the card's `assets` list.
/// Other formats have no place for them and ignore them.
pub fn export_character_with_assets(
    c: &Character,
    lorebook: Option<&Lorebook>,
    regex: Option<&RegexGroup>,
    avatar: Option<&[u8]>,
    assets: &[CharxAsset],
    f: ExportFormat,
) -> Result<Vec<u8>> {
    match f {
        ExportFormat::Ccv3Json => pretty(&card::to_json(c, lorebook, regex, CardSpec::V3)),
        ExportFormat::Ccv2Json => pretty(&card::to_json(c, lorebook, regex, CardSpec::V2)),
        ExportFormat::Png => {
            use base64::Engine as _;
            let b64 = base64::engine::general_purpose::STANDARD;
            let v2 = b64.encode(compact(&card::to_json(c, lorebook, regex, CardSpec::V2))?);
            let v3 = b64.encode(compact(&card::to_json(c, lorebook, regex, CardSpec::V3))?);
            let image = match avatar.filter(|a| png::is_png(a)) {
                Some(a) => a.to_vec(),
                None => png::placeholder_png()?,
            };
            png::write_text_chunks(&image, &[("chara", &v2), ("ccv3", &v3)])
        }
        ExportFormat::Charx => {
            let mut card = card::to_json(c, lorebook, regex, CardSpec::V3);
            // Any image type is kept as it is (a WebP icon stays WebP), under its own extension.
            let image = avatar.and_then(|a| Some((a, ImageType::sniff(a)?)));
            let avatar = image.map(|(a, _)| a);
            // The card's own main icon path, when the avatar can go back there as it is.
            let avatar_at = image.and_then(|(_, t)| {
                charx::main_icon_path(&card)
                    .filter(|p| {
                        p.rsplit_once('.')
                            .is_some_and(|(_, e)| extension_fits(t, e))
                    })
                    .filter(|p| !assets.iter().any(|a| &a.path == p))
            });
            if avatar_at.is_none()
                && let Some((_, image)) = image
                && let Some(Value::Object(data)) = card.get_mut("data")
            {
                let uri = format!("embeded://{}", charx::avatar_path(image));
                let assets = data.entry("assets").or_insert_with(|| json!([]));
                if let Value::Array(list) = assets
                    && !list
                        .iter()
                        .any(|a| a.get("uri").and_then(Value::as_str) == Some(uri.as_str()))
                {
                    list.insert(
                        0,
                        json!({"type": "icon", "uri": uri, "name": "main", "ext": image.extension()}),
                    );
                }
            }
            charx::write(&pretty(&card)?, avatar, avatar_at.as_deref(), assets)
        }
        ExportFormat::Tavo => {
            let env = native::envelope(
                "character",
                native::portable(c)?,
                vec![
                    (
                        "lorebook",
                        lorebook
                            .map(native::portable)
                            .transpose()?
                            .unwrap_or(Value::Null),
                    ),
                    (
                        "regex",
                        regex
                            .map(native::portable)
                            .transpose()?
                            .unwrap_or(Value::Null),
                    ),
                    ("avatar", native::avatar_value(avatar)),
                ],
            );
            pretty(&env)
        }
        other => Err(unsupported(
            "character",
            other,
            "ccv3-json, ccv2-json, png, charx or tavo",
        )),
    }
}

/// Exports a lorebook. Formats: `st` (world info), `ccv3` (`lorebook_v3`), `tavo`.
pub fn export_lorebook(b: &Lorebook, f: ExportFormat) -> Result<Vec<u8>> {
    match f {
        ExportFormat::St => pretty(&lorebook::to_st_world_info(b)),
        ExportFormat::Ccv3 => pretty(&lorebook::to_lorebook_v3(b)),
        ExportFormat::Tavo => pretty(&native::envelope("lorebook", native::portable(b)?, vec![])),
        other => Err(unsupported("lorebook", other, "st, ccv3 or tavo")),
    }
}

/// Exports a preset with its regex group. Formats: `st`, `tavo`.
pub fn export_preset(p: &Preset, regex: Option<&RegexGroup>, f: ExportFormat) -> Result<Vec<u8>> {
    match f {
        ExportFormat::St => pretty(&preset::to_st(p, regex)),
        ExportFormat::Tavo => {
            let r = regex
                .map(native::portable)
                .transpose()?
                .unwrap_or(Value::Null);
            pretty(&native::envelope(
                "preset",
                native::portable(p)?,
                vec![("regex", r)],
            ))
        }
        other => Err(unsupported("preset", other, "st or tavo")),
    }
}

/// Exports a regex group. Formats: `st` (one script object, or an array), `tavo`.
pub fn export_regex(r: &RegexGroup, f: ExportFormat) -> Result<Vec<u8>> {
    match f {
        ExportFormat::St => pretty(&regex::to_st(r)),
        ExportFormat::Tavo => pretty(&native::envelope("regex", native::portable(r)?, vec![])),
        other => Err(unsupported("regex group", other, "st or tavo")),
    }
}

/// Exports a persona. Format: `tavo` (SillyTavern keeps personas inside its settings file).
pub fn export_persona(p: &Persona, f: ExportFormat) -> Result<Vec<u8>> {
    match f {
        ExportFormat::Tavo => pretty(&native::envelope("persona", native::portable(p)?, vec![])),
        other => Err(unsupported("persona", other, "tavo")),
    }
}

/// Exports a chat with its messages. Formats: `jsonl` (SillyTavern), `tavo`.
///
/// Speaker names come from each message's `name`, else from the chat's `characters` (by
/// `characterId`) and `persona`; ids are install-specific and are not written.
pub fn export_chat(c: &Chat, messages: &[Message], f: ExportFormat) -> Result<Vec<u8>> {
    match f {
        ExportFormat::Jsonl => chat::to_jsonl(c, messages),
        ExportFormat::Tavo => {
            let mut list = Vec::with_capacity(messages.len());
            for m in messages {
                let mut m = m.clone();
                if m.name.is_none() {
                    m.name = Some(chat::speaker_name(c, &m));
                }
                m.id = None;
                m.floor = None;
                m.character_id = None;
                list.push(native::portable(&m)?);
            }
            pretty(&native::envelope(
                "chat",
                native::portable(c)?,
                vec![("messages", Value::Array(list))],
            ))
        }
        other => Err(unsupported("chat", other, "jsonl or tavo")),
    }
}
