//! Lorebook activation within a build: the scanned window of model copies, activation, the
//! `lorebook` regex placement over the entries' content, and the entries sorted into the
//! prompt's buckets (before/after, example top/bottom, at-depth injections) — or, for
//! SillyTavern outlet entries, into the `{{outlet::name}}` texts of the macro context.

use std::sync::Arc;

use tavo_model::{LorebookPosition, RegexPlacement};

use super::build::{Builder, Copies, macro_diag, wrap};
use super::explain::Diagnostic;
use super::injections::Injection;
use super::input::{GenerationType, PromptInput, PromptOptions};
use super::tokens::TokenCounter;
use crate::lorebook::{
    ActivatedEntry, ActivationInput, EntryScope, LorebookIndex, LorebookOptions, SkippedEntry,
    TimedEffects, activate,
};
use crate::regex::{RegexTarget, Stage};

/// What the lorebook step reads.
pub(super) struct LoreArgs<'a> {
    pub(super) input: &'a PromptInput<'a>,
    pub(super) options: &'a PromptOptions,
    pub(super) speaker: Option<&'a tavo_model::Character>,
    pub(super) counter: &'a TokenCounter,
    pub(super) index: Option<Result<Arc<LorebookIndex>, String>>,
    pub(super) max_prompt: usize,
    /// `basicPrompts.lorebook` (`{0}` stands for an entry's text).
    pub(super) wrapper: &'a str,
}

/// What the lorebook step gives the rest of the build.
pub(super) struct LoreParts {
    pub(super) timed: TimedEffects,
    pub(super) activated: Vec<ActivatedEntry>,
    pub(super) skipped: Vec<SkippedEntry>,
    pub(super) before: Vec<String>,
    pub(super) after: Vec<String>,
    pub(super) examples_top: Vec<String>,
    pub(super) examples_bottom: Vec<String>,
    pub(super) depth: Vec<Injection>,
}

/// Runs the lorebook step.
pub(super) fn lorebook_parts(
    b: &mut Builder<'_>,
    copies: &mut Copies<'_>,
    mut args: LoreArgs<'_>,
) -> LoreParts {
    let mut timed = args.input.timed.clone();
    let (activated, skipped) = match args.index.take() {
        None => (Vec::new(), Vec::new()),
        Some(Ok(index)) => scan(b, copies, &args, &index, &mut timed),
        Some(Err(e)) => {
            b.diagnostics.push(Diagnostic {
                location: "lorebooks".into(),
                message: format!(
                    "the keyword index could not be built ({e}); lorebooks were skipped"
                ),
                text: None,
                offset: None,
            });
            (Vec::new(), Vec::new())
        }
    };
    let mut lore_targets: Vec<RegexTarget> = activated.iter().map(send_target).collect();
    b.regex(Stage::Send, &mut lore_targets);
    let mut parts = LoreParts {
        timed,
        activated: Vec::new(),
        skipped,
        before: Vec::new(),
        after: Vec::new(),
        examples_top: Vec::new(),
        examples_bottom: Vec::new(),
        depth: Vec::new(),
    };
    for (entry, target) in activated.iter().zip(&lore_targets) {
        place(b, &mut parts, entry, target, args.wrapper);
    }
    parts.activated = activated;
    parts
}

/// Scans the newest visible messages (as `Name: text`, the model's copies) and activates the
/// entries; the activation's macro and keyword problems become diagnostics.
fn scan(
    b: &mut Builder<'_>,
    copies: &mut Copies<'_>,
    args: &LoreArgs<'_>,
    index: &LorebookIndex,
    timed: &mut TimedEffects,
) -> (Vec<ActivatedEntry>, Vec<SkippedEntry>) {
    let (input, options) = (args.input, args.options);
    let window = index.max_scan_depth.min(copies.visible.len());
    b.ensure_copies(copies, window);
    let len = copies.visible.len();
    let texts: Vec<String> = (0..window)
        .map(|k| {
            let i = len - 1 - k;
            format!(
                "{}: {}",
                copies.name(i),
                copies.texts[i].as_deref().unwrap_or_default()
            )
        })
        .collect();
    let activation_input = ActivationInput {
        books: input.lorebooks,
        index,
        texts: &texts,
        clock: input.messages.len() as u64,
        ctx: &b.ctx,
        js: b.js,
        scope: EntryScope {
            character: args.speaker.map(|c| c.name.as_str()),
            trigger: match options.generation {
                GenerationType::Normal => "normal",
                GenerationType::Continue => "continue",
                GenerationType::Impersonate => "impersonate",
            },
        },
    };
    let lorebook_options = LorebookOptions {
        seed: options.seed,
        budget_tokens: Some(args.max_prompt * options.lorebook_budget_percent as usize / 100),
        recursive: options.recursive_lorebooks,
        ..LorebookOptions::default()
    };
    let count = |t: &str| args.counter.count(t);
    let activation = activate(
        &activation_input,
        timed,
        &mut b.macros,
        &count,
        lorebook_options,
    );
    for (location, d) in &activation.diagnostics {
        b.diagnostics.push(macro_diag(location, d));
    }
    for error in &activation.key_errors {
        b.diagnostics.push(Diagnostic {
            location: "lorebooks.keywords".into(),
            message: error.clone(),
            text: None,
            offset: None,
        });
    }
    (activation.activated, activation.skipped)
}

/// An activated entry's content as the `lorebook` regex placement sees it.
fn send_target(a: &ActivatedEntry) -> RegexTarget {
    RegexTarget {
        text: a.content.clone(),
        placement: RegexPlacement::Lorebook,
        depth: (a.injection_position == LorebookPosition::AtDepth)
            .then_some(i64::from(a.injection_depth)),
        label: format!(
            "lorebook:{}/{}",
            a.lorebook_id.map(|id| id.to_string()).unwrap_or_default(),
            a.identifier
        ),
    }
}

/// Puts one entry's (rewritten) text into its bucket, or into its outlet.
fn place(
    b: &mut Builder<'_>,
    parts: &mut LoreParts,
    entry: &ActivatedEntry,
    target: &RegexTarget,
    wrapper: &str,
) {
    if target.text.trim().is_empty() {
        return;
    }
    if let Some(name) = &entry.outlet {
        // SillyTavern: an outlet entry is not injected; `{{outlet::name}}` shows it, and
        // one without a name is dropped.
        if name.is_empty() {
            return;
        }
        let slot = b.ctx.outlets.entry(name.clone()).or_default();
        if !slot.is_empty() {
            slot.push('\n');
        }
        slot.push_str(&target.text);
        return;
    }
    let text = wrap(wrapper, &target.text);
    match entry.injection_position {
        LorebookPosition::LorebookBefore => parts.before.push(text),
        LorebookPosition::LorebookAfter => parts.after.push(text),
        LorebookPosition::TopOfExampleMessages => parts.examples_top.push(text),
        LorebookPosition::BottomOfExampleMessages => parts.examples_bottom.push(text),
        LorebookPosition::AtDepth => parts.depth.push(Injection {
            depth: entry.injection_depth as usize,
            role: entry.injection_role,
            text,
            source: target.label.clone(),
        }),
    }
}
