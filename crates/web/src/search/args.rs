//! The model's `tavo_web_search` arguments, validated with field paths.

use serde_json::Value;

use super::SearchError;

/// Search topic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topic {
    /// `general`.
    General,
    /// `news`.
    News,
    /// `finance`.
    Finance,
}

impl Topic {
    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            Topic::General => "general",
            Topic::News => "news",
            Topic::Finance => "finance",
        }
    }
}

/// How recent results must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeRange {
    /// `day`.
    Day,
    /// `week`.
    Week,
    /// `month`.
    Month,
    /// `year`.
    Year,
}

impl TimeRange {
    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            TimeRange::Day => "day",
            TimeRange::Week => "week",
            TimeRange::Month => "month",
            TimeRange::Year => "year",
        }
    }
}

/// Validated arguments of one search.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SearchArgs {
    /// The query (required, non-empty).
    pub query: String,
    /// 1–20; the saved API's default when absent.
    pub max_results: Option<u8>,
    /// Topic, when given.
    pub topic: Option<Topic>,
    /// Time range, when given.
    pub time_range: Option<TimeRange>,
    /// Only these domains.
    pub include_domains: Vec<String>,
    /// Never these domains.
    pub exclude_domains: Vec<String>,
}

impl SearchArgs {
    /// A query with nothing else set.
    pub fn query(query: impl Into<String>) -> Self {
        Self {
            query: query.into(),
            ..Self::default()
        }
    }

    /// Parses and validates the model's JSON arguments.
    pub fn from_json(args: &Value) -> Result<Self, SearchError> {
        let Some(obj) = args.as_object() else {
            return Err(SearchError::invalid_arg("arguments", "must be an object"));
        };
        const KNOWN: [&str; 6] = [
            "query",
            "max_results",
            "topic",
            "time_range",
            "include_domains",
            "exclude_domains",
        ];
        if let Some(unknown) = obj.keys().find(|k| !KNOWN.contains(&k.as_str())) {
            return Err(SearchError::invalid_arg(
                unknown.clone(),
                format!("unknown field; expected one of {}", KNOWN.join(", ")),
            ));
        }
        let query = match obj.get("query") {
            Some(Value::String(q)) if !q.trim().is_empty() => q.trim().to_string(),
            Some(Value::String(_)) => {
                return Err(SearchError::invalid_arg("query", "must not be empty"));
            }
            None | Some(Value::Null) => {
                return Err(SearchError::invalid_arg("query", "is required"));
            }
            Some(_) => return Err(SearchError::invalid_arg("query", "must be a string")),
        };
        let max_results = match obj.get("max_results") {
            None | Some(Value::Null) => None,
            Some(v) => match v.as_u64() {
                Some(n @ 1..=20) => Some(n as u8),
                _ => {
                    return Err(SearchError::invalid_arg(
                        "max_results",
                        "must be an integer between 1 and 20",
                    ));
                }
            },
        };
        let topic = match optional_str(obj.get("topic"), "topic")? {
            None => None,
            Some("general") => Some(Topic::General),
            Some("news") => Some(Topic::News),
            Some("finance") => Some(Topic::Finance),
            Some(_) => {
                return Err(SearchError::invalid_arg(
                    "topic",
                    "must be general, news or finance",
                ));
            }
        };
        let time_range = match optional_str(obj.get("time_range"), "time_range")? {
            None => None,
            Some("day") => Some(TimeRange::Day),
            Some("week") => Some(TimeRange::Week),
            Some("month") => Some(TimeRange::Month),
            Some("year") => Some(TimeRange::Year),
            Some(_) => {
                return Err(SearchError::invalid_arg(
                    "time_range",
                    "must be day, week, month or year",
                ));
            }
        };
        Ok(Self {
            query,
            max_results,
            topic,
            time_range,
            include_domains: domains(obj.get("include_domains"), "include_domains")?,
            exclude_domains: domains(obj.get("exclude_domains"), "exclude_domains")?,
        })
    }
}

fn optional_str<'a>(value: Option<&'a Value>, field: &str) -> Result<Option<&'a str>, SearchError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_str())),
        Some(_) => Err(SearchError::invalid_arg(field, "must be a string")),
    }
}

fn domains(value: Option<&Value>, field: &str) -> Result<Vec<String>, SearchError> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                Value::String(d)
                    if !d.trim().is_empty() && !d.trim().contains(char::is_whitespace) =>
                {
                    Ok(d.trim().to_string())
                }
                _ => Err(SearchError::invalid_arg(
                    format!("{field}[{i}]"),
                    "must be a non-empty domain name such as example.com",
                )),
            })
            .collect(),
        Some(_) => Err(SearchError::invalid_arg(
            field,
            "must be an array of domain names",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_seed_example_parses() {
        let args = SearchArgs::from_json(&json!({
            "query": "Dart 3.10 release notes",
            "max_results": 5,
            "topic": "general",
            "include_domains": ["dart.dev"]
        }));
        let args = args.unwrap_or_default();
        assert_eq!(args.query, "Dart 3.10 release notes");
        assert_eq!(args.max_results, Some(5));
        assert_eq!(args.topic, Some(Topic::General));
        assert_eq!(args.include_domains, vec!["dart.dev".to_string()]);
    }

    #[test]
    fn invalid_arguments_name_their_path() {
        let path = |v: Value| match SearchArgs::from_json(&v) {
            Err(SearchError::InvalidArgument { field, .. }) => field,
            other => format!("unexpected {other:?}"),
        };
        assert_eq!(path(json!({})), "query");
        assert_eq!(path(json!({"query": "  "})), "query");
        assert_eq!(
            path(json!({"query": "q", "max_results": 21})),
            "max_results"
        );
        assert_eq!(path(json!({"query": "q", "max_results": 0})), "max_results");
        assert_eq!(
            path(json!({"query": "q", "max_results": 2.5})),
            "max_results"
        );
        assert_eq!(path(json!({"query": "q", "topic": "sports"})), "topic");
        assert_eq!(path(json!({"query": "q", "time_range": "d"})), "time_range");
        assert_eq!(
            path(json!({"query": "q", "include_domains": ["a.com", 3]})),
            "include_domains[1]"
        );
        assert_eq!(path(json!({"query": "q", "cursor": "x"})), "cursor");
    }
}
