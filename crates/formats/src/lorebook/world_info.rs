//! SillyTavern world-info files (`{ entries: { "<uid>": {…} }, originalData?, … }`).

use super::*;
use crate::error::FormatError;
use crate::fields::{self, shelter};
use crate::value::{append_extra, child, item, without};

const WI_MAPPED: &[&str] = &[
    "uid",
    "key",
    "keysecondary",
    "comment",
    "content",
    "constant",
    "selective",
    "selectiveLogic",
    "order",
    "position",
    "disable",
    "depth",
    "role",
    "probability",
    "scanDepth",
    "caseSensitive",
    "matchWholeWords",
    "sticky",
    "cooldown",
    "delay",
];

/// Reads one SillyTavern world-info entry.
pub fn entry_from_st(ctx: &mut Ctx, v: &Value, path: &str) -> Result<LorebookEntry> {
    let o = ctx.object(v, path)?;
    let mut extra = without(o, WI_MAPPED);
    let selective = ctx.bool_or(o.get("selective"), &child(path, "selective"), true)?;
    let logic = ctx.opt_i64(o.get("selectiveLogic"), &child(path, "selectiveLogic"))?;
    let secondary_keyword_strategy = if selective {
        logic_from_st(logic.unwrap_or(0))
    } else {
        if let Some(l) = logic.filter(|l| *l != 0) {
            extra.insert(KEY_ST_LOGIC.into(), json!(l));
        }
        SecondaryKeywordStrategy::None
    };
    record_nulls(o, &mut extra, wi_name);
    let raw_pos = ctx.opt_i64(o.get("position"), &child(path, "position"))?;
    let injection_position = match raw_pos {
        None => LorebookPosition::LorebookBefore,
        Some(n) => position_from_st(n).unwrap_or_else(|| {
            extra.insert(KEY_ST_POSITION.into(), json!(n));
            LorebookPosition::LorebookAfter
        }),
    };
    let d = LorebookEntry::default();
    Ok(LorebookEntry {
        identifier: identifier_from(o.get("uid")).unwrap_or_else(new_identifier),
        name: ctx.string(o.get("comment"), &child(path, "comment"))?,
        content: ctx.string(o.get("content"), &child(path, "content"))?,
        enabled: !ctx.bool_or(o.get("disable"), &child(path, "disable"), false)?,
        strategy: if ctx.bool_or(o.get("constant"), &child(path, "constant"), false)? {
            LorebookStrategy::Constant
        } else {
            LorebookStrategy::Keyword
        },
        keywords: ctx.strings(o.get("key"), &child(path, "key"))?,
        secondary_keywords: ctx.strings(o.get("keysecondary"), &child(path, "keysecondary"))?,
        secondary_keyword_strategy,
        scan_depth: ctx
            .opt_u32(o.get("scanDepth"), &child(path, "scanDepth"))?
            .unwrap_or(d.scan_depth),
        case_sensitive: ctx.bool_or(
            o.get("caseSensitive"),
            &child(path, "caseSensitive"),
            false,
        )?,
        match_whole_word: ctx.bool_or(
            o.get("matchWholeWords"),
            &child(path, "matchWholeWords"),
            true,
        )?,
        injection_position,
        injection_depth: ctx
            .opt_u32(o.get("depth"), &child(path, "depth"))?
            .unwrap_or(d.injection_depth),
        injection_role: role_from_st(ctx, o.get("role"), &child(path, "role"))?,
        probability: ctx
            .opt_u32(o.get("probability"), &child(path, "probability"))?
            .unwrap_or(100)
            .min(100),
        sticky: ctx
            .opt_u32(o.get("sticky"), &child(path, "sticky"))?
            .unwrap_or(0),
        cooldown: ctx
            .opt_u32(o.get("cooldown"), &child(path, "cooldown"))?
            .unwrap_or(0),
        delay: ctx
            .opt_u32(o.get("delay"), &child(path, "delay"))?
            .unwrap_or(0),
        order: ctx
            .opt_i64(o.get("order"), &child(path, "order"))?
            .unwrap_or(d.order),
        extra: shelter(extra, fields::LOREBOOK_ENTRY),
    })
}

/// Writes one entry as SillyTavern world info.
pub fn entry_to_st(e: &LorebookEntry, index: usize) -> Map<String, Value> {
    let (selective, logic) = st_selective(e);
    let mut o = Map::new();
    o.insert("uid".into(), id_value(&e.identifier, index));
    o.insert("key".into(), json!(e.keywords));
    o.insert("keysecondary".into(), json!(e.secondary_keywords));
    o.insert("comment".into(), json!(e.name));
    o.insert("content".into(), json!(e.content));
    o.insert(
        "constant".into(),
        json!(e.strategy == LorebookStrategy::Constant),
    );
    o.insert("selective".into(), json!(selective));
    o.insert("selectiveLogic".into(), json!(logic));
    o.insert("order".into(), json!(e.order));
    o.insert("position".into(), json!(st_position_for(e)));
    o.insert("disable".into(), json!(!e.enabled));
    o.insert("depth".into(), json!(e.injection_depth));
    o.insert("role".into(), json!(role_to_st(e.injection_role)));
    o.insert("probability".into(), json!(e.probability));
    o.insert("scanDepth".into(), json!(e.scan_depth));
    o.insert("caseSensitive".into(), json!(e.case_sensitive));
    o.insert("matchWholeWords".into(), json!(e.match_whole_word));
    o.insert("sticky".into(), json!(e.sticky));
    o.insert("cooldown".into(), json!(e.cooldown));
    o.insert("delay".into(), json!(e.delay));
    restore_nulls(e, &mut o, wi_name);
    let rest = without(&e.extra, &[KEY_ST_POSITION, KEY_ST_LOGIC, KEY_ST_NULLS]);
    append_extra(&mut o, &rest);
    o
}

/// Reads a SillyTavern world-info file (`{ entries: { "<uid>": {…} }, … }`); a JSON array of
/// entries is accepted too.
pub fn from_st_world_info(ctx: &mut Ctx, root: &Value, default_name: &str) -> Result<Lorebook> {
    let o = ctx.object(root, "")?;
    let mut entries = Vec::new();
    match o.get("entries") {
        Some(Value::Object(map)) => {
            for (k, v) in map {
                entries.push(entry_from_st(ctx, v, &child("entries", k))?);
            }
        }
        Some(Value::Array(list)) => {
            for (i, v) in list.iter().enumerate() {
                entries.push(entry_from_st(ctx, v, &item("entries", i))?);
            }
        }
        Some(other) => {
            return Err(FormatError::at(
                "entries",
                format!(
                    "expected an object keyed by uid, found {}",
                    crate::value::type_name(other)
                ),
            ));
        }
        None => {
            return Err(FormatError::at(
                "entries",
                "missing: a world info file needs an `entries` object",
            ));
        }
    }
    let lossy = entries
        .iter()
        .filter(|e| e.extra.contains_key(KEY_ST_POSITION))
        .count();
    if lossy > 0 {
        ctx.warn(
            "lorebook.position",
            "entries",
            format!("{lossy} entries use SillyTavern positions Tavo lacks (Author's Note top/bottom, outlet); they import as lorebookAfter and keep the original for export"),
        );
    }
    let name = ctx
        .opt_string(o.get("name"), "name")?
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| default_name.to_owned());
    Ok(Lorebook {
        name,
        entries,
        extra: st_word_rule(shelter(without(o, &["entries", "name"]), fields::GROUP)),
        ..Default::default()
    })
}

/// Writes a lorebook as a SillyTavern world-info file.
pub fn to_st_world_info(book: &Lorebook) -> Value {
    let mut entries = Map::new();
    for (i, e) in book.entries.iter().enumerate() {
        let st = entry_to_st(e, i);
        let key = match st.get("uid") {
            Some(Value::Number(n)) => n.to_string(),
            _ => i.to_string(),
        };
        entries.insert(key, Value::Object(st));
    }
    let mut o = Map::new();
    o.insert("entries".into(), Value::Object(entries));
    o.insert("name".into(), json!(book.name));
    append_extra(&mut o, &st_file_extra(&book.extra, &[]));
    Value::Object(o)
}
