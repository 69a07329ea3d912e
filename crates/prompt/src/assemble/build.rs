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

use tavo_model::{Message, Preset, PresetEntry, PresetInjectionPosition, RegexPlacement, Role};

use super::context::macro_context;
use super::examples::example_blocks;
use super::explain::{Diagnostic, Explain, PartTokens, TokenReport};
use super::injections::{Injection, group_injections, place_injections};
use super::input::{GenerationType, PromptInput, PromptOptions, PromptOutput};
use super::lore::{LoreArgs, lorebook_parts};
use super::message::{PromptMessage, convert};
use super::tokens::{REPLY_PRIMING, TokenCounter};
use crate::ejs::Templates;
use crate::engine::PromptEngine;
use crate::macros::{MacroContext, MacroDiagnostic, MacroState, Rendered};
use crate::regex::{JsRegex, RegexReport, RegexRules, RegexRun, RegexTarget, Stage};

/// Messages whose model copies are computed per regex batch.
const COPY_BATCH: usize = 64;

enum Part {
    Fixed {
        label: String,
        messages: Vec<PromptMessage>,
    },
    History,
    Examples,
}

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

impl Copies<'_> {
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

impl Builder<'_> {
    fn note(&mut self, location: &str, rendered: &Rendered) {
        self.diagnostics
            .extend(rendered.diagnostics.iter().map(|d| macro_diag(location, d)));
    }

    /// Renders text that is used whenever its part is included.
    fn render(&mut self, location: &str, text: &str) -> String {
        let rendered = self.macros.render_used(text, &self.ctx);
        self.note(location, &rendered);
        rendered.text
    }

    fn render_override(&mut self, location: &str, text: &str, original: &str) -> String {
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
    let ctx = macro_context(input, options, speaker, group);
    let rules = RegexRules::from_groups(input.regex_groups);
    let mut b = Builder {
        engine,

        ctx,
        macros: MacroState::new(input.variables.clone(), options.seed),
        rules,
        js: None,
        report: RegexReport::default(),
        diagnostics: Vec::new(),
        group,
    };
    if !options.ejs {
        b.macros.set_templates(Templates::off());
    }
    // The keyword index is cached across generations; it knows whether any key is a regex.
    let index = (!input.lorebooks.is_empty()).then(|| engine.lorebook_index(input.lorebooks));
    let any_regex_keys = matches!(&index, Some(Ok(index)) if index.any_regex);
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
    let max_prompt = options.max_prompt_tokens();

    // 1. Visible messages and their copies.
    let visible: Vec<&Message> = input.messages.iter().filter(|m| !m.hidden).collect();
    let mut copies = Copies {
        texts: vec![None; visible.len()],
        visible,
        characters: input.characters,
        user: b.ctx.user.clone(),
        char: b.ctx.char.clone(),
    };

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
    let timed = lore.timed;
    let activated = lore.activated;
    let skipped = lore.skipped;
    let before = lore.before;
    let after = lore.after;
    let examples_top = lore.examples_top;
    let examples_bottom = lore.examples_bottom;
    let lore_depth = lore.depth;
    let mut injections: Vec<Injection> = Vec::new();

    // 3. Preset entries.
    let continued: Option<&Message> = match options.generation {
        GenerationType::Continue => copies.visible.last().copied(),
        _ => None,
    };
    let history_len = copies.visible.len() - usize::from(continued.is_some());
    let mut parts: Vec<Part> = Vec::new();
    let mut has_history = false;
    let speaker_card = speaker.cloned().unwrap_or_default();
    for entry in preset.entries.iter().filter(|e| e.active && e.enabled) {
        let location = format!("preset.entries[{}].content", entry.identifier);
        let role = entry.effective_role();
        let text: Option<String> = match entry.identifier.as_str() {
            "chatHistory" => {
                parts.push(Part::History);
                has_history = true;
                None
            }
            "dialogueExamples" => {
                parts.push(Part::Examples);
                None
            }
            "main" => Some(overridable(
                &mut b,
                entry,
                &speaker_card.system_prompt,
                "character.systemPrompt",
                &location,
            )),
            "jailbreak" => Some(overridable(
                &mut b,
                entry,
                &speaker_card.post_history_instructions,
                "character.postHistoryInstructions",
                &location,
            )),
            "worldInfoBefore" => Some(before.join("\n")),
            "worldInfoAfter" => Some(after.join("\n")),
            "personaDescription" => {
                if b.ctx.persona.trim().is_empty() {
                    None
                } else {
                    Some(b.render("preset.basicPrompts.persona", &bp.persona))
                }
            }
            "charDescription" => {
                if b.ctx.description.trim().is_empty() {
                    None
                } else {
                    Some(b.render("preset.basicPrompts.description", &bp.description))
                }
            }
            "charPersonality" => {
                if b.ctx.personality.trim().is_empty() {
                    None
                } else {
                    Some(b.render("preset.basicPrompts.personality", &bp.personality))
                }
            }
            "scenario" => {
                if b.ctx.scenario().trim().is_empty() {
                    None
                } else {
                    Some(b.render("preset.basicPrompts.scenario", &bp.scenario))
                }
            }
            _ => Some(b.render(&location, entry.content.as_deref().unwrap_or_default())),
        };
        let Some(text) = text else { continue };
        if text.trim().is_empty() {
            continue;
        }
        if entry.injection_position == PresetInjectionPosition::Absolute {
            injections.push(Injection {
                depth: entry.injection_depth as usize,
                role,
                text,
            });
        } else {
            parts.push(Part::Fixed {
                label: entry.identifier.clone(),
                messages: vec![PromptMessage::new(role, text)],
            });
        }
    }
    injections.extend(lore_depth);
    if let Some(memory) = input.memory.filter(|m| m.enabled) {
        let items: Vec<&str> = memory
            .memories
            .iter()
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
            .collect();
        if !items.is_empty() {
            let text = format!(
                "[Long-term memory]\n{}",
                items
                    .iter()
                    .map(|s| format!("- {s}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            );
            let at = parts
                .iter()
                .position(|p| matches!(p, Part::History))
                .unwrap_or(parts.len());
            parts.insert(
                at,
                Part::Fixed {
                    label: "memory".into(),
                    messages: vec![PromptMessage::new(Role::System, text)],
                },
            );
        }
    }

    // Pinned pieces around the history.
    let chat_start = if has_history {
        let template = if group {
            &bp.group_chat_start
        } else {
            &bp.chat_start
        };
        let text = b.render("preset.basicPrompts.chatStart", template);
        (!text.trim().is_empty()).then(|| PromptMessage::new(Role::System, text))
    } else {
        None
    };
    let group_nudge = if has_history && group && options.generation != GenerationType::Impersonate {
        let text = b.render("preset.basicPrompts.groupNudge", &bp.group_nudge);
        (!text.trim().is_empty()).then(|| PromptMessage::new(Role::System, text))
    } else {
        None
    };
    let mut tail: Vec<(String, PromptMessage)> = Vec::new();
    if let Some(last) = continued {
        b.ensure_copies(&mut copies, 1);
        let i = copies.visible.len() - 1;
        let text = history_text(&b, &copies, i);
        tail.push((
            "continuedMessage".into(),
            PromptMessage::new(chat_role(last.role), text),
        ));
        let mut ctx = b.ctx.clone();
        ctx.last_chat_message = Some(last.content.clone());
        let rendered = b.macros.render_used(&bp.continue_nudge, &ctx);
        b.note("preset.basicPrompts.continueNudge", &rendered);
        if !rendered.text.trim().is_empty() {
            tail.push((
                "continueNudge".into(),
                PromptMessage::new(Role::System, rendered.text),
            ));
        }
    }
    if options.generation == GenerationType::Impersonate {
        let text = b.render("preset.basicPrompts.impersonation", &bp.impersonation);
        if !text.trim().is_empty() {
            tail.push((
                "impersonation".into(),
                PromptMessage::new(Role::System, text),
            ));
        }
    }
    let grouped_injections = group_injections(injections);

    // 4. Budget.
    let mut pinned = REPLY_PRIMING;
    for part in &parts {
        if let Part::Fixed { messages, .. } = part {
            pinned += messages.iter().map(|m| counter.message(m)).sum::<usize>();
        }
    }
    pinned += chat_start
        .iter()
        .chain(&group_nudge)
        .map(|m| counter.message(m))
        .sum::<usize>();
    pinned += tail.iter().map(|(_, m)| counter.message(m)).sum::<usize>();
    let injection_tokens: usize = grouped_injections
        .iter()
        .map(|(_, m)| counter.message(m))
        .sum();
    pinned += injection_tokens;
    let mut cut = pinned > max_prompt;
    if pinned > max_prompt {
        b.diagnostics.push(Diagnostic {
            location: "preset".into(),
            message: format!(
                "the pinned parts of the prompt need {pinned} tokens but the budget is {max_prompt}; history and examples were left out. Raise the context size or shorten the preset"
            ),
            text: None,
            offset: None,
        });
    }
    let mut remaining = max_prompt.saturating_sub(pinned);
    let mut history: Vec<PromptMessage> = Vec::new();
    if has_history {
        let mut k = 0;
        while k < history_len {
            let i = history_len - 1 - k;
            if copies.texts[i].is_none() {
                let want = (copies.visible.len() - i).max(k + COPY_BATCH);
                b.ensure_copies(&mut copies, want);
            }
            let message = PromptMessage::new(
                chat_role(copies.visible[i].role),
                history_text(&b, &copies, i),
            );
            let cost = counter.message(&message);
            if cost > remaining {
                break;
            }
            remaining -= cost;
            history.push(message);
            k += 1;
        }
        history.reverse();
    }
    let history_tokens: usize = history.iter().map(|m| counter.message(m)).sum();
    let included = history.len();
    let mut example_messages: Vec<PromptMessage> = Vec::new();
    if parts.iter().any(|p| matches!(p, Part::Examples)) {
        let rendered = b.macros.render_used(&b.ctx.mes_examples_raw, &b.ctx);
        b.note("character.mesExample", &rendered);
        let (user, char) = (b.ctx.user.clone(), b.ctx.char.clone());
        let mut blocks = Vec::new();
        for text in &examples_top {
            blocks.extend(example_blocks(
                text,
                &user,
                &char,
                &bp.example_message_start,
            ));
        }
        blocks.extend(example_blocks(
            &rendered.text,
            &user,
            &char,
            &bp.example_message_start,
        ));
        for text in &examples_bottom {
            blocks.extend(example_blocks(
                text,
                &user,
                &char,
                &bp.example_message_start,
            ));
        }
        for block in blocks {
            let cost: usize = block.iter().map(|m| counter.message(m)).sum();
            if cost > remaining {
                cut = true;
                break;
            }
            remaining -= cost;
            example_messages.extend(block);
        }
    }

    // 5. Flatten.
    let mut messages = Vec::new();
    let mut token_parts = Vec::new();
    for part in parts {
        match part {
            Part::Fixed {
                label,
                messages: ms,
            } => {
                token_parts.push(PartTokens {
                    part: label,
                    tokens: ms.iter().map(|m| counter.message(m)).sum(),
                });
                messages.extend(ms);
            }
            Part::Examples => {
                if !example_messages.is_empty() {
                    token_parts.push(PartTokens {
                        part: "dialogueExamples".into(),
                        tokens: example_messages.iter().map(|m| counter.message(m)).sum(),
                    });
                    messages.append(&mut example_messages);
                }
            }
            Part::History => {
                let start_tokens: usize = chat_start
                    .iter()
                    .chain(&group_nudge)
                    .map(|m| counter.message(m))
                    .sum();
                token_parts.push(PartTokens {
                    part: "chatHistory".into(),
                    tokens: history_tokens + start_tokens,
                });
                if injection_tokens > 0 {
                    token_parts.push(PartTokens {
                        part: "injections".into(),
                        tokens: injection_tokens,
                    });
                }
                messages.extend(chat_start.clone());
                place_injections(
                    &mut messages,
                    std::mem::take(&mut history),
                    &grouped_injections,
                );
                messages.extend(group_nudge.clone());
            }
        }
    }
    if !has_history && !grouped_injections.is_empty() {
        // Without a chatHistory marker, in-chat injections go at the end.
        token_parts.push(PartTokens {
            part: "injections".into(),
            tokens: injection_tokens,
        });
        messages.extend(grouped_injections.iter().map(|(_, m)| m.clone()));
    }
    for (label, message) in tail {
        token_parts.push(PartTokens {
            part: label,
            tokens: counter.message(&message),
        });
        messages.push(message);
    }
    messages.retain(|m| !m.content.trim().is_empty());
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
    cut |= has_history && included < history_len;
    cut |= skipped
        .iter()
        .any(|s| s.gate == crate::lorebook::Gate::Budget);
    let explain = Explain {
        activated_entries: activated,
        skipped_entries: skipped,
        regex_applied: std::mem::take(&mut b.report.applied),
        tokens: TokenReport {
            total,
            budget: max_prompt,
            encoding: counter.encoding().to_owned(),
            estimated: counter.is_estimate(),
            parts: token_parts,
            history_included: included,
            history_available: history_len,
        },
        diagnostics,
    };
    let output = PromptOutput {
        messages,
        explain,
        variables: b.macros.into_variables(),
        variables_changed,
        timed,
    };
    (output, cut)
}

/// Chat messages keep their role; system messages stay system.
fn chat_role(role: Role) -> Role {
    role
}

/// A history message as the model sees it: the model copy, prefixed by the speaker's name
/// for other characters' messages in group chats.
fn history_text(b: &Builder<'_>, copies: &Copies<'_>, i: usize) -> String {
    let text = copies.texts[i]
        .clone()
        .unwrap_or_else(|| copies.visible[i].content.clone());
    if b.group && copies.visible[i].role == Role::Assistant {
        format!("{}: {}", copies.name(i), text)
    } else {
        text
    }
}

/// Card overrides of `main` / `jailbreak`: the card text replaces the preset text, with
/// `{{original}}` standing for it, unless the entry forbids overrides.
fn overridable(
    b: &mut Builder<'_>,
    entry: &PresetEntry,
    card_text: &str,
    card_location: &str,
    location: &str,
) -> String {
    let original = entry.content.as_deref().unwrap_or_default();
    if !entry.forbid_overrides && !card_text.trim().is_empty() {
        let rendered_original = b.render(location, original);
        b.render_override(card_location, card_text, &rendered_original)
    } else {
        b.render(location, original)
    }
}
