//! Write safety, the same for every MCP write (reference §18 "Write safety"):
//!
//! The write itself runs as one direct call of every door ([`crate::direct`]: its schema, the
//! approval policy, the time-out, the audit log); these steps wrap it:
//!
//! 1. `clientRequestId`: a retry of an answered write (same id, same tool, same arguments) gets
//!    the recorded answer and writes nothing; the same id with other arguments is refused, so a
//!    client bug cannot silently drop a write. Answers are kept in the store
//!    ([`tavo_store::AnsweredRequest`]), so they survive a restart of tavo.
//! 2. The handler reads and checks the write and returns its [`WritePlan`] — nothing stored yet.
//! 3. `expectedRevision`: refused with `conflict` unless the object is still at that revision.
//! 4. `dryRun`: answers `{dryRun: true, diff, revision}` and stores nothing.
//! 5. Otherwise the plan commits; its answer is recorded under the `clientRequestId`.
//!
//! The plan's own commit also carries the revision it read where the store can check it, so a
//! write that races another between steps 2 and 5 is a `conflict`, not a lost update.

use serde_json::{Map, Value, json};
use tavo_store::AnsweredRequest;

use super::{McpContext, McpTool, Step};
use crate::error::{ErrorCode, ToolError, json_type_name};

/// The arguments every write takes besides its own.
pub const WRITE_SAFETY_FIELDS: [&str; 3] = ["dryRun", "expectedRevision", "clientRequestId"];

/// Adds the write-safety arguments to a write's schema.
pub(super) fn add_fields(schema: &mut Value) {
    let Some(props) = schema.as_object_mut().and_then(|s| {
        s.entry("properties")
            .or_insert_with(|| json!({}))
            .as_object_mut()
    }) else {
        return;
    };
    props.insert(
        "dryRun".into(),
        json!({"type": "boolean", "description": "Check the write and answer its `diff` without saving anything."}),
    );
    props.insert(
        "expectedRevision".into(),
        json!({"type": ["integer", "string"], "description": "Refuse the write (`conflict`) unless the object is still at this revision (as the last read showed it)."}),
    );
    props.insert(
        "clientRequestId".into(),
        json!({"type": "string", "minLength": 1, "maxLength": 200, "description": "Makes retries safe: a repeated write with the same id and arguments answers as the first did and writes nothing."}),
    );
}

struct Safety {
    dry_run: bool,
    expected: Option<u64>,
    request: Option<String>,
}

fn take_fields(args: &mut Map<String, Value>) -> Result<Safety, ToolError> {
    let dry_run = match args.shift_remove("dryRun") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => b,
        Some(v) => {
            return Err(ToolError::invalid_at(
                "dryRun",
                "boolean",
                json_type_name(&v),
            ));
        }
    };
    let expected = match args.shift_remove("expectedRevision") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => Some(n.as_u64().ok_or_else(|| {
            ToolError::invalid_at(
                "expectedRevision",
                "a revision (positive integer)",
                "number",
            )
        })?),
        Some(Value::String(s)) => {
            Some(s.trim_start_matches("rev_").parse::<u64>().map_err(|_| {
                ToolError::invalid_at(
                    "expectedRevision",
                    "a revision (positive integer)",
                    "string",
                )
            })?)
        }
        Some(v) => {
            return Err(ToolError::invalid_at(
                "expectedRevision",
                "integer",
                json_type_name(&v),
            ));
        }
    };
    let request = match args.shift_remove("clientRequestId") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if !s.is_empty() && s.len() <= 200 => Some(s),
        Some(v) => {
            return Err(ToolError::invalid_at(
                "clientRequestId",
                "non-empty string of at most 200 characters",
                json_type_name(&v),
            ));
        }
    };
    Ok(Safety {
        dry_run,
        expected,
        request,
    })
}

/// A stable digest of the arguments (keys sorted), to tell a retry from a reuse of the id.
fn digest(tool: &str, args: &Map<String, Value>) -> String {
    fn canonical(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), canonical(&m[k])))
                        .collect(),
                )
            }
            Value::Array(a) => Value::Array(a.iter().map(canonical).collect()),
            other => other.clone(),
        }
    }
    let text = format!("{tool}\n{}", canonical(&Value::Object(args.clone())));
    // FNV-1a, 64 bits: enough to tell two argument sets of one client apart.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

pub(super) async fn run_write(
    cx: &McpContext,
    tool: &McpTool,
    mut args: Map<String, Value>,
) -> Result<Value, ToolError> {
    let safety = take_fields(&mut args)?;
    let digest = digest(&tool.name, &args);
    if let Some(id) = safety.request.clone().filter(|_| !safety.dry_run) {
        let answered = cx
            .blocking("reading the request log", move |store| {
                store
                    .read(|tx| tx.request_get(&id))
                    .map_err(|e| crate::context::store_error("reading the request log", e))
            })
            .await?;
        if let Some(answered) = answered {
            if answered.operation != tool.name || answered.arguments_digest != digest {
                return Err(ToolError::invalid_at(
                    "clientRequestId",
                    format!(
                        "a new id: this one was used by an earlier {} call with other arguments",
                        answered.operation
                    ),
                    "string",
                ));
            }
            return Ok(answered.result);
        }
    }
    // The write itself is one direct call (schema, approval policy, time-out, audit): a dry
    // run is refused where the write would be, so it tells the truth about the write.
    let (handler, inner) = (tool.handler.clone(), cx.clone());
    let (dry_run, expected) = (safety.dry_run, safety.expected);
    let result = cx
        .run_tool(tool, args, move |args| {
            Box::pin(async move {
                let plan = match handler(inner.clone(), args).await? {
                    Step::Write(plan) => plan,
                    Step::Answer(v) => return Ok(v),
                };
                check_revision(expected, plan.revision)?;
                if dry_run {
                    return Ok(json!({
                        "dryRun": true,
                        "saved": false,
                        "revision": plan.revision,
                        "diff": diff(plan.before.as_ref(), plan.after.as_ref()),
                    }));
                }
                (plan.commit)(inner).await
            })
        })
        .await?;
    // Recorded after the call, outside its time-out: a write that landed is never answered
    // `timeout` because its bookkeeping ran out of time.
    if let Some(id) = safety.request.filter(|_| !dry_run) {
        let answered = AnsweredRequest {
            operation: tool.name.clone(),
            arguments_digest: digest,
            result: result.clone(),
        };
        cx.blocking("recording the request", move |store| {
            store
                .write(|tx| tx.request_record(&id, &answered))
                .map_err(|e| crate::context::store_error("recording the request", e))
        })
        .await?;
    }
    Ok(result)
}

/// `expectedRevision`: the write is refused with `conflict` unless the object is still there.
fn check_revision(expected: Option<u64>, actual: Option<u64>) -> Result<(), ToolError> {
    match (expected, actual) {
        (Some(expected), Some(actual)) if expected != actual => Err(ToolError::new(
            ErrorCode::Conflict,
            format!(
                "the object was written since revision {expected} (it is at revision {actual}); \
                 read it again, apply the change, and write with the new revision"
            ),
        )
        .with_details(json!({"expectedRevision": expected, "revision": actual}))),
        _ => Ok(()),
    }
}

/// What a write changes, as a list of `{op, path, before?, after?}` (JSON Pointer paths;
/// `op` is `add`, `remove` or `replace`). Objects are compared key by key, arrays of the same
/// length item by item, anything else as a whole. Bookkeeping fields (`revision`, dates) are
/// left out: they change on every write.
pub fn diff(before: Option<&Value>, after: Option<&Value>) -> Value {
    let mut out = Vec::new();
    match (before, after) {
        (None, None) => {}
        (None, Some(a)) => out.push(json!({"op": "add", "path": "", "after": a})),
        (Some(b), None) => out.push(json!({"op": "remove", "path": "", "before": b})),
        (Some(b), Some(a)) => walk("", b, a, &mut out),
    }
    Value::Array(out)
}

const BOOKKEEPING: [&str; 4] = ["revision", "createdAt", "updatedAt", "modificationDate"];

fn walk(path: &str, before: &Value, after: &Value, out: &mut Vec<Value>) {
    if before == after {
        return;
    }
    match (before, after) {
        (Value::Object(b), Value::Object(a)) => {
            for (k, bv) in b {
                if path.is_empty() && BOOKKEEPING.contains(&k.as_str()) {
                    continue;
                }
                let p = format!("{path}/{}", pointer_escape(k));
                match a.get(k) {
                    Some(av) => walk(&p, bv, av, out),
                    None => out.push(json!({"op": "remove", "path": p, "before": bv})),
                }
            }
            for (k, av) in a {
                let bookkeeping = path.is_empty() && BOOKKEEPING.contains(&k.as_str());
                if !b.contains_key(k) && !bookkeeping {
                    out.push(json!({"op": "add", "path": format!("{path}/{}", pointer_escape(k)), "after": av}));
                }
            }
        }
        (Value::Array(b), Value::Array(a)) if a.len() == b.len() => {
            for (i, (bv, av)) in b.iter().zip(a).enumerate() {
                walk(&format!("{path}/{i}"), bv, av, out);
            }
        }
        _ => out.push(json!({"op": "replace", "path": path, "before": before, "after": after})),
    }
}

fn pointer_escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_names_each_changed_field_and_skips_bookkeeping() {
        let b = json!({"name": "A", "revision": 1, "tags": ["x"], "entries": [{"c": 1}]});
        let a = json!({"name": "B", "revision": 2, "tags": ["x", "y"], "entries": [{"c": 2}], "new/k": 1});
        let d = diff(Some(&b), Some(&a));
        let paths: Vec<&str> = d
            .as_array()
            .map(|v| v.iter().filter_map(|x| x["path"].as_str()).collect())
            .unwrap_or_default();
        assert_eq!(paths, ["/name", "/tags", "/entries/0/c", "/new~1k"]);
        assert_eq!(diff(Some(&b), Some(&b)), json!([]));
        assert_eq!(diff(None, Some(&a))[0]["op"], "add");
    }

    #[test]
    fn the_digest_ignores_key_order() {
        let mut x = Map::new();
        x.insert("a".into(), json!(1));
        x.insert("b".into(), json!({"d": 1, "c": 2}));
        let mut y = Map::new();
        y.insert("b".into(), json!({"c": 2, "d": 1}));
        y.insert("a".into(), json!(1));
        assert_eq!(digest("t", &x), digest("t", &y));
        assert_ne!(digest("t", &x), digest("u", &x));
    }

    #[test]
    fn write_fields_are_checked_with_their_names() {
        let mut args = Map::new();
        args.insert("expectedRevision".into(), json!("rev_7"));
        args.insert("dryRun".into(), json!(true));
        let s = take_fields(&mut args)
            .map_err(|e| e.message)
            .unwrap_or_else(|m| panic!("{m}"));
        assert_eq!((s.dry_run, s.expected), (true, Some(7)));
        assert!(args.is_empty());
        let mut bad = Map::new();
        bad.insert("dryRun".into(), json!("yes"));
        let e = take_fields(&mut bad).err().map(|e| e.details);
        assert_eq!(
            e.flatten().map(|d| d["path"].clone()),
            Some(json!("dryRun"))
        );
    }
}
