//! Kind detection and the [`import_bytes`] entry point.

use crate::card::{self, CardParts};
use crate::chat::ImportedChat;
use crate::error::{FormatError, Result, Warning};
use crate::value::Ctx;
use crate::{charx, lorebook, native, png, preset, regex, text};
use base64::Engine as _;
use serde_json::Value;
use tavo_model::{
    AssetKind, Character, Chat, Lorebook, Message, Persona, Preset, RegexGroup, UnknownKind,
};

/// What one file yields.
///
/// Variants are unboxed on purpose: one value is produced per imported file and moved straight
/// into the store, so the size difference costs nothing and the match patterns stay simple.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Imported {
    /// A character card, with the lorebook and regex group it embeds (seed:
    /// `tavo.character.import` creates all three).
    Character {
        /// The character.
        character: Character,
        /// The card's image: a PNG card's image with the card chunks removed, a charx card's
        /// icon as it is (PNG, JPEG, GIF or WebP), a Tavo file's avatar.
        avatar: Option<Vec<u8>>,
        /// From `character_book`.
        lorebook: Option<Lorebook>,
        /// From `extensions.regex_scripts`.
        regex: Option<RegexGroup>,
        /// A charx card's other members (sprites, backgrounds, `x_meta/`, modules), to be kept
        /// and written back by a charx export; empty for every other format.
        assets: Vec<charx::CharxAsset>,
    },
    /// A persona.
    Persona(Persona),
    /// The personas of a SillyTavern `settings.json`, in its order (the default one `active`).
    Personas(Vec<Persona>),
    /// A SillyTavern group definition: its chat(s) with members, reply mode and mutes.
    Group(crate::st_group::ImportedGroup),
    /// A preset and the regex group of its `extensions.regex_scripts`.
    Preset {
        /// The preset.
        preset: Preset,
        /// Embedded regex scripts.
        regex: Option<RegexGroup>,
    },
    /// A lorebook.
    Lorebook(Lorebook),
    /// A regex group.
    Regex(RegexGroup),
    /// A chat with its messages and the names to match characters / persona by.
    Chat(ImportedChat),
}

impl Imported {
    /// The kind of this value.
    pub fn kind(&self) -> AssetKind {
        match self {
            Imported::Character { .. } => AssetKind::Character,
            Imported::Persona(_) | Imported::Personas(_) => AssetKind::Persona,
            Imported::Group(_) => AssetKind::Chat,
            Imported::Preset { .. } => AssetKind::Preset,
            Imported::Lorebook(_) => AssetKind::Lorebook,
            Imported::Regex(_) => AssetKind::Regex,
            Imported::Chat(_) => AssetKind::Chat,
        }
    }

    /// Display name of the main object.
    pub fn name(&self) -> &str {
        match self {
            Imported::Character { character, .. } => &character.name,
            Imported::Persona(p) => &p.name,
            Imported::Personas(list) => list.first().map_or("", |p| p.name.as_str()),
            Imported::Group(g) => &g.chat.chat.name,
            Imported::Preset { preset, .. } => &preset.name,
            Imported::Lorebook(b) => &b.name,
            Imported::Regex(r) => &r.name,
            Imported::Chat(c) => &c.chat.name,
        }
    }
}

/// One file's result: the value and every tolerated oddity.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportOutcome {
    /// The imported value.
    pub imported: Imported,
    /// Warnings (repairs, coercions, dropped references).
    pub warnings: Vec<Warning>,
}

/// Reads one file. `file_name` is used for error messages, default names and the `.jsonl`
/// hint; `kind` forces a kind instead of detecting it. Errors name the file and JSON path.
pub fn import_bytes(
    bytes: &[u8],
    file_name: &str,
    kind: Option<AssetKind>,
) -> Result<ImportOutcome, FormatError> {
    let mut ctx = Ctx::default();
    let imported =
        detect_and_read(&mut ctx, bytes, file_name, kind).map_err(|e| e.in_file(file_name))?;
    Ok(ImportOutcome {
        imported,
        warnings: ctx.warnings,
    })
}

fn wrong_kind(found: AssetKind, wanted: AssetKind) -> FormatError {
    FormatError::whole(format!(
        "the file holds a {found}, not a {wanted} (drop --kind or pick the right one)"
    ))
}

fn detect_and_read(
    ctx: &mut Ctx,
    bytes: &[u8],
    file_name: &str,
    kind: Option<AssetKind>,
) -> Result<Imported> {
    let stem = text::file_stem(file_name);
    if png::is_png(bytes) {
        check_kind(kind, AssetKind::Character)?;
        return read_png(ctx, bytes);
    }
    if charx::is_zip(bytes) {
        check_kind(kind, AssetKind::Character)?;
        return read_charx(ctx, bytes);
    }
    let jsonl_hint = file_name.to_ascii_lowercase().ends_with(".jsonl");
    if bytes.iter().all(u8::is_ascii_whitespace) {
        if jsonl_hint || kind == Some(AssetKind::Chat) {
            return Ok(Imported::Chat(crate::chat::from_jsonl(ctx, "", &stem)?));
        }
        return Err(FormatError::whole("the file is empty"));
    }
    let body = text::decode_text(bytes, &mut ctx.warnings);
    let parsed = text::parse_json(&body, &mut ctx.warnings);
    let value = match parsed {
        Ok(v) => v,
        Err(e) => {
            // Several JSON values on separate lines: a SillyTavern chat.
            if jsonl_hint || kind == Some(AssetKind::Chat) || first_line_is_object(&body) {
                check_kind(kind, AssetKind::Chat)?;
                return Ok(Imported::Chat(crate::chat::from_jsonl(ctx, &body, &stem)?));
            }
            return Err(e);
        }
    };
    if native::is_envelope(&value) {
        return read_native(ctx, &value, kind);
    }
    if crate::st_persona::looks_like_settings(&value) {
        check_kind(kind, AssetKind::Persona)?;
        return Ok(Imported::Personas(crate::st_persona::from_st_settings(
            ctx, &value,
        )?));
    }
    if crate::st_group::looks_like_group(&value) && kind.is_none_or(|k| k == AssetKind::Chat) {
        return Ok(Imported::Group(crate::st_group::from_st_group(
            ctx, &value, &stem,
        )?));
    }
    let sniffed = detect_json(&value);
    if let (Some(forced), Some(found)) = (kind, sniffed)
        && forced != found
    {
        return Err(wrong_kind(found, forced));
    }
    let detected = kind.or(sniffed).ok_or_else(|| {
        FormatError::whole("unrecognized content: not a character card, persona, SillyTavern settings.json, preset, lorebook, regex script, chat or group (use --kind to force one)")
    })?;
    if detected == AssetKind::Chat {
        return Ok(Imported::Chat(crate::chat::from_jsonl(ctx, &body, &stem)?));
    }
    read_json_kind(ctx, &value, detected, &stem)
}

fn check_kind(kind: Option<AssetKind>, found: AssetKind) -> Result<()> {
    match kind {
        Some(k) if k != found => Err(wrong_kind(found, k)),
        _ => Ok(()),
    }
}

fn first_line_is_object(body: &str) -> bool {
    body.lines()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| {
            serde_json::from_str::<Value>(l.trim_start_matches('\u{feff}'))
                .is_ok_and(|v| v.is_object())
        })
}

/// Detects the kind of a parsed JSON value.
fn detect_json(v: &Value) -> Option<AssetKind> {
    if card::looks_like_card(v) {
        return Some(AssetKind::Character);
    }
    if v.get("spec").and_then(Value::as_str) == Some("lorebook_v3") {
        return Some(AssetKind::Lorebook);
    }
    if preset::looks_like_st_preset(v) || v.get("basicPrompts").is_some() {
        return Some(AssetKind::Preset);
    }
    if regex::looks_like_st_script(v)
        || v.as_array()
            .is_some_and(|a| a.first().is_some_and(regex::looks_like_st_script))
    {
        return Some(AssetKind::Regex);
    }
    if let Some(entries) = v.get("entries") {
        if entries.is_object() {
            return Some(AssetKind::Lorebook);
        }
        if let Some(first) = entries.as_array().and_then(|a| a.first()) {
            if first.get("findRegex").is_some() {
                return Some(AssetKind::Regex);
            }
            return Some(AssetKind::Lorebook);
        }
        // An empty list: decide by the other keys.
        if v.get("firstMes").is_none() {
            return Some(AssetKind::Lorebook);
        }
    }
    if let Some(o) = v.as_object() {
        if o.contains_key("firstMes") {
            return Some(AssetKind::Character);
        }
        if o.contains_key("mes")
            || o.contains_key("chat_metadata")
            || (o.contains_key("user_name") && o.contains_key("character_name"))
        {
            return Some(AssetKind::Chat);
        }
    }
    None
}

fn read_json_kind(ctx: &mut Ctx, v: &Value, kind: AssetKind, stem: &str) -> Result<Imported> {
    match kind {
        AssetKind::Character => {
            if v.get("firstMes").is_some() && v.get("data").is_none() {
                let character: Character = native::parse_at(v, "")?;
                return Ok(Imported::Character {
                    character,
                    avatar: None,
                    lorebook: None,
                    regex: None,
                    assets: Vec::new(),
                });
            }
            if !card::looks_like_card(v) {
                return Err(FormatError::whole(
                    "not a character card: expected `spec` + `data`, or top-level `name` and `first_mes`",
                ));
            }
            let CardParts {
                character,
                lorebook,
                regex,
            } = card::from_json(ctx, v)?;
            Ok(Imported::Character {
                character,
                avatar: None,
                lorebook,
                regex,
                assets: Vec::new(),
            })
        }
        AssetKind::Lorebook => {
            if v.get("spec").and_then(Value::as_str) == Some("lorebook_v3") {
                let data = v.get("data").ok_or_else(|| {
                    FormatError::at("data", "missing: a lorebook_v3 file needs `data`")
                })?;
                return Ok(Imported::Lorebook(lorebook::from_ccv3_book(
                    ctx, data, "data", stem,
                )?));
            }
            if let Some(book) = v.get("data").and_then(|d| d.get("character_book")) {
                return Ok(Imported::Lorebook(lorebook::from_ccv3_book(
                    ctx,
                    book,
                    "data.character_book",
                    stem,
                )?));
            }
            match v.get("entries") {
                Some(Value::Array(list))
                    if list.first().is_some_and(|e| {
                        e.get("keywords").is_some() || e.get("strategy").is_some()
                    }) =>
                {
                    Ok(Imported::Lorebook(native::parse_at(v, "")?))
                }
                Some(Value::Array(list))
                    if list
                        .first()
                        .is_some_and(|e| e.get("key").is_some() || e.get("uid").is_some()) =>
                {
                    Ok(Imported::Lorebook(lorebook::from_st_world_info(
                        ctx, v, stem,
                    )?))
                }
                Some(Value::Array(_)) => Ok(Imported::Lorebook(lorebook::from_ccv3_book(
                    ctx, v, "", stem,
                )?)),
                _ => Ok(Imported::Lorebook(lorebook::from_st_world_info(
                    ctx, v, stem,
                )?)),
            }
        }
        AssetKind::Preset => {
            if v.get("basicPrompts").is_some() && !preset::looks_like_st_preset(v) {
                return Ok(Imported::Preset {
                    preset: native::parse_at(v, "")?,
                    regex: None,
                });
            }
            let (preset, regex) = preset::from_st(ctx, v, stem)?;
            Ok(Imported::Preset { preset, regex })
        }
        AssetKind::Regex => {
            let tavo_shaped = v
                .get("entries")
                .and_then(Value::as_array)
                .and_then(|a| a.first())
                .is_some_and(|e| e.get("placements").is_some() || e.get("timing").is_some());
            if tavo_shaped {
                return Ok(Imported::Regex(native::parse_at(v, "")?));
            }
            Ok(Imported::Regex(regex::from_st(ctx, v, stem)?))
        }
        AssetKind::Persona => {
            let persona: Persona = native::parse_at(v, "")?;
            persona
                .validate()
                .map_err(|e| FormatError::whole(e.to_string()))?;
            Ok(Imported::Persona(persona))
        }
        AssetKind::Chat => Err(FormatError::whole("expected a chat")),
    }
}

fn read_native(ctx: &mut Ctx, env: &Value, kind: Option<AssetKind>) -> Result<Imported> {
    let k: AssetKind = native::kind_of(env)
        .unwrap_or_default()
        .parse()
        .map_err(|e: UnknownKind| FormatError::at("kind", e.to_string()))?;
    check_kind(kind, k)?;
    if env
        .get("version")
        .and_then(Value::as_u64)
        .is_some_and(|v| v > native::VERSION)
    {
        ctx.warn(
            "tavo.version",
            "version",
            "the file was written by a newer Tavo; unknown fields are kept",
        );
    }
    Ok(match k {
        AssetKind::Character => Imported::Character {
            character: native::data(env)?,
            avatar: native::avatar(env)?,
            lorebook: native::optional(env, "lorebook")?,
            regex: native::optional(env, "regex")?,
            assets: Vec::new(),
        },
        AssetKind::Persona => Imported::Persona(native::data(env)?),
        AssetKind::Preset => Imported::Preset {
            preset: native::data(env)?,
            regex: native::optional(env, "regex")?,
        },
        AssetKind::Lorebook => Imported::Lorebook(native::data(env)?),
        AssetKind::Regex => Imported::Regex(native::data(env)?),
        AssetKind::Chat => {
            let chat: Chat = native::data(env)?;
            let mut messages: Vec<Message> = native::optional(env, "messages")?.unwrap_or_default();
            for (i, m) in messages.iter_mut().enumerate() {
                m.floor = Some(i as u64);
            }
            let character_names = chat.characters.iter().map(|c| c.name.clone()).collect();
            let user_name = chat.persona.as_ref().map(|p| p.name.clone());
            Imported::Chat(ImportedChat {
                chat,
                messages,
                character_names,
                user_name,
            })
        }
    })
}

fn card_from_text_chunk(ctx: &mut Ctx, keyword: &str, text: &str) -> Result<CardParts> {
    let path = format!("PNG {keyword} chunk");
    let trimmed = text.trim();
    let json_bytes = if trimmed.starts_with('{') {
        trimmed.as_bytes().to_vec()
    } else {
        // Some writers wrap the base64 in lines; whitespace is never part of the payload.
        let compact: Vec<u8> = trimmed
            .bytes()
            .filter(|b| !b.is_ascii_whitespace())
            .collect();
        base64::engine::general_purpose::STANDARD
            .decode(&compact)
            .or_else(|_| {
                let unpadded: &[u8] = &compact[..compact
                    .iter()
                    .rposition(|b| *b != b'=')
                    .map_or(0, |i| i + 1)];
                base64::engine::general_purpose::STANDARD_NO_PAD.decode(unpadded)
            })
            .map_err(|e| FormatError::at(&path, format!("not valid base64: {e}")))?
    };
    let v = text::bytes_to_json(&json_bytes, &mut ctx.warnings)
        .map_err(|e| FormatError::at(&path, e.message))?;
    card::from_json(ctx, &v)
}

fn read_png(ctx: &mut Ctx, bytes: &[u8]) -> Result<Imported> {
    let chunks = png::text_chunks(bytes, &mut ctx.warnings)?;
    let find = |kw: &str| {
        chunks
            .iter()
            .filter(|c| c.keyword.eq_ignore_ascii_case(kw))
            .collect::<Vec<_>>()
    };
    let (ccv3, chara) = (find("ccv3"), find("chara"));
    if ccv3.len() > 1 || chara.len() > 1 {
        ctx.warn(
            "png.duplicate-chunk",
            "",
            "the PNG has repeated card chunks; the first of each was used",
        );
    }
    let mut parts = None;
    if let Some(c) = ccv3.first() {
        match card_from_text_chunk(ctx, &c.keyword, &c.text) {
            Ok(p) => parts = Some(p),
            Err(e) if !chara.is_empty() => ctx.warn(
                "png.ccv3-unreadable",
                &e.path,
                format!("{}; the chara chunk was used instead", e.message),
            ),
            Err(e) => return Err(e),
        }
    }
    let parts = match parts {
        Some(p) => p,
        None => match chara.first() {
            Some(c) => card_from_text_chunk(ctx, &c.keyword, &c.text)?,
            None => {
                return Err(FormatError::whole(
                    "the PNG holds no character card (no `chara` or `ccv3` text chunk)",
                ));
            }
        },
    };
    let avatar = png::strip_card_chunks(bytes)?;
    Ok(Imported::Character {
        character: parts.character,
        avatar: Some(avatar),
        lorebook: parts.lorebook,
        regex: parts.regex,
        assets: Vec::new(),
    })
}

fn read_charx(ctx: &mut Ctx, bytes: &[u8]) -> Result<Imported> {
    let contents = charx::read(bytes, &mut ctx.warnings)?;
    let v = text::bytes_to_json(&contents.card_json, &mut ctx.warnings)
        .map_err(|e| FormatError::at("card.json", e.message))?;
    let parts = card::from_json(ctx, &v)
        .map_err(|e| FormatError::at(format!("card.json: {}", e.path), e.message))?;
    Ok(Imported::Character {
        character: parts.character,
        avatar: contents.avatar,
        lorebook: parts.lorebook,
        regex: parts.regex,
        assets: contents.assets,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_include_the_file_name() {
        let e = import_bytes(
            b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00",
            "truncated.png",
            None,
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("truncated.png: "), "{e}");
        let bad = br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"X","first_mes":"hi","character_book":{"entries":[{"keys":5}]}}}"#;
        let e = import_bytes(bad, "wrongtype.json", None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "wrongtype.json: data.character_book.entries[0].keys: expected an array of strings, found a number"
        );
    }

    #[test]
    fn forced_kind_mismatch_is_refused() {
        let e = import_bytes(br#"{"entries":{}}"#, "w.json", Some(AssetKind::Preset)).unwrap_err();
        assert!(e.to_string().starts_with("w.json"), "{e}");
        assert!(import_bytes(b"  ", "x.json", None).is_err());
        assert!(matches!(
            import_bytes(b"", "x.jsonl", None).map(|o| o.imported.kind()),
            Ok(AssetKind::Chat)
        ));
    }
}
