//! Tool-schema adaptation per provider: what a provider refuses is rewritten, or reported as a
//! warning, instead of being sent blindly and failing the whole request.
//!
//! - Gemini `functionDeclarations[].parameters` takes an OpenAPI 3.0 subset: no `$ref`,
//!   `additionalProperties`, `const`, `oneOf`, `exclusiveMinimum`, type arrays, ... The 400
//!   "Unknown name \"exclusiveMaximum\"" (fixture) is what sending them blindly costs.
//! - OpenAI strict mode needs `additionalProperties: false` on every object and every property
//!   listed in `required` (optional ones become nullable); a schema that cannot be made strict
//!   (open maps) is sent non-strict, with a warning.
//! - Anthropic `input_schema` must be an object schema at the root.

use serde_json::{Map, Value, json};

/// Keys Gemini's schema subset understands; everything else is dropped (with a warning).
const GEMINI_KEYS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "items",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "minimum",
    "maximum",
];

/// Keys that are metadata only; dropping them changes nothing a model sees, so no warning.
const SILENT_DROPS: &[&str] = &[
    "$schema",
    "$id",
    "$comment",
    "$defs",
    "definitions",
    "examples",
];

const MAX_REF_DEPTH: usize = 16;

/// The adapted schema and what was changed on the way.
#[derive(Debug, Clone, PartialEq)]
pub struct Adapted {
    /// The schema to send; the input unchanged when strict mode could not be had.
    pub schema: Value,
    /// What was dropped or changed in a way the model could notice, one sentence each naming
    /// the path (`tools[0].parameters.properties.n: ...`). Lossless rewrites (`const` to a
    /// one-value `enum`) and metadata such as `$schema` go silently.
    pub warnings: Vec<String>,
    /// OpenAI only: whether the schema could be made strict.
    pub strict: bool,
}

fn resolve_ref<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    root.pointer(pointer)
}

/// Rewrites a JSON Schema into Gemini's subset. `path` names the tool for warnings.
pub fn for_gemini(schema: &Value, path: &str) -> Adapted {
    let mut warnings = Vec::new();
    let out = gemini_node(schema, schema, path, 0, &mut warnings);
    Adapted {
        schema: out,
        warnings,
        strict: false,
    }
}

fn gemini_node(root: &Value, node: &Value, path: &str, depth: usize, w: &mut Vec<String>) -> Value {
    let Some(obj) = node.as_object() else {
        return node.clone();
    };
    if let Some(r) = obj.get("$ref").and_then(Value::as_str) {
        if depth >= MAX_REF_DEPTH {
            w.push(format!("{path}: $ref `{r}` nests too deep (recursive schema); replaced by a free-form object"));
            return json!({"type": "object"});
        }
        return match resolve_ref(root, r) {
            Some(target) => gemini_node(root, target, path, depth + 1, w),
            None => {
                w.push(format!(
                    "{path}: $ref `{r}` does not resolve; replaced by a free-form object"
                ));
                json!({"type": "object"})
            }
        };
    }
    let mut out = Map::new();
    for (k, v) in obj {
        let here = format!("{path}.{k}");
        match k.as_str() {
            "type" => match v {
                Value::Array(types) => {
                    let non_null: Vec<&Value> = types
                        .iter()
                        .filter(|t| t.as_str() != Some("null"))
                        .collect();
                    if non_null.len() < types.len() {
                        out.insert("nullable".into(), Value::Bool(true));
                    }
                    match non_null.as_slice() {
                        [one] => {
                            out.insert("type".into(), (*one).clone());
                        }
                        _ => w.push(format!("{here}: a union of types is not supported by Gemini; the type was left open")),
                    }
                }
                other => {
                    out.insert("type".into(), other.clone());
                }
            },
            "properties" => {
                let mut props = Map::new();
                if let Some(map) = v.as_object() {
                    for (name, sub) in map {
                        props.insert(
                            name.clone(),
                            gemini_node(root, sub, &format!("{here}.{name}"), depth, w),
                        );
                    }
                }
                out.insert(k.clone(), Value::Object(props));
            }
            "items" => {
                out.insert(k.clone(), gemini_node(root, v, &here, depth, w));
            }
            "anyOf" | "oneOf" => {
                let subs: Vec<Value> = v
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .map(|s| gemini_node(root, s, &here, depth, w))
                            .collect()
                    })
                    .unwrap_or_default();
                out.insert("anyOf".into(), Value::Array(subs));
            }
            "allOf" => match v.as_array().map(Vec::as_slice) {
                Some([only]) => {
                    if let Value::Object(m) = gemini_node(root, only, &here, depth, w) {
                        out.extend(m);
                    }
                }
                _ => w.push(format!(
                    "{here}: allOf with several schemas is not supported by Gemini; dropped"
                )),
            },
            "const" => {
                out.insert("enum".into(), json!([v]));
            }
            "exclusiveMinimum" | "exclusiveMaximum" if v.is_number() => {
                let lower = k == "exclusiveMinimum";
                let key = if lower { "minimum" } else { "maximum" };
                let integer = obj.get("type").and_then(Value::as_str) == Some("integer");
                match (integer, v.as_i64()) {
                    // For integers the exclusive bound is an inclusive one, one step inside.
                    (true, Some(n)) => {
                        out.insert(
                            key.into(),
                            json!(if lower {
                                n.saturating_add(1)
                            } else {
                                n.saturating_sub(1)
                            }),
                        );
                    }
                    _ => {
                        w.push(format!(
                            "{here}: Gemini has no exclusive bounds; sent as inclusive `{key}`"
                        ));
                        out.insert(key.into(), v.clone());
                    }
                }
            }
            "enum" => {
                // Gemini enums are strings only.
                let strings: Vec<Value> = v
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .map(|e| match e {
                                Value::String(_) => e.clone(),
                                other => Value::String(other.to_string()),
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                out.insert(k.clone(), Value::Array(strings));
            }
            key if GEMINI_KEYS.contains(&key) => {
                out.insert(k.clone(), v.clone());
            }
            key if SILENT_DROPS.contains(&key) => {}
            _ => w.push(format!("{here}: not supported by Gemini; dropped")),
        }
    }
    if out.contains_key("enum") && !out.contains_key("type") {
        out.insert("type".into(), Value::String("string".into()));
    }
    Value::Object(out)
}

/// Makes a schema acceptable to OpenAI strict mode, or says why it cannot be.
pub fn for_openai_strict(schema: &Value, path: &str) -> Adapted {
    let mut warnings = Vec::new();
    let mut out = schema.clone();
    let ok = strict_node(&mut out, path, &mut warnings);
    if ok {
        Adapted {
            schema: out,
            warnings,
            strict: true,
        }
    } else {
        warnings.push(format!(
            "{path}: cannot be made strict; sent with strict=false"
        ));
        Adapted {
            schema: schema.clone(),
            warnings,
            strict: false,
        }
    }
}

fn strict_node(node: &mut Value, path: &str, w: &mut Vec<String>) -> bool {
    let Some(obj) = node.as_object_mut() else {
        return true;
    };
    let mut ok = true;
    let is_object =
        obj.get("type").and_then(Value::as_str) == Some("object") || obj.contains_key("properties");
    if is_object {
        match obj.get("additionalProperties") {
            None | Some(Value::Bool(false)) => {}
            Some(_) => {
                w.push(format!(
                    "{path}: open additionalProperties are not allowed in strict mode"
                ));
                ok = false;
            }
        }
        obj.insert("additionalProperties".into(), Value::Bool(false));
        let required: Vec<String> = obj
            .get("required")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        let mut all = Vec::new();
        if let Some(Value::Object(props)) = obj.get_mut("properties") {
            for (name, sub) in props.iter_mut() {
                all.push(Value::String(name.clone()));
                if !required.contains(name) {
                    make_nullable(sub);
                }
                ok &= strict_node(sub, &format!("{path}.properties.{name}"), w);
            }
        }
        obj.insert("required".into(), Value::Array(all));
    }
    for key in ["items", "anyOf", "$defs", "definitions"] {
        match obj.get_mut(key) {
            Some(Value::Array(subs)) => {
                for (i, s) in subs.iter_mut().enumerate() {
                    ok &= strict_node(s, &format!("{path}.{key}[{i}]"), w);
                }
            }
            Some(Value::Object(_)) if key == "items" => {
                if let Some(s) = obj.get_mut(key) {
                    ok &= strict_node(s, &format!("{path}.items"), w);
                }
            }
            Some(Value::Object(defs)) => {
                for (name, s) in defs.iter_mut() {
                    ok &= strict_node(s, &format!("{path}.{key}.{name}"), w);
                }
            }
            _ => {}
        }
    }
    if obj.contains_key("patternProperties") {
        w.push(format!(
            "{path}: patternProperties are not allowed in strict mode"
        ));
        ok = false;
    }
    ok
}

fn make_nullable(schema: &mut Value) {
    let Some(obj) = schema.as_object_mut() else {
        return;
    };
    match obj.get_mut("type") {
        Some(Value::String(t)) if t != "null" => {
            let t = std::mem::take(t);
            obj.insert("type".into(), json!([t, "null"]));
        }
        Some(Value::Array(types)) => {
            if !types.iter().any(|t| t.as_str() == Some("null")) {
                types.push(Value::String("null".into()));
            }
        }
        _ => {
            let inner = Value::Object(std::mem::take(obj));
            obj.insert("anyOf".into(), json!([inner, {"type": "null"}]));
        }
    }
}

/// Anthropic wants an object schema at the root of `input_schema`.
pub fn for_anthropic(schema: &Value) -> Value {
    match schema {
        Value::Object(m) if m.is_empty() => json!({"type": "object", "properties": {}}),
        Value::Object(m) if !m.contains_key("type") => {
            let mut m = m.clone();
            m.insert("type".into(), Value::String("object".into()));
            Value::Object(m)
        }
        Value::Object(_) => schema.clone(),
        _ => json!({"type": "object", "properties": {}}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemini_rewrites_what_it_refuses() {
        let s = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "n": {"type": "integer", "exclusiveMaximum": 10},
                "x": {"type": "number", "exclusiveMinimum": 0.5},
                "mode": {"const": "fast"},
                "tag": {"type": ["string", "null"]},
                "item": {"$ref": "#/$defs/Item"}
            },
            "$defs": {"Item": {"type": "object", "properties": {"id": {"type": "string"}}}}
        });
        let a = for_gemini(&s, "tools[0]");
        assert_eq!(
            a.schema["properties"]["n"],
            json!({"type": "integer", "maximum": 9})
        );
        assert_eq!(
            a.schema["properties"]["x"],
            json!({"type": "number", "minimum": 0.5})
        );
        assert_eq!(
            a.schema["properties"]["mode"],
            json!({"enum": ["fast"], "type": "string"})
        );
        assert_eq!(
            a.schema["properties"]["tag"],
            json!({"type": "string", "nullable": true})
        );
        assert_eq!(
            a.schema["properties"]["item"]["properties"]["id"]["type"],
            "string"
        );
        assert!(a.schema.get("additionalProperties").is_none());
        assert!(a.schema.get("$defs").is_none());
        assert!(
            a.warnings
                .iter()
                .any(|w| w.contains("additionalProperties"))
        );
        assert!(a.warnings.iter().any(|w| w.contains("exclusive")));
    }

    #[test]
    fn gemini_survives_a_recursive_ref() {
        let s = json!({"type": "object", "properties": {"next": {"$ref": "#"}}});
        let a = for_gemini(&s, "t");
        assert!(a.warnings.iter().any(|w| w.contains("too deep")));
    }

    #[test]
    fn openai_strict_requires_everything_and_closes_objects() {
        let s = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["a"]});
        let a = for_openai_strict(&s, "t");
        assert!(a.strict);
        assert_eq!(a.schema["required"], json!(["a", "b"]));
        assert_eq!(a.schema["additionalProperties"], json!(false));
        assert_eq!(
            a.schema["properties"]["b"]["type"],
            json!(["integer", "null"])
        );
    }

    #[test]
    fn openai_strict_refuses_open_maps() {
        let s = json!({"type": "object", "additionalProperties": {"type": "string"}});
        let a = for_openai_strict(&s, "t");
        assert!(!a.strict);
        assert_eq!(a.schema, s);
    }

    #[test]
    fn anthropic_root_is_an_object() {
        assert_eq!(
            for_anthropic(&json!({})),
            json!({"type": "object", "properties": {}})
        );
    }
}
