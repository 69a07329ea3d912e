//! The Tavily `/search` client and the normalised result the model receives.
//!
//! The request carries only what the model and the saved API decide (query, depth, chunks,
//! result count, topic, time range, domains); the response is reduced to title, URL, snippet,
//! optional score and published date. The raw request, the key, `request_id`, the generated
//! `answer`, usage and timings never reach the model.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::{SearchApi, SearchArgs, SearchDepth, SearchError};

/// Tavily's official API address. Fixed in production.
pub const TAVILY_BASE_URL: &str = "https://api.tavily.com";

/// Longest snippet passed on, in characters (three 500-character chunks plus separators).
const MAX_SNIPPET_CHARS: usize = 1600;

/// One normalised search result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    /// Page title (the URL when the provider gave none).
    pub title: String,
    /// Page URL.
    pub url: String,
    /// Relevant text from the page.
    pub snippet: String,
    /// Relevance score, when the provider gives one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// Publication date (news), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published_date: Option<String>,
}

/// The result of `tavo_web_search`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchOutput {
    /// Results, best first.
    pub results: Vec<SearchHit>,
    /// Warning codes: `no_results`, `results_trimmed`.
    pub warnings: Vec<String>,
}

/// A Tavily client. Cheap to clone.
#[derive(Debug, Clone)]
pub struct TavilyClient {
    client: reqwest::Client,
    base_url: String,
}

impl TavilyClient {
    /// A client for the official address.
    pub fn new() -> Result<Self, SearchError> {
        Self::build(TAVILY_BASE_URL.to_string())
    }

    /// A client for a local mock. Only loopback addresses are accepted, so production
    /// traffic cannot be redirected by configuration.
    #[doc(hidden)]
    pub fn with_loopback_base_url(base_url: &str) -> Result<Self, SearchError> {
        let url = url::Url::parse(base_url)
            .map_err(|e| SearchError::invalid_setting("baseUrl", e.to_string()))?;
        let loopback = match url.host() {
            Some(url::Host::Domain(d)) => d == "localhost",
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        };
        if !loopback {
            return Err(SearchError::invalid_setting(
                "baseUrl",
                "only a loopback address may replace the official Tavily address",
            ));
        }
        Self::build(base_url.trim_end_matches('/').to_string())
    }

    fn build(base_url: String) -> Result<Self, SearchError> {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(45))
            .no_proxy()
            .build()
            .map_err(|e| {
                SearchError::Unavailable(format!("could not build the HTTP client: {e}"))
            })?;
        Ok(Self { client, base_url })
    }

    /// Runs one search with a saved API (normally [`super::SearchSettings::runnable`]).
    pub async fn search(
        &self,
        api: &SearchApi,
        args: &SearchArgs,
    ) -> Result<SearchOutput, SearchError> {
        if !api.is_complete() {
            return Err(SearchError::NotConfigured);
        }
        let body = request_body(api, args);
        let response = self
            .client
            .post(format!("{}/search", self.base_url))
            .bearer_auth(&api.api_key)
            .json(&body)
            .send()
            .await
            .map_err(|e| SearchError::Unavailable(without_url(&e)))?;
        let status = response.status().as_u16();
        let text = response
            .text()
            .await
            .map_err(|e| SearchError::Unavailable(without_url(&e)))?;
        if status != 200 {
            return Err(status_error(status, &text));
        }
        let value: Value = serde_json::from_str(&text)
            .map_err(|e| SearchError::Unavailable(format!("unreadable response: {e}")))?;
        let limit = usize::from(args.max_results.unwrap_or(api.max_results));
        Ok(normalise(&value, limit))
    }
}

fn without_url(err: &reqwest::Error) -> String {
    let mut message = err.to_string();
    if let Some(url) = err.url() {
        message = message.replace(url.as_str(), "the search API");
    }
    message
}

/// The JSON body sent to `POST /search`.
pub fn request_body(api: &SearchApi, args: &SearchArgs) -> Value {
    let mut body = Map::new();
    body.insert("query".into(), json!(args.query));
    body.insert("search_depth".into(), json!(api.search_depth.as_str()));
    if let Some(topic) = args.topic {
        body.insert("topic".into(), json!(topic.as_str()));
    }
    if let Some(range) = args.time_range {
        body.insert("time_range".into(), json!(range.as_str()));
    }
    body.insert(
        "max_results".into(),
        json!(args.max_results.unwrap_or(api.max_results)),
    );
    if !args.include_domains.is_empty() {
        body.insert("include_domains".into(), json!(args.include_domains));
    }
    if !args.exclude_domains.is_empty() {
        body.insert("exclude_domains".into(), json!(args.exclude_domains));
    }
    // The seed: ultra-fast search does not send chunks per source.
    if api.search_depth != SearchDepth::UltraFast {
        body.insert("chunks_per_source".into(), json!(api.chunks_per_source));
    }
    Value::Object(body)
}

fn status_error(status: u16, body: &str) -> SearchError {
    // Tavily errors are {"detail": {"error": "..."}}; the message is user-facing text.
    let message = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| {
            v.pointer("/detail/error")
                .or_else(|| v.pointer("/detail"))
                .or_else(|| v.pointer("/error"))
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_else(|| format!("HTTP {status}"));
    match status {
        400 | 422 => SearchError::Rejected(message),
        401 | 403 => SearchError::Unauthorized(status),
        429 | 432 | 433 => SearchError::UsageLimit { status, message },
        _ => SearchError::Unavailable(format!("HTTP {status}: {message}")),
    }
}

/// Reduces a Tavily response to normalised hits.
pub fn normalise(response: &Value, limit: usize) -> SearchOutput {
    let mut results: Vec<SearchHit> = response
        .get("results")
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(hit).collect())
        .unwrap_or_default();
    let mut warnings = Vec::new();
    if results.len() > limit {
        results.truncate(limit);
        warnings.push("results_trimmed".to_string());
    }
    if results.is_empty() {
        warnings.push("no_results".to_string());
    }
    SearchOutput { results, warnings }
}

fn hit(item: &Value) -> Option<SearchHit> {
    let url = item.get("url")?.as_str()?.trim().to_string();
    if url.is_empty() {
        return None;
    }
    let text = |key: &str| {
        item.get(key)
            .and_then(Value::as_str)
            .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|s| !s.is_empty())
    };
    let title = text("title").unwrap_or_else(|| url.clone());
    let mut snippet = text("content").unwrap_or_default();
    if let Some((cut, _)) = snippet.char_indices().nth(MAX_SNIPPET_CHARS) {
        snippet.truncate(cut);
        snippet.push('…');
    }
    let score = item.get("score").and_then(|s| match s {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    });
    Some(SearchHit {
        title,
        url,
        snippet,
        score,
        published_date: text("published_date"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_map_from_documented_statuses() {
        let body =
            r#"{"detail":{"error":"Query is too long. Max query length is 400 characters."}}"#;
        assert_eq!(status_error(400, body).code(), "search_rejected");
        assert!(
            status_error(400, body)
                .to_string()
                .contains("400 characters")
        );
        assert_eq!(status_error(401, "{}").code(), "permission_denied");
        assert_eq!(status_error(432, "{}").code(), "search_usage_limit");
        assert_eq!(status_error(502, "<html>").code(), "search_unavailable");
    }

    #[test]
    fn only_loopback_may_replace_the_official_address() {
        assert!(TavilyClient::with_loopback_base_url("http://127.0.0.1:9/").is_ok());
        assert!(TavilyClient::with_loopback_base_url("http://localhost:9").is_ok());
        assert!(TavilyClient::with_loopback_base_url("https://evil.example/").is_err());
    }
}
