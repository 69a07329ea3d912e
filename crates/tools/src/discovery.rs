//! `tavo_tool_search` and `extension_tool_search` (seed 000, "发现工具").
//!
//! Both rank tools by how well a short natural-language query matches their name, search
//! keywords and description, skip what the model can already see, and return at most `limit`
//! matches. Matches become callable from the next round for the rest of the reply: the
//! operation returns them in `Outcome::Done::expose`, and the engine adds them to its
//! [`ExposedSet`](crate::exposure::ExposedSet).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::context::OpContext;
use crate::error::ToolError;
use crate::operation::{OpSpec, Outcome, Residency, Safety};
use crate::registry::Registry;
use crate::validate::SchemaError;

/// Most matches one search returns.
pub const MAX_RESULTS: u8 = 8;

/// Arguments of both search tools.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// What the tool should do, in a few English words ("list files in the current chat").
    #[schemars(length(min = 1))]
    pub query: String,
    /// How many matches to return, 1-8 (default 5).
    #[serde(default)]
    #[schemars(range(min = 1, max = 8))]
    pub limit: Option<u8>,
}

const STOP_WORDS: &[&str] = &[
    "a", "an", "the", "in", "on", "of", "to", "for", "and", "or", "my", "me", "i", "is", "it",
    "this", "that", "with", "from", "by", "at", "be", "can", "please", "some", "any", "all",
    "tool", "tools", "want", "need",
];

fn stem(word: &str) -> &str {
    if word.len() > 5
        && let Some(stripped) = word.strip_suffix("ing")
    {
        return stripped;
    }
    if word.len() > 3 && !word.ends_with("ss") {
        return word.strip_suffix('s').unwrap_or(word);
    }
    word
}

/// Lower-cased, stemmed query terms without stop words; runs of non-ASCII text are kept whole
/// and matched as substrings (so a Chinese query still finds Chinese keywords).
fn terms(query: &str) -> Vec<String> {
    let lower = query.to_lowercase();
    let mut out: Vec<String> = Vec::new();
    for raw in lower.split(|c: char| !(c.is_alphanumeric())) {
        if raw.is_empty() || STOP_WORDS.contains(&raw) {
            continue;
        }
        let term = if raw.is_ascii() {
            stem(raw).to_owned()
        } else {
            raw.to_owned()
        };
        if !out.contains(&term) {
            out.push(term);
        }
    }
    out
}

/// Score of one tool for the query terms: name parts weigh most, then keywords, then the
/// description. Zero means no match.
pub fn score(terms: &[String], name: &str, keywords: &[&str], description: &str) -> u32 {
    let name_parts: Vec<&str> = name
        .split(['_', '-', '.'])
        .filter(|p| *p != "tavo")
        .collect();
    let description = description.to_lowercase();
    let mut total = 0;
    for term in terms {
        if name_parts.iter().any(|p| stem(p) == term || *p == term) {
            total += 6;
        } else if keywords.iter().any(|k| {
            k.to_lowercase().split(' ').any(|w| stem(w) == term) || k.contains(term.as_str())
        }) {
            total += 3;
        } else if description
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| stem(w) == term)
            || (!term.is_ascii() && description.contains(term.as_str()))
        {
            total += 1;
        }
    }
    total
}

fn rank<'a>(
    query: &str,
    candidates: impl Iterator<Item = (&'a str, &'a [&'a str], &'a str)>,
    limit: usize,
) -> Vec<&'a str> {
    let terms = terms(query);
    let mut scored: Vec<(u32, &str)> = candidates
        .map(|(name, kw, desc)| (score(&terms, name, kw, desc), name))
        .filter(|(s, _)| *s > 0)
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored.into_iter().take(limit).map(|(_, n)| n).collect()
}

fn summary(name: &str, description: &str) -> Value {
    let first = description
        .split_terminator(['\n'])
        .next()
        .unwrap_or(description);
    json!({"name": name, "description": first})
}

async fn tool_search(args: SearchArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    let limit = usize::from(args.limit.unwrap_or(5).clamp(1, MAX_RESULTS));
    let registry = &ctx.registry;
    let web_search = ctx
        .services
        .web
        .as_ref()
        .is_some_and(|w| w.search_available());
    let candidates = registry.operations().filter(|op| {
        op.residency() == Residency::Discoverable
            && !ctx.shown.contains(op.tool_name())
            && (op.tool_name() != "tavo_web_search" || web_search)
    });
    let found = rank(
        &args.query,
        candidates.map(|op| (op.tool_name(), op.keywords(), op.description())),
        limit,
    );
    let tools: Vec<Value> = found
        .iter()
        .filter_map(|n| registry.get(n))
        .map(|op| summary(op.tool_name(), op.description()))
        .collect();
    let expose: Vec<String> = found.iter().map(|s| (*s).to_owned()).collect();
    let note = if tools.is_empty() {
        "No matching tool that is not already visible. Try other words, or answer without a tool."
    } else {
        "These tools are callable from your next step on, for the rest of this reply."
    };
    Ok(Outcome::Done {
        result: crate::budget::ToolResult::Value(json!({"tools": tools, "note": note})),
        expose,
    })
}

async fn extension_tool_search(args: SearchArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    let limit = usize::from(args.limit.unwrap_or(5).clamp(1, MAX_RESULTS));
    // Only what this reply's chat may use: another chat's page tools are not offered.
    let all = ctx.services.extensions.usable_in(ctx.chat);
    let visible: Vec<&crate::extension::ExtensionTool> = all
        .iter()
        .filter(|t| !ctx.shown.contains(&t.name))
        .collect();
    let found = rank(
        &args.query,
        visible
            .iter()
            .map(|t| (t.name.as_str(), &[][..], t.description.as_str())),
        limit,
    );
    let tools: Vec<Value> = found
        .iter()
        .filter_map(|n| all.iter().find(|t| t.name == *n))
        .map(|t| summary(&t.name, &t.description))
        .collect();
    let expose: Vec<String> = found.iter().map(|s| (*s).to_owned()).collect();
    let note = if all.is_empty() {
        "No installed extension or connected MCP server provides tools right now."
    } else if tools.is_empty() {
        "No matching extension tool that is not already visible."
    } else {
        "These tools are callable from your next step on, for the rest of this reply."
    };
    Ok(Outcome::Done {
        result: crate::budget::ToolResult::Value(json!({"tools": tools, "note": note})),
        expose,
    })
}

/// Registers `tavo_tool_search`.
pub fn register_tool_search(r: &mut Registry) -> Result<(), SchemaError> {
    r.add(
        OpSpec::new(
            "tavo_tool_search",
            Safety::Read,
            "Find built-in Tavo tools that are not visible yet (files, variables, messages, characters, personas, \
             presets, lorebooks, regex, themes, memory, input box, images, TTS). Describe the task in a few \
             English words, e.g. \"list files in the current chat\". Matching tools become callable on your next \
             step, for the rest of this reply. Search before telling the user something cannot be done.",
        )
        .resident(),
        tool_search,
    )
}

/// Registers `extension_tool_search`.
pub fn register_extension_search(r: &mut Registry) -> Result<(), SchemaError> {
    r.add(
        OpSpec::new(
            "extension_tool_search",
            Safety::Read,
            "Find tools provided by installed extensions or connected MCP servers (not Tavo's built-in tools; use \
             tavo_tool_search for those). Matching tools become callable on your next step.",
        )
        .resident(),
        extension_tool_search,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_terms_drop_stop_words_and_stem() {
        assert_eq!(
            terms("List files in the current chat"),
            vec!["list", "file", "current", "chat"]
        );
        assert_eq!(terms("保存 文件"), vec!["保存", "文件"]);
    }

    #[test]
    fn name_matches_outrank_description_matches() {
        let t = terms("save a file");
        let save = score(&t, "tavo_file_save", &[], "Save a file in chat storage");
        let var = score(
            &t,
            "tavo_variable_set",
            &[],
            "Save a value; large content belongs in a file",
        );
        assert!(save > var && var > 0);
        assert_eq!(
            score(&terms("weather"), "tavo_file_save", &[], "Save a file"),
            0
        );
    }
}
