//! Dotted variable paths over JSON values: the one implementation behind TavoJS
//! `tavo.get/set/update/unset`, the `{{getvar::status.hp}}` macros and EJS `getvar`.
//!
//! Syntax: `status.hp`, `bag.items[0].name`, `bag.items.0.name`. Every segment is non-empty.
//! A `.`-segment is an object key, or — when the value it is applied to is already an array and
//! the segment is a number — an array index. A `[n]` segment is always an array index, and is the
//! only way to make [`set`] *create* an array: `set("scores.2024", 1)` must give
//! `{"scores": {"2024": 1}}`, not an array of 2,025 elements.
//!
//! These functions are pure, so the prompt engine can apply a whole prompt's macros to an
//! in-memory copy of a scope and write it back once.

use serde_json::{Map, Value};

use crate::error::{Result, StoreError};

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// `.name` — an object key (or an index into an existing array, when numeric).
    Key(String),
    /// `[n]` — an array index.
    Index(usize),
}

/// Splits a path into segments; the error names the path and what is wrong with it.
pub fn parse(path: &str) -> Result<Vec<Segment>> {
    let invalid = |reason| StoreError::InvalidPath {
        path: path.to_owned(),
        reason,
    };
    if path.is_empty() {
        return Err(invalid("a variable name must not be empty"));
    }
    let mut segments = Vec::new();
    for part in path.split('.') {
        let (key, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if key.is_empty() && (segments.is_empty() || rest.is_empty()) {
            return Err(invalid(
                "a path segment is empty (check for '..', or a leading or trailing '.')",
            ));
        }
        if !key.is_empty() {
            segments.push(Segment::Key(key.to_owned()));
        }
        while !rest.is_empty() {
            let close = rest
                .find(']')
                .ok_or_else(|| invalid("a '[' has no matching ']'"))?;
            let index = rest[1..close]
                .parse::<usize>()
                .map_err(|_| invalid("an index in [...] must be a non-negative integer"))?;
            segments.push(Segment::Index(index));
            rest = &rest[close + 1..];
            if !rest.is_empty() && !rest.starts_with('[') {
                return Err(invalid("after ']' comes '.', '[' or the end of the path"));
            }
        }
    }
    Ok(segments)
}

fn step<'v>(value: &'v Value, segment: &Segment) -> Option<&'v Value> {
    match (value, segment) {
        (Value::Object(map), Segment::Key(key)) => map.get(key),
        (Value::Array(items), Segment::Key(key)) => {
            key.parse::<usize>().ok().and_then(|i| items.get(i))
        }
        (Value::Array(items), Segment::Index(i)) => items.get(*i),
        _ => None,
    }
}

fn step_mut<'v>(value: &'v mut Value, segment: &Segment) -> Option<&'v mut Value> {
    match (value, segment) {
        (Value::Object(map), Segment::Key(key)) => map.get_mut(key),
        (Value::Array(items), Segment::Key(key)) => {
            key.parse::<usize>().ok().and_then(|i| items.get_mut(i))
        }
        (Value::Array(items), Segment::Index(i)) => items.get_mut(*i),
        _ => None,
    }
}

/// The value at `path`, or `None` when any step is missing.
pub fn get<'v>(root: &'v Value, path: &str) -> Result<Option<&'v Value>> {
    let segments = parse(path)?;
    Ok(segments
        .iter()
        .try_fold(root, |value, segment| step(value, segment)))
}

/// Writes `value` at `path`, creating missing containers (objects, or arrays for `[n]`) and
/// replacing scalars that stand in the way. Writing past an array's end pads it with `null`.
pub fn set(root: &mut Value, path: &str, value: Value) -> Result<()> {
    let segments = parse(path)?;
    let slot = slot_mut(root, &segments);
    *slot = value;
    Ok(())
}

/// Shallow merge (TavoJS `tavo.update`): when both the stored value and `patch` are objects,
/// `patch`'s keys are written over the stored object's and its other keys stay; otherwise it
/// behaves like [`set`].
pub fn merge(root: &mut Value, path: &str, patch: Value) -> Result<()> {
    let segments = parse(path)?;
    let slot = slot_mut(root, &segments);
    match (slot, patch) {
        (Value::Object(existing), Value::Object(patch)) => {
            for (key, value) in patch {
                existing.insert(key, value);
            }
        }
        (slot, patch) => *slot = patch,
    }
    Ok(())
}

/// Removes only the leaf at `path` and returns it; parents stay, even when left empty.
pub fn unset(root: &mut Value, path: &str) -> Result<Option<Value>> {
    let segments = parse(path)?;
    let Some((leaf, parents)) = segments.split_last() else {
        return Ok(None);
    };
    let Some(parent) = parents
        .iter()
        .try_fold(root, |value, segment| step_mut(value, segment))
    else {
        return Ok(None);
    };
    Ok(match (parent, leaf) {
        (Value::Object(map), Segment::Key(key)) => map.shift_remove(key),
        (Value::Array(items), Segment::Key(key)) => match key.parse::<usize>() {
            Ok(i) if i < items.len() => Some(items.remove(i)),
            _ => None,
        },
        (Value::Array(items), Segment::Index(i)) if *i < items.len() => Some(items.remove(*i)),
        _ => None,
    })
}

/// Walks to `segments`, creating what is missing, and returns the slot to write.
fn slot_mut<'v>(root: &'v mut Value, segments: &[Segment]) -> &'v mut Value {
    let mut value = root;
    for segment in segments {
        value = match segment {
            Segment::Key(key) => {
                let index = key.parse::<usize>().ok().filter(|_| value.is_array());
                if index.is_none() && !value.is_object() {
                    *value = Value::Object(Map::new());
                }
                match (value, index) {
                    (Value::Array(items), Some(i)) => {
                        pad(items, i);
                        &mut items[i]
                    }
                    (Value::Object(map), _) => map.entry(key.clone()).or_insert(Value::Null),
                    _ => unreachable!("an array when indexed, otherwise made an object just above"),
                }
            }
            Segment::Index(i) => {
                if !value.is_array() {
                    *value = Value::Array(Vec::new());
                }
                match value {
                    Value::Array(items) => {
                        pad(items, *i);
                        &mut items[*i]
                    }
                    _ => unreachable!("replaced by an array just above"),
                }
            }
        };
    }
    value
}

fn pad(items: &mut Vec<Value>, index: usize) {
    if items.len() <= index {
        items.resize(index + 1, Value::Null);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn parse_accepts_dots_and_brackets_and_refuses_empty_segments() {
        assert_eq!(
            parse("a.b[0].c").unwrap(),
            vec![
                Segment::Key("a".into()),
                Segment::Key("b".into()),
                Segment::Index(0),
                Segment::Key("c".into())
            ]
        );
        assert_eq!(
            parse("a[1][2]").unwrap(),
            vec![
                Segment::Key("a".into()),
                Segment::Index(1),
                Segment::Index(2)
            ]
        );
        for bad in [
            "", ".", "a.", ".a", "a..b", "[0]", "a[", "a[x]", "a[-1]", "a[0]b",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} should be refused");
        }
    }

    /// (start, operation, path, argument, expected root afterwards)
    const CASES: &[(&str, &str, &str, &str, &str)] = &[
        (r#"{}"#, "set", "hp", "100", r#"{"hp":100}"#),
        (r#"{"hp":1}"#, "set", "hp", r#""full""#, r#"{"hp":"full"}"#),
        (r#"{}"#, "set", "status.hp", "7", r#"{"status":{"hp":7}}"#),
        (
            r#"{"status":5}"#,
            "set",
            "status.hp",
            "7",
            r#"{"status":{"hp":7}}"#,
        ),
        (
            r#"{}"#,
            "set",
            "scores.2024",
            "1",
            r#"{"scores":{"2024":1}}"#,
        ),
        (
            r#"{}"#,
            "set",
            "bag[1]",
            r#""ear""#,
            r#"{"bag":[null,"ear"]}"#,
        ),
        (
            r#"{"bag":["a","b"]}"#,
            "set",
            "bag.1",
            r#""c""#,
            r#"{"bag":["a","c"]}"#,
        ),
        (
            r#"{"bag":["a"]}"#,
            "set",
            "bag[0].n",
            "1",
            r#"{"bag":[{"n":1}]}"#,
        ),
        (
            r#"{"o":{"a":{"b":1}}}"#,
            "set",
            "o.a.c",
            "2",
            r#"{"o":{"a":{"b":1,"c":2}}}"#,
        ),
        (
            r#"{"status":{"hp":100,"mp":32}}"#,
            "merge",
            "status",
            r#"{"hp":70}"#,
            r#"{"status":{"hp":70,"mp":32}}"#,
        ),
        (
            r#"{"status":{"hp":100}}"#,
            "merge",
            "status",
            r#"{"status":"poisoned"}"#,
            r#"{"status":{"hp":100,"status":"poisoned"}}"#,
        ),
        (
            r#"{"status":{"a":{"x":1}}}"#,
            "merge",
            "status",
            r#"{"a":{"y":2}}"#,
            r#"{"status":{"a":{"y":2}}}"#,
        ),
        (r#"{"n":1}"#, "merge", "n", r#"{"a":1}"#, r#"{"n":{"a":1}}"#),
        (
            r#"{}"#,
            "merge",
            "s.t",
            r#"{"a":1}"#,
            r#"{"s":{"t":{"a":1}}}"#,
        ),
        (
            r#"{"status":{"hp":100,"mp":50}}"#,
            "unset",
            "status.hp",
            "",
            r#"{"status":{"mp":50}}"#,
        ),
        (
            r#"{"status":{"hp":100}}"#,
            "unset",
            "status.hp",
            "",
            r#"{"status":{}}"#,
        ),
        (r#"{"status":{"hp":100}}"#, "unset", "status", "", r#"{}"#),
        (
            r#"{"status":{"hp":100}}"#,
            "unset",
            "status.nope.deeper",
            "",
            r#"{"status":{"hp":100}}"#,
        ),
        (
            r#"{"bag":["a","b","c"]}"#,
            "unset",
            "bag[1]",
            "",
            r#"{"bag":["a","c"]}"#,
        ),
        (
            r#"{"bag":["a","b","c"]}"#,
            "unset",
            "bag.0",
            "",
            r#"{"bag":["b","c"]}"#,
        ),
        (
            r#"{"bag":["a"]}"#,
            "unset",
            "bag[5]",
            "",
            r#"{"bag":["a"]}"#,
        ),
    ];

    #[test]
    fn operations_table() {
        for (start, op, path, arg, expected) in CASES {
            let mut root: Value = serde_json::from_str(start).unwrap();
            match *op {
                "set" => set(&mut root, path, serde_json::from_str(arg).unwrap()).unwrap(),
                "merge" => merge(&mut root, path, serde_json::from_str(arg).unwrap()).unwrap(),
                "unset" => {
                    unset(&mut root, path).unwrap();
                }
                other => panic!("unknown op {other}"),
            }
            let expected: Value = serde_json::from_str(expected).unwrap();
            assert_eq!(root, expected, "{op} {path} {arg} on {start}");
        }
    }

    #[test]
    fn get_reads_objects_arrays_and_reports_missing_steps() {
        let root = json!({"status": {"hp": 100}, "bag": [{"n": "ear"}], "s": "text"});
        assert_eq!(get(&root, "status.hp").unwrap(), Some(&json!(100)));
        assert_eq!(get(&root, "bag[0].n").unwrap(), Some(&json!("ear")));
        assert_eq!(get(&root, "bag.0.n").unwrap(), Some(&json!("ear")));
        assert_eq!(get(&root, "status.mp").unwrap(), None);
        assert_eq!(get(&root, "s.length").unwrap(), None);
        assert_eq!(get(&root, "bag[3]").unwrap(), None);
        assert!(get(&root, "status..hp").is_err());
    }

    #[test]
    fn unset_returns_what_it_removed() {
        let mut root = json!({"a": {"b": [1, 2]}});
        assert_eq!(unset(&mut root, "a.b[1]").unwrap(), Some(json!(2)));
        assert_eq!(unset(&mut root, "a.x").unwrap(), None);
    }

    proptest::proptest! {
        #[test]
        fn set_then_get_returns_the_value(keys in proptest::collection::vec("[a-z]{1,6}", 1..5), n in proptest::num::i64::ANY) {
            let path = keys.join(".");
            let mut root = json!({});
            set(&mut root, &path, json!(n)).unwrap();
            proptest::prop_assert_eq!(get(&root, &path).unwrap(), Some(&json!(n)));
            proptest::prop_assert_eq!(unset(&mut root, &path).unwrap(), Some(json!(n)));
            proptest::prop_assert_eq!(get(&root, &path).unwrap(), None);
        }

        #[test]
        fn parse_never_panics(path in ".{0,40}") {
            let _ = parse(&path);
        }
    }
}
