//! The activation loop: gates in order, probability, recursion, token budget, timed effects.
//!
//! Gate order per entry: `enabled` → sticky (an entry held by `sticky` activates without
//! keys, probability or cooldown) → strategy (`constant`, or primary keys + secondary logic)
//! → `delay` → `cooldown` → probability → budget. Only entries that reached a gate are
//! reported as skipped; an entry whose keys simply did not occur is not listed.

use serde::Serialize;
use serde_json::Value;
use tavo_model::{
    Lorebook, LorebookEntry, LorebookId, LorebookPosition, LorebookStrategy, Role,
    SecondaryKeywordStrategy,
};

use super::index::{KeyRef, LorebookIndex};
use super::scan::{NONE, RECURSION, ScanHits, find_in_texts, within};
use super::timed::{EntryTimers, TimedEffects, delayed};
use crate::macros::{MacroContext, MacroDiagnostic, MacroState, seeded_percent};
use crate::regex::JsRegex;

/// Why an entry was not injected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Gate {
    /// `enabled: false`.
    Disabled,
    /// A keyword entry without any usable primary key.
    NoKey,
    /// Primary keys matched but the secondary-key logic did not hold.
    SecondaryLogic,
    /// The probability roll failed.
    Probability,
    /// `delay`: the chat is still too short.
    Delay,
    /// `cooldown` is running.
    Cooldown,
    /// The lorebook token budget was full.
    Budget,
}

/// Why an entry was injected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    tag = "kind"
)]
pub enum Reason {
    /// `strategy: 'constant'`.
    Constant,
    /// Held by a running `sticky` period.
    Sticky,
    /// A primary key matched in a message (`messageDepth` 0 = newest scanned message).
    Keyword {
        /// The key as written.
        key: String,
        /// Depth of the message it matched in.
        message_depth: u32,
    },
    /// A primary key matched in the content of entries activated before (recursion).
    Recursion {
        /// The key as written.
        key: String,
    },
}

/// An entry that will be injected.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ActivatedEntry {
    /// The lorebook's id.
    pub lorebook_id: Option<LorebookId>,
    /// The entry's identifier.
    pub identifier: String,
    /// The entry's name.
    pub name: String,
    /// Where it goes.
    pub injection_position: LorebookPosition,
    /// Depth for `atDepth`.
    pub injection_depth: u32,
    /// Role for `atDepth`.
    pub injection_role: Role,
    /// Its `order`.
    pub order: i64,
    /// Why it activated.
    pub reason: Reason,
    /// Tokens of its rendered content.
    pub tokens: usize,
    /// Rendered content (macros expanded; regex rules not yet applied).
    #[serde(skip)]
    pub content: String,
    /// Binding rank (book, then array position) for stable ordering.
    #[serde(skip)]
    pub rank: usize,
}

/// An entry stopped by a gate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SkippedEntry {
    /// The lorebook's id.
    pub lorebook_id: Option<LorebookId>,
    /// The entry's identifier.
    pub identifier: String,
    /// The entry's name.
    pub name: String,
    /// The gate that stopped it.
    pub gate: Gate,
}

/// Knobs of one activation.
#[derive(Debug, Clone, Copy)]
pub struct LorebookOptions {
    /// Seed of the probability rolls.
    pub seed: u64,
    /// Token budget for all activated content; `None` = unlimited.
    pub budget_tokens: Option<usize>,
    /// Whether activated content is scanned again (entries activating entries).
    pub recursive: bool,
    /// Largest number of recursion passes.
    pub max_recursion: usize,
}

impl Default for LorebookOptions {
    fn default() -> Self {
        Self {
            seed: 0,
            budget_tokens: None,
            recursive: true,
            max_recursion: 8,
        }
    }
}

/// What one activation produced.
#[derive(Debug, Clone, Default)]
pub struct Activation {
    /// Injected entries, ordered for output (`order` ascending, then binding rank).
    pub activated: Vec<ActivatedEntry>,
    /// Entries stopped by a gate.
    pub skipped: Vec<SkippedEntry>,
    /// Problems: macros left as written in entries, invalid regex keys.
    pub diagnostics: Vec<(String, MacroDiagnostic)>,
    /// Invalid regex keys (`lorebooks[id].entries[identifier].keywords`).
    pub key_errors: Vec<String>,
}

/// Inputs of one activation.
pub struct ActivationInput<'a> {
    /// The chat's lorebooks in binding order.
    pub books: &'a [Lorebook],
    /// Their index (built by [`LorebookIndex::build`], possibly cached).
    pub index: &'a LorebookIndex,
    /// Scanned messages, newest first, as the model will see them (`Name: text`). Callers
    /// pass at least `index.max_scan_depth` messages when available.
    pub texts: &'a [String],
    /// The chat's clock (message count, hidden included).
    pub clock: u64,
    /// Macro context.
    pub ctx: &'a MacroContext,
    /// JavaScript engine for regex keys (`None` skips them with an error).
    pub js: Option<&'a JsRegex>,
}

/// The key under which timed effects are stored: `"<lorebookId>.<identifier>"`.
pub fn timer_key(book: &Lorebook, book_index: usize, entry: &LorebookEntry) -> String {
    match book.id {
        Some(id) => format!("{id}.{}", entry.identifier),
        None => format!("#{book_index}.{}", entry.identifier),
    }
}

fn flag(entry: &LorebookEntry, name: &str) -> bool {
    match entry.extra.get(name) {
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|v| v > 0.0),
        _ => false,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Status {
    Open,
    Active,
    Stopped,
}

/// Runs activation, updating `timed` (the caller persists it only for a recorded
/// generation) and committing macro side effects of injected entries into `macros`.
pub fn activate(
    input: &ActivationInput<'_>,
    timed: &mut TimedEffects,
    macros: &mut MacroState,
    tokens: &dyn Fn(&str) -> usize,
    options: LorebookOptions,
) -> Activation {
    let index = input.index;
    let n = input.clock;
    let entry_of = |i: usize| {
        let e = &index.entries[i];
        (
            &input.books[e.book],
            &input.books[e.book].entries[e.entry],
            e.book,
        )
    };
    let key_of = |i: usize| {
        let (book, entry, b) = entry_of(i);
        timer_key(book, b, entry)
    };
    // Timer keys are only formatted when some effect is running (10,000 entries would
    // otherwise cost 10,000 allocations per generation).
    let has_state = !(timed.sticky.is_empty() && timed.cooldown.is_empty());
    if has_state {
        let lookup: std::collections::HashMap<String, EntryTimers> = (0..index.entries.len())
            .map(|i| {
                let (_, entry, _) = entry_of(i);
                (
                    key_of(i),
                    EntryTimers {
                        sticky: entry.sticky,
                        cooldown: entry.cooldown,
                    },
                )
            })
            .collect();
        timed.begin(n, |k| lookup.get(k).copied());
    }
    let has_state = !(timed.sticky.is_empty() && timed.cooldown.is_empty());
    let window = index.max_scan_depth.min(input.texts.len());
    let exact_texts: Vec<&str> = input.texts[..window].iter().map(String::as_str).collect();
    let lower_texts: Vec<String> = if index.lower.is_some() || has_dynamic(index) {
        exact_texts.iter().map(|t| t.to_lowercase()).collect()
    } else {
        Vec::new()
    };
    let mut hits = ScanHits::new(index);
    hits.scan(index, &exact_texts, &lower_texts, |i| i as u32);
    let mut out = Activation::default();
    if index.any_regex {
        scan_regex_keys(input, &exact_texts, &mut hits, None, &mut out);
    }
    let lower_refs: Vec<&str> = lower_texts.iter().map(String::as_str).collect();

    let mut status = vec![Status::Open; index.entries.len()];
    let mut gates: Vec<Option<Gate>> = vec![None; index.entries.len()];
    let mut used_tokens = 0usize;
    let mut overflowed = false;
    let mut recursion_lower: Vec<String> = Vec::new();
    let mut recursion_exact: Vec<String> = Vec::new();

    for pass in 0..=options.max_recursion {
        let mut found: Vec<(usize, Reason)> = Vec::new();
        for i in 0..index.entries.len() {
            if status[i] != Status::Open {
                continue;
            }
            let (_, entry, _) = entry_of(i);
            if !entry.enabled {
                status[i] = Status::Stopped;
                gates[i] = Some(Gate::Disabled);
                continue;
            }
            let key = if has_state { Some(key_of(i)) } else { None };
            if key.as_deref().is_some_and(|k| timed.is_sticky(k)) {
                found.push((i, Reason::Sticky));
                continue;
            }
            if pass > 0 && flag(entry, "excludeRecursion") {
                continue;
            }
            let reason = if entry.strategy == LorebookStrategy::Constant {
                Reason::Constant
            } else {
                let indexed = &index.entries[i];
                if indexed.primary.is_empty() {
                    status[i] = Status::Stopped;
                    gates[i] = Some(Gate::NoKey);
                    continue;
                }
                let probe = |key: &KeyRef| -> u32 {
                    key_hit(
                        key,
                        entry,
                        &hits,
                        &exact_texts,
                        &lower_refs,
                        &recursion_exact,
                        &recursion_lower,
                        input,
                        macros,
                    )
                };
                let primary = indexed
                    .primary
                    .iter()
                    .enumerate()
                    .map(|(k, key)| (k, probe(key)))
                    .find(|(_, at)| within(*at, entry.scan_depth));
                let Some((k, at)) = primary else {
                    continue;
                };
                if !secondary_holds(entry, &indexed.secondary, |key| {
                    within(probe(key), entry.scan_depth)
                }) {
                    gates[i] = Some(Gate::SecondaryLogic);
                    continue;
                }
                let key = primary_key_text(entry, k);
                if at == RECURSION {
                    Reason::Recursion { key }
                } else {
                    Reason::Keyword {
                        key,
                        message_depth: at,
                    }
                }
            };
            if delayed(entry.delay, n) {
                status[i] = Status::Stopped;
                gates[i] = Some(Gate::Delay);
                continue;
            }
            if key.as_deref().is_some_and(|k| timed.is_cooling(k)) {
                status[i] = Status::Stopped;
                gates[i] = Some(Gate::Cooldown);
                continue;
            }
            if pass == 0 && flag(entry, "delayUntilRecursion") {
                continue;
            }
            found.push((i, reason));
        }
        if found.is_empty() {
            break;
        }
        found.sort_by(|(a, ra), (b, rb)| {
            let sticky = |r: &Reason| u8::from(!matches!(r, Reason::Sticky));
            let (_, ea, _) = entry_of(*a);
            let (_, eb, _) = entry_of(*b);
            sticky(ra)
                .cmp(&sticky(rb))
                .then(eb.order.cmp(&ea.order))
                .then(a.cmp(b))
        });
        let mut recursion_text = String::new();
        for (i, reason) in found {
            let (book, entry, _) = entry_of(i);
            let is_sticky = matches!(reason, Reason::Sticky);
            if overflowed {
                status[i] = Status::Stopped;
                gates[i] = Some(Gate::Budget);
                continue;
            }
            if !is_sticky && entry.probability < 100 {
                let roll = seeded_percent(options.seed, &format!("{}#{n}", key_of(i)));
                if roll >= f64::from(entry.probability) {
                    status[i] = Status::Stopped;
                    gates[i] = Some(Gate::Probability);
                    continue;
                }
            }
            let mut rendered = macros.render(&entry.content, input.ctx);
            let cost = tokens(&rendered.text);
            if let Some(budget) = options.budget_tokens
                && used_tokens + cost > budget
            {
                overflowed = true;
                status[i] = Status::Stopped;
                gates[i] = Some(Gate::Budget);
                continue;
            }
            macros.commit(&mut rendered);
            used_tokens += cost;
            let location = format!(
                "lorebooks[{}].entries[{}].content",
                book.id.map(|id| id.to_string()).unwrap_or_default(),
                entry.identifier
            );
            out.diagnostics.extend(
                rendered
                    .diagnostics
                    .iter()
                    .cloned()
                    .map(|d| (location.clone(), d)),
            );
            if options.recursive && !flag(entry, "preventRecursion") && !rendered.text.is_empty() {
                recursion_text.push_str(&rendered.text);
                recursion_text.push('\n');
            }
            status[i] = Status::Active;
            gates[i] = None;
            timed.activated(
                &key_of(i),
                n,
                EntryTimers {
                    sticky: entry.sticky,
                    cooldown: entry.cooldown,
                },
            );
            out.activated.push(ActivatedEntry {
                lorebook_id: book.id,
                identifier: entry.identifier.clone(),
                name: entry.name.clone(),
                injection_position: entry.injection_position,
                injection_depth: entry.injection_depth,
                injection_role: entry.injection_role,
                order: entry.order,
                reason,
                tokens: cost,
                content: rendered.text,
                rank: i,
            });
        }
        if !options.recursive || overflowed || recursion_text.is_empty() {
            break;
        }
        let lower = recursion_text.to_lowercase();
        hits.scan(
            index,
            &[recursion_text.as_str()],
            std::slice::from_ref(&lower),
            |_| RECURSION,
        );
        if index.any_regex {
            scan_regex_keys(
                input,
                &[recursion_text.as_str()],
                &mut hits,
                Some(RECURSION),
                &mut out,
            );
        }
        recursion_exact.push(recursion_text);
        recursion_lower.push(lower);
    }

    for (i, gate) in gates.iter().enumerate() {
        if let (Some(gate), true) = (gate, status[i] != Status::Active) {
            let (book, entry, _) = entry_of(i);
            out.skipped.push(SkippedEntry {
                lorebook_id: book.id,
                identifier: entry.identifier.clone(),
                name: entry.name.clone(),
                gate: *gate,
            });
        }
    }
    out.activated
        .sort_by(|a, b| a.order.cmp(&b.order).then(a.rank.cmp(&b.rank)));
    out
}

fn has_dynamic(index: &LorebookIndex) -> bool {
    index.entries.iter().any(|e| {
        e.primary
            .iter()
            .chain(&e.secondary)
            .any(|k| matches!(k, KeyRef::Dynamic(_)))
    })
}

fn primary_key_text(entry: &LorebookEntry, k: usize) -> String {
    entry
        .keywords
        .iter()
        .filter(|key| !key.trim().is_empty())
        .nth(k)
        .map(|s| s.trim().to_owned())
        .unwrap_or_default()
}

#[allow(clippy::too_many_arguments)]
fn key_hit(
    key: &KeyRef,
    entry: &LorebookEntry,
    hits: &ScanHits,
    exact_texts: &[&str],
    lower_texts: &[&str],
    recursion_exact: &[String],
    recursion_lower: &[String],
    input: &ActivationInput<'_>,
    macros: &MacroState,
) -> u32 {
    match key {
        KeyRef::Dynamic(raw) => {
            // Keys with macros are rendered read-only: a key never has side effects.
            let mut probe = macros.clone();
            let rendered = probe.render(raw, input.ctx).text;
            let rendered = rendered.trim();
            let (needle, texts, recursion) = if entry.case_sensitive {
                (rendered.to_owned(), exact_texts, recursion_exact)
            } else {
                (rendered.to_lowercase(), lower_texts, recursion_lower)
            };
            let at = find_in_texts(&needle, texts, entry.match_whole_word);
            if at != NONE {
                return at;
            }
            let rec: Vec<&str> = recursion.iter().map(String::as_str).collect();
            if find_in_texts(&needle, &rec, entry.match_whole_word) != NONE {
                RECURSION
            } else {
                NONE
            }
        }
        other => hits.plain(other, entry.match_whole_word),
    }
}

/// Secondary-key logic (Tavo §7.4): `none` → P; `andAny` → P∧A; `andAll` → P∧L;
/// `notAny` → P∧¬A; `notAll` → P∧¬L. An empty secondary list behaves as `none`.
pub fn secondary_holds(
    entry: &LorebookEntry,
    secondary: &[KeyRef],
    matched: impl Fn(&KeyRef) -> bool,
) -> bool {
    if secondary.is_empty() {
        return true;
    }
    let strategy = entry.effective_secondary_strategy();
    let mut any = false;
    let mut all = true;
    for key in secondary {
        if matched(key) {
            any = true;
        } else {
            all = false;
        }
    }
    match strategy {
        SecondaryKeywordStrategy::None => true,
        SecondaryKeywordStrategy::AndAny => any,
        SecondaryKeywordStrategy::AndAll => all,
        SecondaryKeywordStrategy::NotAny => !any,
        SecondaryKeywordStrategy::NotAll => !all,
    }
}

fn scan_regex_keys(
    input: &ActivationInput<'_>,
    texts: &[&str],
    hits: &mut ScanHits,
    mark: Option<u32>,
    out: &mut Activation,
) {
    let Some(js) = input.js else {
        out.key_errors.push(
            "regex keys need the JavaScript engine, which is unavailable; they were skipped".into(),
        );
        return;
    };
    let patterns: Vec<(String, String)> = input
        .index
        .regex_keys
        .iter()
        .map(|p| (p.source.clone(), p.flags.replace(['g', 'y'], "")))
        .collect();
    match js.first_matches(patterns, texts.iter().map(|t| (*t).to_owned()).collect()) {
        Ok(found) => {
            for (k, at) in found.into_iter().enumerate() {
                if at == -2 {
                    if mark.is_none() {
                        let p = &input.index.regex_keys[k];
                        out.key_errors.push(format!(
                            "lorebook key /{}/{} is not a valid JavaScript regex; the key was skipped",
                            p.source, p.flags
                        ));
                    }
                } else if at >= 0 && hits.regex[k] == NONE {
                    hits.regex[k] = mark.unwrap_or(at as u32);
                }
            }
        }
        Err(e) => out.key_errors.push(format!("regex keys were skipped: {e}")),
    }
}
