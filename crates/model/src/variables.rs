//! Variables (reference tavo-docs §2: chat / global / message scopes, dotted paths).
//!
//! Pure value operations shared by TavoJS, macros and EJS: the store persists one JSON object per
//! scope and these functions read and change it by dotted path (`status.hp`).

use crate::ids::MessageId;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Variable scope. Scopes are separate namespaces without fall-through.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum VariableScopeKind {
    /// Current chat (default).
    #[default]
    Chat,
    /// Shared by every chat.
    Global,
    /// Attached to one message, deleted with it.
    Message,
}

/// A resolved scope: for `message`, the stable id of the message it belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VariableScope {
    /// Current chat.
    Chat,
    /// Global.
    Global,
    /// One message.
    Message(MessageId),
}

/// Reads the value at a dotted `path`; `None` when any segment is missing.
pub fn get_path<'a>(root: &'a Map<String, Value>, path: &str) -> Option<&'a Value> {
    let mut segs = path.split('.');
    let mut cur = root.get(segs.next()?)?;
    for seg in segs {
        cur = match cur {
            Value::Object(m) => m.get(seg)?,
            Value::Array(a) => a.get(seg.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// Writes `value` at a dotted `path`, creating intermediate objects and replacing non-object
/// intermediates (as `tavo.set('a.b', 1)` does when `a` is not an object).
pub fn set_path(root: &mut Map<String, Value>, path: &str, value: Value) {
    let segs: Vec<&str> = path.split('.').collect();
    let Some((last, parents)) = segs.split_last() else {
        return;
    };
    let mut cur = root;
    for seg in parents {
        let slot = cur
            .entry((*seg).to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        if !slot.is_object() {
            *slot = Value::Object(Map::new());
        }
        let Value::Object(next) = slot else { return };
        cur = next;
    }
    cur.insert((*last).to_owned(), value);
}

/// Removes the value at a dotted `path`; returns it when it existed.
pub fn unset_path(root: &mut Map<String, Value>, path: &str) -> Option<Value> {
    let segs: Vec<&str> = path.split('.').collect();
    let (last, parents) = segs.split_last()?;
    let mut cur = root;
    for seg in parents {
        match cur.get_mut(*seg) {
            Some(Value::Object(next)) => cur = next,
            _ => return None,
        }
    }
    cur.shift_remove(*last)
}

/// `tavo.update`: shallow-merges an object `patch` into the object at `path` (keys of `patch`
/// win, other keys stay); a non-object current value or patch is replaced by the patch.
pub fn update_path(root: &mut Map<String, Value>, path: &str, patch: Value) {
    let merged = match (get_path(root, path), &patch) {
        (Some(Value::Object(cur)), Value::Object(p)) => {
            let mut m = cur.clone();
            for (k, v) in p {
                m.insert(k.clone(), v.clone());
            }
            Value::Object(m)
        }
        _ => patch,
    };
    set_path(root, path, merged);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn dotted_paths_follow_the_docs_example() {
        let mut vars = Map::new();
        set_path(&mut vars, "status", json!({"hp": 100, "mp": 32}));
        assert_eq!(get_path(&vars, "status.hp"), Some(&json!(100)));
        update_path(&mut vars, "status", json!({"hp": 70}));
        assert_eq!(vars["status"], json!({"hp": 70, "mp": 32}));
        assert_eq!(unset_path(&mut vars, "status.hp"), Some(json!(70)));
        assert_eq!(vars["status"], json!({"mp": 32}));
        assert_eq!(get_path(&vars, "status.hp"), None);
    }

    #[test]
    fn set_creates_and_replaces_intermediates() {
        let mut vars = obj(json!({"a": 5}));
        set_path(&mut vars, "a.b.c", json!(true));
        assert_eq!(vars["a"], json!({"b": {"c": true}}));
        let list = obj(json!({"l": [1, 2, 3]}));
        assert_eq!(get_path(&list, "l.1"), Some(&json!(2)));
    }
}
