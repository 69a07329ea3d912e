//! Finding where keys occur: one pass of the automata over each scanned message, recording
//! for each key the newest message it occurs in (with and without the whole-word rule).
//!
//! Whole words: a hit counts when the characters on both sides are not word characters.
//! Which characters are word characters is the lorebook's [`WordRule`]:
//! - [`WordRule::Tavo`] (native lorebooks): letters, digits and `_` of every script,
//!   **except** CJK ideographs, kana and hangul: those scripts write without spaces, so a CJK
//!   key matches inside CJK text (`猫` in `小猫咪`), while `cat` does not match inside
//!   `catalog` and `caf` not inside `café`.
//! - [`WordRule::SillyTavern`] (lorebooks imported from SillyTavern world info or a card's
//!   `character_book`, marked `wordCharacters: "ascii"`): exactly SillyTavern's
//!   `(?:^|\W)key(?:$|\W)`, whose JavaScript `\W` is ASCII-only — only `[A-Za-z0-9_]` are
//!   word characters, so `caf` matches inside `café`, `кот` inside `котик`, and `猫` inside
//!   `小猫咪`.
//!
//! Keys containing whitespace are matched as plain substrings under both rules, as in
//! SillyTavern.

use super::index::{Fold, KeyRef, LorebookIndex};

/// No hit.
pub const NONE: u32 = u32::MAX;
/// Hit in the recursion buffer (activated entries' content), which every entry with a
/// scan depth above 0 sees.
pub const RECURSION: u32 = u32::MAX - 1;

/// Which characters count as word characters for a lorebook's whole-word keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WordRule {
    /// Letters, digits and `_` of every script except CJK ([`is_word_char`]).
    #[default]
    Tavo,
    /// `[A-Za-z0-9_]` only, as JavaScript's `\W` in SillyTavern's key regex.
    SillyTavern,
}

pub use tavo_model::lorebook::{WORD_CHARACTERS_ASCII, WORD_CHARACTERS_KEY};

impl WordRule {
    /// The rule a lorebook asks for ([`WORD_CHARACTERS_KEY`]: `"ascii"` is
    /// [`WordRule::SillyTavern`], anything else or nothing [`WordRule::Tavo`]).
    pub fn of(book: &tavo_model::Lorebook) -> Self {
        match book.extra.get(WORD_CHARACTERS_KEY).and_then(|v| v.as_str()) {
            Some(WORD_CHARACTERS_ASCII) => WordRule::SillyTavern,
            _ => WordRule::Tavo,
        }
    }

    /// Whether `c` is a word character under this rule.
    pub fn is_word_char(self, c: char) -> bool {
        match self {
            WordRule::Tavo => is_word_char(c),
            WordRule::SillyTavern => c.is_ascii_alphanumeric() || c == '_',
        }
    }

    /// Whether the occurrence `text[start..end]` stands as a whole word under this rule.
    pub fn whole_word_at(self, text: &str, start: usize, end: usize) -> bool {
        let before = text[..start].chars().next_back();
        let after = text[end..].chars().next();
        !before.is_some_and(|c| self.is_word_char(c))
            && !after.is_some_and(|c| self.is_word_char(c))
    }
}

/// Newest message index (0 = newest) where each pattern occurs.
#[derive(Debug, Clone)]
pub struct Hits {
    any: Vec<u32>,
    /// Whole-word hits under [`WordRule::Tavo`].
    word: Vec<u32>,
    /// Whole-word hits under [`WordRule::SillyTavern`].
    word_ascii: Vec<u32>,
    /// Patterns hit for the first time since the last [`ScanHits::take_fresh`].
    fresh: Vec<u32>,
}

impl Hits {
    fn new(len: usize) -> Self {
        Self {
            any: vec![NONE; len],
            word: vec![NONE; len],
            word_ascii: vec![NONE; len],
            fresh: Vec::new(),
        }
    }
}

/// Patterns hit for the first time, by kind: what activation must (re)consider.
#[derive(Debug, Default)]
pub struct FreshHits {
    /// Case-sensitive patterns.
    pub exact: Vec<u32>,
    /// Lower-cased patterns.
    pub lower: Vec<u32>,
    /// Regex keys.
    pub regex: Vec<u32>,
}

/// Hits of every key kind.
#[derive(Debug, Clone)]
pub struct ScanHits {
    exact: Hits,
    lower: Hits,
    /// Newest message index per regex key (`NONE` for no match); set through
    /// [`ScanHits::record_regex`].
    regex: Vec<u32>,
    fresh_regex: Vec<u32>,
}

/// Whether `c` counts as part of a word for the whole-word rule.
pub fn is_word_char(c: char) -> bool {
    (c.is_alphanumeric() || c == '_') && !is_cjk(c)
}

/// CJK ideographs, kana, hangul and bopomofo: scripts written without spaces.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x11FF | 0x2E80..=0x2FDF | 0x3040..=0x30FF | 0x3100..=0x312F | 0x3130..=0x318F
        | 0x31A0..=0x31FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xA960..=0xA97F | 0xAC00..=0xD7AF
        | 0xF900..=0xFAFF | 0xFF66..=0xFF9F | 0x20000..=0x3134F)
}

/// Whether the occurrence `text[start..end]` stands as a whole word ([`WordRule::Tavo`]).
pub fn whole_word_at(text: &str, start: usize, end: usize) -> bool {
    WordRule::Tavo.whole_word_at(text, start, end)
}

impl ScanHits {
    /// Empty hits for `index`.
    pub fn new(index: &LorebookIndex) -> Self {
        Self {
            exact: Hits::new(index.exact_len),
            lower: Hits::new(index.lower_len),
            regex: vec![NONE; index.regex_keys.len()],
            fresh_regex: Vec::new(),
        }
    }

    /// Records that regex key `k` matched at `mark`, unless a newer hit is known.
    pub fn record_regex(&mut self, k: usize, mark: u32) {
        if let Some(slot) = self.regex.get_mut(k)
            && *slot == NONE
        {
            *slot = mark;
            self.fresh_regex.push(k as u32);
        }
    }

    /// Takes the patterns hit for the first time since the last call.
    pub fn take_fresh(&mut self) -> FreshHits {
        FreshHits {
            exact: std::mem::take(&mut self.exact.fresh),
            lower: std::mem::take(&mut self.lower.fresh),
            regex: std::mem::take(&mut self.fresh_regex),
        }
    }

    /// Scans `texts` (newest first): `exact_texts[i]` as written, `lower_texts[i]` lower-cased.
    /// Hits already recorded are kept (earlier = newer wins).
    pub fn scan(
        &mut self,
        index: &LorebookIndex,
        exact_texts: &[&str],
        lower_texts: &[String],
        mark: impl Fn(usize) -> u32,
    ) {
        if let Some(ac) = &index.exact {
            for (i, text) in exact_texts.iter().enumerate() {
                record(ac, text, mark(i), &mut self.exact);
            }
        }
        if let Some(ac) = &index.lower {
            for (i, text) in lower_texts.iter().enumerate() {
                record(ac, text, mark(i), &mut self.lower);
            }
        }
    }

    /// The newest message where `key` occurs under the entry's whole-word setting (`None`:
    /// anywhere), if any.
    pub fn plain(&self, key: &KeyRef, whole_word: Option<WordRule>) -> u32 {
        match key {
            KeyRef::Plain { fold, id, spaced } => {
                let hits = match fold {
                    Fold::Exact => &self.exact,
                    Fold::Lower => &self.lower,
                };
                let table = match whole_word {
                    _ if *spaced => &hits.any,
                    None => &hits.any,
                    Some(WordRule::Tavo) => &hits.word,
                    Some(WordRule::SillyTavern) => &hits.word_ascii,
                };
                table.get(*id as usize).copied().unwrap_or(NONE)
            }
            KeyRef::Regex(id) => self.regex.get(*id as usize).copied().unwrap_or(NONE),
            KeyRef::Dynamic(_) => NONE,
        }
    }
}

fn record(ac: &aho_corasick::AhoCorasick, text: &str, mark: u32, hits: &mut Hits) {
    for m in ac.find_overlapping_iter(text) {
        let p = m.pattern().as_usize();
        if hits.any[p] == NONE {
            hits.any[p] = mark;
            hits.fresh.push(p as u32);
        }
        if hits.word[p] == NONE && WordRule::Tavo.whole_word_at(text, m.start(), m.end()) {
            hits.word[p] = mark;
        }
        if hits.word_ascii[p] == NONE
            && WordRule::SillyTavern.whole_word_at(text, m.start(), m.end())
        {
            hits.word_ascii[p] = mark;
        }
    }
}

/// Newest index of `needle` in `texts` (already folded like the needle), or [`NONE`];
/// `whole_word` is the rule of a whole-word key.
pub fn find_in_texts(needle: &str, texts: &[&str], whole_word: Option<WordRule>) -> u32 {
    if needle.is_empty() {
        return NONE;
    }
    let rule = whole_word.filter(|_| !needle.chars().any(char::is_whitespace));
    for (i, text) in texts.iter().enumerate() {
        for (start, _) in text.match_indices(needle) {
            if rule.is_none_or(|r| r.whole_word_at(text, start, start + needle.len())) {
                return i as u32;
            }
        }
    }
    NONE
}

/// Whether a hit at `at` is inside an entry's scan depth. Depth 0 sees nothing (as in
/// SillyTavern), not even the recursion buffer.
pub fn within(at: u32, depth: u32) -> bool {
    at != NONE && depth > 0 && (at == RECURSION || at < depth)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_word_rule() {
        let cases = [
            ("the cat sat", "cat", true),
            ("catalog", "cat", false),
            ("bobcat", "cat", false),
            ("café", "caf", false),
            ("cat_", "cat", false),
            ("(cat)", "cat", true),
            ("小猫咪", "猫", true),
            ("猫cat", "cat", true),
            ("ねこ好き", "ねこ", true),
            ("\u{1}cat\n", "cat", true),
        ];
        for (text, key, expected) in cases {
            let start = text.find(key).unwrap_or_else(|| unreachable!());
            assert_eq!(
                whole_word_at(text, start, start + key.len()),
                expected,
                "{key} in {text}"
            );
        }
    }

    #[test]
    fn depth_window() {
        assert!(within(0, 1));
        assert!(!within(1, 1));
        assert!(within(RECURSION, 1));
        assert!(!within(RECURSION, 0));
        assert!(!within(0, 0));
        assert!(!within(NONE, 1000));
    }

    #[test]
    fn sillytavern_whole_words_are_ascii_only() {
        // (text, key, Tavo's rule, SillyTavern's `(?:^|\W)key(?:$|\W)` with ASCII `\W`)
        let cases = [
            ("the cat sat", "cat", true, true),
            ("catalog", "cat", false, false),
            ("bobcat", "cat", false, false),
            ("cat_", "cat", false, false),
            ("cat9", "cat", false, false),
            ("café", "caf", false, true),
            ("écaf", "caf", false, true),
            ("naïve", "na", false, true),
            ("котик", "кот", false, true),
            ("小猫咪", "猫", true, true),
            ("猫cat", "cat", true, true),
            ("\u{1}cat\n", "cat", true, true),
            ("x-ray", "ray", true, true),
            ("Ωmega", "mega", false, true),
        ];
        for (text, key, tavo, st) in cases {
            let start = text.find(key).unwrap_or_else(|| unreachable!());
            let end = start + key.len();
            assert_eq!(
                WordRule::Tavo.whole_word_at(text, start, end),
                tavo,
                "Tavo: {key} in {text}"
            );
            assert_eq!(
                WordRule::SillyTavern.whole_word_at(text, start, end),
                st,
                "SillyTavern: {key} in {text}"
            );
        }
    }

    #[test]
    fn dynamic_search() {
        let tavo = Some(WordRule::Tavo);
        let st = Some(WordRule::SillyTavern);
        assert_eq!(find_in_texts("alex", &["no", "hi alex!"], tavo), 1);
        assert_eq!(find_in_texts("alex", &["alexander"], tavo), NONE);
        assert_eq!(find_in_texts("alex", &["alexander"], None), 0);
        assert_eq!(find_in_texts("caf", &["un café"], tavo), NONE);
        assert_eq!(find_in_texts("caf", &["un café"], st), 0);
        assert_eq!(
            find_in_texts("un caf", &["un café"], tavo),
            0,
            "spaced keys are substrings"
        );
    }
}
