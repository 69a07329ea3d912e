//! The search arguments every MCP search tool takes: `query`, `match`
//! (`exact` | `prefix` | `suffix` | `contains`, default `contains`), `limit` (1–200, default
//! 50) and `cursor` (the `nextCursor` of the previous page). Matching is case-insensitive.

use serde_json::{Map, Value, json};

use crate::error::{ToolError, json_type_name};

/// Default and largest page.
pub const DEFAULT_LIMIT: usize = 50;
/// The largest page a search answers.
pub const MAX_LIMIT: usize = 200;

/// The schema of the search arguments (plus any `extra` properties).
pub fn schema(extra: Value) -> Value {
    let mut props = json!({
        "query": {"type": "string", "description": "Text to look for (case-insensitive). Empty or absent: everything."},
        "match": {"type": "string", "enum": ["exact", "prefix", "suffix", "contains"], "description": "How `query` matches (default contains)."},
        "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "description": "Results per page (default 50)."},
        "cursor": {"type": "string", "description": "`nextCursor` of the previous page."},
    });
    if let (Some(p), Value::Object(e)) = (props.as_object_mut(), extra) {
        p.extend(e);
    }
    json!({"type": "object", "properties": props, "additionalProperties": false})
}

/// How a query matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Match {
    Exact,
    Prefix,
    Suffix,
    Contains,
}

/// Parsed search arguments.
#[derive(Debug, Clone)]
pub struct Search {
    query: String,
    mode: Match,
    limit: usize,
    offset: usize,
}

impl Search {
    /// Reads the search arguments from `args`, naming the field of a bad one.
    pub fn from_args(args: &Map<String, Value>) -> Result<Self, ToolError> {
        let query = match args.get("query") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.to_lowercase(),
            Some(v) => return Err(ToolError::invalid_at("query", "string", json_type_name(v))),
        };
        let mode = match args.get("match") {
            None | Some(Value::Null) => Match::Contains,
            Some(Value::String(s)) => match s.as_str() {
                "exact" => Match::Exact,
                "prefix" => Match::Prefix,
                "suffix" => Match::Suffix,
                "contains" => Match::Contains,
                _ => {
                    return Err(ToolError::invalid_at(
                        "match",
                        "exact, prefix, suffix or contains",
                        "string",
                    ));
                }
            },
            Some(v) => return Err(ToolError::invalid_at("match", "string", json_type_name(v))),
        };
        let limit = match args.get("limit") {
            None | Some(Value::Null) => DEFAULT_LIMIT,
            Some(v) => v
                .as_u64()
                .filter(|n| (1..=MAX_LIMIT as u64).contains(n))
                .map(|n| n as usize)
                .ok_or_else(|| {
                    ToolError::invalid_at(
                        "limit",
                        format!("integer 1..{MAX_LIMIT}"),
                        json_type_name(v),
                    )
                })?,
        };
        let offset = match args.get("cursor") {
            None | Some(Value::Null) => 0,
            Some(Value::String(s)) if s.is_empty() => 0,
            Some(Value::String(s)) => s
                .strip_prefix("o")
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| {
                    ToolError::invalid_at("cursor", "a nextCursor from an earlier page", "string")
                })?,
            Some(v) => return Err(ToolError::invalid_at("cursor", "string", json_type_name(v))),
        };
        Ok(Self {
            query,
            mode,
            limit,
            offset,
        })
    }

    /// Whether any of `texts` matches.
    pub fn matches<'a>(&self, texts: impl IntoIterator<Item = &'a str>) -> bool {
        if self.query.is_empty() {
            return true;
        }
        texts.into_iter().any(|t| {
            let t = t.to_lowercase();
            match self.mode {
                Match::Exact => t == self.query,
                Match::Prefix => t.starts_with(&self.query),
                Match::Suffix => t.ends_with(&self.query),
                Match::Contains => t.contains(&self.query),
            }
        })
    }

    /// One page of `hits` (already filtered): `{items, total, nextCursor}`.
    pub fn page(&self, hits: Vec<Value>) -> Value {
        let total = hits.len();
        let items: Vec<Value> = hits
            .into_iter()
            .skip(self.offset)
            .take(self.limit)
            .collect();
        let end = self.offset + items.len();
        let next = (end < total).then(|| format!("o{end}"));
        json!({"items": items, "total": total, "nextCursor": next})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn every_match_mode_and_paging() {
        let s = Search::from_args(&args(json!({"query": "AL", "match": "prefix"})))
            .map_err(|e| e.message);
        let s = s.unwrap_or_else(|m| panic!("{m}"));
        assert!(s.matches(["Alice"]));
        assert!(!s.matches(["Sal"]));
        let s = Search::from_args(&args(json!({"query": "ce", "match": "suffix", "limit": 1})))
            .unwrap_or_else(|e| panic!("{}", e.message));
        assert!(s.matches(["Alice"]));
        let page = s.page(vec![json!(1), json!(2)]);
        assert_eq!(page["items"], json!([1]));
        assert_eq!(page["nextCursor"], "o1");
        let next = Search::from_args(&args(json!({"cursor": "o1", "limit": 1})))
            .unwrap_or_else(|e| panic!("{}", e.message));
        assert_eq!(
            next.page(vec![json!(1), json!(2)])["nextCursor"],
            Value::Null
        );
        let bad = Search::from_args(&args(json!({"match": "fuzzy"}))).err();
        assert_eq!(
            bad.and_then(|e| e.details).map(|d| d["path"].clone()),
            Some(json!("match"))
        );
    }
}
