//! Chat and global variables as the macro engine sees them, with a copy-on-write overlay.
//!
//! Why an overlay: side-effect macros (`{{setvar}}`, `{{addvar}}`, …) must only take effect
//! for text that actually ends up in the prompt. A lorebook entry is rendered when it
//! activates, but the token budget may still drop it afterwards; its writes must then vanish.
//! Rendering therefore writes into a staged copy, and the caller commits the copy only for
//! text it keeps.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tavo_model::variables::{get_path, set_path, unset_path};

/// The two variable namespaces the macros can reach. They never fall through into each
/// other (Tavo: "scopes are completely separate namespaces").
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Variables {
    /// Chat scope: a JSON object keyed by variable name.
    pub chat: Map<String, Value>,
    /// Global scope: a JSON object keyed by variable name.
    pub global: Map<String, Value>,
}

/// Which namespace a variable macro addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarScope {
    /// `{{setvar}}`, `{{getvar}}`, …
    Chat,
    /// `{{setglobalvar}}`, `{{getglobalvar}}`, …
    Global,
}

impl Variables {
    fn map(&self, scope: VarScope) -> &Map<String, Value> {
        match scope {
            VarScope::Chat => &self.chat,
            VarScope::Global => &self.global,
        }
    }

    fn map_mut(&mut self, scope: VarScope) -> &mut Map<String, Value> {
        match scope {
            VarScope::Chat => &mut self.chat,
            VarScope::Global => &mut self.global,
        }
    }

    /// Reads a dotted path (`status.hp`); `None` when any segment is missing.
    pub fn get(&self, scope: VarScope, path: &str) -> Option<&Value> {
        get_path(self.map(scope), path)
    }

    /// Writes a dotted path, creating intermediate objects (the write wins over a
    /// non-object in the way, as TavoJS `set` does).
    pub fn set(&mut self, scope: VarScope, path: &str, value: Value) {
        set_path(self.map_mut(scope), path, value);
    }

    /// Removes only the leaf of a dotted path.
    pub fn unset(&mut self, scope: VarScope, path: &str) {
        unset_path(self.map_mut(scope), path);
    }
}

/// The variables one rendering sees: reads go to the staged copy once something was
/// written, otherwise to the committed values.
#[derive(Debug)]
pub struct VarOverlay<'a> {
    committed: &'a Variables,
    staged: Option<Variables>,
}

impl<'a> VarOverlay<'a> {
    /// An overlay over `committed` with nothing staged yet.
    pub fn new(committed: &'a Variables) -> Self {
        Self {
            committed,
            staged: None,
        }
    }

    /// The current value at `path`, staged writes included.
    pub fn get(&self, scope: VarScope, path: &str) -> Option<&Value> {
        match &self.staged {
            Some(staged) => staged.get(scope, path),
            None => self.committed.get(scope, path),
        }
    }

    /// Every variable as this rendering sees it (staged writes included).
    pub fn view(&self) -> &Variables {
        self.staged.as_ref().unwrap_or(self.committed)
    }

    fn staged_mut(&mut self) -> &mut Variables {
        self.staged.get_or_insert_with(|| self.committed.clone())
    }

    /// Stages a write.
    pub fn set(&mut self, scope: VarScope, path: &str, value: Value) {
        self.staged_mut().set(scope, path, value);
    }

    /// Stages a removal.
    pub fn unset(&mut self, scope: VarScope, path: &str) {
        if self.get(scope, path).is_some() {
            self.staged_mut().unset(scope, path);
        }
    }

    /// The staged copy, if anything was written.
    pub fn into_staged(self) -> Option<Variables> {
        self.staged
    }
}

/// Parses a macro argument the way Tavo's `setvar` documents it: a JSON list or object, a
/// number, a quoted JSON string, else plain text.
pub fn parse_macro_value(raw: &str) -> Value {
    let trimmed = raw.trim();
    if (trimmed.starts_with('[') || trimmed.starts_with('{') || trimmed.starts_with('"'))
        && let Ok(value) = serde_json::from_str::<Value>(trimmed)
    {
        return value;
    }
    number_value(trimmed).unwrap_or_else(|| Value::String(raw.to_owned()))
}

/// A JSON number for numeric text (integers stay integers), else `None`.
pub fn number_value(text: &str) -> Option<Value> {
    if text.is_empty() {
        return None;
    }
    if let Ok(int) = text.parse::<i64>() {
        return Some(Value::from(int));
    }
    let float = text.parse::<f64>().ok()?;
    if !float.is_finite() || text.eq_ignore_ascii_case("nan") || text.contains(['i', 'I']) {
        return None;
    }
    serde_json::Number::from_f64(float).map(Value::Number)
}

/// The numeric value of a variable, accepting numeric strings (macros often store text).
pub fn as_number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok().filter(|f| f.is_finite()),
        _ => None,
    }
}

/// A number back to JSON, keeping integral results integers (`10 + -3` is `7`, not `7.0`).
pub fn number_to_value(number: f64) -> Value {
    if number.fract() == 0.0 && number.abs() < 9.0e15 {
        Value::from(number as i64)
    } else {
        serde_json::Number::from_f64(number)
            .map(Value::Number)
            .unwrap_or(Value::Null)
    }
}

/// How a variable value renders into prompt text: strings raw, null as empty, everything
/// else as compact JSON.
pub fn render_value(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `{{addvar}}`: list → append (a list argument is concatenated), number + number → sum,
/// otherwise text concatenation. A missing variable takes the parsed argument.
pub fn add_values(current: Option<&Value>, raw_argument: &str) -> Value {
    let argument = parse_macro_value(raw_argument);
    match current {
        None | Some(Value::Null) => argument,
        Some(Value::Array(items)) => {
            let mut items = items.clone();
            match argument {
                Value::Array(more) => items.extend(more),
                other => items.push(other),
            }
            Value::Array(items)
        }
        Some(existing) => match (as_number(existing), as_number(&argument)) {
            (Some(a), Some(b)) => number_to_value(a + b),
            _ => {
                let addition = match &argument {
                    Value::String(s) => s.clone(),
                    _ => raw_argument.trim().to_owned(),
                };
                Value::String(render_value(existing) + &addition)
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dotted_paths_set_get_unset_leaf_only() {
        let mut vars = Variables::default();
        vars.set(VarScope::Chat, "status", json!({"hp": 100, "mp": 50}));
        assert_eq!(vars.get(VarScope::Chat, "status.hp"), Some(&json!(100)));
        vars.unset(VarScope::Chat, "status.hp");
        assert_eq!(vars.get(VarScope::Chat, "status"), Some(&json!({"mp": 50})));
        assert_eq!(vars.get(VarScope::Global, "status"), None);
    }

    #[test]
    fn overlay_does_not_touch_committed_until_taken() {
        let committed = Variables::default();
        let mut overlay = VarOverlay::new(&committed);
        overlay.set(VarScope::Chat, "a.b", json!(1));
        assert_eq!(overlay.get(VarScope::Chat, "a.b"), Some(&json!(1)));
        assert!(committed.chat.is_empty());
        let staged = overlay.into_staged();
        assert_eq!(
            staged.and_then(|s| s.get(VarScope::Chat, "a").cloned()),
            Some(json!({"b": 1}))
        );
    }

    #[test]
    fn addvar_dispatches_on_type() {
        let cases: &[(Option<Value>, &str, Value)] = &[
            (Some(json!(["a"])), "\"b\"", json!(["a", "b"])),
            (Some(json!(["a"])), "[\"b\",\"c\"]", json!(["a", "b", "c"])),
            (Some(json!(10)), "-3", json!(7)),
            (Some(json!("10")), "5", json!(15)),
            (Some(json!(1.5)), "1", json!(2.5)),
            (Some(json!("ab")), "cd", json!("abcd")),
            (None, "[\"苏雾\"]", json!(["苏雾"])),
            (None, "4", json!(4)),
        ];
        for (current, arg, expected) in cases {
            assert_eq!(
                &add_values(current.as_ref(), arg),
                expected,
                "{current:?} + {arg}"
            );
        }
    }

    #[test]
    fn macro_values_parse_lists_numbers_text() {
        assert_eq!(parse_macro_value("[1,2]"), json!([1, 2]));
        assert_eq!(parse_macro_value("42"), json!(42));
        assert_eq!(parse_macro_value("-2.5"), json!(-2.5));
        assert_eq!(parse_macro_value("hello: world"), json!("hello: world"));
        assert_eq!(parse_macro_value("[broken"), json!("[broken"));
        assert_eq!(parse_macro_value("inf"), json!("inf"));
    }
}
