//! Who answers, decided from text alone: mentions, `@name` addresses, the seeded random pick and
//! the parsing of a speaker-selection answer. Pure; no I/O.

use tavo_model::CharacterId;

/// A member as the selection sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    /// The character.
    pub id: CharacterId,
    /// Its name.
    pub name: String,
    /// Its nickname (Tavo: what `{{char}}` says in a group chat), when it has one.
    pub nickname: Option<String>,
    /// Muted in this chat.
    pub muted: bool,
}

impl Member {
    /// The names the member answers to: its name, then its nickname.
    fn names(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.name.as_str())
            .chain(self.nickname.as_deref())
            .map(str::trim)
            .filter(|n| !n.is_empty())
    }
}

/// Whether `c` continues a word (a name match must not be part of a longer word).
fn wordish(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Byte offsets in `text` where `name` occurs as a whole word, case-insensitively. A name that
/// starts or ends with a non-ASCII letter (Chinese, Japanese) needs no boundary on that side:
/// those scripts do not separate words with spaces.
fn occurrences(text: &str, name: &str) -> Vec<usize> {
    let hay = text.to_lowercase();
    let needle = name.to_lowercase();
    if needle.is_empty() || hay.len() != text.len() {
        // Lower-casing changed byte lengths: match on the original text, case-sensitively.
        return plain_occurrences(text, name);
    }
    plain_occurrences(&hay, &needle)
}

fn plain_occurrences(hay: &str, needle: &str) -> Vec<usize> {
    let first = needle.chars().next();
    let last = needle.chars().next_back();
    let (Some(first), Some(last)) = (first, last) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (at, _) in hay.match_indices(needle) {
        let before = hay[..at].chars().next_back();
        let after = hay[at + needle.len()..].chars().next();
        let open = !first.is_ascii() || !before.is_some_and(wordish);
        let close = !last.is_ascii() || !after.is_some_and(wordish);
        if open && close {
            out.push(at);
        }
    }
    out
}

/// The members `text` names (by name or nickname, whole words, any case), in the order of
/// their first mention. Muted members are included; the caller decides what muting means.
pub fn mentioned(text: &str, members: &[Member]) -> Vec<usize> {
    let mut hits: Vec<(usize, usize)> = members
        .iter()
        .enumerate()
        .filter_map(|(i, m)| {
            m.names()
                .filter_map(|n| occurrences(text, n).first().copied())
                .min()
                .map(|at| (at, i))
        })
        .collect();
    hits.sort();
    hits.into_iter().map(|(_, i)| i).collect()
}

/// The members `text` addresses as `@name` (or `@nickname`; also the full-width `＠`), in the
/// order of their first address. The longest name wins where names share a prefix.
pub fn addressed(text: &str, members: &[Member]) -> Vec<usize> {
    let mut hits: Vec<(usize, usize)> = Vec::new();
    for (at, sign) in text.match_indices(['@', '＠']) {
        let rest = &text[at + sign.len()..];
        let best = members
            .iter()
            .enumerate()
            .flat_map(|(i, m)| m.names().map(move |n| (i, n)))
            .filter(|(_, n)| {
                let head = rest.get(..n.len());
                head.is_some_and(|h| h.eq_ignore_ascii_case(n) || h == *n)
                    && (!n.chars().next_back().is_some_and(|c| c.is_ascii())
                        || !rest[n.len()..].chars().next().is_some_and(wordish))
            })
            .max_by_key(|(_, n)| n.len());
        if let Some((i, _)) = best
            && !hits.iter().any(|(_, k)| *k == i)
        {
            hits.push((at, i));
        }
    }
    hits.into_iter().map(|(_, i)| i).collect()
}

/// A number in `0..n` drawn from `seed` (SplitMix64), so a reply's seed pins the natural
/// mode's random speaker.
pub fn draw(seed: u64, n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z % n as u64) as usize
}

/// The members a speaker-selection answer names, in its order. Tavo asks for names only,
/// comma-separated; models also answer with `、`/`，`/`;`/`and`/new lines, bullets, quotes,
/// `@`, a JSON array, or a sentence. Pieces are matched to names first; when no piece is a
/// name, the names found anywhere in the answer count, in the order they appear. Unknown names
/// are ignored; an answer that names nobody gives nothing (the caller falls back).
pub fn parse_selection(answer: &str, members: &[Member]) -> Vec<usize> {
    let mut picked: Vec<usize> = Vec::new();
    let text = answer.replace(" and ", ",").replace(" & ", ",");
    for piece in text.split([',', '，', '、', ';', '；', '\n', '|', '/']) {
        let clean = piece
            .trim()
            .trim_start_matches(['-', '*', '•', '[', '(', '"', '\'', '`', '@', '＠', ' '])
            .trim_end_matches([
                ']', ')', '"', '\'', '`', '*', '.', '。', '!', '！', ' ', ':',
            ])
            .trim();
        if clean.is_empty() {
            continue;
        }
        let found = members.iter().position(|m| {
            m.names()
                .any(|n| n.eq_ignore_ascii_case(clean) || n.to_lowercase() == clean.to_lowercase())
        });
        if let Some(i) = found
            && !picked.contains(&i)
        {
            picked.push(i);
        }
    }
    if picked.is_empty() {
        picked = mentioned(answer, members);
    }
    picked
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roster() -> Vec<Member> {
        ["Ann", "Anna", "Bo Li", "小明"]
            .iter()
            .enumerate()
            .map(|(i, n)| Member {
                id: CharacterId(i as i64 + 1),
                name: (*n).to_owned(),
                nickname: None,
                muted: false,
            })
            .collect()
    }

    #[test]
    fn mentions_are_whole_words_in_mention_order() {
        let r = roster();
        assert_eq!(mentioned("bo li, what does anna think?", &r), [2, 1]);
        assert_eq!(mentioned("Annabel is not Ann", &r), [0]);
        assert_eq!(mentioned("小明你好", &r), [3]);
        assert!(mentioned("nobody here", &r).is_empty());
    }

    #[test]
    fn nicknames_count_as_names() {
        let mut r = roster();
        r[0].nickname = Some("Annie".into());
        assert_eq!(mentioned("hey annie", &r), [0]);
        assert_eq!(addressed("@Annie hi", &r), [0]);
    }

    #[test]
    fn addresses_take_the_longest_name_and_need_the_at_sign() {
        let r = roster();
        assert_eq!(addressed("@Anna and @Ann, hi", &r), [1, 0]);
        assert_eq!(addressed("@bo li ＠小明 @Ann @Ann", &r), [2, 3, 0]);
        assert!(addressed("Ann, hi", &r).is_empty());
        assert!(addressed("@Annabel", &r).is_empty());
        assert!(addressed("mail me at x@y", &r).is_empty());
    }

    #[test]
    fn selection_answers_are_parsed_robustly() {
        let r = roster();
        assert_eq!(parse_selection("Anna, Ann", &r), [1, 0]);
        assert_eq!(parse_selection("小明、Bo Li", &r), [3, 2]);
        assert_eq!(parse_selection("- **Ann**\n- \"Bo Li\".", &r), [0, 2]);
        assert_eq!(parse_selection("[\"Ann\", \"Anna\"]", &r), [0, 1]);
        assert_eq!(parse_selection("@ann and @anna", &r), [0, 1]);
        assert_eq!(
            parse_selection("I think Bo Li should answer, then Ann.", &r),
            [2, 0]
        );
        assert!(parse_selection("Nobody, Zed", &r).is_empty());
        assert!(parse_selection("", &r).is_empty());
    }

    #[test]
    fn the_draw_is_a_function_of_the_seed() {
        assert_eq!(draw(7, 3), draw(7, 3));
        assert!((0..50).all(|s| draw(s, 3) < 3));
        let spread: std::collections::HashSet<usize> = (0..50).map(|s| draw(s, 3)).collect();
        assert_eq!(spread.len(), 3);
        assert_eq!(draw(1, 0), 0);
    }
}
