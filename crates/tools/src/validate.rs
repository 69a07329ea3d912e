//! Strict argument validation at the model door.
//!
//! Each operation compiles its schema once: a built-in operation on its first call
//! ([`ArgValidator::new`]: compiling all of them at start-up cost every `tavo` command time,
//! and the server 5 MB of idle memory — the validators and their code paged in — for nothing),
//! an extension tool when it is registered ([`ArgValidator::auto`]: its schema comes from
//! outside and a bad one must be refused then). A call first takes the fast `is_valid` path
//! and only walks the error list when the arguments are wrong. Errors are turned into the
//! seed's diagnostics: a dotted path (`preset.entries[0].enabled`,
//! `options.referenceImages[0]`), what was `expected` there, and the `actualType` found.

use std::sync::OnceLock;

use jsonschema::error::ValidationErrorKind;
use jsonschema::paths::LocationSegment;
use serde_json::{Map, Value};

use crate::error::{ErrorCode, ToolError, json_type_name};

/// A validator for one tool's arguments, compiled once.
pub struct ArgValidator {
    schema: Value,
    validator: OnceLock<Result<jsonschema::Validator, String>>,
}

impl std::fmt::Debug for ArgValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArgValidator").finish_non_exhaustive()
    }
}

/// The schema itself is broken (a programming error in an operation's definition).
#[derive(Debug, thiserror::Error)]
#[error("invalid schema for tool {tool}: {reason}")]
pub struct SchemaError {
    /// Tool whose schema failed to compile.
    pub tool: String,
    /// The compiler's explanation.
    pub reason: String,
}

impl ArgValidator {
    /// A validator for one of our own schemas (draft 2020-12), compiled on its first use.
    /// [`ArgValidator::compile`] compiles it now; the registry's tests do that for every
    /// built-in operation, so a broken schema fails the build's tests, not a user's call.
    pub fn new(schema: Value) -> Self {
        Self {
            schema,
            validator: OnceLock::new(),
        }
    }

    /// Compiles a schema from elsewhere (an extension tool) now, letting its `$schema` pick
    /// the draft.
    pub fn auto(tool: &str, schema: Value) -> Result<Self, SchemaError> {
        let validator = jsonschema::validator_for(&schema).map_err(|e| SchemaError {
            tool: tool.to_owned(),
            reason: e.to_string(),
        })?;
        Ok(Self {
            schema,
            validator: OnceLock::from(Ok(validator)),
        })
    }

    /// The compiled validator, compiling it on the first call.
    fn compiled(&self) -> Result<&jsonschema::Validator, &str> {
        self.validator
            .get_or_init(|| {
                jsonschema::options()
                    .with_draft(jsonschema::Draft::Draft202012)
                    .build(&self.schema)
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(String::as_str)
    }

    /// Compiles the schema now, if it is not compiled yet.
    pub fn compile(&self, tool: &str) -> Result<(), SchemaError> {
        self.compiled().map(drop).map_err(|reason| SchemaError {
            tool: tool.to_owned(),
            reason: reason.to_owned(),
        })
    }

    /// The schema this validator enforces.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// `Ok` when `args` is valid; otherwise `invalid_arguments` describing the first error
    /// (with every error listed under `details.errors` when there are several).
    pub fn check(&self, tool: &str, args: &Value) -> Result<(), ToolError> {
        let validator = self.compiled().map_err(|reason| {
            tracing::error!(tool, reason, "a built-in tool's schema does not compile");
            ToolError::new(
                ErrorCode::InternalError,
                format!("{tool} cannot check its arguments: its schema is broken"),
            )
        })?;
        if validator.is_valid(args) {
            return Ok(());
        }
        let mut found: Vec<Map<String, Value>> = Vec::new();
        for error in validator.iter_errors(args) {
            found.push(describe_error(&self.schema, &error));
            if found.len() == 8 {
                break;
            }
        }
        Err(invalid_arguments(tool, found))
    }
}

fn invalid_arguments(tool: &str, mut found: Vec<Map<String, Value>>) -> ToolError {
    if found.is_empty() {
        return ToolError::new(
            ErrorCode::InvalidArguments,
            format!("arguments of {tool} are invalid"),
        );
    }
    let first = found.remove(0);
    let text = |m: &Map<String, Value>, k: &str| {
        m.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let path = text(&first, "path");
    let shown = if path.is_empty() {
        "arguments".to_owned()
    } else {
        path
    };
    let mut message = format!(
        "invalid arguments for {tool}: {shown}: expected {}, got {}",
        text(&first, "expected"),
        text(&first, "actualType")
    );
    if !found.is_empty() {
        message.push_str(&format!(
            " (and {} more problem(s), see details.errors)",
            found.len()
        ));
    }
    message.push_str("; fix the arguments to match the tool's schema and call again");
    let mut details = first.clone();
    if !found.is_empty() {
        let mut all = vec![Value::Object(first)];
        all.extend(found.into_iter().map(Value::Object));
        details.insert("errors".into(), Value::Array(all));
    }
    ToolError::new(ErrorCode::InvalidArguments, message).with_details(Value::Object(details))
}

/// Appends one property segment to a dotted path.
pub fn push_property(path: &mut String, name: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(name);
}

/// Appends one index segment (`[3]`).
pub fn push_index(path: &mut String, index: usize) {
    path.push('[');
    path.push_str(&index.to_string());
    path.push(']');
}

fn dotted(location: &jsonschema::paths::Location) -> String {
    let mut path = String::new();
    for segment in location.segments() {
        match segment {
            LocationSegment::Property(name) => push_property(&mut path, &name),
            LocationSegment::Index(i) => push_index(&mut path, i),
        }
    }
    path
}

/// The schema object that owns the failing keyword (schema path minus its last segment).
fn owning_schema<'s>(root: &'s Value, schema_path: &str) -> Option<&'s Value> {
    let cut = schema_path.rfind('/')?;
    root.pointer(&schema_path[..cut])
}

fn describe_error(root: &Value, error: &jsonschema::ValidationError<'_>) -> Map<String, Value> {
    let mut path = dotted(error.instance_path());
    let schema_path = error.schema_path().as_str().to_owned();
    let owner = owning_schema(root, &schema_path);
    let instance = error.instance();
    let mut actual = json_type_name(instance).to_owned();
    let expected = match error.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let field = unexpected.first().cloned().unwrap_or_default();
            let value = instance.get(&field).cloned().unwrap_or(Value::Null);
            push_property(&mut path, &field);
            actual = json_type_name(&value).to_owned();
            let allowed = owner
                .and_then(|s| s.get("properties"))
                .and_then(Value::as_object)
                .map(|p| p.keys().cloned().collect::<Vec<_>>().join(", "))
                .unwrap_or_default();
            if allowed.is_empty() {
                format!("no field named \"{field}\" (unknown fields are rejected)")
            } else {
                format!(
                    "no field named \"{field}\" (unknown fields are rejected; allowed: {allowed})"
                )
            }
        }
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().unwrap_or_default().to_owned();
            let sub = owner
                .and_then(|s| s.get("properties"))
                .and_then(|p| p.get(&name));
            push_property(&mut path, &name);
            actual = "missing".to_owned();
            match sub {
                Some(s) => format!("{} (required)", describe_schema(s)),
                None => "a value (required)".to_owned(),
            }
        }
        ValidationErrorKind::FalseSchema => "nothing: this field is not allowed".to_owned(),
        ValidationErrorKind::MinLength { limit } if *limit == 1 => "a non-empty string".to_owned(),
        ValidationErrorKind::MinLength { limit } => {
            format!("a string of at least {limit} characters")
        }
        ValidationErrorKind::MaxLength { limit } => {
            format!("a string of at most {limit} characters")
        }
        ValidationErrorKind::MinItems { limit } => format!("an array of at least {limit} item(s)"),
        ValidationErrorKind::MaxItems { limit } => format!("an array of at most {limit} item(s)"),
        ValidationErrorKind::Minimum { limit } => format!("a number ≥ {limit}"),
        ValidationErrorKind::Maximum { limit } => format!("a number ≤ {limit}"),
        ValidationErrorKind::ExclusiveMinimum { limit } => format!("a number > {limit}"),
        ValidationErrorKind::ExclusiveMaximum { limit } => format!("a number < {limit}"),
        ValidationErrorKind::Pattern { pattern } => format!("a string matching /{pattern}/"),
        ValidationErrorKind::UniqueItems => "an array without duplicates".to_owned(),
        _ => owner
            .map(describe_schema)
            .unwrap_or_else(|| error.to_string()),
    };
    if actual == "string"
        && matches!(error.kind(), ValidationErrorKind::MinLength { .. })
        && instance.as_str().is_some_and(str::is_empty)
    {
        actual = "empty string".to_owned();
    }
    let mut out = Map::new();
    out.insert("path".into(), Value::String(path));
    out.insert("expected".into(), Value::String(expected));
    out.insert("actualType".into(), Value::String(actual));
    out
}

/// A short human description of what a schema accepts (`positive integer`, `one of "a", "b"`).
pub fn describe_schema(schema: &Value) -> String {
    let Some(map) = schema.as_object() else {
        return if schema == &Value::Bool(false) {
            "nothing".into()
        } else {
            "any value".into()
        };
    };
    if let Some(options) = map.get("enum").and_then(Value::as_array) {
        let list: Vec<String> = options.iter().map(|o| o.to_string()).collect();
        return format!("one of {}", list.join(", "));
    }
    if let Some(c) = map.get("const") {
        return format!("exactly {c}");
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(branches) = map.get(key).and_then(Value::as_array) {
            let parts: Vec<String> = branches.iter().map(describe_schema).collect();
            return parts.join(" or ");
        }
    }
    if map.len() == 1
        && let Some(required) = map.get("required").and_then(Value::as_array)
    {
        let names: Vec<&str> = required.iter().filter_map(Value::as_str).collect();
        return format!("an object with {}", names.join(", "));
    }
    let types: Vec<&str> = match map.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if types.is_empty() {
        return "any value".into();
    }
    let parts: Vec<String> = types.iter().map(|t| describe_type(t, map)).collect();
    parts.join(" or ")
}

fn describe_type(t: &str, map: &Map<String, Value>) -> String {
    match t {
        "string" => match map.get("minLength").and_then(Value::as_u64) {
            Some(n) if n >= 1 => "non-empty string".into(),
            _ => "string".into(),
        },
        "integer" | "number" => {
            let min = map.get("minimum").and_then(Value::as_f64);
            let max = map.get("maximum").and_then(Value::as_f64);
            match (min, max) {
                (Some(a), Some(b)) => format!("{t} from {a} to {b}"),
                (Some(a), None) if t == "integer" && a == 1.0 => "positive integer".into(),
                (Some(a), None) => format!("{t} ≥ {a}"),
                (None, Some(b)) => format!("{t} ≤ {b}"),
                (None, None) => t.into(),
            }
        }
        "array" => match map.get("items") {
            Some(items) => format!("array of {}", describe_schema(items)),
            None => "array".into(),
        },
        "object" => {
            let required: Vec<&str> = map
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if required.is_empty() {
                "object".into()
            } else {
                format!("object with {}", required.join(", "))
            }
        }
        other => other.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn preset_validator() -> ArgValidator {
        let schema = json!({
            "type": "object",
            "properties": {
                "preset": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "minLength": 1},
                        "entries": {"type": "array", "items": {
                            "type": "object",
                            "properties": {"enabled": {"type": "boolean"}, "role": {"enum": ["system", "user", "assistant"]}},
                            "additionalProperties": false
                        }}
                    },
                    "required": ["name"],
                    "additionalProperties": false
                },
                "id": {"oneOf": [
                    {"type": "integer", "minimum": 1},
                    {"type": "object", "properties": {"id": {"type": "integer", "minimum": 1}}, "required": ["id"], "additionalProperties": false}
                ]}
            },
            "additionalProperties": false
        });
        let v = ArgValidator::new(schema);
        if let Err(e) = v.compile("t") {
            panic!("{e}");
        }
        v
    }

    fn err(v: &ArgValidator, args: Value) -> ToolError {
        match v.check("tavo_preset_update", &args) {
            Ok(()) => panic!("expected an error for {args}"),
            Err(e) => e,
        }
    }

    #[test]
    fn nested_type_error_names_the_dotted_path() {
        let e = err(
            &preset_validator(),
            json!({"preset": {"name": "a", "entries": [{"enabled": "yes"}]}}),
        );
        assert_eq!(e.code, ErrorCode::InvalidArguments);
        let d = e.details.unwrap_or_default();
        assert_eq!(d["path"], json!("preset.entries[0].enabled"));
        assert_eq!(d["expected"], json!("boolean"));
        assert_eq!(d["actualType"], json!("string"));
    }

    #[test]
    fn unknown_field_is_named_in_the_path() {
        let e = err(
            &preset_validator(),
            json!({"preset": {"name": "a"}, "bogus": 1}),
        );
        let d = e.details.unwrap_or_default();
        assert_eq!(d["path"], json!("bogus"));
        assert_eq!(d["actualType"], json!("integer"));
        assert!(e.message.contains("bogus"));
    }

    #[test]
    fn missing_required_field_points_at_the_field() {
        let e = err(&preset_validator(), json!({"preset": {}}));
        let d = e.details.unwrap_or_default();
        assert_eq!(d["path"], json!("preset.name"));
        assert_eq!(d["actualType"], json!("missing"));
        assert_eq!(d["expected"], json!("non-empty string (required)"));
    }

    #[test]
    fn enum_and_one_of_are_described() {
        let e = err(
            &preset_validator(),
            json!({"preset": {"name": "a", "entries": [{"role": "narrator"}]}}),
        );
        assert_eq!(
            e.details.unwrap_or_default()["expected"],
            json!("one of \"system\", \"user\", \"assistant\"")
        );
        let e = err(&preset_validator(), json!({"id": 0}));
        let d = e.details.unwrap_or_default();
        assert_eq!(d["path"], json!("id"));
        assert_eq!(d["expected"], json!("positive integer or object with id"));
    }

    #[test]
    fn several_errors_are_listed() {
        let e = err(&preset_validator(), json!({"preset": {"name": ""}, "x": 1}));
        let d = e.details.unwrap_or_default();
        assert_eq!(d["errors"].as_array().map(Vec::len), Some(2));
    }

    #[test]
    fn valid_arguments_pass() {
        assert!(
            preset_validator()
                .check(
                    "t",
                    &json!({"preset": {"name": "a", "entries": []}, "id": {"id": 3}})
                )
                .is_ok()
        );
    }
}
