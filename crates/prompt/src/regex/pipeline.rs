//! The regex pipeline: which rules run at which timing on which text, and the three outputs
//! of a message (display copy, model copy, stored content).
//!
//! Decisions (Tavo is silent, SillyTavern followed unless noted):
//! - Order: groups in the chat's binding order, entries in array order; each rule sees the
//!   previous rule's output.
//! - Depth: 0 is the newest message; `minDepth`/`maxDepth` are inclusive; a bound below 0 (or
//!   `null`) is no bound; text without a depth (lorebook content outside `atDepth`) is not
//!   depth-filtered.
//! - `trimStrings` are removed from captured text (`$1`, `$<name>`, `$&`, `{{match}}`)
//!   before it is inserted.
//! - `substitution` applies to `findRegex` only: `none` keeps it literal, `raw` expands
//!   macros, `escaped` expands them with regex syntax escaped. Macros in `replaceString` are
//!   always expanded, after the captures are inserted, so `{{addvar::gold::$1}}` works.
//! - Timings: `display` → display copy; `send` → model copy; `sendAndDisplay` → both;
//!   `receive` → stored on receive; `editAndReceive` → stored on receive and on edit.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde::Serialize;
use tavo_model::{RegexEntry, RegexGroup, RegexId, RegexPlacement, RegexTiming, Substitution};

use super::js::{JsError, JsRegex, MARK_CLOSE, MARK_OPEN, ReplaceRequest};
use super::pattern::parse_find_regex;
use crate::ejs::has_template;
use crate::macros::{MacroContext, MacroState, RenderOptions};

/// Rendering of text that holds chat content: macros, never EJS.
pub(super) const MACROS_ONLY: RenderOptions = RenderOptions {
    regex_escape_results: false,
    skip_templates: true,
};

/// Whether a replacement has macros other than `{{match}}` (the whole match).
fn has_macros(text: &str) -> bool {
    text.to_ascii_lowercase()
        .replace("{{match}}", "")
        .contains("{{")
}

/// When rules run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stage {
    /// Rendering a message for the user (never stored).
    Display,
    /// Building the copy sent to the model (never stored).
    Send,
    /// A reply (or the user's own message) arrived: the result is stored.
    Receive,
    /// A message was edited: the result is stored.
    Edit,
}

impl Stage {
    /// Whether a rule with `timing` runs at this stage.
    pub fn runs(self, timing: RegexTiming) -> bool {
        use RegexTiming as T;
        match self {
            Stage::Display => matches!(timing, T::Display | T::SendAndDisplay),
            Stage::Send => matches!(timing, T::Send | T::SendAndDisplay),
            Stage::Receive => matches!(timing, T::Receive | T::EditAndReceive),
            Stage::Edit => matches!(timing, T::EditAndReceive),
        }
    }
}

/// One rule with the group it came from.
#[derive(Debug, Clone)]
pub struct RegexRule {
    /// The group's id.
    pub regex_id: Option<RegexId>,
    /// The group's name.
    pub group: String,
    /// The rule.
    pub entry: RegexEntry,
}

impl RegexRule {
    fn depth_allows(&self, depth: Option<i64>) -> bool {
        let Some(depth) = depth else { return true };
        if let Some(min) = self.entry.min_depth.filter(|m| *m >= 0)
            && depth < min
        {
            return false;
        }
        if let Some(max) = self.entry.max_depth.filter(|m| *m >= 0)
            && depth > max
        {
            return false;
        }
        true
    }

    fn replacement_has_macros(&self) -> bool {
        has_macros(&self.entry.replace_string) || has_template(&self.entry.replace_string)
    }

    /// Whether the rule's output can change with variables (EJS or macros in its strings),
    /// which makes its results uncacheable.
    fn is_dynamic(&self) -> bool {
        let e = &self.entry;
        self.replacement_has_macros()
            || (e.substitution != Substitution::None
                && (e.find_regex.contains("{{") || has_template(&e.find_regex)))
            || e.trim_strings
                .iter()
                .any(|t| t.contains("{{") || has_template(t))
    }
}

/// The enabled rules of a chat's bound groups, in order.
#[derive(Debug, Clone, Default)]
pub struct RegexRules {
    rules: Vec<RegexRule>,
    fingerprint: u64,
    any_macro_replacement: bool,
    depth_sensitive: bool,
}

impl RegexRules {
    /// Collects the enabled rules of `groups` in binding order.
    pub fn from_groups(groups: &[RegexGroup]) -> Self {
        let rules: Vec<RegexRule> = groups
            .iter()
            .flat_map(|group| {
                group
                    .entries
                    .iter()
                    .filter(|e| e.enabled)
                    .map(|entry| RegexRule {
                        regex_id: group.id,
                        group: group.name.clone(),
                        entry: entry.clone(),
                    })
            })
            .collect();
        let mut hasher = DefaultHasher::new();
        for rule in &rules {
            rule.regex_id.map(|id| id.0).hash(&mut hasher);
            serde_json::to_string(&rule.entry)
                .unwrap_or_default()
                .hash(&mut hasher);
        }
        let any_macro_replacement = rules.iter().any(RegexRule::is_dynamic);
        let depth_sensitive = rules.iter().any(|r| {
            r.entry.min_depth.is_some_and(|d| d >= 0) || r.entry.max_depth.is_some_and(|d| d >= 0)
        });
        Self {
            rules,
            fingerprint: hasher.finish(),
            any_macro_replacement,
            depth_sensitive,
        }
    }

    /// The rules.
    pub fn rules(&self) -> &[RegexRule] {
        &self.rules
    }

    /// Whether no rule is enabled.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }
}

/// One text to run rules over.
#[derive(Debug, Clone)]
pub struct RegexTarget {
    /// The text; rewritten in place.
    pub text: String,
    /// Which placement the text belongs to.
    pub placement: RegexPlacement,
    /// Depth of the message (0 = newest), `None` when depth does not apply.
    pub depth: Option<i64>,
    /// How explain output names the text (`message:12`, `lorebook:3/entry-id`).
    pub label: String,
}

/// A rule that changed a text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RegexApplied {
    /// The group's id.
    pub regex_id: Option<RegexId>,
    /// The rule's identifier.
    pub identifier: String,
    /// The rule's name.
    pub name: String,
    /// The text it changed.
    pub target: String,
    /// Number of matches replaced.
    pub replacements: u32,
}

/// A rule that was skipped because it failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RegexIssue {
    /// The group's id.
    pub regex_id: Option<RegexId>,
    /// The rule's identifier.
    pub identifier: String,
    /// The rule's name.
    pub name: String,
    /// Where the problem is (`regex[3].entries[identifier].findRegex`).
    pub location: String,
    /// What went wrong and what to do.
    pub error: String,
}

/// What the pipeline did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RegexReport {
    /// Rules that changed a text.
    pub applied: Vec<RegexApplied>,
    /// Rules skipped because of an error.
    pub issues: Vec<RegexIssue>,
}

#[derive(Debug, Clone)]
struct Cached {
    text: String,
    applied: Vec<(usize, u32)>,
}

/// Results per (rule set, stage, placement, depth, text), so unchanged messages cost a hash
/// lookup on the next generation (DESIGN.md §3: cache per message and rule-set revision;
/// hashing the text makes the key exact even when revisions are not tracked).
#[derive(Debug, Default)]
pub struct RegexCache {
    map: HashMap<u64, Cached>,
}

/// Largest number of cached texts before the cache starts over.
const CACHE_CAPACITY: usize = 100_000;

impl RegexCache {
    /// Number of cached texts.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// Everything a pipeline run needs besides the texts.
pub struct RegexRun<'a> {
    /// The rules.
    pub rules: &'a RegexRules,
    /// The JavaScript engine.
    pub js: &'a JsRegex,
    /// Macro context for `findRegex` substitution and replacement macros.
    pub ctx: &'a MacroContext,
}

impl RegexRun<'_> {
    /// Runs every rule of `stage` over `targets` in place.
    pub fn apply(
        &self,
        stage: Stage,
        targets: &mut [RegexTarget],
        macros: &mut MacroState,
        mut cache: Option<&mut RegexCache>,
        report: &mut RegexReport,
    ) {
        let active: Vec<usize> = (0..self.rules.rules.len())
            .filter(|i| stage.runs(self.rules.rules[*i].entry.timing))
            .collect();
        if active.is_empty() || targets.is_empty() {
            return;
        }
        let cacheable = !self.rules.any_macro_replacement;
        let mut keys = vec![0u64; targets.len()];
        let mut misses = Vec::new();
        for (i, target) in targets.iter_mut().enumerate() {
            if !cacheable {
                misses.push(i);
                continue;
            }
            let mut hasher = DefaultHasher::new();
            // Depth is part of the key only when some rule is depth-bounded, so a message
            // keeps its cached result while newer messages push it deeper.
            let depth = if self.rules.depth_sensitive {
                target.depth
            } else {
                None
            };
            (self.rules.fingerprint, stage, target.placement, depth).hash(&mut hasher);
            target.text.hash(&mut hasher);
            keys[i] = hasher.finish();
            match cache.as_deref().and_then(|c| c.map.get(&keys[i])) {
                Some(hit) => {
                    target.text.clone_from(&hit.text);
                    for (rule, count) in &hit.applied {
                        report
                            .applied
                            .push(self.applied(*rule, &target.label, *count));
                    }
                }
                None => misses.push(i),
            }
        }
        let mut applied: Vec<Vec<(usize, u32)>> = vec![Vec::new(); targets.len()];
        for rule_index in active {
            let rule = &self.rules.rules[rule_index];
            let selected: Vec<usize> = misses
                .iter()
                .copied()
                .filter(|i| {
                    let t = &targets[*i];
                    rule.entry.placements.contains(&t.placement) && rule.depth_allows(t.depth)
                })
                .collect();
            if selected.is_empty() {
                continue;
            }
            let (find, failures) = rendered_find(&rule.entry, macros, self.ctx);
            for message in failures {
                report
                    .issues
                    .push(self.template_issue(rule_index, "findRegex", &message));
            }
            if find.is_empty() {
                continue;
            }
            let pattern = parse_find_regex(&find);
            // EJS in the replacement runs once per rule and batch, before the rule; its
            // writes count only when the rule replaced something.
            let mut replacement = macros.render_template_only(&rule.entry.replace_string, self.ctx);
            for d in &replacement.diagnostics {
                report
                    .issues
                    .push(self.template_issue(rule_index, "replaceString", &d.message));
            }
            let mark = has_macros(&replacement.text);
            let request = ReplaceRequest {
                source: pattern.source,
                flags: pattern.flags,
                replacement: replacement.text.clone(),
                trims: rule
                    .entry
                    .trim_strings
                    .iter()
                    .map(|t| macros.render(t, self.ctx).text)
                    .filter(|t| !t.is_empty())
                    .collect(),
                mark,
                inputs: selected.iter().map(|i| targets[*i].text.clone()).collect(),
            };
            match self.js.replace(request) {
                Ok(outcome) => {
                    if outcome.counts.iter().any(|c| *c > 0) {
                        macros.commit(&mut replacement);
                    }
                    for ((index, output), count) in
                        selected.iter().zip(outcome.outputs).zip(outcome.counts)
                    {
                        if count == 0 {
                            continue;
                        }
                        targets[*index].text = if mark {
                            expand_marked(&output, macros, self.ctx)
                        } else {
                            output
                        };
                        applied[*index].push((rule_index, count));
                    }
                }
                Err(error) => report.issues.push(self.issue(rule_index, &error)),
            }
        }
        for index in misses {
            for (rule, count) in &applied[index] {
                report
                    .applied
                    .push(self.applied(*rule, &targets[index].label, *count));
            }
            if cacheable && let Some(cache) = cache.as_deref_mut() {
                if cache.map.len() >= CACHE_CAPACITY {
                    cache.map.clear();
                }
                cache.map.insert(
                    keys[index],
                    Cached {
                        text: targets[index].text.clone(),
                        applied: std::mem::take(&mut applied[index]),
                    },
                );
            }
        }
        report.issues.dedup();
    }

    fn applied(&self, rule: usize, target: &str, replacements: u32) -> RegexApplied {
        let rule = &self.rules.rules[rule];
        RegexApplied {
            regex_id: rule.regex_id,
            identifier: rule.entry.identifier.clone(),
            name: rule.entry.name.clone(),
            target: target.to_owned(),
            replacements,
        }
    }

    /// A rule string whose EJS template fell back (it was used as written).
    fn template_issue(&self, rule: usize, field: &str, message: &str) -> RegexIssue {
        let r = &self.rules.rules[rule];
        let group = r
            .regex_id
            .map(|id| id.to_string())
            .unwrap_or_else(|| r.group.clone());
        RegexIssue {
            regex_id: r.regex_id,
            identifier: r.entry.identifier.clone(),
            name: r.entry.name.clone(),
            location: format!("regex[{group}].entries[{}].{field}", r.entry.identifier),
            error: message.to_owned(),
        }
    }

    fn issue(&self, rule: usize, error: &JsError) -> RegexIssue {
        let r = &self.rules.rules[rule];
        let group = r
            .regex_id
            .map(|id| id.to_string())
            .unwrap_or_else(|| r.group.clone());
        RegexIssue {
            regex_id: r.regex_id,
            identifier: r.entry.identifier.clone(),
            name: r.entry.name.clone(),
            location: format!("regex[{group}].entries[{}].findRegex", r.entry.identifier),
            error: match error {
                JsError::Syntax(msg) => format!(
                    "{msg}; fix the pattern (JavaScript syntax, optionally /pattern/flags). The rule was skipped"
                ),
                other => format!("{other}; the rule was skipped"),
            },
        }
    }
}

/// The rule's `findRegex` after its `substitution` mode (EJS and macros rendered verbatim,
/// escaped, or not at all — `none` keeps the pattern literal, templates included), with the
/// messages of EJS templates that fell back; the rule tester uses it too, so it tests
/// exactly the pattern a run uses.
pub(super) fn rendered_find(
    entry: &RegexEntry,
    macros: &mut MacroState,
    ctx: &MacroContext,
) -> (String, Vec<String>) {
    let rendered = match entry.substitution {
        Substitution::None => return (entry.find_regex.clone(), Vec::new()),
        Substitution::Raw => macros.render(&entry.find_regex, ctx),
        Substitution::Escaped => {
            let options = RenderOptions {
                regex_escape_results: true,
                ..RenderOptions::default()
            };
            macros.render_with(&entry.find_regex, ctx, options)
        }
    };
    let failures = rendered
        .diagnostics
        .iter()
        .filter(|d| d.message.starts_with("EJS"))
        .map(|d| d.message.clone())
        .collect();
    (rendered.text, failures)
}

/// Expands macros inside each marked replacement (committing their side effects: the
/// replacement is part of the text being used) and removes the marks.
fn expand_marked(text: &str, macros: &mut MacroState, ctx: &MacroContext) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find(MARK_OPEN) {
        out.push_str(&rest[..open]);
        let after = &rest[open + MARK_OPEN.len_utf8()..];
        let close = after.find(MARK_CLOSE).unwrap_or(after.len());
        // Macros only: the replacement's template already ran, and captured chat text is
        // never a template.
        let mut rendered = macros.render_with(&after[..close], ctx, MACROS_ONLY);
        macros.commit(&mut rendered);
        out.push_str(&rendered.text);
        rest = after.get(close + MARK_CLOSE.len_utf8()..).unwrap_or("");
    }
    out.push_str(rest);
    out
}
