//! The stored rewrite of a message: the chat's `receive` / `editAndReceive` regex rules, run
//! when a message is written, never when it is shown or sent.
//!
//! Timings (seed 002 regex section, SillyTavern's `getRegexedString`):
//! - [`WriteTiming::Receive`]: a new message is stored — the user's message as it is sent, a
//!   reply as it ends, a message appended by a tool or a command. `receive` and
//!   `editAndReceive` rules run ("plain" ST scripts, neither `markdownOnly` nor `promptOnly`).
//! - [`WriteTiming::Edit`]: an existing message's text is changed. Only `editAndReceive` rules
//!   run (ST: `isEdit` requires `runOnEdit`).
//!
//! Depth bounds do not apply: a received message is the newest, and an edit rewrites the
//! message wherever it is. Side-effect macros in replacements (`{{setvar}}`) take effect: the
//! caller stores [`StoredRewrite::variables`] with the message.

use tavo_model::{Message, RegexGroup};

use crate::macros::{MacroContext, MacroState, Variables};
use crate::regex::{self, RegexApplied, RegexIssue, Stage};

/// When a message is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteTiming {
    /// A new message is stored (`receive` and `editAndReceive` rules).
    Receive,
    /// An existing message's text changes (`editAndReceive` rules only).
    Edit,
}

impl WriteTiming {
    fn stage(self) -> Stage {
        match self {
            WriteTiming::Receive => Stage::Receive,
            WriteTiming::Edit => Stage::Edit,
        }
    }
}

/// What the stored rewrite did.
#[derive(Debug, Clone)]
pub struct StoredRewrite {
    /// The message to store (content and reasoning rewritten).
    pub message: Message,
    /// Rules that changed the text.
    pub applied: Vec<RegexApplied>,
    /// Rules skipped because they failed; the message is stored without them.
    pub issues: Vec<RegexIssue>,
    /// The variables after the replacements' side-effect macros, when they changed.
    pub variables: Option<Variables>,
}

/// Runs the `timing` rules of `groups` (in binding order) over `message`'s content and
/// reasoning. `ctx` names `{{user}}` and `{{char}}`; `variables` are the chat's and the
/// global ones before the write. Never fails: a bad rule is skipped and reported.
pub fn rewrite_stored(
    message: &Message,
    groups: &[RegexGroup],
    timing: WriteTiming,
    ctx: &MacroContext,
    variables: &Variables,
) -> StoredRewrite {
    let unchanged = |issues| StoredRewrite {
        message: message.clone(),
        applied: Vec::new(),
        issues,
        variables: None,
    };
    let rules = regex::RegexRules::from_groups(groups);
    let stage = timing.stage();
    if !rules.rules().iter().any(|r| stage.runs(r.entry.timing)) {
        return unchanged(Vec::new());
    }
    let js = match regex::JsRegex::shared() {
        Ok(js) => js,
        Err(e) => {
            return unchanged(vec![RegexIssue {
                regex_id: None,
                identifier: String::new(),
                name: String::new(),
                location: "regex".into(),
                error: format!("{e}; the message was stored without regex rewrites"),
            }]);
        }
    };
    let run = regex::RegexRun {
        rules: &rules,
        js,
        ctx,
    };
    let mut state = MacroState::new(variables.clone(), 0);
    let mut report = regex::RegexReport::default();
    let (content, reasoning) =
        regex::persist_rewrite(&run, stage, message, &mut state, &mut report);
    let mut out = message.clone();
    out.content = content;
    out.reasoning = reasoning;
    let variables = state.variables_changed().then(|| state.into_variables());
    StoredRewrite {
        message: out,
        applied: report.applied,
        issues: report.issues,
        variables,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tavo_model::{RegexEntry, RegexPlacement, RegexTiming, Role};

    fn group(timing: RegexTiming, find: &str, replace: &str) -> RegexGroup {
        let entry = RegexEntry {
            name: "r".into(),
            identifier: "r1".into(),
            find_regex: find.into(),
            replace_string: replace.into(),
            placements: vec![RegexPlacement::User, RegexPlacement::Char],
            timing,
            enabled: true,
            ..RegexEntry::default()
        };
        RegexGroup {
            name: "g".into(),
            entries: vec![entry],
            ..RegexGroup::default()
        }
    }

    fn ctx() -> MacroContext {
        MacroContext::new("Ann", "Bob", crate::local_now())
    }

    #[test]
    fn receive_runs_receive_and_edit_and_receive_rules_edit_only_the_latter() {
        let m = Message::new(Role::Assistant, "a cat and a dog");
        let receive = [group(RegexTiming::Receive, "/cat/g", "CAT")];
        let both = [group(RegexTiming::EditAndReceive, "/dog/g", "DOG")];
        let vars = Variables::default();
        let on = |groups: &[RegexGroup], t| rewrite_stored(&m, groups, t, &ctx(), &vars);
        assert_eq!(
            on(&receive, WriteTiming::Receive).message.content,
            "a CAT and a dog"
        );
        assert_eq!(
            on(&receive, WriteTiming::Edit).message.content,
            "a cat and a dog"
        );
        assert_eq!(
            on(&both, WriteTiming::Receive).message.content,
            "a cat and a DOG"
        );
        assert_eq!(
            on(&both, WriteTiming::Edit).message.content,
            "a cat and a DOG"
        );
        let display = [group(RegexTiming::Display, "/cat/g", "CAT")];
        let out = on(&display, WriteTiming::Receive);
        assert_eq!(out.message.content, "a cat and a dog");
        assert!(out.applied.is_empty());
    }

    #[test]
    fn replacement_macros_see_the_names_and_write_variables() {
        let m = Message::new(Role::User, "gold 5");
        let groups = [group(
            RegexTiming::Receive,
            "/gold (\\d+)/",
            "{{user}} pays {{char}}{{setvar::gold::$1}}",
        )];
        let out = rewrite_stored(
            &m,
            &groups,
            WriteTiming::Receive,
            &ctx(),
            &Variables::default(),
        );
        assert_eq!(out.message.content, "Ann pays Bob");
        let vars = out
            .variables
            .unwrap_or_else(|| panic!("setvar must change the variables"));
        assert_eq!(vars.chat.get("gold"), Some(&serde_json::json!(5)));
    }
}
