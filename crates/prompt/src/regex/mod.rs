//! Regex rules with JavaScript semantics: pattern parsing, the QuickJS worker and the
//! stage/placement pipeline.

mod js;
mod pattern;
mod pipeline;
mod tester;
mod views;

#[cfg(test)]
mod tests;

pub use js::{JsError, JsLimits, JsRegex, ReplaceOutcome, ReplaceRequest};
pub use pattern::{JsPattern, parse_find_regex, parse_regex_key};
pub use pipeline::{
    RegexApplied, RegexCache, RegexIssue, RegexReport, RegexRule, RegexRules, RegexRun,
    RegexTarget, Stage,
};
pub use tester::{RuleMatch, RuleSample, RuleTest, test_rule};
pub use views::{MessageViews, message_views, persist_rewrite};
