//! The HTTP shape of an import's per-file results. Reading, storing and exporting are
//! `tavo_tools::library`'s, the functions every door calls, so a file imported over HTTP lands
//! exactly as one imported from the terminal or by the model, with the same ids and warnings.

use serde_json::{Value, json};
use tavo_tools::ToolError;
use tavo_tools::library::ImportedFile;

/// One file's success: `{file, ok: true}` then the shared result object (`kind`, `name`, the
/// ids, `warnings`).
pub fn imported_json(file: &str, created: &ImportedFile) -> Value {
    let mut out = serde_json::Map::new();
    out.insert("file".into(), json!(file));
    out.insert("ok".into(), json!(true));
    out.extend(created.to_json());
    Value::Object(out)
}

/// One file's failure: `{file, ok: false, error: {code, message, details?}}`, the error
/// envelope of every door.
pub fn failed_json(file: &str, error: &ToolError) -> Value {
    let mut envelope = error.to_envelope();
    json!({ "file": file, "ok": false, "error": envelope["error"].take() })
}
