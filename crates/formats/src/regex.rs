//! Regex scripts: SillyTavern `RegexScriptData` (one object, an array, or the TavoJS import
//! shape `{ name, entries: [...] }`) ↔ Tavo regex groups, mapped as Tavo's own import maps
//! them (reference §8.5):
//!
//! placement 1→`user`, 2→`char`, 5→`lorebook`, 6→`reasoning`; `markdownOnly`→`display`,
//! `promptOnly`→`send`, both→`sendAndDisplay`, neither→`receive` (`runOnEdit`→`editAndReceive`);
//! `substituteRegex` 0/1/2 → `none`/`raw`/`escaped`. Values the mapping cannot express
//! (placement 0/3/4, `runOnEdit` on a display-only script) are kept in `extra` and written back.

use crate::error::{FormatError, Result};
use crate::fields::{self, shelter};
use crate::value::{Ctx, append_extra, child, item, type_name, without};
use serde_json::{Map, Value, json};
use tavo_model::{RegexEntry, RegexGroup, RegexPlacement, RegexTiming, Substitution};

const MAPPED: &[&str] = &[
    "id",
    "scriptName",
    "findRegex",
    "replaceString",
    "trimStrings",
    "placement",
    "disabled",
    "markdownOnly",
    "promptOnly",
    "runOnEdit",
    "substituteRegex",
    "minDepth",
    "maxDepth",
];
const KEY_PLACEMENT: &str = "sillyTavernPlacement";
const KEY_RUN_ON_EDIT: &str = "sillyTavernRunOnEdit";

fn placement_from_st(n: i64) -> Option<RegexPlacement> {
    match n {
        1 => Some(RegexPlacement::User),
        2 => Some(RegexPlacement::Char),
        5 => Some(RegexPlacement::Lorebook),
        6 => Some(RegexPlacement::Reasoning),
        _ => None,
    }
}

fn placement_to_st(p: RegexPlacement) -> i64 {
    match p {
        RegexPlacement::User => 1,
        RegexPlacement::Char => 2,
        RegexPlacement::Lorebook => 5,
        RegexPlacement::Reasoning => 6,
    }
}

/// Whether `v` looks like one SillyTavern regex script.
pub fn looks_like_st_script(v: &Value) -> bool {
    v.as_object().is_some_and(|o| {
        o.contains_key("scriptName")
            || (o.contains_key("findRegex") && !o.contains_key("placements"))
    })
}

/// Reads one SillyTavern script.
pub fn entry_from_st(ctx: &mut Ctx, v: &Value, path: &str) -> Result<RegexEntry> {
    let o = ctx.object(v, path)?;
    let mut extra = without(o, MAPPED);
    let mut placements = Vec::new();
    let raw_placement = match o.get("placement") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(list)) => {
            let mut out = Vec::new();
            for (i, p) in list.iter().enumerate() {
                if let Some(n) = ctx.opt_i64(Some(p), &item(&child(path, "placement"), i))? {
                    out.push(n);
                }
            }
            out
        }
        Some(other) => {
            let n = ctx.opt_i64(Some(other), &child(path, "placement"))?;
            ctx.warn(
                "value.coerced",
                &child(path, "placement"),
                "a single placement was given; it was read as a one-item list",
            );
            n.into_iter().collect()
        }
    };
    for n in &raw_placement {
        if let Some(p) = placement_from_st(*n)
            && !placements.contains(&p)
        {
            placements.push(p);
        }
    }
    if raw_placement
        .iter()
        .any(|n| placement_from_st(*n).is_none())
        || placements.len() != raw_placement.len()
    {
        extra.insert(KEY_PLACEMENT.into(), json!(raw_placement));
    }
    let md = ctx.bool_or(o.get("markdownOnly"), &child(path, "markdownOnly"), false)?;
    let prompt = ctx.bool_or(o.get("promptOnly"), &child(path, "promptOnly"), false)?;
    let on_edit = ctx.opt_bool(o.get("runOnEdit"), &child(path, "runOnEdit"))?;
    let timing = match (md, prompt) {
        (true, true) => RegexTiming::SendAndDisplay,
        (true, false) => RegexTiming::Display,
        (false, true) => RegexTiming::Send,
        (false, false) if on_edit == Some(true) => RegexTiming::EditAndReceive,
        (false, false) => RegexTiming::Receive,
    };
    // `runOnEdit` has no effect on display/send scripts in Tavo; keep a `true` so it is written back.
    if (md || prompt) && on_edit == Some(true) {
        extra.insert(KEY_RUN_ON_EDIT.into(), json!(true));
    }
    let substitution = match o.get("substituteRegex") {
        Some(Value::Bool(true)) => Substitution::Raw,
        other => match ctx.opt_i64(other, &child(path, "substituteRegex"))? {
            None | Some(0) => Substitution::None,
            Some(1) => Substitution::Raw,
            Some(2) => Substitution::Escaped,
            Some(n) => {
                return Err(FormatError::at(
                    child(path, "substituteRegex"),
                    format!("expected 0, 1 or 2, found {n}"),
                ));
            }
        },
    };
    let identifier = match o.get("id") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => uuid::Uuid::new_v4().to_string(),
    };
    Ok(RegexEntry {
        identifier,
        name: ctx.string(o.get("scriptName"), &child(path, "scriptName"))?,
        find_regex: ctx.string(o.get("findRegex"), &child(path, "findRegex"))?,
        replace_string: ctx.string(o.get("replaceString"), &child(path, "replaceString"))?,
        trim_strings: ctx.strings(o.get("trimStrings"), &child(path, "trimStrings"))?,
        placements,
        timing,
        substitution,
        min_depth: ctx.opt_i64(o.get("minDepth"), &child(path, "minDepth"))?,
        max_depth: ctx.opt_i64(o.get("maxDepth"), &child(path, "maxDepth"))?,
        enabled: !ctx.bool_or(o.get("disabled"), &child(path, "disabled"), false)?,
        extra: shelter(extra, fields::REGEX_ENTRY),
    })
}

/// Writes one rule as a SillyTavern script.
pub fn entry_to_st(e: &RegexEntry) -> Map<String, Value> {
    let mapped: Vec<i64> = e.placements.iter().map(|p| placement_to_st(*p)).collect();
    let placement = match e.extra.get(KEY_PLACEMENT).and_then(Value::as_array) {
        // Keep the original numbers while they still import as the current placements.
        Some(raw) => {
            let nums: Vec<i64> = raw.iter().filter_map(Value::as_i64).collect();
            let mut again: Vec<RegexPlacement> = Vec::new();
            for p in nums.iter().filter_map(|n| placement_from_st(*n)) {
                if !again.contains(&p) {
                    again.push(p);
                }
            }
            if again == e.placements { nums } else { mapped }
        }
        None => mapped,
    };
    let kept_on_edit = e
        .extra
        .get(KEY_RUN_ON_EDIT)
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let (md, prompt, on_edit) = match e.timing {
        RegexTiming::Display => (true, false, kept_on_edit),
        RegexTiming::Send => (false, true, kept_on_edit),
        RegexTiming::SendAndDisplay => (true, true, kept_on_edit),
        RegexTiming::Receive => (false, false, false),
        RegexTiming::EditAndReceive => (false, false, true),
    };
    let substitute = match e.substitution {
        Substitution::None => 0,
        Substitution::Raw => 1,
        Substitution::Escaped => 2,
    };
    let mut o = Map::new();
    o.insert("id".into(), json!(e.identifier));
    o.insert("scriptName".into(), json!(e.name));
    o.insert("findRegex".into(), json!(e.find_regex));
    o.insert("replaceString".into(), json!(e.replace_string));
    o.insert("trimStrings".into(), json!(e.trim_strings));
    o.insert("placement".into(), json!(placement));
    o.insert("disabled".into(), json!(!e.enabled));
    o.insert("markdownOnly".into(), json!(md));
    o.insert("promptOnly".into(), json!(prompt));
    o.insert("runOnEdit".into(), json!(on_edit));
    o.insert("substituteRegex".into(), json!(substitute));
    o.insert("minDepth".into(), json!(e.min_depth));
    o.insert("maxDepth".into(), json!(e.max_depth));
    append_extra(
        &mut o,
        &without(&e.extra, &[KEY_PLACEMENT, KEY_RUN_ON_EDIT]),
    );
    o
}

/// Reads a list of SillyTavern scripts at `path`.
pub fn entries_from_st_list(ctx: &mut Ctx, list: &[Value], path: &str) -> Result<Vec<RegexEntry>> {
    list.iter()
        .enumerate()
        .map(|(i, v)| entry_from_st(ctx, v, &item(path, i)))
        .collect()
}

/// Reads a SillyTavern regex file: one script, an array of scripts, or `{ name, entries }`.
pub fn from_st(ctx: &mut Ctx, root: &Value, default_name: &str) -> Result<RegexGroup> {
    match root {
        Value::Array(list) => Ok(RegexGroup {
            name: default_name.to_owned(),
            entries: entries_from_st_list(ctx, list, "")?,
            ..Default::default()
        }),
        Value::Object(o) if o.get("entries").is_some_and(Value::is_array) => {
            let list = o
                .get("entries")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default();
            let name = ctx
                .opt_string(o.get("name"), "name")?
                .filter(|n| !n.trim().is_empty())
                .unwrap_or_else(|| "Regex".into());
            Ok(RegexGroup {
                name,
                entries: entries_from_st_list(ctx, list, "entries")?,
                extra: shelter(without(o, &["name", "entries"]), fields::GROUP),
                ..Default::default()
            })
        }
        Value::Object(_) => {
            let entry = entry_from_st(ctx, root, "")?;
            let name = if entry.name.trim().is_empty() {
                default_name.to_owned()
            } else {
                entry.name.clone()
            };
            Ok(RegexGroup {
                name,
                entries: vec![entry],
                ..Default::default()
            })
        }
        other => Err(FormatError::whole(format!(
            "expected a regex script object or an array of scripts, found {}",
            type_name(other)
        ))),
    }
}

/// Writes a group in SillyTavern form: one object for a single rule, else an array.
pub fn to_st(group: &RegexGroup) -> Value {
    let mut list: Vec<Value> = group
        .entries
        .iter()
        .map(|e| Value::Object(entry_to_st(e)))
        .collect();
    if list.len() == 1 {
        list.remove(0)
    } else {
        Value::Array(list)
    }
}

/// Writes rules as the array SillyTavern keeps in `extensions.regex_scripts`.
pub fn to_st_list(group: &RegexGroup) -> Value {
    Value::Array(
        group
            .entries
            .iter()
            .map(|e| Value::Object(entry_to_st(e)))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(md: bool, prompt: bool, edit: bool) -> Value {
        json!({"id":"x","scriptName":"s","findRegex":"/a/g","replaceString":"b","trimStrings":[],"placement":[2],"disabled":false,
               "markdownOnly":md,"promptOnly":prompt,"runOnEdit":edit,"substituteRegex":0,"minDepth":null,"maxDepth":null})
    }

    #[test]
    fn timing_mapping_matches_reference() {
        let mut c = Ctx::default();
        let cases = [
            ((false, false, true), RegexTiming::EditAndReceive),
            ((false, false, false), RegexTiming::Receive),
            ((true, false, false), RegexTiming::Display),
            ((false, true, true), RegexTiming::Send),
            ((true, true, false), RegexTiming::SendAndDisplay),
        ];
        for ((md, p, ed), want) in cases {
            let e = entry_from_st(&mut c, &st(md, p, ed), "").unwrap();
            assert_eq!(e.timing, want);
            assert_eq!(
                Value::Object(entry_to_st(&e)),
                st(md, p, ed),
                "{want:?} round trip"
            );
        }
    }

    #[test]
    fn placements_and_unknown_numbers() {
        let mut c = Ctx::default();
        let mut v = st(false, false, true);
        v["placement"] = json!([1, 3, 6]);
        let e = entry_from_st(&mut c, &v, "").unwrap();
        assert_eq!(
            e.placements,
            vec![RegexPlacement::User, RegexPlacement::Reasoning]
        );
        assert_eq!(entry_to_st(&e)["placement"], json!([1, 3, 6]));
    }

    #[test]
    fn substitute_regex_values() {
        let mut c = Ctx::default();
        let mut v = st(false, false, false);
        v["substituteRegex"] = json!(2);
        assert_eq!(
            entry_from_st(&mut c, &v, "").unwrap().substitution,
            Substitution::Escaped
        );
        v["substituteRegex"] = json!(9);
        assert_eq!(
            entry_from_st(&mut c, &v, "").unwrap_err().path,
            "substituteRegex"
        );
    }
}
