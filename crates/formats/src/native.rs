//! Tavo-native JSON: an envelope `{ "format": "tavo", "version": 1, "kind": …, "data": … }`
//! around the model types as the seed shapes them (camelCase). A character carries its
//! `lorebook`, `regex` and base64 `avatar`; a preset its `regex`; a chat its `messages`.
//! Ids and revisions are install-specific and are not written.

use crate::error::{FormatError, Result};
use base64::Engine as _;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

/// `format` value of the envelope.
pub const FORMAT: &str = "tavo";
/// Current envelope version.
pub const VERSION: u64 = 1;

/// Whether a value is a Tavo envelope.
pub fn is_envelope(v: &Value) -> bool {
    v.get("format").and_then(Value::as_str) == Some(FORMAT) && v.get("kind").is_some()
}

/// The envelope's `kind` string.
pub fn kind_of(v: &Value) -> Option<&str> {
    v.get("kind").and_then(Value::as_str)
}

/// Deserializes `v` at `path`, naming the failing field on error.
pub fn parse_at<T: DeserializeOwned>(v: &Value, path: &str) -> Result<T> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let inner = e.path().to_string();
        let full = match (path.is_empty(), inner == ".") {
            (true, _) => inner,
            (false, true) => path.to_owned(),
            (false, false) => format!("{path}.{inner}"),
        };
        FormatError::at(full, e.inner().to_string())
    })
}

/// Optional member `key` of the envelope, parsed.
pub fn optional<T: DeserializeOwned>(env: &Value, key: &str) -> Result<Option<T>> {
    match env.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => parse_at(v, key).map(Some),
    }
}

/// The envelope's `data`, parsed.
pub fn data<T: DeserializeOwned>(env: &Value) -> Result<T> {
    match env.get("data") {
        Some(v) => parse_at(v, "data"),
        None => Err(FormatError::at(
            "data",
            "missing: a Tavo file needs a `data` object",
        )),
    }
}

/// Decodes the base64 `avatar` member, if any.
pub fn avatar(env: &Value) -> Result<Option<Vec<u8>>> {
    match env.get("avatar") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => base64::engine::general_purpose::STANDARD
            .decode(s.trim())
            .map(Some)
            .map_err(|e| FormatError::at("avatar", format!("not valid base64: {e}"))),
        Some(other) => Err(FormatError::at(
            "avatar",
            format!(
                "expected a base64 string, found {}",
                crate::value::type_name(other)
            ),
        )),
    }
}

/// Serializes a model value without its install-specific `id` and `revision`.
pub fn portable<T: serde::Serialize>(v: &T) -> Result<Value> {
    let mut value = serde_json::to_value(v)
        .map_err(|e| FormatError::whole(format!("cannot serialize: {e}")))?;
    if let Value::Object(m) = &mut value {
        m.shift_remove("id");
        m.shift_remove("revision");
    }
    Ok(value)
}

/// Builds an envelope with `data` and extra members.
pub fn envelope(kind: &str, data: Value, members: Vec<(&str, Value)>) -> Value {
    let mut o = Map::new();
    o.insert("format".into(), json!(FORMAT));
    o.insert("version".into(), json!(VERSION));
    o.insert("kind".into(), json!(kind));
    o.insert("data".into(), data);
    for (k, v) in members {
        if !v.is_null() {
            o.insert(k.into(), v);
        }
    }
    Value::Object(o)
}

/// Base64 of avatar bytes.
pub fn avatar_value(avatar: Option<&[u8]>) -> Value {
    avatar.map_or(Value::Null, |a| {
        json!(base64::engine::general_purpose::STANDARD.encode(a))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tavo_model::Lorebook;

    #[test]
    fn path_errors_name_the_field() {
        let v = json!({"format":"tavo","kind":"lorebook","data":{"name":"b","entries":[{"identifier":"a","scanDepth":"deep"}]}});
        let e = data::<Lorebook>(&v).unwrap_err();
        assert_eq!(e.path, "data.entries[0].scanDepth");
    }
}
