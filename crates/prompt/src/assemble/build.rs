//! The assembly algorithm.
//!
//! 1. Visible (non-hidden) messages get their model copy (`send`-timing regex rules), in
//!    batches, newest first, only as far as they are needed.
//! 2. Lorebook activation scans the newest copies (`Name: text`) and yields entries per
//!    position; each entry's content passes the `lorebook` regex placement and is wrapped
//!    by `basicPrompts.lorebook` (`{0}`).
//! 3. Active and enabled preset entries are walked in array order: built-ins and custom
//!    entries render their content (macros), markers are filled (`worldInfoBefore/After`,
//!    `personaDescription`, `charDescription`, `charPersonality`, `scenario`,
//!    `dialogueExamples`, `chatHistory`); `absolute` entries become in-chat injections at
//!    their depth (0 = after the last message).
//! 4. Budget: everything except history and examples is pinned; history is filled newest
//!    to oldest and stops at the first message that does not fit; examples then fill whole
//!    blocks while they fit.
//! 5. Injections are placed into the included history, then the converter runs.

use tavo_model::{Message, Preset, RegexPlacement, Role};

use super::budget::{Fit, fit, flatten};
use super::context::macro_context;
use super::explain::{Diagnostic, Explain, TokenReport};
use super::injections::group_injections;
use super::input::{GenerationType, PromptInput, PromptOptions, PromptOutput};
use super::layout::{add_memory, around_history, preset_parts};
use super::lore::{LoreArgs, lorebook_parts};
use super::message::convert;
use super::tokens::{REPLY_PRIMING, TokenCounter};
use crate::ejs::Templates;
use crate::engine::PromptEngine;
use crate::lorebook::Gate;
use crate::macros::{MacroContext, MacroDiagnostic, MacroState, Rendered};
use crate::regex::{JsRegex, RegexReport, RegexRules, RegexRun, RegexTarget, Stage};

/// Messages whose model copies are computed per regex batch.
pub(super) const COPY_BATCH: usize = 64;

/// Model copies of the visible messages, computed lazily newest first.
pub(super) struct Copies<'a> {
    pub(super) visible: Vec<&'a Message>,
    pub(super) texts: Vec<Option<String>>,
    /// For speaker names, computed only for the messages that are read (a 100,000-message
    /// chat must not cost 100,000 name strings per generation).
    pub(super) characters: &'a [tavo_model::Character],
    pub(super) user: String,
    pub(super) char: String,
}

impl<'a> Copies<'a> {
    /// No copies yet of the visible (non-hidden) messages.
    fn new(input: &PromptInput<'a>, b: &Builder<'_>) -> Self {
        let visible: Vec<&Message> = input.messages.iter().filter(|m| !m.hidden).collect();
        Copies {
            texts: vec![None; visible.len()],
            visible,
            characters: input.characters,
            user: b.ctx.user.clone(),
            char: b.ctx.char.clone(),
        }
    }

    /// The speaker's name of visible message `i`: the message's own name, else the persona
    /// (user), the character it belongs to (assistant) or `System`.
    pub(super) fn name(&self, i: usize) -> &str {
        let message = self.visible[i];
        if let Some(name) = message.name.as_deref().filter(|n| !n.trim().is_empty()) {
            return name;
        }
        match message.role {
            Role::User => &self.user,
            Role::Assistant => message
                .character_id
                .and_then(|id| self.characters.iter().find(|c| c.id == Some(id)))
                .map_or(self.char.as_str(), |c| c.display_name()),
            Role::System => "System",
        }
    }
}

pub(super) struct Builder<'e> {
    pub(super) engine: &'e PromptEngine,

    pub(super) ctx: MacroContext,
    pub(super) macros: MacroState,
    pub(super) rules: RegexRules,
    pub(super) js: Option<&'static JsRegex>,
    pub(super) report: RegexReport,
    pub(super) diagnostics: Vec<Diagnostic>,
    pub(super) group: bool,
}

impl<'e> Builder<'e> {
    /// The macro context and state of this build, its regex rules, and the JavaScript regex
    /// engine when rules or regex keys need it.
    fn new(
        engine: &'e PromptEngine,
        input: &PromptInput<'_>,
        options: &PromptOptions,
        speaker: Option<&tavo_model::Character>,
        group: bool,
        any_regex_keys: bool,
    ) -> Self {
        let mut b = Builder {
            engine,
            ctx: macro_context(input, options, speaker, group),
            macros: MacroState::new(input.variables.clone(), options.seed),
            rules: RegexRules::from_groups(input.regex_groups),
            js: None,
            report: RegexReport::default(),
            diagnostics: Vec::new(),
            group,
        };
        if !options.ejs {
            b.macros.set_templates(Templates::off());
        }
        if !b.rules.is_empty() || any_regex_keys {
            match JsRegex::shared() {
                Ok(js) => b.js = Some(js),
                Err(e) => b.diagnostics.push(Diagnostic {
                    location: "regex".into(),
                    message: format!("{e}; regex rules and regex keys were skipped"),
                    text: None,
                    offset: None,
                }),
            }
        }
        b
    }

    pub(super) fn note(&mut self, location: &str, rendered: &Rendered) {
        self.diagnostics
            .extend(rendered.diagnostics.iter().map(|d| macro_diag(location, d)));
    }

    /// Renders text that is used whenever its part is included.
    pub(super) fn render(&mut self, location: &str, text: &str) -> String {
        let rendered = self.macros.render_used(text, &self.ctx);
        self.note(location, &rendered);
        rendered.text
    }

    pub(super) fn render_override(&mut self, location: &str, text: &str, original: &str) -> String {
        let mut ctx = self.ctx.clone();
        ctx.original = Some(original.to_owned());
        let rendered = self.macros.render_used(text, &ctx);
        self.note(location, &rendered);
        rendered.text
    }

    pub(super) fn regex(&mut self, stage: Stage, targets: &mut [RegexTarget]) {
        let Some(js) = self.js else { return };
        if self.rules.is_empty() {
            return;
        }
        let run = RegexRun {
            rules: &self.rules,
            js,
            ctx: &self.ctx,
        };
        let mut cache = self.engine.regex_cache.lock().ok();
        run.apply(
            stage,
            targets,
            &mut self.macros,
            cache.as_deref_mut(),
            &mut self.report,
        );
    }

    /// Ensures model copies exist for the newest `count` visible messages.
    pub(super) fn ensure_copies(&mut self, copies: &mut Copies<'_>, count: usize) {
        let len = copies.visible.len();
        let count = count.min(len);
        let mut missing: Vec<usize> = (len - count..len)
            .rev()
            .filter(|i| copies.texts[*i].is_none())
            .collect();
        while !missing.is_empty() {
            let batch: Vec<usize> = missing
                .drain(..missing.len().min(COPY_BATCH.max(count)))
                .collect();
            let mut targets = Vec::new();
            let mut slots = Vec::new();
            for i in batch {
                let message = copies.visible[i];
                let placement = match message.role {
                    Role::User => Some(RegexPlacement::User),
                    Role::Assistant => Some(RegexPlacement::Char),
                    Role::System => None,
                };
                match placement {
                    Some(placement) => {
                        targets.push(RegexTarget {
                            text: message.content.clone(),
                            placement,
                            depth: Some((len - 1 - i) as i64),
                            label: message
                                .id
                                .map(|id| format!("message:{id}"))
                                .unwrap_or_else(|| format!("message#{i}")),
                        });
                        slots.push(i);
                    }
                    None => copies.texts[i] = Some(message.content.clone()),
                }
            }
            self.regex(Stage::Send, &mut targets);
            for (slot, target) in slots.into_iter().zip(targets) {
                copies.texts[slot] = Some(target.text.replace('\r', ""));
            }
        }
    }
}

pub(super) fn macro_diag(location: &str, d: &MacroDiagnostic) -> Diagnostic {
    Diagnostic {
        location: d.field.clone().unwrap_or_else(|| location.to_owned()),
        message: d.message.clone(),
        text: Some(d.text.clone()),
        offset: Some(d.offset),
    }
}

fn default_preset() -> Preset {
    Preset {
        name: "Default".into(),
        entries: Preset::default_entries(),
        ..Preset::default()
    }
}

pub(super) fn wrap(template: &str, content: &str) -> String {
    if template.contains("{0}") {
        template.replace("{0}", content)
    } else {
        content.to_owned()
    }
}

/// Assembles the prompt counting with `counter`; the flag says whether the budget left
/// anything out (history, examples, lorebook entries), which an upper-bound count may do
/// where the exact one would not.
pub(crate) fn assemble(
    engine: &PromptEngine,
    input: &PromptInput<'_>,
    options: &PromptOptions,
    counter: &TokenCounter,
) -> (PromptOutput, bool) {
    let fallback;
    let preset = match input.preset {
        Some(p) => p,
        None => {
            fallback = default_preset();
            &fallback
        }
    };
    let bp = &preset.basic_prompts;
    let group = input.characters.len() > 1;
    let speaker = input
        .characters
        .get(input.speaker)
        .or(input.characters.first());
    // The keyword index is cached across generations; it knows whether any key is a regex.
    let index = (!input.lorebooks.is_empty()).then(|| engine.lorebook_index(input.lorebooks));
    let any_regex_keys = matches!(&index, Some(Ok(index)) if index.any_regex);
    let mut b = Builder::new(engine, input, options, speaker, group, any_regex_keys);
    let max_prompt = options.max_prompt_tokens();

    // 1. Visible messages and their copies.
    let mut copies = Copies::new(input, &b);

    // 2. Lorebooks.
    let lore = lorebook_parts(
        &mut b,
        &mut copies,
        LoreArgs {
            input,
            options,
            speaker,
            counter,
            index,
            max_prompt,
            wrapper: &bp.lorebook,
        },
    );

    // 3. Preset entries, memory, and the pinned pieces around the history.
    let continued: Option<&Message> = match options.generation {
        GenerationType::Continue => copies.visible.last().copied(),
        _ => None,
    };
    let history_len = copies.visible.len() - usize::from(continued.is_some());
    let speaker_card = speaker.cloned().unwrap_or_default();
    let mut layout = preset_parts(&mut b, preset, &speaker_card, &lore.before, &lore.after);
    layout.injections.extend(lore.depth);
    add_memory(input.memory, &mut layout.parts);
    let around = around_history(
        &mut b,
        &mut copies,
        bp,
        layout.has_history,
        options.generation,
        continued,
    );
    let injections = group_injections(layout.injections);

    // 4. Budget.
    let fitted = fit(
        &mut b,
        &mut copies,
        counter,
        Fit {
            parts: &layout.parts,
            around: &around,
            injections: &injections,
            has_history: layout.has_history,
            history_len,
            max_prompt,
            examples_top: &lore.examples_top,
            examples_bottom: &lore.examples_bottom,
            example_start: &bp.example_message_start,
        },
    );

    // 5. Flatten.
    let cut = fitted.cut
        || (layout.has_history && fitted.history.len() < history_len)
        || lore.skipped.iter().any(|s| s.gate == Gate::Budget);
    let history_included = fitted.history.len();
    let (messages, token_parts) = flatten(
        layout.parts,
        fitted,
        around,
        &injections,
        layout.has_history,
        counter,
    );
    let messages = convert(messages, options.converter, &bp.chat_start);
    let total = messages.iter().map(|m| counter.message(m)).sum::<usize>() + REPLY_PRIMING;
    let mut diagnostics = std::mem::take(&mut b.diagnostics);
    for issue in &b.report.issues {
        diagnostics.push(Diagnostic {
            location: issue.location.clone(),
            message: issue.error.clone(),
            text: None,
            offset: None,
        });
    }
    let variables_changed = b.macros.variables_changed();
    let explain = Explain {
        activated_entries: lore.activated,
        skipped_entries: lore.skipped,
        regex_applied: std::mem::take(&mut b.report.applied),
        tokens: TokenReport {
            total,
            budget: max_prompt,
            encoding: counter.encoding().to_owned(),
            estimated: counter.is_estimate(),
            parts: token_parts,
            history_included,
            history_available: history_len,
        },
        diagnostics,
        message_sources: messages.iter().map(|m| m.sources.clone()).collect(),
    };
    let output = PromptOutput {
        messages,
        explain,
        variables: b.macros.into_variables(),
        variables_changed,
        timed: lore.timed,
    };
    (output, cut)
}

/// Chat messages keep their role; system messages stay system.
pub(super) fn chat_role(role: Role) -> Role {
    role
}

/// A history message as the model sees it: the model copy, then the description of the
/// image it carries (image sending: `imageDescription.injected`, written by the engine), prefixed
/// by the speaker's name for other characters' messages in group chats.
pub(super) fn history_text(b: &Builder<'_>, copies: &Copies<'_>, i: usize) -> String {
    let mut text = copies.texts[i]
        .clone()
        .unwrap_or_else(|| copies.visible[i].content.clone());
    if let Some(described) = copies.visible[i]
        .extra
        .get("imageDescription")
        .and_then(|d| d.get("injected"))
        .and_then(serde_json::Value::as_str)
        .filter(|t| !t.trim().is_empty())
    {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(described);
    }
    if b.group && copies.visible[i].role == Role::Assistant {
        format!("{}: {}", copies.name(i), text)
    } else {
        text
    }
}
