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

use std::collections::BTreeMap;

use tavo_model::{
    Character, LorebookPosition, Message, Preset, PresetEntry, PresetInjectionPosition,
    RegexPlacement, Role,
};

use super::examples::example_blocks;
use super::explain::{Diagnostic, Explain, PartTokens, TokenReport};
use super::input::{GenerationType, PromptInput, PromptOptions, PromptOutput};
use super::message::{PromptMessage, convert};
use super::tokens::REPLY_PRIMING;
use crate::ejs::Templates;
use crate::engine::PromptEngine;
use crate::lorebook::{ActivatedEntry, ActivationInput, EntryScope, LorebookOptions, activate};
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

struct Injection {
    depth: usize,
    role: Role,
    text: String,
}

/// Model copies of the visible messages, computed lazily newest first.
struct Copies<'a> {
    visible: Vec<&'a Message>,
    texts: Vec<Option<String>>,
    /// For speaker names, computed only for the messages that are read (a 100,000-message
    /// chat must not cost 100,000 name strings per generation).
    characters: &'a [tavo_model::Character],
    user: String,
    char: String,
}

impl Copies<'_> {
    /// The speaker's name of visible message `i`: the message's own name, else the persona
    /// (user), the character it belongs to (assistant) or `System`.
    fn name(&self, i: usize) -> &str {
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

struct Builder<'e> {
    engine: &'e PromptEngine,

    ctx: MacroContext,
    macros: MacroState,
    rules: RegexRules,
    js: Option<&'static JsRegex>,
    report: RegexReport,
    diagnostics: Vec<Diagnostic>,
    group: bool,
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

    fn regex(&mut self, stage: Stage, targets: &mut [RegexTarget]) {
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
    fn ensure_copies(&mut self, copies: &mut Copies<'_>, count: usize) {
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

fn macro_diag(location: &str, d: &MacroDiagnostic) -> Diagnostic {
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

fn muted_ids(input: &PromptInput<'_>) -> Vec<i64> {
    input
        .chat
        .and_then(|c| c.extra.get("mutedCharacterIds"))
        .and_then(|v| v.as_array())
        .map(|a| a.iter().filter_map(|v| v.as_i64()).collect())
        .unwrap_or_default()
}

fn macro_context(
    input: &PromptInput<'_>,
    options: &PromptOptions,
    speaker: Option<&Character>,
    group: bool,
) -> MacroContext {
    let user = input.persona.map(|p| p.name.as_str()).unwrap_or("User");
    let char_name = match speaker {
        Some(c) if group => c.display_name().to_owned(),
        Some(c) => c.name.clone(),
        None => String::new(),
    };
    let mut ctx = MacroContext::new(user, &char_name, options.now);
    if group {
        let muted = muted_ids(input);
        ctx.group_members = input
            .characters
            .iter()
            .map(|c| c.display_name().to_owned())
            .collect();
        ctx.group_not_muted = input
            .characters
            .iter()
            .filter(|c| !c.id.is_some_and(|id| muted.contains(&id.0)))
            .map(|c| c.display_name().to_owned())
            .collect();
    }
    if let Some(c) = speaker {
        ctx.character_id = c.id.map(|id| id.0);
        ctx.description = c.description.clone();
        ctx.personality = c.personality.clone();
        ctx.char_scenario = c.scenario.clone();
        ctx.char_prompt = c.system_prompt.clone();
        ctx.char_instruction = c.post_history_instructions.clone();
        ctx.mes_examples_raw = c.mes_example.clone();
        ctx.char_version = c.character_version.clone();
        ctx.creator_notes = c.creator_notes.clone();
        ctx.depth_prompt = c
            .extensions
            .get("depth_prompt")
            .and_then(|d| d.get("prompt"))
            .and_then(|p| p.as_str())
            .unwrap_or_default()
            .to_owned();
        ctx.greetings = std::iter::once(c.first_mes.clone())
            .chain(c.alternate_greetings.iter().cloned())
            .collect();
    }
    ctx.scenario_override = input
        .chat
        .and_then(|c| c.extra.get("scenario"))
        .and_then(|v| v.as_str())
        .map(str::to_owned);
    ctx.persona = input
        .persona
        .map(|p| p.description.clone())
        .unwrap_or_default();
    ctx.model = options.model.clone();
    let visible: Vec<&Message> = input.messages.iter().filter(|m| !m.hidden).collect();
    ctx.last_message = visible
        .last()
        .map(|m| m.content.clone())
        .unwrap_or_default();
    ctx.last_message_index = input.messages.len().checked_sub(1);
    ctx.last_user_message = visible
        .iter()
        .rev()
        .find(|m| m.role == Role::User)
        .map(|m| m.content.clone())
        .unwrap_or_default();
    ctx.last_char_message = visible
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant)
        .map(|m| m.content.clone())
        .unwrap_or_default();
    // idleDuration: time since the user message before the newest message.
    ctx.idle_since = visible
        .iter()
        .rev()
        .skip(1)
        .find(|m| m.role == Role::User)
        .and_then(|m| m.send_date.as_deref())
        .and_then(|d| chrono::DateTime::parse_from_rfc3339(d).ok());
    ctx
}

fn wrap(template: &str, content: &str) -> String {
    if template.contains("{0}") {
        template.replace("{0}", content)
    } else {
        content.to_owned()
    }
}

pub(crate) fn assemble(
    engine: &PromptEngine,
    input: &PromptInput<'_>,
    options: &PromptOptions,
) -> PromptOutput {
    let fallback;
    let preset = match input.preset {
        Some(p) => p,
        None => {
            fallback = default_preset();
            &fallback
        }
    };
    let bp = &preset.basic_prompts;
    let counter = engine.counter(&options.model);
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
    let mut timed = input.timed.clone();
    let mut activated: Vec<ActivatedEntry> = Vec::new();
    let mut skipped = Vec::new();
    if let Some(index) = index {
        match index {
            Ok(index) => {
                let window = index.max_scan_depth.min(copies.visible.len());
                b.ensure_copies(&mut copies, window);
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
    let mut injections: Vec<Injection> = Vec::new();
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
        let text = wrap(&bp.lorebook, &target.text);
        match entry.injection_position {
            LorebookPosition::LorebookBefore => before.push(text),
            LorebookPosition::LorebookAfter => after.push(text),
            LorebookPosition::TopOfExampleMessages => examples_top.push(text),
            LorebookPosition::BottomOfExampleMessages => examples_bottom.push(text),
            LorebookPosition::AtDepth => lore_depth.push(Injection {
                depth: entry.injection_depth as usize,
                role: entry.injection_role,
                text,
            }),
        }
    }

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
    PromptOutput {
        messages,
        explain,
        variables: b.macros.into_variables(),
        variables_changed,
        timed,
    }
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

/// One message per (depth, role): texts of the same depth and role joined by a newline, in
/// the order assistant, user, system (system nearest the end, as in SillyTavern).
fn group_injections(injections: Vec<Injection>) -> Vec<(usize, PromptMessage)> {
    let mut by_depth: BTreeMap<usize, [Vec<String>; 3]> = BTreeMap::new();
    for injection in injections {
        let slot = match injection.role {
            Role::Assistant => 0,
            Role::User => 1,
            Role::System => 2,
        };
        by_depth.entry(injection.depth).or_default()[slot].push(injection.text);
    }
    let mut out = Vec::new();
    for (depth, roles) in by_depth.into_iter().rev() {
        for (slot, texts) in roles.into_iter().enumerate() {
            if texts.is_empty() {
                continue;
            }
            let role = [Role::Assistant, Role::User, Role::System][slot];
            out.push((depth, PromptMessage::new(role, texts.join("\n"))));
        }
    }
    out
}

/// Puts injections into the history: depth `d` goes before the `d` newest messages
/// (0 = after the last); depths beyond the included history go to its top.
fn place_injections(
    out: &mut Vec<PromptMessage>,
    history: Vec<PromptMessage>,
    injections: &[(usize, PromptMessage)],
) {
    let len = history.len();
    let mut history = history.into_iter();
    for position in 0..=len {
        let depth_here = len - position;
        for (depth, message) in injections {
            if (*depth).min(len) == depth_here {
                out.push(message.clone());
            }
        }
        if let Some(message) = history.next() {
            out.push(message);
        }
    }
}
