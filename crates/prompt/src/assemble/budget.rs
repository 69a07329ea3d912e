//! Steps 4 and 5 of the assembly: the token budget (everything but history and examples is
//! pinned; history fills newest to oldest and stops at the first message that does not fit;
//! examples then fill whole blocks while they fit), and flattening the parts into the
//! message list with each part's token count.

use super::build::{Builder, COPY_BATCH, Copies, chat_role, history_text};
use super::examples::example_blocks;
use super::explain::{Diagnostic, PartTokens};
use super::injections::place_injections;
use super::layout::{AroundHistory, Part};
use super::message::PromptMessage;
use super::tokens::{REPLY_PRIMING, TokenCounter};

/// What the budget step reads.
pub(super) struct Fit<'a> {
    pub(super) parts: &'a [Part],
    pub(super) around: &'a AroundHistory,
    pub(super) injections: &'a [(usize, PromptMessage)],
    pub(super) has_history: bool,
    /// Visible messages that may go into the history (the continued one excluded).
    pub(super) history_len: usize,
    pub(super) max_prompt: usize,
    pub(super) examples_top: &'a [String],
    pub(super) examples_bottom: &'a [String],
    /// `basicPrompts.exampleMessageStart`.
    pub(super) example_start: &'a str,
}

/// What fitted.
pub(super) struct Fitted {
    /// The included history, oldest first.
    pub(super) history: Vec<PromptMessage>,
    pub(super) history_tokens: usize,
    pub(super) examples: Vec<PromptMessage>,
    pub(super) injection_tokens: usize,
    /// Whether the pinned parts overflowed or an example block was left out (a cut history
    /// is seen from its length).
    pub(super) cut: bool,
}

/// Fills the budget: pinned parts first, then history newest to oldest, then example blocks.
pub(super) fn fit(
    b: &mut Builder<'_>,
    copies: &mut Copies<'_>,
    counter: &TokenCounter,
    args: Fit<'_>,
) -> Fitted {
    let around = args.around;
    let mut pinned = REPLY_PRIMING;
    for part in args.parts {
        if let Part::Fixed { messages, .. } = part {
            pinned += messages.iter().map(|m| counter.message(m)).sum::<usize>();
        }
    }
    pinned += around
        .chat_start
        .iter()
        .chain(&around.group_nudge)
        .map(|m| counter.message(m))
        .sum::<usize>();
    pinned += around
        .tail
        .iter()
        .map(|(_, m)| counter.message(m))
        .sum::<usize>();
    let injection_tokens: usize = args
        .injections
        .iter()
        .map(|(_, m)| counter.message(m))
        .sum();
    pinned += injection_tokens;
    let max_prompt = args.max_prompt;
    let mut cut = pinned > max_prompt;
    if cut {
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
    let history = if args.has_history {
        fit_history(b, copies, counter, args.history_len, &mut remaining)
    } else {
        Vec::new()
    };
    let history_tokens: usize = history.iter().map(|m| counter.message(m)).sum();
    let mut examples: Vec<PromptMessage> = Vec::new();
    if args.parts.iter().any(|p| matches!(p, Part::Examples)) {
        let rendered = b.macros.render_used(&b.ctx.mes_examples_raw, &b.ctx);
        b.note("character.mesExample", &rendered);
        let (user, char) = (b.ctx.user.clone(), b.ctx.char.clone());
        let texts = args
            .examples_top
            .iter()
            .chain(std::iter::once(&rendered.text))
            .chain(args.examples_bottom);
        let blocks: Vec<Vec<PromptMessage>> = texts
            .flat_map(|text| example_blocks(text, &user, &char, args.example_start))
            .collect();
        for block in blocks {
            let cost: usize = block.iter().map(|m| counter.message(m)).sum();
            if cost > remaining {
                cut = true;
                break;
            }
            remaining -= cost;
            examples.extend(block);
        }
    }
    Fitted {
        history,
        history_tokens,
        examples,
        injection_tokens,
        cut,
    }
}

/// History newest to oldest until the first message that does not fit; oldest first.
fn fit_history(
    b: &mut Builder<'_>,
    copies: &mut Copies<'_>,
    counter: &TokenCounter,
    history_len: usize,
    remaining: &mut usize,
) -> Vec<PromptMessage> {
    let mut history = Vec::new();
    let mut k = 0;
    while k < history_len {
        let i = history_len - 1 - k;
        if copies.texts[i].is_none() {
            let want = (copies.visible.len() - i).max(k + COPY_BATCH);
            b.ensure_copies(copies, want);
        }
        let message = PromptMessage::new(
            chat_role(copies.visible[i].role),
            history_text(b, copies, i),
        )
        .copying(copies.visible[i].id.map(|id| id.get()));
        let cost = counter.message(&message);
        if cost > *remaining {
            break;
        }
        *remaining -= cost;
        history.push(message);
        k += 1;
    }
    history.reverse();
    history
}

/// The parts in preset order as one message list (injections placed into the history;
/// without a `chatHistory` marker they go at the end, before the tail), with each part's
/// tokens. Empty messages are dropped.
pub(super) fn flatten(
    parts: Vec<Part>,
    fitted: Fitted,
    around: AroundHistory,
    injections: &[(usize, PromptMessage)],
    has_history: bool,
    counter: &TokenCounter,
) -> (Vec<PromptMessage>, Vec<PartTokens>) {
    let Fitted {
        mut history,
        history_tokens,
        mut examples,
        injection_tokens,
        ..
    } = fitted;
    let mut messages = Vec::new();
    let mut token_parts = Vec::new();
    for part in parts {
        match part {
            Part::Fixed {
                label,
                messages: ms,
            } => {
                token_parts.push(PartTokens {
                    part: label.clone(),
                    tokens: ms.iter().map(|m| counter.message(m)).sum(),
                });
                messages.extend(ms.into_iter().map(|m| m.with_source(&label)));
            }
            Part::Examples => {
                if !examples.is_empty() {
                    token_parts.push(PartTokens {
                        part: "dialogueExamples".into(),
                        tokens: examples.iter().map(|m| counter.message(m)).sum(),
                    });
                    messages.extend(
                        examples
                            .drain(..)
                            .map(|m| m.with_source("dialogueExamples")),
                    );
                }
            }
            Part::History => {
                let start_tokens: usize = around
                    .chat_start
                    .iter()
                    .chain(&around.group_nudge)
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
                messages.extend(
                    around
                        .chat_start
                        .clone()
                        .map(|m| m.with_source("chatStart")),
                );
                let history = std::mem::take(&mut history)
                    .into_iter()
                    .map(|m| m.with_source("chatHistory"))
                    .collect();
                place_injections(&mut messages, history, injections);
                messages.extend(
                    around
                        .group_nudge
                        .clone()
                        .map(|m| m.with_source("groupNudge")),
                );
            }
        }
    }
    if !has_history && !injections.is_empty() {
        token_parts.push(PartTokens {
            part: "injections".into(),
            tokens: injection_tokens,
        });
        messages.extend(injections.iter().map(|(_, m)| m.clone()));
    }
    for (label, message) in around.tail {
        token_parts.push(PartTokens {
            part: label.clone(),
            tokens: counter.message(&message),
        });
        messages.push(message.with_source(&label));
    }
    messages.retain(|m| !m.content.trim().is_empty());
    (messages, token_parts)
}
