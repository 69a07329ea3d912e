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
    args: LoreArgs<'_>,
) -> LoreParts {
    let LoreArgs {
        input,
        options,
        speaker,
        counter,
        index,
        max_prompt,
        ..
    } = args;
    let mut timed = input.timed.clone();
    let mut activated: Vec<ActivatedEntry> = Vec::new();
    let mut skipped = Vec::new();
    if let Some(index) = index {
        match index {
            Ok(index) => {
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
                    index: &index,
                    texts: &texts,
                    clock: input.messages.len() as u64,
                    ctx: &b.ctx,
                    js: b.js,
                    scope: EntryScope {
                        character: speaker.map(|c| c.name.as_str()),
                        trigger: match options.generation {
                            GenerationType::Normal => "normal",
                            GenerationType::Continue => "continue",
                            GenerationType::Impersonate => "impersonate",
                        },
                    },
                };
                let lorebook_options = LorebookOptions {
                    seed: options.seed,
                    budget_tokens: Some(
                        max_prompt * options.lorebook_budget_percent as usize / 100,
                    ),
                    recursive: options.recursive_lorebooks,
                    ..LorebookOptions::default()
                };
                let count = |t: &str| counter.count(t);
                let activation = activate(
                    &activation_input,
                    &mut timed,
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
                activated = activation.activated;
                skipped = activation.skipped;
            }
            Err(e) => b.diagnostics.push(Diagnostic {
                location: "lorebooks".into(),
                message: format!(
                    "the keyword index could not be built ({e}); lorebooks were skipped"
                ),
                text: None,
                offset: None,
            }),
        }
    }
    let mut lore_targets: Vec<RegexTarget> = activated
        .iter()
        .map(|a| RegexTarget {
            text: a.content.clone(),
            placement: RegexPlacement::Lorebook,
            depth: (a.injection_position == LorebookPosition::AtDepth)
                .then_some(i64::from(a.injection_depth)),
            label: format!(
                "lorebook:{}/{}",
                a.lorebook_id.map(|id| id.to_string()).unwrap_or_default(),
                a.identifier
            ),
        })
        .collect();
    b.regex(Stage::Send, &mut lore_targets);
    let mut before = Vec::new();
    let mut after = Vec::new();
    let mut examples_top = Vec::new();
    let mut examples_bottom = Vec::new();
    let mut lore_depth: Vec<Injection> = Vec::new();
    for (entry, target) in activated.iter().zip(&lore_targets) {
        if target.text.trim().is_empty() {
            continue;
        }
        if let Some(name) = &entry.outlet {
            // SillyTavern: an outlet entry is not injected; `{{outlet::name}}` shows it, and
            // one without a name is dropped.
            if name.is_empty() {
                continue;
            }
            let slot = b.ctx.outlets.entry(name.clone()).or_default();
            if !slot.is_empty() {
                slot.push('\n');
            }
            slot.push_str(&target.text);
            continue;
        }
        let text = wrap(args.wrapper, &target.text);
        match entry.injection_position {
            LorebookPosition::LorebookBefore => before.push(text),
            LorebookPosition::LorebookAfter => after.push(text),
            LorebookPosition::TopOfExampleMessages => examples_top.push(text),
            LorebookPosition::BottomOfExampleMessages => examples_bottom.push(text),
            LorebookPosition::AtDepth => lore_depth.push(Injection {
                depth: entry.injection_depth as usize,
                role: entry.injection_role,
                text,
                source: target.label.clone(),
            }),
        }
    }

    LoreParts {
        timed,
        activated,
        skipped,
        before,
        after,
        examples_top,
        examples_bottom,
        depth: lore_depth,
    }
}
