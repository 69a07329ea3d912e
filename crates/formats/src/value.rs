//! Lenient, path-aware reading of JSON values.
//!
//! Every reader takes the JSON path of the value it reads so that a refusal names it
//! (`data.character_book.entries[0].keys: expected an array of strings, found a number`).
//! What SillyTavern tolerates is accepted with a warning: numbers written as strings, booleans as
//! `0`/`1`/`"true"`, `null` for optional fields.

use crate::error::{FormatError, Result, Warning};
use serde_json::{Map, Value};

/// JSON type name for messages ("a number", "an array" …).
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `parent.key` (or `key` at the root).
pub fn child(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_owned()
    } else {
        format!("{parent}.{key}")
    }
}

/// `parent[i]`.
pub fn item(parent: &str, i: usize) -> String {
    format!("{parent}[{i}]")
}

/// Reading context: collects warnings.
#[derive(Debug, Default)]
pub struct Ctx {
    /// Warnings so far.
    pub warnings: Vec<Warning>,
}

impl Ctx {
    /// Records a warning.
    pub fn warn(&mut self, code: &str, path: &str, message: impl Into<String>) {
        self.warnings.push(Warning::at(code, path, message));
    }

    /// The value as an object, or an error naming `path`.
    pub fn object<'v>(&self, v: &'v Value, path: &str) -> Result<&'v Map<String, Value>> {
        v.as_object().ok_or_else(|| {
            FormatError::at(path, format!("expected an object, found {}", type_name(v)))
        })
    }

    /// An optional object: `null`/absent → empty; an empty array (written by some exporters
    /// for an empty object) → empty with a warning; anything else is refused.
    pub fn object_or_empty(&mut self, v: Option<&Value>, path: &str) -> Result<Map<String, Value>> {
        match v {
            None | Some(Value::Null) => Ok(Map::new()),
            Some(Value::Object(m)) => Ok(m.clone()),
            Some(Value::Array(a)) if a.is_empty() => {
                self.warn(
                    "value.coerced",
                    path,
                    "an empty array was given where an object is expected; it was read as {}",
                );
                Ok(Map::new())
            }
            Some(other) => Err(FormatError::at(
                path,
                format!("expected an object, found {}", type_name(other)),
            )),
        }
    }

    /// Optional string: `null`/absent → `None`; numbers and booleans are converted with a warning.
    pub fn opt_string(&mut self, v: Option<&Value>, path: &str) -> Result<Option<String>> {
        match v {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(Value::Number(n)) => {
                self.warn(
                    "value.coerced",
                    path,
                    "a number was given where text is expected; it was converted to text",
                );
                Ok(Some(n.to_string()))
            }
            Some(Value::Bool(b)) => {
                self.warn(
                    "value.coerced",
                    path,
                    "a boolean was given where text is expected; it was converted to text",
                );
                Ok(Some(b.to_string()))
            }
            Some(other) => Err(FormatError::at(
                path,
                format!("expected a string, found {}", type_name(other)),
            )),
        }
    }

    /// String with default `""`.
    pub fn string(&mut self, v: Option<&Value>, path: &str) -> Result<String> {
        Ok(self.opt_string(v, path)?.unwrap_or_default())
    }

    /// Optional integer: numbers (integral floats too) and numeric strings are accepted.
    pub fn opt_i64(&mut self, v: Option<&Value>, path: &str) -> Result<Option<i64>> {
        match v {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => {
                if let Some(i) = n.as_i64() {
                    Ok(Some(i))
                } else if let Some(f) = n
                    .as_f64()
                    .filter(|f| f.is_finite() && f.fract() == 0.0 && f.abs() < 9.0e15)
                {
                    Ok(Some(f as i64))
                } else if let Some(f) = n.as_f64().filter(|f| f.is_finite() && f.abs() < 9.0e15) {
                    self.warn(
                        "value.coerced",
                        path,
                        format!("{f} was rounded to a whole number"),
                    );
                    Ok(Some(f.round() as i64))
                } else {
                    Err(FormatError::at(
                        path,
                        format!("expected a whole number, found {n}"),
                    ))
                }
            }
            Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
            Some(Value::String(s)) => match s.trim().parse::<f64>() {
                Ok(f) if f.is_finite() && f.abs() < 9.0e15 => {
                    self.warn(
                        "value.coerced",
                        path,
                        format!(
                            "the number was written as a string (\"{s}\"); it was read as {}",
                            f.round()
                        ),
                    );
                    Ok(Some(f.round() as i64))
                }
                _ => Err(FormatError::at(
                    path,
                    format!(
                        "expected a whole number, found the string \"{}\"",
                        truncate(s, 40)
                    ),
                )),
            },
            Some(Value::Bool(b)) => {
                self.warn(
                    "value.coerced",
                    path,
                    "a boolean was given where a number is expected; it was read as 0/1",
                );
                Ok(Some(i64::from(*b)))
            }
            Some(other) => Err(FormatError::at(
                path,
                format!("expected a whole number, found {}", type_name(other)),
            )),
        }
    }

    /// Optional non-negative integer clamped to `u32`.
    pub fn opt_u32(&mut self, v: Option<&Value>, path: &str) -> Result<Option<u32>> {
        match self.opt_i64(v, path)? {
            None => Ok(None),
            Some(i) if i < 0 => {
                self.warn(
                    "value.clamped",
                    path,
                    format!("{i} is negative; 0 was used"),
                );
                Ok(Some(0))
            }
            Some(i) => Ok(Some(u32::try_from(i).unwrap_or(u32::MAX))),
        }
    }

    /// Optional boolean: `true`/`false`, `0`/`1`, `"true"`/`"false"`, `""` (false).
    pub fn opt_bool(&mut self, v: Option<&Value>, path: &str) -> Result<Option<bool>> {
        match v {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(Value::Number(n)) => {
                self.warn(
                    "value.coerced",
                    path,
                    "a number was given where true/false is expected; non-zero was read as true",
                );
                Ok(Some(n.as_f64().is_some_and(|f| f != 0.0)))
            }
            Some(Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
                "true" | "1" | "yes" => {
                    self.warn("value.coerced", path, format!("\"{s}\" was read as true"));
                    Ok(Some(true))
                }
                "false" | "0" | "no" | "" => Ok(Some(false)),
                _ => Err(FormatError::at(
                    path,
                    format!(
                        "expected true or false, found the string \"{}\"",
                        truncate(s, 40)
                    ),
                )),
            },
            Some(other) => Err(FormatError::at(
                path,
                format!("expected true or false, found {}", type_name(other)),
            )),
        }
    }

    /// Boolean with a default.
    pub fn bool_or(&mut self, v: Option<&Value>, path: &str, default: bool) -> Result<bool> {
        Ok(self.opt_bool(v, path)?.unwrap_or(default))
    }

    /// Array of strings. `null`/absent → empty; a lone string → one item (warned); numbers inside
    /// are converted (warned); anything else is refused naming the path.
    pub fn strings(&mut self, v: Option<&Value>, path: &str) -> Result<Vec<String>> {
        match v {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, it) in items.iter().enumerate() {
                    let p = item(path, i);
                    match it {
                        Value::String(s) => out.push(s.clone()),
                        Value::Number(n) => {
                            self.warn(
                                "value.coerced",
                                &p,
                                "a number in a list of strings was converted to text",
                            );
                            out.push(n.to_string());
                        }
                        Value::Null => {}
                        other => {
                            return Err(FormatError::at(
                                p,
                                format!("expected a string, found {}", type_name(other)),
                            ));
                        }
                    }
                }
                Ok(out)
            }
            Some(Value::String(s)) => {
                self.warn("value.coerced", path, "a single string was given where a list is expected; it was read as a one-item list");
                Ok(if s.is_empty() {
                    Vec::new()
                } else {
                    vec![s.clone()]
                })
            }
            Some(other) => Err(FormatError::at(
                path,
                format!("expected an array of strings, found {}", type_name(other)),
            )),
        }
    }
}

/// Removes `keys` from a map and returns it (the leftovers become a type's `extra`).
pub fn without(map: &Map<String, Value>, keys: &[&str]) -> Map<String, Value> {
    map.iter()
        .filter(|(k, _)| !keys.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Appends `extra` to `out`, never replacing a key `out` already has (the derived value wins).
/// Keys sheltered under [`crate::fields::SHADOWED`] are put back under their own names.
pub fn append_extra(out: &mut Map<String, Value>, extra: &Map<String, Value>) {
    for (k, v) in extra {
        if k == crate::fields::SHADOWED
            && let Value::Object(shadow) = v
        {
            for (sk, sv) in shadow {
                if !out.contains_key(sk) {
                    out.insert(sk.clone(), sv.clone());
                }
            }
        } else if !out.contains_key(k) {
            out.insert(k.clone(), v.clone());
        }
    }
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        format!("{}…", s.chars().take(max).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_as_strings_are_tolerated() {
        let mut c = Ctx::default();
        assert_eq!(c.opt_i64(Some(&json!("4")), "depth").unwrap(), Some(4));
        assert_eq!(c.opt_i64(Some(&json!(4.0)), "depth").unwrap(), Some(4));
        assert_eq!(c.warnings.len(), 1);
        assert!(
            c.opt_i64(Some(&json!("four")), "depth")
                .unwrap_err()
                .to_string()
                .starts_with("depth: expected a whole number")
        );
    }

    #[test]
    fn string_list_errors_name_the_path() {
        let mut c = Ctx::default();
        let e = c
            .strings(Some(&json!(5)), "data.character_book.entries[0].keys")
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "data.character_book.entries[0].keys: expected an array of strings, found a number"
        );
        let e = c.strings(Some(&json!(["a", {}])), "keys").unwrap_err();
        assert_eq!(e.path, "keys[1]");
        assert_eq!(c.strings(Some(&json!("a")), "keys").unwrap(), vec!["a"]);
    }

    #[test]
    fn booleans_are_lenient() {
        let mut c = Ctx::default();
        assert_eq!(c.opt_bool(Some(&json!("")), "x").unwrap(), Some(false));
        assert_eq!(c.opt_bool(Some(&json!(1)), "x").unwrap(), Some(true));
        assert!(c.opt_bool(Some(&json!([])), "x").is_err());
    }
}
