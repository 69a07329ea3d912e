//! Tool definitions (name, description, JSON Schema of the arguments) for the registry.

use serde_json::{Value, json};

/// The name of the fetch tool.
pub const WEB_FETCH: &str = "tavo_web_fetch";
/// The name of the search tool.
pub const WEB_SEARCH: &str = "tavo_web_search";

/// Description of `tavo_web_fetch` shown to the model.
pub const WEB_FETCH_DESCRIPTION: &str = "Read one HTTP(S) URL with GET and return it as Markdown \
(HTML, Markdown, plain text, JSON and XML; no JavaScript, no PDF or other binary media). Optional \
string headers are sent as given; a cross-origin redirect drops them. Long documents come in pages \
of about 24 KiB: pass the returned nextCursor as cursor (alone) to read the next page of the same \
snapshot without downloading again.";

/// Description of `tavo_web_search` shown to the model.
pub const WEB_SEARCH_DESCRIPTION: &str = "Search the web and return short source summaries (title, \
URL, snippet, optional score or published date). It does not open pages: call tavo_web_fetch on a \
result to read it in full.";

/// JSON Schema of the `tavo_web_fetch` arguments.
pub fn web_fetch_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "url": {
                "type": "string",
                "description": "Absolute http:// or https:// URL to read."
            },
            "headers": {
                "type": "object",
                "description": "Optional request headers, for example Accept-Language, Authorization or Cookie.",
                "additionalProperties": { "type": "string" }
            },
            "cursor": {
                "type": "string",
                "description": "nextCursor from a previous result; wins over url and headers."
            }
        },
        "additionalProperties": false
    })
}

/// JSON Schema of the `tavo_web_search` arguments.
pub fn web_search_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": { "type": "string", "minLength": 1, "description": "What to search for." },
            "max_results": { "type": "integer", "minimum": 1, "maximum": 20 },
            "topic": { "type": "string", "enum": ["general", "news", "finance"] },
            "time_range": { "type": "string", "enum": ["day", "week", "month", "year"] },
            "include_domains": { "type": "array", "items": { "type": "string" } },
            "exclude_domains": { "type": "array", "items": { "type": "string" } }
        },
        "required": ["query"],
        "additionalProperties": false
    })
}
