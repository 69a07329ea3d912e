//! Result budgets (seed 000, "常规的单结果 64 KiB 和单次回复累计 256 KiB 限制").
//!
//! Every result is measured as the bytes of its serialised JSON, because that is what is
//! sent back to the provider. One result may take at most [`RESULT_LIMIT`]:
//! - an oversize *text read* (a file loaded as text) still succeeds with a UTF-8-safe prefix
//!   and is marked truncated;
//! - an oversize *structured* result becomes `{ "truncated": true, "preview": "…" }`.
//!
//! A reply may take at most [`REPLY_LIMIT`] over all its results; the [`ReplyBudget`] is owned
//! by the engine (one per reply) and a result that no longer fits is `result_too_large`.
//!
//! These limits protect a model's context. A person's own program — the app and its bubbles
//! over `POST /api/ops`, `tavo tool call` — gets whole results ([`ReplyBudget::whole`]):
//! `tavo.message.find()` of a long chat or `tavo.file.load()` of an image are not answers to
//! cut (issue 31).

use serde_json::{Map, Value};

use crate::error::{ErrorCode, ToolError};

/// Largest serialised result of one call: 64 KiB.
pub const RESULT_LIMIT: usize = 64 * 1024;
/// Largest total of all results of one reply: 256 KiB.
pub const REPLY_LIMIT: usize = 256 * 1024;

/// What an operation returns before budgets are applied.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolResult {
    /// A structured result; cut to a preview when oversize.
    Value(Value),
    /// A text read: an object of metadata plus one text field that may be cut to a prefix.
    Text {
        /// Metadata fields of the result object (name, size, mimeType, …).
        meta: Map<String, Value>,
        /// Name of the field that receives the text.
        field: &'static str,
        /// The text read.
        text: String,
    },
}

impl ToolResult {
    /// The whole result as JSON (a text read: its metadata with the text under its field).
    pub fn into_value(self) -> Value {
        match self {
            ToolResult::Value(v) => v,
            ToolResult::Text {
                mut meta,
                field,
                text,
            } => {
                meta.insert(field.into(), Value::String(text));
                Value::Object(meta)
            }
        }
    }
}

/// A result after the per-result limit.
#[derive(Debug, Clone, PartialEq)]
pub struct Shaped {
    /// The value to put under `result`.
    pub result: Value,
    /// Whether anything was cut (the engine records it in the call's status).
    pub truncated: bool,
    /// Serialised size of `result` in bytes.
    pub bytes: usize,
}

/// Bytes `c` takes inside a JSON string literal as serde_json writes it.
fn escaped_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

/// Longest prefix of `text` (on a char boundary) whose JSON-escaped form fits in `room` bytes.
pub fn json_safe_prefix(text: &str, room: usize) -> &str {
    let mut used = 0;
    for (i, c) in text.char_indices() {
        used += escaped_len(c);
        if used > room {
            return &text[..i];
        }
    }
    text
}

fn serialized_len(v: &Value) -> usize {
    serde_json::to_string(v)
        .map(|s| s.len())
        .unwrap_or(usize::MAX)
}

/// Applies the per-result `limit` (normally [`RESULT_LIMIT`]).
pub fn shape(result: ToolResult, limit: usize) -> Shaped {
    match result {
        ToolResult::Value(value) => shape_value(value, limit),
        ToolResult::Text { meta, field, text } => shape_text(meta, field, text, limit),
    }
}

fn shape_value(value: Value, limit: usize) -> Shaped {
    let json = serde_json::to_string(&value).unwrap_or_default();
    if json.len() <= limit {
        return Shaped {
            bytes: json.len(),
            result: value,
            truncated: false,
        };
    }
    let overhead = r#"{"truncated":true,"preview":""}"#.len();
    let preview = json_safe_prefix(&json, limit.saturating_sub(overhead)).to_owned();
    let mut map = Map::new();
    map.insert("truncated".into(), Value::Bool(true));
    map.insert("preview".into(), Value::String(preview));
    let result = Value::Object(map);
    Shaped {
        bytes: serialized_len(&result),
        result,
        truncated: true,
    }
}

fn shape_text(meta: Map<String, Value>, field: &'static str, text: String, limit: usize) -> Shaped {
    let whole = ToolResult::Text { meta, field, text }.into_value();
    let bytes = serialized_len(&whole);
    if bytes <= limit {
        return Shaped {
            result: whole,
            truncated: false,
            bytes,
        };
    }
    let Value::Object(mut meta) = whole else {
        return shape_value(whole, limit);
    };
    let text = match meta.remove(field) {
        Some(Value::String(t)) => t,
        _ => String::new(),
    };
    meta.insert("truncated".into(), Value::Bool(true));
    meta.insert(field.into(), Value::String(String::new()));
    let overhead = serialized_len(&Value::Object(meta.clone()));
    if overhead >= limit {
        return shape_value(Value::Object(meta), limit);
    }
    let prefix = json_safe_prefix(&text, limit - overhead).to_owned();
    meta.insert(field.into(), Value::String(prefix));
    let result = Value::Object(meta);
    Shaped {
        bytes: serialized_len(&result),
        result,
        truncated: true,
    }
}

/// The reply-wide result budget. One per reply, owned by the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyBudget {
    limit: usize,
    used: usize,
    /// The largest one result may be ([`RESULT_LIMIT`]); `None`: results are whole.
    per_result: Option<usize>,
}

impl Default for ReplyBudget {
    fn default() -> Self {
        Self::new(REPLY_LIMIT)
    }
}

impl ReplyBudget {
    /// A budget of `limit` bytes, each result at most [`RESULT_LIMIT`].
    pub fn new(limit: usize) -> Self {
        Self {
            limit,
            used: 0,
            per_result: Some(RESULT_LIMIT),
        }
    }

    /// No budget: every result whole (a person's own program calling, not a model).
    pub fn whole() -> Self {
        Self {
            limit: usize::MAX,
            used: 0,
            per_result: None,
        }
    }

    /// Applies the per-result limit to `result` (nothing when results are whole).
    pub fn shape(&self, result: ToolResult) -> Shaped {
        match self.per_result {
            Some(limit) => shape(result, limit),
            None => Shaped {
                result: result.into_value(),
                truncated: false,
                // Not measured: nothing is counted against a whole budget.
                bytes: 0,
            },
        }
    }

    /// Bytes already taken by earlier results.
    pub fn used(&self) -> usize {
        self.used
    }

    /// Bytes still available.
    pub fn remaining(&self) -> usize {
        self.limit.saturating_sub(self.used)
    }

    /// Takes `bytes` from the budget, or refuses with `result_too_large` (taking nothing).
    pub fn admit(&mut self, bytes: usize) -> Result<(), ToolError> {
        if self.per_result.is_none() {
            return Ok(());
        }
        if bytes > self.remaining() {
            return Err(ToolError::new(
                ErrorCode::ResultTooLarge,
                format!(
                    "this result ({bytes} bytes) does not fit in what is left of this reply's result budget \
                     ({} of {} bytes); ask for less (a smaller limit, one page, one id) or answer with what you have",
                    self.remaining(),
                    self.limit
                ),
            )
            .with_details(serde_json::json!({"bytes": bytes, "remaining": self.remaining(), "limit": self.limit})));
        }
        self.used += bytes;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn small_results_pass_untouched() {
        let s = shape(ToolResult::Value(json!({"a": 1})), RESULT_LIMIT);
        assert!(!s.truncated);
        assert_eq!(s.result, json!({"a": 1}));
        assert_eq!(s.bytes, 7);
    }

    #[test]
    fn oversize_structured_result_becomes_a_preview_within_the_limit() {
        let big: Vec<Value> = (0..10_000)
            .map(|i| json!({"name": format!("file-{i}.txt"), "q": "\"é\""}))
            .collect();
        let s = shape(ToolResult::Value(Value::Array(big)), RESULT_LIMIT);
        assert!(s.truncated);
        assert_eq!(s.result["truncated"], json!(true));
        assert!(
            s.result["preview"]
                .as_str()
                .is_some_and(|p| p.starts_with("[{\"name\""))
        );
        assert!(s.bytes <= RESULT_LIMIT, "{} > limit", s.bytes);
        assert!(
            s.bytes > RESULT_LIMIT - 16,
            "the preview uses the room it has"
        );
    }

    #[test]
    fn oversize_text_read_keeps_a_utf8_safe_prefix_and_its_metadata() {
        let text = "雪".repeat(40_000); // 120,000 bytes, 3 bytes per char
        let mut meta = Map::new();
        meta.insert("name".into(), json!("snow.txt"));
        let s = shape(
            ToolResult::Text {
                meta,
                field: "content",
                text,
            },
            RESULT_LIMIT,
        );
        assert!(s.truncated);
        assert_eq!(s.result["name"], json!("snow.txt"));
        assert_eq!(s.result["truncated"], json!(true));
        let content = s.result["content"].as_str().unwrap_or_default();
        assert!(content.chars().all(|c| c == '雪'));
        assert!(s.bytes <= RESULT_LIMIT);
        assert!(s.bytes > RESULT_LIMIT - 3);
    }

    #[test]
    fn escapes_count_toward_the_limit() {
        let text = "\u{1}".repeat(20_000); // 6 bytes each once escaped
        let s = shape(
            ToolResult::Text {
                meta: Map::new(),
                field: "content",
                text,
            },
            1000,
        );
        assert!(s.bytes <= 1000);
    }

    #[test]
    fn reply_budget_refuses_what_no_longer_fits() {
        let mut b = ReplyBudget::default();
        for _ in 0..4 {
            assert!(b.admit(RESULT_LIMIT).is_ok());
        }
        let e = b.admit(1).err().map(|e| e.code);
        assert_eq!(e, Some(ErrorCode::ResultTooLarge));
        assert_eq!(b.used(), REPLY_LIMIT);
    }
}
