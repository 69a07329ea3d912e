//! The keyword index of a chat's lorebooks: every plain key in one or two Aho-Corasick
//! automata (case-sensitive keys and lower-cased keys), regex keys and macro keys aside.
//!
//! Why: scanning cost must grow with the text, not with entries × messages. The automaton
//! finds every key occurrence in one pass over each scanned message; each entry then only
//! looks up its own keys' first hit. The index depends only on the lorebooks, so callers
//! cache it across generations (see [`crate::engine::PromptEngine`]).
//!
//! It also maps each pattern back to the entries that use it as a primary key, so that
//! activation evaluates only entries with a hit (plus constants and macro keys): the cost
//! of a generation follows what the text mentions, not how many entries the books hold.

use std::collections::HashMap;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use tavo_model::{Lorebook, LorebookEntry, LorebookStrategy};

use crate::regex::{JsPattern, parse_regex_key};

/// Which automaton a plain key lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fold {
    /// Matched against the text as written.
    Exact,
    /// Matched against the lower-cased text (Unicode lower case on both sides).
    Lower,
}

/// How one key is matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyRef {
    /// A plain key: pattern `id` in the `fold` automaton; `spaced` keys (containing
    /// whitespace) skip the whole-word check, as in SillyTavern.
    Plain { fold: Fold, id: u32, spaced: bool },
    /// A `/pattern/flags` key (index into [`LorebookIndex::regex_keys`]).
    Regex(u32),
    /// A key containing macros, rendered each generation and searched directly.
    Dynamic(String),
}

/// One entry with its keys resolved.
#[derive(Debug, Clone)]
pub struct IndexedEntry {
    /// Index of the lorebook in the chat's binding order.
    pub book: usize,
    /// Index of the entry in its lorebook.
    pub entry: usize,
    /// Primary keys (empty keys dropped).
    pub primary: Vec<KeyRef>,
    /// Secondary keys (empty keys dropped).
    pub secondary: Vec<KeyRef>,
    /// SillyTavern fields kept in `extra`, read once here instead of per generation.
    pub traits: EntryTraits,
}

/// What an entry's SillyTavern extras ask for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EntryTraits {
    /// Has `triggers` or a `characterFilter` ([`super::EntryScope::filter`] applies).
    pub filtered: bool,
    /// Belongs to an inclusion group.
    pub grouped: bool,
    /// `excludeRecursion`: only the chat can activate it.
    pub exclude_recursion: bool,
    /// `delayUntilRecursion` as SillyTavern's level: 0 = not delayed, `true` = 1, a number
    /// = that level. Only a recursion pass at this level or a later one can activate it.
    pub delay_level: u32,
    /// `preventRecursion`: its content is not scanned again.
    pub prevent_recursion: bool,
    /// Its lorebook's whole-word rule (`wordCharacters`).
    pub word_rule: super::scan::WordRule,
}

impl EntryTraits {
    /// Reads the traits of `entry`.
    pub fn of(entry: &LorebookEntry) -> Self {
        if entry.extra.is_empty() {
            return Self::default();
        }
        let flag = |name: &str| match entry.extra.get(name) {
            Some(serde_json::Value::Bool(b)) => *b,
            Some(serde_json::Value::Number(n)) => n.as_f64().is_some_and(|v| v > 0.0),
            _ => false,
        };
        Self {
            filtered: entry.extra.contains_key("triggers")
                || entry.extra.contains_key("characterFilter"),
            grouped: !super::groups::group_names(entry).is_empty(),
            exclude_recursion: flag("excludeRecursion"),
            delay_level: delay_level(entry.extra.get("delayUntilRecursion")),
            prevent_recursion: flag("preventRecursion"),
            word_rule: super::scan::WordRule::Tavo,
        }
    }
}

/// SillyTavern's `delayUntilRecursion`: `true` is level 1, a positive number is its level
/// (a fraction rounds up, as ST compares levels numerically), anything else is not delayed.
fn delay_level(v: Option<&serde_json::Value>) -> u32 {
    match v {
        Some(serde_json::Value::Bool(true)) => 1,
        Some(serde_json::Value::Number(n)) => n
            .as_f64()
            .filter(|l| *l > 0.0)
            .map_or(0, |l| l.ceil().min(f64::from(u32::MAX)) as u32),
        _ => 0,
    }
}

/// The compiled index.
#[derive(Debug)]
pub struct LorebookIndex {
    /// Entries in binding order (book, then array order).
    pub entries: Vec<IndexedEntry>,
    /// Automaton of case-sensitive keys.
    pub exact: Option<AhoCorasick>,
    /// Automaton of lower-cased keys.
    pub lower: Option<AhoCorasick>,
    /// Number of patterns per automaton.
    pub exact_len: usize,
    /// Number of lower-cased patterns.
    pub lower_len: usize,
    /// Regex keys.
    pub regex_keys: Vec<JsPattern>,
    /// Identity of the lorebooks the index was built from (ids and revisions).
    pub fingerprint: Vec<(i64, u64, usize)>,
    /// Whether any entry uses a regex key.
    pub any_regex: bool,
    /// Whether any enabled entry has a macro key (searched in lower-cased text).
    pub any_dynamic: bool,
    /// Whether any entry belongs to an inclusion group.
    pub any_group: bool,
    /// Largest `scanDepth` of any enabled entry.
    pub max_scan_depth: usize,
    /// Per case-sensitive pattern, the entries that have it as a primary key.
    pub exact_entries: Vec<Vec<u32>>,
    /// Per lower-cased pattern, the entries that have it as a primary key.
    pub lower_entries: Vec<Vec<u32>>,
    /// Per regex key, the entries that have it as a primary key.
    pub regex_entries: Vec<Vec<u32>>,
    /// Enabled entries evaluated in every pass whatever the scan found: constants and
    /// entries with a macro key (rendered per generation, so not in an automaton).
    pub always: Vec<u32>,
    /// Entries stopped before any text is read: disabled, or keyword entries without a
    /// usable primary key. Reported in the explanation of every generation.
    pub static_gates: Vec<(u32, super::Gate)>,
    /// The timed-effect key of every entry (`"<lorebookId>.<identifier>"`).
    pub timer_keys: Vec<String>,
    /// Entry by timed-effect key.
    pub by_timer_key: HashMap<String, u32>,
    /// The distinct `delayUntilRecursion` levels of enabled entries, ascending.
    pub delay_levels: Vec<u32>,
}

#[derive(Default)]
struct Patterns {
    ids: HashMap<String, u32>,
    list: Vec<String>,
}

impl Patterns {
    fn id(&mut self, key: String) -> u32 {
        if let Some(id) = self.ids.get(&key) {
            return *id;
        }
        let id = self.list.len() as u32;
        self.ids.insert(key.clone(), id);
        self.list.push(key);
        id
    }

    fn build(self) -> Result<Option<AhoCorasick>, String> {
        if self.list.is_empty() {
            return Ok(None);
        }
        AhoCorasickBuilder::new()
            .match_kind(MatchKind::Standard)
            .build(&self.list)
            .map(Some)
            .map_err(|e| e.to_string())
    }
}

/// Whether a book takes part in recursion: CCv3's `recursive_scanning` (kept in the book's
/// extras on import, also from a SillyTavern world-info file) is `false` only when it says so;
/// a missing or non-boolean value leaves recursion to the global setting.
pub fn book_recursion(book: &Lorebook) -> bool {
    !matches!(
        book.extra.get("recursive_scanning"),
        Some(serde_json::Value::Bool(false))
    )
}

/// The identity of a set of lorebooks for caching: `None` when some book has no revision
/// (unsaved data), which disables caching.
pub fn fingerprint(books: &[Lorebook]) -> Option<Vec<(i64, u64, usize)>> {
    books
        .iter()
        .map(|b| match (b.id, b.revision) {
            (Some(id), rev) if rev > 0 => Some((id.0, rev, b.entries.len())),
            _ => None,
        })
        .collect()
}

impl LorebookIndex {
    /// Builds the index of `books` (disabled entries are kept, so explain can list them,
    /// but their keys are not indexed).
    pub fn build(books: &[Lorebook]) -> Result<Self, String> {
        let mut exact = Patterns::default();
        let mut lower = Patterns::default();
        let mut regex_keys = Vec::new();
        let mut regex_ids: HashMap<JsPattern, u32> = HashMap::new();
        let mut entries = Vec::new();
        let mut max_scan_depth = 0usize;
        let mut timer_keys = Vec::new();
        let mut static_gates = Vec::new();
        let mut always = Vec::new();
        for (b, book) in books.iter().enumerate() {
            let word_rule = super::scan::WordRule::of(book);
            let recursion_off = !book_recursion(book);
            for (e, entry) in book.entries.iter().enumerate() {
                let at = entries.len() as u32;
                timer_keys.push(super::timer_key(book, b, entry));
                let mut indexed = IndexedEntry {
                    book: b,
                    entry: e,
                    primary: Vec::new(),
                    secondary: Vec::new(),
                    traits: EntryTraits {
                        word_rule,
                        ..EntryTraits::of(entry)
                    },
                };
                if recursion_off {
                    // The book's `recursive_scanning: false`: its entries neither activate
                    // others nor are activated by them, as if each were excludeRecursion and
                    // preventRecursion.
                    indexed.traits.exclude_recursion = true;
                    indexed.traits.prevent_recursion = true;
                }
                if entry.enabled {
                    max_scan_depth = max_scan_depth.max(entry.scan_depth as usize);
                    let mut resolve = |key: &str| -> Option<KeyRef> {
                        resolve_key(
                            entry,
                            key,
                            &mut exact,
                            &mut lower,
                            &mut regex_keys,
                            &mut regex_ids,
                        )
                    };
                    indexed.primary = entry.keywords.iter().filter_map(|k| resolve(k)).collect();
                    indexed.secondary = entry
                        .secondary_keywords
                        .iter()
                        .filter_map(|k| resolve(k))
                        .collect();
                    let keyword = entry.strategy != LorebookStrategy::Constant;
                    if keyword && indexed.primary.is_empty() {
                        static_gates.push((at, super::Gate::NoKey));
                    } else if !keyword
                        || indexed
                            .primary
                            .iter()
                            .any(|k| matches!(k, KeyRef::Dynamic(_)))
                    {
                        always.push(at);
                    }
                } else {
                    static_gates.push((at, super::Gate::Disabled));
                }
                entries.push(indexed);
            }
        }
        let exact_len = exact.list.len();
        let lower_len = lower.list.len();
        let mut exact_entries = vec![Vec::new(); exact_len];
        let mut lower_entries = vec![Vec::new(); lower_len];
        let mut regex_entries = vec![Vec::new(); regex_keys.len()];
        for (at, indexed) in entries.iter().enumerate() {
            for key in &indexed.primary {
                let list = match key {
                    KeyRef::Plain {
                        fold: Fold::Exact,
                        id,
                        ..
                    } => &mut exact_entries[*id as usize],
                    KeyRef::Plain {
                        fold: Fold::Lower,
                        id,
                        ..
                    } => &mut lower_entries[*id as usize],
                    KeyRef::Regex(id) => &mut regex_entries[*id as usize],
                    KeyRef::Dynamic(_) => continue,
                };
                if list.last() != Some(&(at as u32)) {
                    list.push(at as u32);
                }
            }
        }
        let any_dynamic = entries.iter().any(|e| {
            e.primary
                .iter()
                .chain(&e.secondary)
                .any(|k| matches!(k, KeyRef::Dynamic(_)))
        });
        let any_group = entries.iter().any(|e| e.traits.grouped);
        let mut delay_levels: Vec<u32> = entries
            .iter()
            .filter(|e| books[e.book].entries[e.entry].enabled)
            .map(|e| e.traits.delay_level)
            .filter(|l| *l > 0)
            .collect();
        delay_levels.sort_unstable();
        delay_levels.dedup();
        let by_timer_key = timer_keys
            .iter()
            .enumerate()
            .map(|(i, k)| (k.clone(), i as u32))
            .collect();
        Ok(Self {
            exact_entries,
            lower_entries,
            regex_entries,
            always,
            static_gates,
            timer_keys,
            by_timer_key,
            delay_levels,
            entries,
            exact: exact.build()?,
            lower: lower.build()?,
            exact_len,
            lower_len,
            any_regex: !regex_keys.is_empty(),
            any_dynamic,
            any_group,
            regex_keys,
            fingerprint: fingerprint(books).unwrap_or_default(),
            max_scan_depth: max_scan_depth.min(tavo_model::lorebook::MAX_SCAN_DEPTH as usize),
        })
    }
}

fn resolve_key(
    entry: &LorebookEntry,
    key: &str,
    exact: &mut Patterns,
    lower: &mut Patterns,
    regex_keys: &mut Vec<JsPattern>,
    regex_ids: &mut HashMap<JsPattern, u32>,
) -> Option<KeyRef> {
    let key = key.trim();
    if key.is_empty() {
        return None;
    }
    if let Some(pattern) = parse_regex_key(key) {
        let next = regex_keys.len() as u32;
        let id = *regex_ids.entry(pattern.clone()).or_insert_with(|| {
            regex_keys.push(pattern);
            next
        });
        return Some(KeyRef::Regex(id));
    }
    if key.contains("{{") || key.contains('<') && key.contains('>') {
        return Some(KeyRef::Dynamic(key.to_owned()));
    }
    let spaced = key.chars().any(char::is_whitespace);
    Some(if entry.case_sensitive {
        KeyRef::Plain {
            fold: Fold::Exact,
            id: exact.id(key.to_owned()),
            spaced,
        }
    } else {
        KeyRef::Plain {
            fold: Fold::Lower,
            id: lower.id(key.to_lowercase()),
            spaced,
        }
    })
}
