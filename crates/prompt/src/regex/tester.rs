//! The rule tester behind the regex editor's live preview: one rule on one sample text, run by
//! the same pipeline a generation runs ([`RegexRun::apply`]), plus the list of matches and what
//! each became.
//!
//! Why in this crate: the browser app must not carry a second regex engine (JavaScript `RegExp`
//! in the page would agree on syntax but not on `trimStrings`, `{{match}}`, the substitution
//! modes, depth bounds or the 500 ms deadline). The result is the pipeline's own; the match
//! list comes from two extra calls of the same worker that wrap each match (and each
//! replacement) in the marks the pipeline already uses for replacement macros.

use serde::Serialize;
use tavo_model::{RegexEntry, RegexGroup, RegexPlacement, RegexTiming};

use super::js::{JsError, JsRegex, MARK_CLOSE, MARK_OPEN, ReplaceRequest};
use super::pattern::parse_find_regex;
use super::pipeline::{
    MACROS_ONLY, RegexReport, RegexRules, RegexRun, RegexTarget, Stage, rendered_find,
};
use crate::macros::{MacroContext, MacroState, Variables};

/// One match of the tested rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleMatch {
    /// Offset of the match in the sample, in UTF-16 code units (JavaScript string indices, so
    /// the page can highlight it without converting).
    pub index: usize,
    /// The matched text.
    pub text: String,
    /// What the match is replaced with (captures inserted and trimmed, macros expanded).
    pub replacement: String,
}

/// What the rule does to the sample.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleTest {
    /// The sample after the rule, exactly as a generation would rewrite it.
    pub output: String,
    /// Matches replaced (the pipeline's count).
    pub replacements: u32,
    /// Each match, in order (empty when the rule does not apply here).
    pub matches: Vec<RuleMatch>,
    /// The stage the rule was run at (`display`, `send`, `receive`), from its `timing`.
    pub stage: &'static str,
    /// Why the rule did not run on this sample (placement or depth outside its bounds, an
    /// empty pattern), when it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// The pattern's error (JavaScript syntax, deadline), when it failed; the output is then
    /// the sample unchanged, as a generation leaves it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Where the sample sits, as a generation would see it.
#[derive(Debug, Clone)]
pub struct RuleSample<'a> {
    /// The text.
    pub text: &'a str,
    /// Which placement the text belongs to (default: the rule's first placement).
    pub placement: Option<RegexPlacement>,
    /// The message depth (0 = newest), `None` for text without a depth.
    pub depth: Option<i64>,
}

fn stage_of(timing: RegexTiming) -> (Stage, &'static str) {
    match timing {
        RegexTiming::Display | RegexTiming::SendAndDisplay => (Stage::Display, "display"),
        RegexTiming::Send => (Stage::Send, "send"),
        RegexTiming::Receive | RegexTiming::EditAndReceive => (Stage::Receive, "receive"),
    }
}

/// The marked segments of `text`, each with the UTF-16 offset it starts at once the marks are
/// removed. For the `$&` run the text around and inside the marks is the sample itself, so
/// these are offsets into the sample.
fn marked_segments(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut offset = 0usize;
    let mut rest = text;
    while let Some(open) = rest.find(MARK_OPEN) {
        offset += rest[..open].encode_utf16().count();
        let after = &rest[open + MARK_OPEN.len_utf8()..];
        let close = after.find(MARK_CLOSE).unwrap_or(after.len());
        let segment = after[..close].to_owned();
        let start = offset;
        offset += segment.encode_utf16().count();
        out.push((start, segment));
        rest = after.get(close + MARK_CLOSE.len_utf8()..).unwrap_or("");
    }
    out
}

fn error_text(e: &JsError) -> String {
    match e {
        JsError::Syntax(msg) => format!(
            "{msg}; fix the pattern (JavaScript syntax, optionally /pattern/flags). A generation skips this rule"
        ),
        other => format!("{other}; a generation skips this rule"),
    }
}

/// Runs `entry` on `sample` as a generation would at the rule's own stage (its `enabled` flag
/// is ignored: the author tests a rule before switching it on). `ctx` names `{{user}}` and
/// `{{char}}` for macros in the pattern and the replacement; variables are empty and writes
/// are dropped, so a test never changes a chat.
pub fn test_rule(
    js: &JsRegex,
    entry: &RegexEntry,
    sample: &RuleSample<'_>,
    ctx: &MacroContext,
) -> RuleTest {
    let mut entry = entry.clone();
    entry.enabled = true;
    let (stage, stage_name) = stage_of(entry.timing);
    let placement = sample
        .placement
        .or_else(|| entry.placements.first().copied())
        .unwrap_or(RegexPlacement::Char);
    let unchanged = |skipped: Option<String>, error: Option<String>| RuleTest {
        output: sample.text.to_owned(),
        replacements: 0,
        matches: Vec::new(),
        stage: stage_name,
        skipped,
        error,
    };
    if !entry.placements.contains(&placement) {
        return unchanged(
            Some(format!(
                "the rule does not apply to {} text (placements: {})",
                placement_name(placement),
                entry
                    .placements
                    .iter()
                    .map(|p| placement_name(*p))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            None,
        );
    }
    if let Some(depth) = sample.depth {
        let below = entry
            .min_depth
            .filter(|m| *m >= 0)
            .is_some_and(|m| depth < m);
        let above = entry
            .max_depth
            .filter(|m| *m >= 0)
            .is_some_and(|m| depth > m);
        if below || above {
            return unchanged(
                Some(format!(
                    "depth {depth} is outside the rule's depth bounds (minDepth {}, maxDepth {})",
                    bound(entry.min_depth),
                    bound(entry.max_depth)
                )),
                None,
            );
        }
    }
    let mut macros = MacroState::new(Variables::default(), 0);
    let (find, _) = rendered_find(&entry, &mut macros, ctx);
    if find.is_empty() {
        return unchanged(Some("the pattern is empty".into()), None);
    }
    let pattern = parse_find_regex(&find);
    let probe = |replacement: String, trims: Vec<String>| {
        js.replace(ReplaceRequest {
            source: pattern.source.clone(),
            flags: pattern.flags.clone(),
            replacement,
            trims,
            mark: true,
            inputs: vec![sample.text.to_owned()],
        })
    };
    // The matches themselves: every match replaced by itself, marked.
    let found = match probe("$&".into(), Vec::new()) {
        Ok(outcome) => outcome.outputs.into_iter().next().unwrap_or_default(),
        Err(e) => return unchanged(None, Some(error_text(&e))),
    };
    let trims: Vec<String> = entry
        .trim_strings
        .iter()
        .map(|t| macros.render(t, ctx).text)
        .filter(|t| !t.is_empty())
        .collect();
    // What each match becomes (before macros in the replacement are expanded).
    let replacement = macros.render_template_only(&entry.replace_string, ctx).text;
    let replaced = match probe(replacement, trims) {
        Ok(outcome) => outcome.outputs.into_iter().next().unwrap_or_default(),
        Err(e) => return unchanged(None, Some(error_text(&e))),
    };
    let replacements = marked_segments(&replaced);
    let matches = marked_segments(&found)
        .into_iter()
        .enumerate()
        .map(|(i, (index, text))| RuleMatch {
            index,
            text,
            replacement: replacements
                .get(i)
                .map(|(_, r)| macros.render_with(r, ctx, MACROS_ONLY).text)
                .unwrap_or_default(),
        })
        .collect();
    // The authoritative output: the generation pipeline itself.
    let rules = RegexRules::from_groups(&[RegexGroup {
        name: "test".into(),
        entries: vec![entry],
        ..RegexGroup::default()
    }]);
    let run = RegexRun {
        rules: &rules,
        js,
        ctx,
    };
    let mut targets = [RegexTarget {
        text: sample.text.to_owned(),
        placement,
        depth: sample.depth,
        label: "sample".into(),
    }];
    let mut report = RegexReport::default();
    let mut state = MacroState::new(Variables::default(), 0);
    run.apply(stage, &mut targets, &mut state, None, &mut report);
    let [target] = targets;
    RuleTest {
        output: target.text,
        replacements: report.applied.iter().map(|a| a.replacements).sum(),
        matches,
        stage: stage_name,
        skipped: None,
        error: report.issues.first().map(|i| i.error.clone()),
    }
}

fn bound(b: Option<i64>) -> String {
    b.filter(|d| *d >= 0)
        .map(|d| d.to_string())
        .unwrap_or_else(|| "none".into())
}

fn placement_name(p: RegexPlacement) -> &'static str {
    match p {
        RegexPlacement::User => "user",
        RegexPlacement::Char => "char",
        RegexPlacement::Reasoning => "reasoning",
        RegexPlacement::Lorebook => "lorebook",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> MacroContext {
        let now = chrono::DateTime::parse_from_rfc3339("2026-01-01T00:00:00+00:00")
            .unwrap_or_else(|e| panic!("{e}"));
        MacroContext::new("Ann", "Mira", now)
    }

    fn js() -> &'static JsRegex {
        JsRegex::shared().unwrap_or_else(|e| panic!("{e}"))
    }

    fn rule(find: &str, replace: &str) -> RegexEntry {
        RegexEntry {
            identifier: "r".into(),
            name: "r".into(),
            find_regex: find.into(),
            replace_string: replace.into(),
            ..RegexEntry::default()
        }
    }

    fn sample(text: &str) -> RuleSample<'_> {
        RuleSample {
            text,
            placement: None,
            depth: None,
        }
    }

    #[test]
    fn matches_and_output_follow_javascript() {
        let t = test_rule(
            js(),
            &rule("/(\\w+)@(\\w+)/g", "$2 at {{char}} ($1)"),
            &sample("a@b, 😀 c@d"),
            &ctx(),
        );
        assert_eq!(t.output, "b at Mira (a), 😀 d at Mira (c)");
        assert_eq!(t.replacements, 2);
        assert_eq!(t.matches.len(), 2);
        assert_eq!(
            t.matches[1].index, 8,
            "UTF-16 offset: the emoji is two units"
        );
        assert_eq!(t.matches[1].text, "c@d");
        assert_eq!(t.matches[1].replacement, "d at Mira (c)");
    }

    #[test]
    fn bare_pattern_replaces_the_first_match_only_and_trims_captures() {
        let mut r = rule("x(y+)", "[$1]");
        r.trim_strings = vec!["y".into()];
        let t = test_rule(js(), &r, &sample("xyy xy"), &ctx());
        assert_eq!(t.output, "[] xy");
        assert_eq!(t.matches.len(), 1);
    }

    #[test]
    fn placement_and_depth_outside_the_rule_change_nothing() {
        let mut r = rule("/a/g", "b");
        r.max_depth = Some(1);
        let deep = test_rule(
            js(),
            &r,
            &RuleSample {
                text: "aaa",
                placement: None,
                depth: Some(3),
            },
            &ctx(),
        );
        assert_eq!(deep.output, "aaa");
        assert!(deep.skipped.is_some_and(|s| s.contains("depth 3")));
        let user = test_rule(
            js(),
            &r,
            &RuleSample {
                text: "aaa",
                placement: Some(RegexPlacement::User),
                depth: None,
            },
            &ctx(),
        );
        assert!(user.skipped.is_some_and(|s| s.contains("user")));
    }

    #[test]
    fn a_bad_pattern_is_an_error_and_leaves_the_text() {
        let t = test_rule(js(), &rule("/(/g", "x"), &sample("abc"), &ctx());
        assert_eq!(t.output, "abc");
        assert!(t.error.is_some_and(|e| e.contains("fix the pattern")));
    }
}
