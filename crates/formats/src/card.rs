//! Character cards: CCv3 (`chara_card_v3` wrapper or bare `data`), CCv2, V1 (top-level fields),
//! and SillyTavern's stored shape (V2/V3 `data` plus V1 mirror fields at the top level).
//!
//! A card's `character_book` becomes a [`Lorebook`] and its `extensions.regex_scripts` a
//! [`RegexGroup`] (the seed's `tavo.character.import` result). Unknown `data` fields go to
//! `Character::extra`, unknown top-level keys (SillyTavern's `chat`, `fav`, `create_date` …) to
//! `Character::card_extra`; V1 mirrors that merely repeat `data` are regenerated on export.

use crate::error::{FormatError, Result};
use crate::fields::{self, shelter};
use crate::value::{Ctx, append_extra, child, type_name, without};
use chrono::{DateTime, TimeZone, Utc};
use serde_json::{Map, Value, json};
use tavo_model::{Character, Lorebook, RegexGroup};

/// A card read from JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct CardParts {
    /// The character.
    pub character: Character,
    /// Lorebook from `character_book`.
    pub lorebook: Option<Lorebook>,
    /// Regex group from `extensions.regex_scripts`.
    pub regex: Option<RegexGroup>,
}

/// Card spec to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CardSpec {
    /// `chara_card_v2` / `2.0`.
    V2,
    /// `chara_card_v3` / `3.0`.
    V3,
}

/// `data` fields the model maps (CCv3 names).
const DATA_MAPPED: &[&str] = &[
    "name",
    "description",
    "personality",
    "scenario",
    "first_mes",
    "mes_example",
    "creator_notes",
    "system_prompt",
    "post_history_instructions",
    "alternate_greetings",
    "tags",
    "creator",
    "character_version",
    "nickname",
    "group_only_greetings",
    "creation_date",
    "modification_date",
    "extensions",
    "character_book",
];

/// V1 mirror key → the `data` key it repeats.
const MIRRORS: &[(&str, &str)] = &[
    ("name", "name"),
    ("description", "description"),
    ("personality", "personality"),
    ("scenario", "scenario"),
    ("first_mes", "first_mes"),
    ("mes_example", "mes_example"),
    ("creatorcomment", "creator_notes"),
    ("tags", "tags"),
];

/// Whether a JSON value is a character card (any supported shape).
pub fn looks_like_card(v: &Value) -> bool {
    let Some(o) = v.as_object() else { return false };
    if let Some(spec) = o.get("spec").and_then(Value::as_str) {
        return spec.starts_with("chara_card");
    }
    if o.get("data").and_then(Value::as_object).is_some_and(|d| {
        d.contains_key("name") && (d.contains_key("first_mes") || d.contains_key("description"))
    }) {
        return true;
    }
    o.contains_key("name")
        && (o.contains_key("first_mes")
            || o.contains_key("char_greeting")
            || o.contains_key("char_persona"))
}

fn date_from(ctx: &mut Ctx, v: Option<&Value>, path: &str) -> Result<Option<DateTime<Utc>>> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => match DateTime::parse_from_rfc3339(s) {
            Ok(d) => Ok(Some(d.with_timezone(&Utc))),
            Err(_) => match s.trim().parse::<f64>() {
                Ok(n) => Ok(unix_to_date(n)),
                Err(_) => {
                    ctx.warn(
                        "value.ignored",
                        path,
                        format!("\"{s}\" is not a date; it was ignored"),
                    );
                    Ok(None)
                }
            },
        },
        Some(Value::Number(n)) => Ok(n.as_f64().and_then(unix_to_date)),
        Some(other) => Err(FormatError::at(
            path,
            format!("expected a Unix timestamp, found {}", type_name(other)),
        )),
    }
}

/// CCv3 dates are Unix seconds; values too large for seconds are taken as milliseconds.
fn unix_to_date(n: f64) -> Option<DateTime<Utc>> {
    let secs = if n.abs() > 1.0e11 { n / 1000.0 } else { n };
    Utc.timestamp_opt(secs.trunc() as i64, 0).single()
}

/// Reads a card JSON value (already parsed) into its parts.
pub fn from_json(ctx: &mut Ctx, root: &Value) -> Result<CardParts> {
    let o = ctx.object(root, "")?;
    let spec = o.get("spec").and_then(Value::as_str);
    let (data, base) = card_data(o, spec)?;
    if let Some(s) = spec
        && s != "chara_card_v2"
        && s != "chara_card_v3"
    {
        ctx.warn(
            "card.spec",
            "spec",
            format!("unknown spec \"{s}\"; the card was read as CCv3"),
        );
    }
    let p = |k: &str| child(base, k);
    let name = card_name(ctx, o, data, base)?;
    let mut extensions = ctx.object_or_empty(data.get("extensions"), &p("extensions"))?;
    let regex = embedded_regex(ctx, &mut extensions, &p("extensions"), name.trim())?;
    let lorebook = match data.get("character_book") {
        None | Some(Value::Null) => None,
        Some(book) => Some(crate::lorebook::from_ccv3_book(
            ctx,
            book,
            &p("character_book"),
            name.trim(),
        )?),
    };
    let mut character = character_fields(ctx, data, base, name, extensions)?;
    if !base.is_empty() {
        // Top-level keys: spec/data are structural, mirrors equal to the derived value are dropped.
        let derived = mirrors(&character);
        character.card_extra = o
            .iter()
            .filter(|(k, v)| {
                !matches!(k.as_str(), "spec" | "spec_version" | "data")
                    && derived.get(k.as_str()) != Some(v)
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
    } else {
        // A V1 card: its `creatorcomment` was read as notes; the other top-level keys are
        // SillyTavern wrapper keys (`avatar`, `chat`, `fav` …), kept beside `data` on export.
        let mut wrapper = std::mem::take(&mut character.extra);
        if let Some(Value::Object(shadow)) = wrapper.shift_remove(fields::SHADOWED) {
            wrapper.extend(shadow);
        }
        wrapper.shift_remove("creatorcomment");
        character.card_extra = wrapper;
        if spec.is_none() {
            ctx.warn(
                "card.v1",
                "",
                "a V1 card (no `spec`/`data`); it was read as CCv3",
            );
        }
    }
    Ok(CardParts {
        character,
        lorebook,
        regex,
    })
}

/// The object that holds the card's fields, and its path: `data` for a V2/V3 card, the root
/// for a V1 card (which has no `spec`).
fn card_data<'a>(
    o: &'a Map<String, Value>,
    spec: Option<&str>,
) -> Result<(&'a Map<String, Value>, &'static str)> {
    match o.get("data") {
        Some(Value::Object(d)) => Ok((d, "data")),
        Some(other) if spec.is_some() => Err(FormatError::at(
            "data",
            format!("expected an object, found {}", type_name(other)),
        )),
        _ if spec.is_some() => Err(FormatError::at(
            "data",
            "missing: a card with `spec` needs a `data` object",
        )),
        _ => Ok((o, "")),
    }
}

/// The character's name (V1 cards may call it `char_name`; a V2 card whose `data` lacks it
/// borrows its top-level mirror). A card without a name is refused.
fn card_name(
    ctx: &mut Ctx,
    o: &Map<String, Value>,
    data: &Map<String, Value>,
    base: &str,
) -> Result<String> {
    let path = child(base, "name");
    let mut name = ctx.string(data.get("name").or_else(|| data.get("char_name")), &path)?;
    if name.trim().is_empty() && !base.is_empty() {
        // A card whose `data` lacks the name but whose V1 mirror has it.
        if let Some(top) = ctx
            .opt_string(o.get("name"), "name")?
            .filter(|n| !n.trim().is_empty())
        {
            ctx.warn(
                "card.name-from-mirror",
                &path,
                "data.name is empty; the top-level name was used",
            );
            name = top;
        }
    }
    if name.trim().is_empty() {
        return Err(FormatError::at(
            path,
            "missing: a character card needs a name",
        ));
    }
    if name != name.trim() {
        ctx.warn(
            "card.name-whitespace",
            &path,
            "the name has leading or trailing whitespace; it was kept as written",
        );
    }
    Ok(name)
}

/// The regex group of `extensions.regex_scripts`, named after the character and taken out of
/// `extensions` (an empty list stays there).
fn embedded_regex(
    ctx: &mut Ctx,
    extensions: &mut Map<String, Value>,
    path: &str,
    name: &str,
) -> Result<Option<RegexGroup>> {
    match extensions.shift_remove("regex_scripts") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(list)) if list.is_empty() => {
            extensions.insert("regex_scripts".into(), Value::Array(list));
            Ok(None)
        }
        Some(Value::Array(list)) => {
            let entries =
                crate::regex::entries_from_st_list(ctx, &list, &child(path, "regex_scripts"))?;
            Ok(Some(RegexGroup {
                name: name.to_owned(),
                entries,
                ..Default::default()
            }))
        }
        Some(other) => Err(FormatError::at(
            child(path, "regex_scripts"),
            format!("expected an array, found {}", type_name(&other)),
        )),
    }
}

/// The character's own fields (V1 cards' `char_*` names are read too); keys no field maps
/// are kept in `extra`.
fn character_fields(
    ctx: &mut Ctx,
    data: &Map<String, Value>,
    base: &str,
    name: String,
    extensions: Map<String, Value>,
) -> Result<Character> {
    let p = |k: &str| child(base, k);
    // V1 cards (Pygmalion/TavernAI) may use char_* names.
    let pick = |a: &str, b: &str| data.get(a).or_else(|| data.get(b));
    let mut extra = without(data, DATA_MAPPED);
    for legacy in [
        "char_name",
        "char_persona",
        "char_greeting",
        "world_scenario",
        "example_dialogue",
    ] {
        extra.shift_remove(legacy);
    }
    Ok(Character {
        description: ctx.string(pick("description", "char_persona"), &p("description"))?,
        first_mes: ctx.string(pick("first_mes", "char_greeting"), &p("first_mes"))?,
        personality: ctx.string(data.get("personality"), &p("personality"))?,
        scenario: ctx.string(pick("scenario", "world_scenario"), &p("scenario"))?,
        mes_example: ctx.string(pick("mes_example", "example_dialogue"), &p("mes_example"))?,
        creator_notes: ctx.string(
            data.get("creator_notes").or_else(|| {
                (base.is_empty())
                    .then(|| data.get("creatorcomment"))
                    .flatten()
            }),
            &p("creator_notes"),
        )?,
        system_prompt: ctx.string(data.get("system_prompt"), &p("system_prompt"))?,
        post_history_instructions: ctx.string(
            data.get("post_history_instructions"),
            &p("post_history_instructions"),
        )?,
        alternate_greetings: ctx
            .strings(data.get("alternate_greetings"), &p("alternate_greetings"))?,
        tags: ctx.strings(data.get("tags"), &p("tags"))?,
        creator: ctx.string(data.get("creator"), &p("creator"))?,
        character_version: ctx.string(data.get("character_version"), &p("character_version"))?,
        nickname: ctx.opt_string(data.get("nickname"), &p("nickname"))?,
        group_only_greetings: ctx
            .strings(data.get("group_only_greetings"), &p("group_only_greetings"))?,
        creation_date: date_from(ctx, data.get("creation_date"), &p("creation_date"))?,
        modification_date: date_from(ctx, data.get("modification_date"), &p("modification_date"))?,
        extensions,
        card_extra: Map::new(),
        extra: shelter(extra, fields::CHARACTER),
        name,
        ..Default::default()
    })
}

fn mirrors(c: &Character) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("name".into(), json!(c.name));
    m.insert("description".into(), json!(c.description));
    m.insert("personality".into(), json!(c.personality));
    m.insert("scenario".into(), json!(c.scenario));
    m.insert("first_mes".into(), json!(c.first_mes));
    m.insert("mes_example".into(), json!(c.mes_example));
    m.insert("creatorcomment".into(), json!(c.creator_notes));
    m.insert("tags".into(), json!(c.tags));
    debug_assert_eq!(m.len(), MIRRORS.len());
    m
}

/// Builds the card `data` object.
pub fn data_object(
    c: &Character,
    lorebook: Option<&Lorebook>,
    regex: Option<&RegexGroup>,
    spec: CardSpec,
) -> Map<String, Value> {
    let mut d = Map::new();
    d.insert("name".into(), json!(c.name));
    d.insert("description".into(), json!(c.description));
    d.insert("personality".into(), json!(c.personality));
    d.insert("scenario".into(), json!(c.scenario));
    d.insert("first_mes".into(), json!(c.first_mes));
    d.insert("mes_example".into(), json!(c.mes_example));
    d.insert("creator_notes".into(), json!(c.creator_notes));
    d.insert("system_prompt".into(), json!(c.system_prompt));
    d.insert(
        "post_history_instructions".into(),
        json!(c.post_history_instructions),
    );
    d.insert("alternate_greetings".into(), json!(c.alternate_greetings));
    d.insert("tags".into(), json!(c.tags));
    d.insert("creator".into(), json!(c.creator));
    d.insert("character_version".into(), json!(c.character_version));
    if let Some(n) = &c.nickname {
        d.insert("nickname".into(), json!(n));
    }
    if spec == CardSpec::V3 || !c.group_only_greetings.is_empty() {
        d.insert("group_only_greetings".into(), json!(c.group_only_greetings));
    }
    if let Some(t) = c.creation_date {
        d.insert("creation_date".into(), json!(t.timestamp()));
    }
    if let Some(t) = c.modification_date {
        d.insert("modification_date".into(), json!(t.timestamp()));
    }
    let mut ext = c.extensions.clone();
    if let Some(r) = regex.filter(|r| !r.entries.is_empty()) {
        ext.insert("regex_scripts".into(), crate::regex::to_st_list(r));
    }
    d.insert("extensions".into(), Value::Object(ext));
    if let Some(b) = lorebook {
        d.insert("character_book".into(), crate::lorebook::to_ccv3_book(b));
    }
    append_extra(&mut d, &c.extra);
    d
}

/// Writes a full card (V1 mirrors + kept top-level keys + `spec` + `data`).
pub fn to_json(
    c: &Character,
    lorebook: Option<&Lorebook>,
    regex: Option<&RegexGroup>,
    spec: CardSpec,
) -> Value {
    let mut o = mirrors(c);
    for (k, v) in &c.card_extra {
        o.insert(k.clone(), v.clone());
    }
    let (s, ver) = match spec {
        CardSpec::V2 => ("chara_card_v2", "2.0"),
        CardSpec::V3 => ("chara_card_v3", "3.0"),
    };
    o.insert("spec".into(), json!(s));
    o.insert("spec_version".into(), json!(ver));
    o.insert(
        "data".into(),
        Value::Object(data_object(c, lorebook, regex, spec)),
    );
    Value::Object(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v3_card_with_book_and_regex() {
        let v = json!({
            "name": "A", "first_mes": "hi", "chat": "A - 2024", "spec": "chara_card_v3", "spec_version": "3.0",
            "data": {"name": "A", "first_mes": "hi", "description": "d", "assets": [{"type":"icon"}],
                     "extensions": {"talkativeness": "0.5", "regex_scripts": [{"scriptName":"r","findRegex":"a","placement":[2]}]},
                     "character_book": {"entries": [{"keys":["k"],"content":"c"}]}}
        });
        let mut ctx = Ctx::default();
        let parts = from_json(&mut ctx, &v).unwrap();
        assert_eq!(parts.character.name, "A");
        assert!(parts.character.extra.contains_key("assets"));
        assert_eq!(
            parts.character.card_extra.get("chat"),
            Some(&json!("A - 2024"))
        );
        assert!(!parts.character.card_extra.contains_key("name"));
        assert_eq!(parts.lorebook.as_ref().map(|b| b.entries.len()), Some(1));
        assert_eq!(parts.regex.as_ref().map(|r| r.entries.len()), Some(1));
        let out = to_json(
            &parts.character,
            parts.lorebook.as_ref(),
            parts.regex.as_ref(),
            CardSpec::V3,
        );
        let again = from_json(&mut Ctx::default(), &out).unwrap();
        assert_eq!(
            to_json(
                &again.character,
                again.lorebook.as_ref(),
                again.regex.as_ref(),
                CardSpec::V3
            ),
            out
        );
    }

    #[test]
    fn v1_and_bare_data() {
        let mut ctx = Ctx::default();
        let v1 = from_json(
            &mut ctx,
            &json!({"name":"Old","description":"d","first_mes":"f","personality":"p"}),
        )
        .unwrap();
        assert_eq!(v1.character.first_mes, "f");
        let bare = from_json(&mut ctx, &json!({"data":{"name":"B","first_mes":"x"}})).unwrap();
        assert_eq!(bare.character.name, "B");
        assert_eq!(
            from_json(
                &mut ctx,
                &json!({"spec":"chara_card_v2","data":{"first_mes":"x"}})
            )
            .unwrap_err()
            .path,
            "data.name"
        );
    }
}
