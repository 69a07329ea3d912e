//! The activation loop: gates in order, probability, recursion, token budget, timed effects.
//!
//! Gate order per entry: `enabled` → sticky (an entry held by `sticky` activates without
//! keys, probability or cooldown) → strategy (`constant`, or primary keys + secondary logic)
//! → `delay` → `cooldown` → probability → budget. Only entries that reached a gate are
//! reported as skipped; an entry whose keys simply did not occur is not listed.

use std::collections::HashSet;

use serde::Serialize;
use serde_json::Value;
use tavo_model::{
    Lorebook, LorebookEntry, LorebookId, LorebookPosition, LorebookStrategy, Role,
    SecondaryKeywordStrategy,
};

use super::groups;
use super::index::{KeyRef, LorebookIndex};
use super::scan::{FreshHits, NONE, RECURSION, ScanHits, WordRule, find_in_texts, within};
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
    /// Another member of its inclusion group won (SillyTavern `group`).
    InclusionGroup,
    /// Its `characterFilter` excludes the speaking character (SillyTavern).
    CharacterFilter,
    /// Its `triggers` do not list this generation type (SillyTavern).
    Trigger,
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
    /// SillyTavern's outlet name for an entry with position "outlet": it is not injected,
    /// `{{outlet::name}}` shows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outlet: Option<String>,
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
    /// Group scoring for inclusion groups whose members do not set `useGroupScoring`
    /// (SillyTavern's global default: off).
    pub group_scoring: bool,
}

impl Default for LorebookOptions {
    fn default() -> Self {
        Self {
            seed: 0,
            budget_tokens: None,
            recursive: true,
            max_recursion: 8,
            group_scoring: false,
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
    /// Who speaks and why, for SillyTavern's per-entry filters.
    pub scope: EntryScope<'a>,
}

/// What SillyTavern's per-entry filters look at: the speaking character and the
/// generation type. The default (no character, `normal`) lets every filterless entry pass.
#[derive(Debug, Clone, Copy)]
pub struct EntryScope<'a> {
    /// The speaking character's name (SillyTavern compares its file name, which is the
    /// name for cards imported into Tavo).
    pub character: Option<&'a str>,
    /// `normal`, `continue`, `impersonate`, `regenerate`, `swipe` or `quiet`.
    pub trigger: &'a str,
}

impl Default for EntryScope<'_> {
    fn default() -> Self {
        Self {
            character: None,
            trigger: "normal",
        }
    }
}

impl EntryScope<'_> {
    /// The gate that stops `entry` in this scope, if any: `triggers` not listing the
    /// generation type, or `characterFilter.names` (`isExclude` inverts).
    ///
    /// `characterFilter.tags` is deliberately not applied: SillyTavern stores there the ids
    /// of tags in the creator's own install (UUIDs), which no card or lorebook export
    /// carries. Applied, an include-by-tag filter would switch the entry off for every
    /// user who imports the book (the corpus' Skyrim book has such constant entries).
    pub fn filter(&self, entry: &LorebookEntry) -> Option<Gate> {
        let strings = |v: Option<&Value>| -> Vec<String> {
            v.and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default()
        };
        let triggers = strings(entry.extra.get("triggers"));
        if !triggers.is_empty() && !triggers.iter().any(|t| t == self.trigger) {
            return Some(Gate::Trigger);
        }
        let filter = entry.extra.get("characterFilter")?;
        let exclude = filter
            .get("isExclude")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let names = strings(filter.get("names"));
        if !names.is_empty() {
            let listed = self.character.is_some_and(|c| names.iter().any(|n| n == c));
            if listed == exclude {
                return Some(Gate::CharacterFilter);
            }
        }
        None
    }
}

/// The key under which timed effects are stored: `"<lorebookId>.<identifier>"`.
pub fn timer_key(book: &Lorebook, book_index: usize, entry: &LorebookEntry) -> String {
    match book.id {
        Some(id) => format!("{id}.{}", entry.identifier),
        None => format!("#{book_index}.{}", entry.identifier),
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
///
/// Only entries that can activate are evaluated: those whose primary keys the scan found
/// (through the index's pattern → entries map), constants, macro-key entries and entries
/// held by `sticky`. A 40,000-entry book costs what its mentioned entries cost.
///
/// Passes: each evaluates the candidates ([`Run::evaluate`]), orders what it found and
/// settles inclusion groups ([`Run::order`]), admits entries against probability and the
/// budget ([`Run::admit`]) and scans their content for the next pass ([`Run::rescan`]).
/// SillyTavern's delayed recursion: the lowest `delayUntilRecursion` level opens with the
/// first recursion pass; when a pass brings nothing more to scan, the next level opens a
/// pass of its own, which rescans the chat (and the recursion text so far) for the entries
/// of every level reached.
pub fn activate(
    input: &ActivationInput<'_>,
    timed: &mut TimedEffects,
    macros: &mut MacroState,
    tokens: &dyn Fn(&str) -> usize,
    options: LorebookOptions,
) -> Activation {
    let mut run = Run::new(input, timed, macros, tokens, options);
    let mut levels = input.index.delay_levels.iter().copied();
    let mut current_level = levels.next().unwrap_or(0);
    for pass in 0..=options.max_recursion {
        let found = run.evaluate(pass, current_level);
        let rescan = if found.is_empty() {
            None
        } else {
            let (found, lost) = run.order(found);
            let recursion_text = run.admit(found, &lost);
            (options.recursive && !run.overflowed && !recursion_text.is_empty())
                .then_some(recursion_text)
        };
        match rescan {
            Some(text) => run.rescan(text),
            // Nothing new to scan: the next delay level, if any, opens a pass (SillyTavern
            // does not ask `recursive` for it).
            None => match levels.next() {
                Some(level) => current_level = level,
                None => break,
            },
        }
    }
    run.finish()
}

/// An entry a pass found: its index, why, and its inclusion-group key score.
type Found = (usize, Reason, u32);

/// One activation's state across its passes.
struct Run<'a, 'r> {
    input: &'a ActivationInput<'a>,
    index: &'a LorebookIndex,
    timed: &'r mut TimedEffects,
    macros: &'r mut MacroState,
    tokens: &'r dyn Fn(&str) -> usize,
    options: LorebookOptions,
    /// The chat's clock.
    n: u64,
    /// The scanned messages, newest first, and their lower-cased copies (when needed).
    exact_texts: Vec<&'a str>,
    lower_texts: Vec<String>,
    hits: ScanHits,
    status: Vec<Status>,
    gates: Vec<Option<Gate>>,
    candidates: Candidates,
    used_tokens: usize,
    overflowed: bool,
    /// Content of the entries activated so far, one text per pass.
    recursion_exact: Vec<String>,
    recursion_lower: Vec<String>,
    active_groups: HashSet<String>,
    out: Activation,
}

impl<'a, 'r> Run<'a, 'r> {
    /// Starts the timers' generation, scans the messages and lists the first candidates
    /// (constants, macro-key entries, sticky entries; key hits join in each pass).
    fn new(
        input: &'a ActivationInput<'a>,
        timed: &'r mut TimedEffects,
        macros: &'r mut MacroState,
        tokens: &'r dyn Fn(&str) -> usize,
        options: LorebookOptions,
    ) -> Self {
        let index = input.index;
        let n = input.clock;
        if !(timed.sticky.is_empty() && timed.cooldown.is_empty()) {
            timed.begin(n, |k| {
                let e = &index.entries[*index.by_timer_key.get(k)? as usize];
                let entry = &input.books[e.book].entries[e.entry];
                Some(EntryTimers {
                    sticky: entry.sticky,
                    cooldown: entry.cooldown,
                })
            });
        }
        let window = index.max_scan_depth.min(input.texts.len());
        let exact_texts: Vec<&str> = input.texts[..window].iter().map(String::as_str).collect();
        let lower_texts: Vec<String> = if index.lower.is_some() || index.any_dynamic {
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
        let mut status = vec![Status::Open; index.entries.len()];
        let mut gates: Vec<Option<Gate>> = vec![None; index.entries.len()];
        for &(i, gate) in &index.static_gates {
            gates[i as usize] = Some(gate);
            if gate == Gate::Disabled {
                status[i as usize] = Status::Stopped;
            }
        }
        let mut candidates = Candidates::new(index.entries.len());
        for &i in &index.always {
            candidates.add(i);
        }
        for key in timed.sticky.keys() {
            if timed.is_sticky(key)
                && let Some(&i) = index.by_timer_key.get(key)
            {
                candidates.add(i);
            }
        }
        Run {
            input,
            index,
            timed,
            macros,
            tokens,
            options,
            n,
            exact_texts,
            lower_texts,
            hits,
            status,
            gates,
            candidates,
            used_tokens: 0,
            overflowed: false,
            recursion_exact: Vec::new(),
            recursion_lower: Vec::new(),
            active_groups: HashSet::new(),
            out,
        }
    }

    /// Entry `i` of the index: its book, the entry, and the book's binding position.
    fn entry_of(&self, i: usize) -> (&'a Lorebook, &'a LorebookEntry, usize) {
        let e = &self.index.entries[i];
        let book = &self.input.books[e.book];
        (book, &book.entries[e.entry], e.book)
    }

    fn key_of(&self, i: usize) -> &'a str {
        self.index.timer_keys[i].as_str()
    }

    /// The gate chain over this pass's open candidates (filters, sticky, keys and secondary
    /// logic, delay, cooldown, delay level); what passes is found.
    fn evaluate(&mut self, pass: usize, current_level: u32) -> Vec<Found> {
        let index = self.index;
        self.candidates.absorb(index, self.hits.take_fresh());
        self.candidates.sort();
        let lower_refs: Vec<&str> = self.lower_texts.iter().map(String::as_str).collect();
        let mut found: Vec<Found> = Vec::new();
        for &c in &self.candidates.list {
            let i = c as usize;
            if self.status[i] != Status::Open {
                continue;
            }
            let (_, entry, _) = self.entry_of(i);
            let traits = index.entries[i].traits;
            if let Some(gate) = traits
                .filtered
                .then(|| self.input.scope.filter(entry))
                .flatten()
            {
                self.status[i] = Status::Stopped;
                self.gates[i] = Some(gate);
                continue;
            }
            let key = self.key_of(i);
            if self.timed.is_sticky(key) {
                found.push((i, Reason::Sticky, 0));
                continue;
            }
            if pass > 0 && traits.exclude_recursion {
                continue;
            }
            let indexed = &index.entries[i];
            let probe = |key: &KeyRef| -> u32 {
                key_hit(
                    key,
                    entry,
                    traits.word_rule,
                    &self.hits,
                    &self.exact_texts,
                    &lower_refs,
                    &self.recursion_exact,
                    &self.recursion_lower,
                    self.input,
                    self.macros,
                )
            };
            let (reason, score) = if entry.strategy == LorebookStrategy::Constant {
                (Reason::Constant, 0)
            } else {
                if indexed.primary.is_empty() {
                    self.status[i] = Status::Stopped;
                    self.gates[i] = Some(Gate::NoKey);
                    continue;
                }
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
                    self.gates[i] = Some(Gate::SecondaryLogic);
                    continue;
                }
                let score = if !traits.grouped {
                    0
                } else {
                    key_score(entry, indexed, |key| within(probe(key), entry.scan_depth))
                };
                let key = primary_key_text(entry, k);
                let reason = if at == RECURSION {
                    Reason::Recursion { key }
                } else {
                    Reason::Keyword {
                        key,
                        message_depth: at,
                    }
                };
                (reason, score)
            };
            if delayed(entry.delay, self.n) {
                self.status[i] = Status::Stopped;
                self.gates[i] = Some(Gate::Delay);
                continue;
            }
            if self.timed.is_cooling(key) {
                self.status[i] = Status::Stopped;
                self.gates[i] = Some(Gate::Cooldown);
                continue;
            }
            if traits.delay_level > 0 && (pass == 0 || traits.delay_level > current_level) {
                continue;
            }
            found.push((i, reason, score));
        }
        found
    }

    /// Sticky entries first, then `order` descending, then binding rank; and the losers of
    /// their inclusion groups.
    fn order(&self, mut found: Vec<Found>) -> (Vec<Found>, HashSet<usize>) {
        found.sort_by(|(a, ra, _), (b, rb, _)| {
            let sticky = |r: &Reason| u8::from(!matches!(r, Reason::Sticky));
            let (_, ea, _) = self.entry_of(*a);
            let (_, eb, _) = self.entry_of(*b);
            sticky(ra)
                .cmp(&sticky(rb))
                .then(eb.order.cmp(&ea.order))
                .then(a.cmp(b))
        });
        if !self.index.any_group {
            return (found, HashSet::new());
        }
        let contenders: Vec<groups::Contender<'_>> = found
            .iter()
            .filter(|(i, _, _)| self.index.entries[*i].traits.grouped)
            .map(|(i, reason, score)| groups::Contender {
                at: *i,
                entry: self.entry_of(*i).1,
                sticky: matches!(reason, Reason::Sticky),
                score: *score,
            })
            .collect();
        let lost = groups::losers(
            &contenders,
            &self.active_groups,
            self.options.group_scoring,
            self.options.seed,
            self.n,
        );
        (found, lost)
    }

    /// Admits found entries in order against their inclusion group, the budget (the first
    /// entry that does not fit closes it) and probability; commits their macro effects and
    /// timers. Returns the content the next pass scans.
    fn admit(&mut self, found: Vec<Found>, lost: &HashSet<usize>) -> String {
        let mut recursion_text = String::new();
        for (i, reason, _) in found {
            let (book, entry, _) = self.entry_of(i);
            let is_sticky = matches!(reason, Reason::Sticky);
            if lost.contains(&i) {
                self.stop(i, Gate::InclusionGroup);
                continue;
            }
            if self.overflowed {
                self.stop(i, Gate::Budget);
                continue;
            }
            if !is_sticky && entry.probability < 100 && entry.rolls_probability() {
                let roll =
                    seeded_percent(self.options.seed, &format!("{}#{}", self.key_of(i), self.n));
                if roll >= f64::from(entry.probability) {
                    self.stop(i, Gate::Probability);
                    continue;
                }
            }
            let mut rendered = self.macros.render(&entry.content, self.input.ctx);
            let cost = (self.tokens)(&rendered.text);
            if let Some(budget) = self.options.budget_tokens
                && self.used_tokens + cost > budget
            {
                self.overflowed = true;
                self.stop(i, Gate::Budget);
                continue;
            }
            self.macros.commit(&mut rendered);
            self.used_tokens += cost;
            let location = format!(
                "lorebooks[{}].entries[{}].content",
                book.id.map(|id| id.to_string()).unwrap_or_default(),
                entry.identifier
            );
            self.out.diagnostics.extend(
                rendered
                    .diagnostics
                    .iter()
                    .cloned()
                    .map(|d| (location.clone(), d)),
            );
            let traits = self.index.entries[i].traits;
            if self.options.recursive && !traits.prevent_recursion && !rendered.text.is_empty() {
                recursion_text.push_str(&rendered.text);
                recursion_text.push('\n');
            }
            self.status[i] = Status::Active;
            self.gates[i] = None;
            if traits.grouped {
                self.active_groups
                    .extend(groups::group_names(entry).into_iter().map(str::to_owned));
            }
            self.timed.activated(
                self.key_of(i),
                self.n,
                EntryTimers {
                    sticky: entry.sticky,
                    cooldown: entry.cooldown,
                },
            );
            self.out.activated.push(ActivatedEntry {
                lorebook_id: book.id,
                identifier: entry.identifier.clone(),
                name: entry.name.clone(),
                injection_position: entry.injection_position,
                injection_depth: entry.injection_depth,
                injection_role: entry.injection_role,
                order: entry.order,
                reason,
                tokens: cost,
                outlet: outlet_name(entry),
                content: rendered.text,
                rank: i,
            });
        }
        recursion_text
    }

    fn stop(&mut self, i: usize, gate: Gate) {
        self.status[i] = Status::Stopped;
        self.gates[i] = Some(gate);
    }

    /// Scans the content activated in this pass for the keys of the next one.
    fn rescan(&mut self, recursion_text: String) {
        let lower = recursion_text.to_lowercase();
        self.hits.scan(
            self.index,
            &[recursion_text.as_str()],
            std::slice::from_ref(&lower),
            |_| RECURSION,
        );
        if self.index.any_regex {
            scan_regex_keys(
                self.input,
                &[recursion_text.as_str()],
                &mut self.hits,
                Some(RECURSION),
                &mut self.out,
            );
        }
        self.recursion_exact.push(recursion_text);
        self.recursion_lower.push(lower);
    }

    /// The entries a gate stopped, and the activated ones in output order.
    fn finish(mut self) -> Activation {
        for (i, gate) in self.gates.iter().enumerate() {
            if let (Some(gate), true) = (gate, self.status[i] != Status::Active) {
                let (book, entry, _) = self.entry_of(i);
                self.out.skipped.push(SkippedEntry {
                    lorebook_id: book.id,
                    identifier: entry.identifier.clone(),
                    name: entry.name.clone(),
                    gate: *gate,
                });
            }
        }
        self.out
            .activated
            .sort_by(|a, b| a.order.cmp(&b.order).then(a.rank.cmp(&b.rank)));
        self.out
    }
}

/// The entries worth evaluating, each listed once.
struct Candidates {
    seen: Vec<bool>,
    list: Vec<u32>,
    sorted: usize,
}

impl Candidates {
    fn new(entries: usize) -> Self {
        Self {
            seen: vec![false; entries],
            list: Vec::new(),
            sorted: 0,
        }
    }

    fn add(&mut self, i: u32) {
        if let Some(seen) = self.seen.get_mut(i as usize)
            && !*seen
        {
            *seen = true;
            self.list.push(i);
        }
    }

    /// Adds the entries whose primary keys were hit for the first time.
    fn absorb(&mut self, index: &LorebookIndex, fresh: FreshHits) {
        let lists = [
            (&fresh.exact, &index.exact_entries),
            (&fresh.lower, &index.lower_entries),
            (&fresh.regex, &index.regex_entries),
        ];
        for (patterns, entries) in lists {
            for &p in patterns {
                for &i in entries
                    .get(p as usize)
                    .map(Vec::as_slice)
                    .unwrap_or_default()
                {
                    self.add(i);
                }
            }
        }
    }

    /// Keeps evaluation in binding order; a no-op when nothing was added since last time.
    fn sort(&mut self) {
        if self.sorted != self.list.len() {
            self.list.sort_unstable();
            self.sorted = self.list.len();
        }
    }
}

/// An entry's key score for inclusion groups: its matching primary keys, plus matching
/// secondary keys under `andAny`, plus every secondary key under `andAll` when all match.
fn key_score(
    entry: &LorebookEntry,
    indexed: &super::index::IndexedEntry,
    matched: impl Fn(&KeyRef) -> bool,
) -> u32 {
    let primary = indexed.primary.iter().filter(|k| matched(k)).count();
    let secondary = indexed.secondary.iter().filter(|k| matched(k)).count();
    let extra = match entry.effective_secondary_strategy() {
        SecondaryKeywordStrategy::AndAny => secondary,
        SecondaryKeywordStrategy::AndAll if secondary == indexed.secondary.len() => secondary,
        _ => 0,
    };
    (primary + extra) as u32
}

/// The outlet of an entry imported with SillyTavern's position 7 (kept in
/// `sillyTavernPosition` while its Tavo position is still the `lorebookAfter` it imported
/// as): world info's `outletName`, or CCv3's `extensions.outlet_name`. An outlet entry
/// without a name is dropped, as in SillyTavern (an empty name).
fn outlet_name(entry: &LorebookEntry) -> Option<String> {
    let position = entry.extra.get("sillyTavernPosition")?.as_i64()?;
    if position != 7 || entry.injection_position != LorebookPosition::LorebookAfter {
        return None;
    }
    let name = entry
        .extra
        .get("outletName")
        .or_else(|| entry.extra.get("extensions")?.get("outlet_name"))
        .and_then(|v| v.as_str())
        .unwrap_or_default();
    Some(name.trim().to_owned())
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
    word_rule: WordRule,
    hits: &ScanHits,
    exact_texts: &[&str],
    lower_texts: &[&str],
    recursion_exact: &[String],
    recursion_lower: &[String],
    input: &ActivationInput<'_>,
    macros: &MacroState,
) -> u32 {
    let whole_word = entry.match_whole_word.then_some(word_rule);
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
            let at = find_in_texts(&needle, texts, whole_word);
            if at != NONE {
                return at;
            }
            let rec: Vec<&str> = recursion.iter().map(String::as_str).collect();
            if find_in_texts(&needle, &rec, whole_word) != NONE {
                RECURSION
            } else {
                NONE
            }
        }
        other => hits.plain(other, whole_word),
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
                } else if at >= 0 {
                    hits.record_regex(k, mark.unwrap_or(at as u32));
                }
            }
        }
        Err(e) => out.key_errors.push(format!("regex keys were skipped: {e}")),
    }
}
