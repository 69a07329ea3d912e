//! Lorebooks: SillyTavern world info (`entries` keyed by uid), CCv3 `character_book` /
//! `lorebook_v3`, and the seed's CCv3 mapping (`keys→keywords`, `constant→strategy`,
//! `position→injectionPosition`, `selective→secondaryKeywordStrategy`).
//!
//! Fields Tavo does not model stay in `LorebookEntry::extra` under their source names. Two
//! SillyTavern values that Tavo's enums cannot express are kept under neutral keys so both
//! families can write them back: `sillyTavernPosition` (Author's-Note top/bottom, outlet) and
//! `sillyTavernSelectiveLogic` (the logic of an entry whose `selective` is off). An imported
//! book is marked `wordCharacters: "ascii"` (SillyTavern's whole-word rule, see
//! `tavo_model::lorebook::WORD_CHARACTERS_KEY`); exports to these formats leave the mark out.

mod ccv3;
mod world_info;

pub use ccv3::{entry_from_ccv3, entry_to_ccv3, from_ccv3_book, to_ccv3_book, to_lorebook_v3};
pub use world_info::{entry_from_st, entry_to_st, from_st_world_info, to_st_world_info};

use crate::error::Result;
use crate::value::Ctx;
use serde_json::{Map, Value, json};
use tavo_model::{
    Lorebook, LorebookEntry, LorebookPosition, LorebookStrategy, Role, SecondaryKeywordStrategy,
};

use tavo_model::lorebook::{WORD_CHARACTERS_ASCII, WORD_CHARACTERS_KEY, WORD_CHARACTERS_UNICODE};

/// The whole-word rule of an imported SillyTavern / CCv3 book ([`WORD_CHARACTERS_KEY`]): a file
/// that does not name one is SillyTavern's, matched with its ASCII-only `\W` (`caf` inside
/// `café`), so the book is marked `"ascii"`; a file written by Tavo from a native book says
/// `"unicode"`, and the book comes back native (no mark).
fn st_word_rule(mut extra: Map<String, Value>) -> Map<String, Value> {
    match extra.get(WORD_CHARACTERS_KEY).and_then(Value::as_str) {
        Some(WORD_CHARACTERS_ASCII) => {}
        None => {
            extra.insert(WORD_CHARACTERS_KEY.into(), json!(WORD_CHARACTERS_ASCII));
        }
        Some(_) => {
            extra.remove(WORD_CHARACTERS_KEY);
        }
    }
    extra
}

/// The book-level `extra` to write into a SillyTavern / CCv3 file: the inverse of
/// [`st_word_rule`] (SillyTavern's rule is the format's own and goes unsaid; a native book says
/// `"unicode"`).
fn st_file_extra(extra: &Map<String, Value>, also_drop: &[&str]) -> Map<String, Value> {
    let ascii =
        extra.get(WORD_CHARACTERS_KEY).and_then(Value::as_str) == Some(WORD_CHARACTERS_ASCII);
    let mut drop = vec![WORD_CHARACTERS_KEY];
    drop.extend_from_slice(also_drop);
    let mut out = crate::value::without(extra, &drop);
    if !ascii {
        out.insert(WORD_CHARACTERS_KEY.into(), json!(WORD_CHARACTERS_UNICODE));
    }
    out
}

const KEY_ST_POSITION: &str = "sillyTavernPosition";
const KEY_ST_LOGIC: &str = "sillyTavernSelectiveLogic";
/// SillyTavern fields that were `null` ("use the global setting") in the source file.
const KEY_ST_NULLS: &str = "sillyTavernNulls";

/// A nullable SillyTavern field: world-info name, CCv3 `extensions` name, and the value `null`
/// is read as.
type Nullable = (&'static str, &'static str, fn() -> Value);

/// Nullable SillyTavern fields. A field that was `null` is written back as `null` while its Tavo
/// value still equals the default it was read as, so "use the global setting" survives a round
/// trip.
const NULLABLE: &[Nullable] = &[
    ("scanDepth", "scan_depth", || {
        json!(tavo_model::lorebook::DEFAULT_SCAN_DEPTH)
    }),
    ("caseSensitive", "case_sensitive", || json!(false)),
    ("matchWholeWords", "match_whole_words", || json!(true)),
    ("sticky", "sticky", || json!(0)),
    ("cooldown", "cooldown", || json!(0)),
    ("delay", "delay", || json!(0)),
    ("probability", "probability", || json!(100)),
    ("depth", "depth", || {
        json!(tavo_model::lorebook::DEFAULT_INJECTION_DEPTH)
    }),
    ("role", "role", || json!(0)),
];

/// Records which nullable fields are `null` in `source` (keys named by `pick`).
fn record_nulls(
    source: &Map<String, Value>,
    extra: &mut Map<String, Value>,
    pick: fn(&Nullable) -> &'static str,
) {
    let nulls: Vec<Value> = NULLABLE
        .iter()
        .filter(|f| source.get(pick(f)).is_some_and(Value::is_null))
        .map(|f| json!(f.0))
        .collect();
    if !nulls.is_empty() {
        extra.insert(KEY_ST_NULLS.into(), Value::Array(nulls));
    }
}

/// Writes `null` back into `out` for recorded fields whose value is still the default.
fn restore_nulls(
    e: &LorebookEntry,
    out: &mut Map<String, Value>,
    pick: fn(&Nullable) -> &'static str,
) {
    let Some(list) = e.extra.get(KEY_ST_NULLS).and_then(Value::as_array) else {
        return;
    };
    for f in NULLABLE {
        let key = pick(f);
        if list.iter().any(|n| n.as_str() == Some(f.0)) && out.get(key) == Some(&(f.2)()) {
            out.insert(key.to_owned(), Value::Null);
        }
    }
}

fn wi_name(f: &Nullable) -> &'static str {
    f.0
}

fn ccv3_ext_name(f: &Nullable) -> &'static str {
    f.1
}

/// SillyTavern `position` number → Tavo position; `None` for positions Tavo lacks (2, 3, 7 …).
fn position_from_st(n: i64) -> Option<LorebookPosition> {
    match n {
        0 => Some(LorebookPosition::LorebookBefore),
        1 => Some(LorebookPosition::LorebookAfter),
        4 => Some(LorebookPosition::AtDepth),
        5 => Some(LorebookPosition::TopOfExampleMessages),
        6 => Some(LorebookPosition::BottomOfExampleMessages),
        _ => None,
    }
}

fn position_to_st(p: LorebookPosition) -> i64 {
    match p {
        LorebookPosition::LorebookBefore => 0,
        LorebookPosition::LorebookAfter => 1,
        LorebookPosition::AtDepth => 4,
        LorebookPosition::TopOfExampleMessages => 5,
        LorebookPosition::BottomOfExampleMessages => 6,
    }
}

/// The SillyTavern position to write: the kept original when it still imports as `p`.
fn st_position_for(e: &LorebookEntry) -> i64 {
    match e.extra.get(KEY_ST_POSITION).and_then(Value::as_i64) {
        Some(raw)
            if position_from_st(raw).is_none()
                && e.injection_position == LorebookPosition::LorebookAfter =>
        {
            raw
        }
        _ => position_to_st(e.injection_position),
    }
}

fn logic_from_st(n: i64) -> SecondaryKeywordStrategy {
    match n {
        1 => SecondaryKeywordStrategy::NotAll,
        2 => SecondaryKeywordStrategy::NotAny,
        3 => SecondaryKeywordStrategy::AndAll,
        _ => SecondaryKeywordStrategy::AndAny,
    }
}

fn logic_to_st(s: SecondaryKeywordStrategy) -> Option<i64> {
    match s {
        SecondaryKeywordStrategy::None => None,
        SecondaryKeywordStrategy::AndAny => Some(0),
        SecondaryKeywordStrategy::NotAll => Some(1),
        SecondaryKeywordStrategy::NotAny => Some(2),
        SecondaryKeywordStrategy::AndAll => Some(3),
    }
}

/// `(selective, selectiveLogic)` to write for an entry.
fn st_selective(e: &LorebookEntry) -> (bool, i64) {
    match logic_to_st(e.secondary_keyword_strategy) {
        Some(l) => (true, l),
        None => (
            false,
            e.extra
                .get(KEY_ST_LOGIC)
                .and_then(Value::as_i64)
                .unwrap_or(0),
        ),
    }
}

fn role_from_st(ctx: &mut Ctx, v: Option<&Value>, path: &str) -> Result<Role> {
    match v {
        Some(Value::String(s)) if s.trim().parse::<i64>().is_err() => match s.as_str() {
            "user" => Ok(Role::User),
            "assistant" => Ok(Role::Assistant),
            "system" => Ok(Role::System),
            _ => {
                ctx.warn(
                    "value.unknown",
                    path,
                    format!("unknown role \"{s}\"; system was used"),
                );
                Ok(Role::System)
            }
        },
        other => Ok(match ctx.opt_i64(other, path)? {
            Some(1) => Role::User,
            Some(2) => Role::Assistant,
            _ => Role::System,
        }),
    }
}

fn role_to_st(r: Role) -> i64 {
    match r {
        Role::System => 0,
        Role::User => 1,
        Role::Assistant => 2,
    }
}

fn new_identifier() -> String {
    uuid::Uuid::new_v4().to_string()
}

fn identifier_from(v: Option<&Value>) -> Option<String> {
    match v {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    }
}

fn id_value(identifier: &str, fallback: usize) -> Value {
    identifier
        .parse::<i64>()
        .map_or_else(|_| json!(fallback), |n| json!(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imported_books_carry_sillytaverns_word_rule_and_native_books_come_back_native() {
        let rule = |b: &Lorebook| b.extra.get(WORD_CHARACTERS_KEY).cloned();
        let mut ctx = Ctx::default();
        let wi = json!({"entries": {"0": {"uid": 0, "key": ["caf"], "content": "x"}}});
        let st = from_st_world_info(&mut ctx, &wi, "w").unwrap();
        assert_eq!(rule(&st), Some(json!("ascii")));
        let card_book = json!({"entries": [{"keys": ["caf"], "content": "x"}]});
        let cc = from_ccv3_book(&mut ctx, &card_book, "data.character_book", "b").unwrap();
        assert_eq!(rule(&cc), Some(json!("ascii")));
        // SillyTavern's rule goes unsaid in its own formats; a native book says "unicode".
        assert!(to_st_world_info(&st).get(WORD_CHARACTERS_KEY).is_none());
        assert!(to_ccv3_book(&cc).get(WORD_CHARACTERS_KEY).is_none());
        let native = Lorebook {
            name: "n".into(),
            ..Lorebook::default()
        };
        for file in [to_st_world_info(&native), to_ccv3_book(&native)] {
            assert_eq!(file[WORD_CHARACTERS_KEY], "unicode");
        }
        let back = from_st_world_info(&mut ctx, &to_st_world_info(&native), "n").unwrap();
        assert_eq!(rule(&back), None);
        let back = from_ccv3_book(&mut ctx, &to_ccv3_book(&native), "b", "n").unwrap();
        assert_eq!(rule(&back), None);
    }

    #[test]
    fn ccv3_mapping_follows_the_seed() {
        let mut ctx = Ctx::default();
        let v = json!({"keys":["a"],"secondary_keys":["b"],"constant":true,"selective":true,"position":"before_char","content":"x","comment":"c","insertion_order":7});
        let e = entry_from_ccv3(&mut ctx, &v, "entries[0]").unwrap();
        assert_eq!(e.keywords, vec!["a"]);
        assert_eq!(e.secondary_keywords, vec!["b"]);
        assert_eq!(e.strategy, LorebookStrategy::Constant);
        assert_eq!(e.injection_position, LorebookPosition::LorebookBefore);
        assert_eq!(
            e.secondary_keyword_strategy,
            SecondaryKeywordStrategy::AndAny
        );
        assert_eq!(e.name, "c");
        assert_eq!(e.order, 7);
        let off = entry_from_ccv3(&mut ctx, &json!({"keys":[],"selective":false}), "e").unwrap();
        assert_eq!(
            off.secondary_keyword_strategy,
            SecondaryKeywordStrategy::None
        );
        assert_eq!(off.strategy, LorebookStrategy::Keyword);
        assert_eq!(off.injection_position, LorebookPosition::LorebookAfter);
    }

    #[test]
    fn st_positions_round_trip_including_lossy_ones() {
        let mut ctx = Ctx::default();
        for pos in 0..8 {
            let v = json!({"uid": 3, "key": ["k"], "position": pos, "content": "c"});
            let e = entry_from_st(&mut ctx, &v, "entries.3").unwrap();
            assert_eq!(entry_to_st(&e, 0)["position"], json!(pos), "position {pos}");
            assert_eq!(entry_to_ccv3(&e, 0)["extensions"]["position"], json!(pos));
        }
    }

    #[test]
    fn nulls_survive_while_the_value_is_the_default() {
        let mut ctx = Ctx::default();
        let v = json!({"uid": 1, "key": ["k"], "scanDepth": null, "sticky": null, "caseSensitive": null});
        let mut e = entry_from_st(&mut ctx, &v, "e").unwrap();
        let out = entry_to_st(&e, 0);
        assert_eq!(
            (out["scanDepth"].clone(), out["sticky"].clone()),
            (Value::Null, Value::Null)
        );
        e.scan_depth = 5;
        let out = entry_to_st(&e, 0);
        assert_eq!(out["scanDepth"], json!(5));
        assert_eq!(
            entry_to_ccv3(&e, 0)["extensions"]["case_sensitive"],
            Value::Null
        );
    }

    #[test]
    fn bad_keys_name_the_path() {
        let mut ctx = Ctx::default();
        let book = json!({"entries":[{"keys": 5}]});
        let e = from_ccv3_book(&mut ctx, &book, "data.character_book", "x").unwrap_err();
        assert_eq!(
            e.to_string(),
            "data.character_book.entries[0].keys: expected an array of strings, found a number"
        );
    }
}
