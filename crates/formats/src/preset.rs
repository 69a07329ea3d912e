//! SillyTavern chat-completion presets (`prompts` + `prompt_order`) ↔ Tavo presets.
//!
//! The order list of `character_id` 100001 (SillyTavern's global list) becomes `entries` in
//! order; prompts missing from it become inactive entries (`active: false`). Other order lists,
//! sampler settings and everything else stay in `extra` under their SillyTavern keys.
//! `extensions.regex_scripts` becomes a separate regex group.

use crate::error::{FormatError, Result};
use crate::fields::{self, shelter};
use crate::value::{Ctx, append_extra, child, item, type_name, without};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use tavo_model::preset::builtin_entry;
use tavo_model::{
    BasicPrompts, Preset, PresetEntry, PresetEntryType, PresetInjectionPosition, RegexGroup, Role,
};

/// `character_id` of SillyTavern's global prompt order.
pub const GLOBAL_ORDER_ID: i64 = 100_001;

/// SillyTavern key ↔ `basicPrompts` field.
const BASIC_KEYS: &[(&str, &str)] = &[
    ("impersonation_prompt", "impersonation"),
    ("new_chat_prompt", "chatStart"),
    ("new_group_chat_prompt", "groupChatStart"),
    ("new_example_chat_prompt", "exampleMessageStart"),
    ("continue_nudge_prompt", "continueNudge"),
    ("group_nudge_prompt", "groupNudge"),
    ("wi_format", "lorebook"),
    ("scenario_format", "scenario"),
    ("personality_format", "personality"),
    ("tavo_persona_format", "persona"),
    ("tavo_description_format", "description"),
];

const PROMPT_MAPPED: &[&str] = &[
    "identifier",
    "name",
    "role",
    "content",
    "marker",
    "injection_position",
    "injection_depth",
    "forbid_overrides",
    "enabled",
];
const KEY_PROMPT_ENABLED: &str = "sillyTavernPromptEnabled";

/// Whether a JSON value looks like a SillyTavern chat-completion preset.
pub fn looks_like_st_preset(v: &Value) -> bool {
    v.as_object().is_some_and(|o| {
        o.get("prompts").is_some_and(Value::is_array)
            || o.get("prompt_order").is_some_and(Value::is_array)
    })
}

fn role_of(ctx: &mut Ctx, v: Option<&Value>, path: &str) -> Option<Role> {
    match v.and_then(Value::as_str) {
        Some("system") => Some(Role::System),
        Some("user") => Some(Role::User),
        Some("assistant") => Some(Role::Assistant),
        Some("") | None => None,
        Some(other) => {
            ctx.warn(
                "value.unknown",
                path,
                format!("unknown role \"{other}\" was ignored (system is used)"),
            );
            None
        }
    }
}

fn entry_from_prompt(ctx: &mut Ctx, v: &Value, path: &str) -> Result<PresetEntry> {
    let o = ctx.object(v, path)?;
    let identifier = ctx.string(o.get("identifier"), &child(path, "identifier"))?;
    if identifier.is_empty() {
        return Err(FormatError::at(
            child(path, "identifier"),
            "missing: every prompt needs an identifier",
        ));
    }
    let marker = ctx.bool_or(o.get("marker"), &child(path, "marker"), false)?;
    let kind = if marker {
        PresetEntryType::Marker
    } else if builtin_entry(&identifier).is_some_and(|b| b.kind == PresetEntryType::Builtin) {
        PresetEntryType::Builtin
    } else {
        PresetEntryType::Custom
    };
    let mut extra = without(o, PROMPT_MAPPED);
    if let Some(b) = ctx.opt_bool(o.get("enabled"), &child(path, "enabled"))? {
        extra.insert(KEY_PROMPT_ENABLED.into(), json!(b));
    }
    let depth = ctx.opt_u32(o.get("injection_depth"), &child(path, "injection_depth"))?;
    if depth.is_none() {
        extra.insert("sillyTavernNoDepth".into(), json!(true));
    }
    Ok(PresetEntry {
        name: ctx.string(o.get("name"), &child(path, "name"))?,
        content: ctx.opt_string(o.get("content"), &child(path, "content"))?,
        enabled: true,
        active: false,
        kind,
        role: role_of(ctx, o.get("role"), &child(path, "role")),
        injection_position: if ctx.opt_i64(
            o.get("injection_position"),
            &child(path, "injection_position"),
        )? == Some(1)
        {
            PresetInjectionPosition::Absolute
        } else {
            PresetInjectionPosition::Relative
        },
        injection_depth: depth.unwrap_or(4),
        forbid_overrides: ctx.bool_or(
            o.get("forbid_overrides"),
            &child(path, "forbid_overrides"),
            false,
        )?,
        identifier,
        extra: shelter(extra, fields::PRESET_ENTRY),
    })
}

fn prompt_from_entry(e: &PresetEntry) -> Map<String, Value> {
    let mut o = Map::new();
    o.insert("identifier".into(), json!(e.identifier));
    o.insert("name".into(), json!(e.name));
    if let Some(r) = e.role {
        o.insert("role".into(), json!(r.as_str()));
    }
    if let Some(c) = &e.content {
        o.insert("content".into(), json!(c));
    }
    o.insert("marker".into(), json!(e.kind == PresetEntryType::Marker));
    if e.injection_position == PresetInjectionPosition::Absolute
        || !e.extra.contains_key("sillyTavernNoDepth")
    {
        o.insert(
            "injection_position".into(),
            json!(
                if e.injection_position == PresetInjectionPosition::Absolute {
                    1
                } else {
                    0
                }
            ),
        );
        o.insert("injection_depth".into(), json!(e.injection_depth));
    }
    o.insert("forbid_overrides".into(), json!(e.forbid_overrides));
    if !e.active {
        o.insert("enabled".into(), json!(e.enabled));
    } else if let Some(b) = e.extra.get(KEY_PROMPT_ENABLED) {
        o.insert("enabled".into(), b.clone());
    }
    append_extra(
        &mut o,
        &without(&e.extra, &[KEY_PROMPT_ENABLED, "sillyTavernNoDepth"]),
    );
    o
}

/// Reads a SillyTavern preset; returns the preset and the regex group of
/// `extensions.regex_scripts` (if any).
pub fn from_st(
    ctx: &mut Ctx,
    root: &Value,
    default_name: &str,
) -> Result<(Preset, Option<RegexGroup>)> {
    let o = ctx.object(root, "")?;
    let mut extra = without(o, &["prompts", "name"]);
    let basic_prompts = basic_prompts_from_st(ctx, o, &mut extra)?;
    let prompts = prompts_from_st(ctx, o)?;
    let entries = ordered_entries(ctx, o, prompts, &mut extra)?;
    let regex = regex_from_st(ctx, &mut extra)?;
    let name = ctx
        .opt_string(o.get("name"), "name")?
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| default_name.to_owned());
    let name = if name.trim().is_empty() {
        "Preset".to_owned()
    } else {
        name
    };
    let regex = regex.map(|entries| RegexGroup {
        name: name.clone(),
        entries,
        ..Default::default()
    });
    Ok((
        Preset {
            name,
            basic_prompts,
            entries,
            extra: shelter(extra, fields::PRESET),
            ..Default::default()
        },
        regex,
    ))
}

/// The basic prompts (`impersonation_prompt`, `new_chat_prompt`, …), taken out of `extra`.
fn basic_prompts_from_st(
    ctx: &mut Ctx,
    o: &Map<String, Value>,
    extra: &mut Map<String, Value>,
) -> Result<BasicPrompts> {
    let mut basic = serde_json::to_value(BasicPrompts::default())
        .map_err(|e| FormatError::whole(e.to_string()))?;
    for (st_key, tavo_key) in BASIC_KEYS {
        if let Some(s) = ctx.opt_string(o.get(*st_key), st_key)? {
            basic[*tavo_key] = json!(s);
        }
        extra.shift_remove(*st_key);
    }
    serde_json::from_value(basic).map_err(|e| FormatError::whole(e.to_string()))
}

/// The `prompts` list as entries, in file order (not yet ordered or switched).
fn prompts_from_st(ctx: &mut Ctx, o: &Map<String, Value>) -> Result<Vec<PresetEntry>> {
    match o.get("prompts") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(list)) => list
            .iter()
            .enumerate()
            .map(|(i, p)| entry_from_prompt(ctx, p, &item("prompts", i)))
            .collect(),
        Some(other) => Err(FormatError::at(
            "prompts",
            format!("expected an array of prompts, found {}", type_name(other)),
        )),
    }
}

/// The entries in the order of the chosen `prompt_order` list (the global one, 100001, else
/// the first), switched as it says; prompts it leaves out follow, switched by their own
/// `enabled`. The other order lists stay in `extra`, the chosen one without its `order`.
fn ordered_entries(
    ctx: &mut Ctx,
    o: &Map<String, Value>,
    prompts: Vec<PresetEntry>,
    extra: &mut Map<String, Value>,
) -> Result<Vec<PresetEntry>> {
    let mut orders: Vec<Value> = match o.get("prompt_order") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(list)) => list.clone(),
        Some(other) => {
            return Err(FormatError::at(
                "prompt_order",
                format!("expected an array, found {}", type_name(other)),
            ));
        }
    };
    let chosen = orders
        .iter()
        .position(|v| v.get("character_id").and_then(Value::as_i64) == Some(GLOBAL_ORDER_ID))
        .or_else(|| (!orders.is_empty()).then_some(0));
    let Some(ci) = chosen else {
        return Ok(prompts.into_iter().map(self_switched).collect());
    };
    let base = item("prompt_order", ci);
    let list = match orders[ci].get("order") {
        Some(Value::Array(l)) => l.clone(),
        None | Some(Value::Null) => Vec::new(),
        Some(other) => {
            return Err(FormatError::at(
                child(&base, "order"),
                format!("expected an array, found {}", type_name(other)),
            ));
        }
    };
    let index: HashMap<String, usize> = prompts
        .iter()
        .enumerate()
        .map(|(i, p)| (p.identifier.clone(), i))
        .collect();
    let mut taken = vec![false; prompts.len()];
    let mut entries: Vec<PresetEntry> = Vec::new();
    for (j, it) in list.iter().enumerate() {
        let p = item(&child(&base, "order"), j);
        let ident = ctx.string(it.get("identifier"), &child(&p, "identifier"))?;
        let enabled = ctx.bool_or(it.get("enabled"), &child(&p, "enabled"), true)?;
        match index.get(&ident) {
            Some(&k) if !taken[k] => {
                taken[k] = true;
                let mut e = prompts[k].clone();
                e.active = true;
                e.enabled = enabled;
                entries.push(e);
            }
            Some(_) => ctx.warn(
                "preset.duplicate-identifier",
                &child(&p, "identifier"),
                format!("'{ident}' is listed twice; the repeat was dropped"),
            ),
            None => ctx.warn(
                "preset.dangling-identifier",
                &child(&p, "identifier"),
                format!("'{ident}' names no prompt; it was dropped"),
            ),
        }
    }
    entries.extend(
        prompts
            .into_iter()
            .zip(taken)
            .filter(|(_, taken)| !taken)
            .map(|(p, _)| self_switched(p)),
    );
    if let Some(Value::Object(ord)) = orders.get_mut(ci) {
        ord.shift_remove("order");
    }
    warn_dangling_orders(ctx, &orders, ci, &index);
    extra.insert("prompt_order".into(), Value::Array(orders));
    Ok(entries)
}

/// A prompt no order list switches: its own `enabled` (default on) decides.
fn self_switched(mut e: PresetEntry) -> PresetEntry {
    e.enabled = e
        .extra
        .get(KEY_PROMPT_ENABLED)
        .and_then(Value::as_bool)
        .unwrap_or(true);
    e.extra.shift_remove(KEY_PROMPT_ENABLED);
    e
}

/// The order lists not chosen (e.g. the legacy 100000) may name missing prompts: a warning
/// only, since they are kept as they are.
fn warn_dangling_orders(
    ctx: &mut Ctx,
    orders: &[Value],
    chosen: usize,
    index: &HashMap<String, usize>,
) {
    for (oi, ord) in orders.iter().enumerate() {
        if oi == chosen {
            continue;
        }
        let dangling = ord
            .get("order")
            .and_then(Value::as_array)
            .map(|l| {
                l.iter()
                    .filter(|it| {
                        it.get("identifier")
                            .and_then(Value::as_str)
                            .is_some_and(|s| !index.contains_key(s))
                    })
                    .count()
            })
            .unwrap_or(0);
        if dangling > 0 {
            ctx.warn(
                "preset.dangling-identifier",
                &item("prompt_order", oi),
                format!(
                    "{dangling} identifiers of this order list name no prompt; the list is kept as is"
                ),
            );
        }
    }
}

/// The entries of `extensions.regex_scripts`, taken out of `extra` (an empty list stays).
fn regex_from_st(
    ctx: &mut Ctx,
    extra: &mut Map<String, Value>,
) -> Result<Option<Vec<tavo_model::RegexEntry>>> {
    let Some(Value::Object(ext)) = extra.get_mut("extensions") else {
        return Ok(None);
    };
    let Some(scripts) = ext.shift_remove("regex_scripts") else {
        return Ok(None);
    };
    match scripts {
        Value::Array(list) if list.is_empty() => {
            ext.insert("regex_scripts".into(), Value::Array(list));
            Ok(None)
        }
        Value::Array(list) => Ok(Some(crate::regex::entries_from_st_list(
            ctx,
            &list,
            "extensions.regex_scripts",
        )?)),
        other => Err(FormatError::at(
            "extensions.regex_scripts",
            format!("expected an array, found {}", type_name(&other)),
        )),
    }
}

/// Writes a preset (and its regex group) as a SillyTavern chat-completion preset.
pub fn to_st(p: &Preset, regex: Option<&RegexGroup>) -> Value {
    let mut o = Map::new();
    o.insert("name".into(), json!(p.name));
    let defaults = BasicPrompts::default();
    let basic = serde_json::to_value(&p.basic_prompts).unwrap_or(Value::Null);
    let default_basic = serde_json::to_value(&defaults).unwrap_or(Value::Null);
    for (st_key, tavo_key) in BASIC_KEYS {
        let v = basic.get(*tavo_key).cloned().unwrap_or(Value::Null);
        let tavo_only = st_key.starts_with("tavo_");
        if !tavo_only || default_basic.get(*tavo_key) != Some(&v) {
            o.insert((*st_key).into(), v);
        }
    }
    let prompts: Vec<Value> = p
        .entries
        .iter()
        .map(|e| Value::Object(prompt_from_entry(e)))
        .collect();
    o.insert("prompts".into(), Value::Array(prompts));
    let order: Vec<Value> = p
        .entries
        .iter()
        .filter(|e| e.active)
        .map(|e| json!({"identifier": e.identifier, "enabled": e.enabled}))
        .collect();
    let mut orders = match p.extra.get("prompt_order") {
        Some(Value::Array(l)) => l.clone(),
        _ => Vec::new(),
    };
    let slot = orders
        .iter()
        .position(|v| v.is_object() && v.get("order").is_none());
    match slot {
        Some(i) => {
            if let Some(Value::Object(m)) = orders.get_mut(i) {
                m.insert("order".into(), Value::Array(order));
            }
        }
        None => orders.push(json!({"character_id": GLOBAL_ORDER_ID, "order": order})),
    }
    o.insert("prompt_order".into(), Value::Array(orders));
    let mut extra = without(&p.extra, &["prompt_order"]);
    if let Some(r) = regex.filter(|r| !r.entries.is_empty()) {
        let ext = extra
            .entry("extensions")
            .or_insert_with(|| Value::Object(Map::new()));
        if !ext.is_object() {
            *ext = Value::Object(Map::new());
        }
        if let Value::Object(m) = ext {
            m.insert("regex_scripts".into(), crate::regex::to_st_list(r));
        }
    }
    append_extra(&mut o, &extra);
    Value::Object(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_100001_wins_and_dangling_is_warned() {
        let v = json!({
            "prompts": [
                {"identifier":"main","name":"Main Prompt","role":"system","content":"hi","system_prompt":true},
                {"identifier":"chatHistory","name":"Chat History","marker":true},
                {"identifier":"x","name":"X","content":"c","injection_position":1,"injection_depth":2}
            ],
            "prompt_order": [
                {"character_id":100000,"order":[{"identifier":"x","enabled":true}]},
                {"character_id":100001,"order":[{"identifier":"chatHistory","enabled":true},{"identifier":"ghost","enabled":true},{"identifier":"main","enabled":false}]}
            ],
            "temperature": 0.7
        });
        let mut ctx = Ctx::default();
        let (p, r) = from_st(&mut ctx, &v, "file").unwrap();
        assert!(r.is_none());
        let ids: Vec<_> = p
            .entries
            .iter()
            .map(|e| (e.identifier.as_str(), e.active, e.enabled))
            .collect();
        assert_eq!(
            ids,
            [
                ("chatHistory", true, true),
                ("main", true, false),
                ("x", false, true)
            ]
        );
        assert_eq!(p.entries[0].kind, PresetEntryType::Marker);
        assert_eq!(p.entries[1].kind, PresetEntryType::Builtin);
        assert_eq!(
            p.entries[2].injection_position,
            PresetInjectionPosition::Absolute
        );
        assert!(
            ctx.warnings
                .iter()
                .any(|w| w.code == "preset.dangling-identifier")
        );
        assert_eq!(p.name, "file");
        // Export → import is a fixpoint.
        let out = to_st(&p, None);
        let (p2, _) = from_st(&mut Ctx::default(), &out, "other").unwrap();
        assert_eq!(to_st(&p2, None), out);
        assert_eq!(out["temperature"], json!(0.7));
    }
}
