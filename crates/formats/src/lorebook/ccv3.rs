//! CCv3 `character_book` objects and standalone `lorebook_v3` files; SillyTavern's own entry
//! fields travel in each entry's `extensions`.

use super::*;
use crate::error::FormatError;
use crate::fields::{self, shelter};
use crate::value::{append_extra, child, item, without};

const CC_MAPPED: &[&str] = &[
    "id",
    "keys",
    "secondary_keys",
    "comment",
    "content",
    "constant",
    "selective",
    "insertion_order",
    "enabled",
    "position",
    "case_sensitive",
    "extensions",
];
const CC_EXT_MAPPED: &[&str] = &[
    "position",
    "depth",
    "role",
    "probability",
    "selectiveLogic",
    "scan_depth",
    "case_sensitive",
    "match_whole_words",
    "sticky",
    "cooldown",
    "delay",
];

/// Reads one CCv3 `character_book` entry, applying the seed's mapping and SillyTavern's
/// `extensions` fields.
pub fn entry_from_ccv3(ctx: &mut Ctx, v: &Value, path: &str) -> Result<LorebookEntry> {
    let o = ctx.object(v, path)?;
    let ext_path = child(path, "extensions");
    let ext_owned = ctx.object_or_empty(o.get("extensions"), &ext_path)?;
    let ext = &ext_owned;
    let mut extra = without(o, CC_MAPPED);
    let ext_rest = without(ext, CC_EXT_MAPPED);
    // The SillyTavern keys are always written back, so only the other keys need keeping.
    if !ext_rest.is_empty() {
        extra.insert("extensions".into(), Value::Object(ext_rest));
    }
    // The seed's `name` is CCv3 `comment`; an entry carrying both keeps `name` aside.
    let comment = ctx.opt_string(o.get("comment"), &child(path, "comment"))?;
    let cc_name = ctx.opt_string(o.get("name"), &child(path, "name"))?;
    extra.shift_remove("name");
    let name = match (comment, cc_name) {
        (Some(c), Some(n)) => {
            if n != c {
                extra.insert("entryName".into(), json!(n));
            }
            c
        }
        (Some(c), None) => c,
        (None, Some(n)) => n,
        (None, None) => String::new(),
    };
    record_nulls(ext, &mut extra, ccv3_ext_name);
    let selective = ctx.bool_or(o.get("selective"), &child(path, "selective"), false)?;
    let logic = ctx.opt_i64(
        ext.get("selectiveLogic"),
        &child(&ext_path, "selectiveLogic"),
    )?;
    let secondary_keyword_strategy = if selective {
        logic_from_st(logic.unwrap_or(0))
    } else {
        if let Some(l) = logic.filter(|l| *l != 0) {
            extra.insert(KEY_ST_LOGIC.into(), json!(l));
        }
        SecondaryKeywordStrategy::None
    };
    let injection_position =
        match ctx.opt_i64(ext.get("position"), &child(&ext_path, "position"))? {
            Some(n) => position_from_st(n).unwrap_or_else(|| {
                extra.insert(KEY_ST_POSITION.into(), json!(n));
                LorebookPosition::LorebookAfter
            }),
            None => match ctx
                .opt_string(o.get("position"), &child(path, "position"))?
                .as_deref()
            {
                Some("before_char") => LorebookPosition::LorebookBefore,
                _ => LorebookPosition::LorebookAfter,
            },
        };
    let case_sensitive = match ctx.opt_bool(
        ext.get("case_sensitive"),
        &child(&ext_path, "case_sensitive"),
    )? {
        Some(b) => b,
        None => ctx.bool_or(
            o.get("case_sensitive"),
            &child(path, "case_sensitive"),
            false,
        )?,
    };
    let d = LorebookEntry::default();
    Ok(LorebookEntry {
        identifier: identifier_from(o.get("id")).unwrap_or_else(new_identifier),
        name,
        content: ctx.string(o.get("content"), &child(path, "content"))?,
        enabled: ctx.bool_or(o.get("enabled"), &child(path, "enabled"), true)?,
        strategy: if ctx.bool_or(o.get("constant"), &child(path, "constant"), false)? {
            LorebookStrategy::Constant
        } else {
            LorebookStrategy::Keyword
        },
        keywords: ctx.strings(o.get("keys"), &child(path, "keys"))?,
        secondary_keywords: ctx.strings(o.get("secondary_keys"), &child(path, "secondary_keys"))?,
        secondary_keyword_strategy,
        scan_depth: ctx
            .opt_u32(ext.get("scan_depth"), &child(&ext_path, "scan_depth"))?
            .unwrap_or(d.scan_depth),
        case_sensitive,
        match_whole_word: ctx.bool_or(
            ext.get("match_whole_words"),
            &child(&ext_path, "match_whole_words"),
            true,
        )?,
        injection_position,
        injection_depth: ctx
            .opt_u32(ext.get("depth"), &child(&ext_path, "depth"))?
            .unwrap_or(d.injection_depth),
        injection_role: role_from_st(ctx, ext.get("role"), &child(&ext_path, "role"))?,
        probability: ctx
            .opt_u32(ext.get("probability"), &child(&ext_path, "probability"))?
            .unwrap_or(100)
            .min(100),
        sticky: ctx
            .opt_u32(ext.get("sticky"), &child(&ext_path, "sticky"))?
            .unwrap_or(0),
        cooldown: ctx
            .opt_u32(ext.get("cooldown"), &child(&ext_path, "cooldown"))?
            .unwrap_or(0),
        delay: ctx
            .opt_u32(ext.get("delay"), &child(&ext_path, "delay"))?
            .unwrap_or(0),
        order: ctx
            .opt_i64(o.get("insertion_order"), &child(path, "insertion_order"))?
            .unwrap_or(d.order),
        extra: shelter(extra, fields::LOREBOOK_ENTRY),
    })
}

/// Writes one entry in CCv3 `character_book` form (SillyTavern fields under `extensions`).
pub fn entry_to_ccv3(e: &LorebookEntry, index: usize) -> Map<String, Value> {
    let (selective, logic) = st_selective(e);
    let mut o = Map::new();
    o.insert("id".into(), id_value(&e.identifier, index));
    o.insert("keys".into(), json!(e.keywords));
    o.insert("secondary_keys".into(), json!(e.secondary_keywords));
    o.insert("comment".into(), json!(e.name));
    if let Some(n) = e.extra.get("entryName") {
        o.insert("name".into(), n.clone());
    }
    o.insert("content".into(), json!(e.content));
    o.insert(
        "constant".into(),
        json!(e.strategy == LorebookStrategy::Constant),
    );
    o.insert("selective".into(), json!(selective));
    o.insert("insertion_order".into(), json!(e.order));
    o.insert("enabled".into(), json!(e.enabled));
    let pos = if e.injection_position == LorebookPosition::LorebookBefore {
        "before_char"
    } else {
        "after_char"
    };
    o.insert("position".into(), json!(pos));
    o.insert("case_sensitive".into(), json!(e.case_sensitive));
    let mut ext = Map::new();
    ext.insert("position".into(), json!(st_position_for(e)));
    ext.insert("depth".into(), json!(e.injection_depth));
    ext.insert("role".into(), json!(role_to_st(e.injection_role)));
    ext.insert("probability".into(), json!(e.probability));
    ext.insert("selectiveLogic".into(), json!(logic));
    ext.insert("scan_depth".into(), json!(e.scan_depth));
    ext.insert("case_sensitive".into(), json!(e.case_sensitive));
    ext.insert("match_whole_words".into(), json!(e.match_whole_word));
    ext.insert("sticky".into(), json!(e.sticky));
    ext.insert("cooldown".into(), json!(e.cooldown));
    ext.insert("delay".into(), json!(e.delay));
    restore_nulls(e, &mut ext, ccv3_ext_name);
    if let Some(Value::Object(rest)) = e.extra.get("extensions") {
        append_extra(&mut ext, rest);
    }
    o.insert("extensions".into(), Value::Object(ext));
    let rest = without(
        &e.extra,
        &[
            KEY_ST_POSITION,
            KEY_ST_LOGIC,
            KEY_ST_NULLS,
            "extensions",
            "entryName",
        ],
    );
    append_extra(&mut o, &rest);
    o
}

/// Reads a CCv3 `character_book` object (`{ name?, entries: [...] , … }`) at `path`.
pub fn from_ccv3_book(
    ctx: &mut Ctx,
    v: &Value,
    path: &str,
    default_name: &str,
) -> Result<Lorebook> {
    let o = ctx.object(v, path)?;
    let entries_path = child(path, "entries");
    let entries = match o.get("entries") {
        Some(Value::Array(list)) => {
            let mut out = Vec::with_capacity(list.len());
            for (i, e) in list.iter().enumerate() {
                out.push(entry_from_ccv3(ctx, e, &item(&entries_path, i))?);
            }
            out
        }
        None | Some(Value::Null) => Vec::new(),
        Some(other) => {
            return Err(FormatError::at(
                entries_path,
                format!(
                    "expected an array of entries, found {}",
                    crate::value::type_name(other)
                ),
            ));
        }
    };
    let name = ctx
        .opt_string(o.get("name"), &child(path, "name"))?
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| default_name.to_owned());
    Ok(Lorebook {
        name,
        entries,
        extra: st_word_rule(shelter(without(o, &["entries", "name"]), fields::GROUP)),
        ..Default::default()
    })
}

/// Writes a lorebook as a CCv3 `character_book` object.
pub fn to_ccv3_book(book: &Lorebook) -> Value {
    let mut o = Map::new();
    o.insert("name".into(), json!(book.name));
    append_extra(&mut o, &st_file_extra(&book.extra, &["entries"]));
    let entries: Vec<Value> = book
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| Value::Object(entry_to_ccv3(e, i)))
        .collect();
    o.insert("entries".into(), Value::Array(entries));
    Value::Object(o)
}

/// Writes a standalone CCv3 lorebook file (`{ spec: "lorebook_v3", data: {…} }`).
pub fn to_lorebook_v3(book: &Lorebook) -> Value {
    json!({ "spec": "lorebook_v3", "data": to_ccv3_book(book) })
}
