//! JSON Schemas for the model door, generated from the Rust argument types and made strict.
//!
//! Why generate: an argument type and its schema can never drift apart. Why post-process:
//! schemars leaves objects open unless the type says `deny_unknown_fields`, and the seed
//! wants unknown fields rejected *everywhere*, including inside nested domain types that
//! keep extra fields for lossless import. Sub-schemas are inlined because several providers
//! (Gemini's OpenAPI subset) cannot follow `$ref`.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// Keyword that marks an object as deliberately open (free-form payloads such as an imported
/// SillyTavern preset or an image provider's `extraBody`). [`make_strict`] leaves it open and
/// removes the marker, so providers never see it.
pub const OPEN_OBJECT: &str = "x-tavo-open";

/// The strict, inlined, draft 2020-12 schema of an argument type.
pub fn strict_schema_for<T: JsonSchema>() -> Value {
    let mut schema = schema_value::<T>();
    make_strict(&mut schema);
    schema
}

/// Like [`strict_schema_for`], except that an object with a flattened extras map stays open:
/// the keys it does not know are kept as its extras. For writing back what a read returned
/// (`tavo_preset_get` → modify → `tavo_preset_update`), where an imported SillyTavern preset
/// or card carries keys tavo keeps without reading them; every known field is still checked.
pub fn schema_keeping_extras_for<T: JsonSchema>() -> Value {
    let mut schema = schema_value::<T>();
    close(&mut schema, true);
    schema
}

fn schema_value<T: JsonSchema>() -> Value {
    SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .for_deserialize()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// Closes every object schema that lists properties: `additionalProperties: false`.
///
/// An object with `additionalProperties: true` *and* properties is a struct with a flattened
/// extras map (lossless import); at the model door it is closed as well. A pure map
/// (`additionalProperties` without `properties`) keeps its value schema, and objects marked
/// [`OPEN_OBJECT`] stay open.
pub fn make_strict(schema: &mut Value) {
    close(schema, false);
}

/// Closes object schemas; `keep_extras` leaves the ones with a flattened extras map open.
fn close(schema: &mut Value, keep_extras: bool) {
    match schema {
        Value::Object(map) => {
            strict_object(map, keep_extras);
            for (key, child) in map.iter_mut() {
                // `const`, `enum`, `default` and `examples` hold instance data, not schemas.
                if matches!(key.as_str(), "const" | "enum" | "default" | "examples") {
                    continue;
                }
                close(child, keep_extras);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| close(i, keep_extras)),
        _ => {}
    }
}

/// Rust-specific number formats (`int64`, `uint8`, `double`…) mean nothing to a model and some
/// providers reject unknown formats; large object/array defaults repeat what the properties
/// already say. Both are dropped to keep declarations short.
fn trim_noise(map: &mut Map<String, Value>) {
    let rust_format = map.get("format").and_then(Value::as_str).is_some_and(|f| {
        matches!(
            f,
            "int8"
                | "int16"
                | "int32"
                | "int64"
                | "uint"
                | "uint8"
                | "uint16"
                | "uint32"
                | "uint64"
                | "float"
                | "double"
                | "int"
        )
    });
    if rust_format {
        map.remove("format");
    }
    let is_schema = map.contains_key("type") || map.contains_key("description");
    if is_schema
        && map
            .get("default")
            .is_some_and(|d| d.is_object() || d.is_array())
    {
        map.remove("default");
    }
}

fn strict_object(map: &mut Map<String, Value>, keep_extras: bool) {
    trim_noise(map);
    if map.remove(OPEN_OBJECT).is_some() {
        return;
    }
    let has_properties = map.get("properties").is_some_and(Value::is_object);
    let is_object = has_properties || map.get("type") == Some(&Value::String("object".into()));
    if !is_object {
        return;
    }
    match map.get("additionalProperties") {
        None => {
            map.insert("additionalProperties".into(), Value::Bool(false));
        }
        Some(Value::Bool(true)) if has_properties && keep_extras => {
            // Marked, so that a later `make_strict` (the registry's) leaves it open too.
            map.insert(OPEN_OBJECT.into(), Value::Bool(true));
        }
        Some(Value::Bool(true)) if has_properties => {
            map.insert("additionalProperties".into(), Value::Bool(false));
        }
        _ => {}
    }
}

/// Helper for hand-written schema fragments used with `#[schemars(schema_with = …)]`.
pub fn open_object(description: &str) -> schemars::Schema {
    let mut map = Map::new();
    map.insert("type".into(), Value::String("object".into()));
    map.insert("description".into(), Value::String(description.into()));
    map.insert(OPEN_OBJECT.into(), Value::Bool(true));
    schemars::Schema::from(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Inner {
        enabled: bool,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Outer {
        inner: Vec<Inner>,
        tags: std::collections::BTreeMap<String, String>,
        #[schemars(schema_with = "open_payload")]
        payload: Value,
    }

    fn open_payload(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        open_object("anything")
    }

    #[test]
    fn nested_objects_are_closed_and_maps_and_open_objects_are_not() {
        let s = strict_schema_for::<Outer>();
        assert_eq!(s["additionalProperties"], json!(false));
        assert_eq!(
            s["properties"]["inner"]["items"]["additionalProperties"],
            json!(false)
        );
        assert_eq!(
            s["properties"]["tags"]["additionalProperties"],
            json!({"type": "string"})
        );
        assert!(
            s["properties"]["payload"]
                .get("additionalProperties")
                .is_none()
        );
        assert!(s["properties"]["payload"].get(OPEN_OBJECT).is_none());
        assert!(s.get("$defs").is_none(), "sub-schemas are inlined");
    }

    #[test]
    fn flattened_extras_are_closed_at_the_model_door() {
        let mut s = json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": true});
        make_strict(&mut s);
        assert_eq!(s["additionalProperties"], json!(false));
    }

    #[test]
    fn enum_values_are_not_mistaken_for_schemas() {
        let mut s = json!({"enum": [{"type": "object", "properties": {}}]});
        make_strict(&mut s);
        assert!(s["enum"][0].get("additionalProperties").is_none());
    }
}
