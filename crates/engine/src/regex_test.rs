//! The regex editor's live tester: one rule on a sample text, run by the prompt crate's own
//! pipeline (`tavo_prompt::regex::test_rule`) on the process-wide JavaScript worker, so what
//! the editor shows is what a generation does. The server's `POST /api/regex/test` is a thin
//! door over [`test_rule`].

use chrono::Utc;
use tavo_model::RegexEntry;
use tavo_prompt::macros::MacroContext;
use tavo_prompt::regex::JsRegex;
pub use tavo_prompt::regex::{JsError, RuleMatch, RuleSample, RuleTest};

/// Runs `entry` on `sample`; `user` and `char` are the names `{{user}}` and `{{char}}` expand
/// to. Blocking (one round trip to the regex worker per step, each under its 500 ms deadline).
/// Fails only when the regex worker cannot start.
pub fn test_rule(
    entry: &RegexEntry,
    sample: &RuleSample<'_>,
    user: &str,
    char: &str,
) -> Result<RuleTest, JsError> {
    let js = JsRegex::shared()?;
    let ctx = MacroContext::new(user, char, Utc::now().fixed_offset());
    Ok(tavo_prompt::regex::test_rule(js, entry, sample, &ctx))
}
