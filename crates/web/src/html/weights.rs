//! readability.js's class and id patterns, matched in one Aho-Corasick pass per attribute.

use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

/// Pattern groups, as bits.
pub(crate) const UNLIKELY: u8 = 1;
pub(crate) const MAYBE: u8 = 2;
pub(crate) const POSITIVE: u8 = 4;
pub(crate) const NEGATIVE: u8 = 8;

const GROUPS: &[(u8, &[&str])] = &[
    (
        UNLIKELY,
        &[
            "-ad-",
            "ai2html",
            "banner",
            "breadcrumbs",
            "combx",
            "comment",
            "community",
            "cover-wrap",
            "disqus",
            "extra",
            "footer",
            "gdpr",
            "header",
            "legends",
            "menu",
            "related",
            "remark",
            "replies",
            "rss",
            "shoutbox",
            "sidebar",
            "skyscraper",
            "social",
            "sponsor",
            "supplemental",
            "ad-break",
            "agegate",
            "pagination",
            "pager",
            "popup",
            "yom-remote",
        ],
    ),
    (
        MAYBE,
        &[
            "and", "article", "body", "column", "content", "main", "mathjax", "shadow",
        ],
    ),
    (
        POSITIVE,
        &[
            "article",
            "body",
            "content",
            "entry",
            "hentry",
            "h-entry",
            "main",
            "page",
            "pagination",
            "post",
            "text",
            "blog",
            "story",
        ],
    ),
    (
        NEGATIVE,
        &[
            "-ad-",
            "hidden",
            "banner",
            "combx",
            "comment",
            "com-",
            "contact",
            "footer",
            "gdpr",
            "masthead",
            "media",
            "meta",
            "outbrain",
            "promo",
            "related",
            "scroll",
            "share",
            "shoutbox",
            "sidebar",
            "skyscraper",
            "sponsor",
            "shopping",
            "tags",
            "widget",
        ],
    ),
];

struct Matcher {
    automaton: AhoCorasick,
    masks: Vec<u8>,
}

static MATCHER: LazyLock<Option<Matcher>> = LazyLock::new(|| {
    let mut patterns: Vec<&str> = Vec::new();
    let mut masks: Vec<u8> = Vec::new();
    for (bit, words) in GROUPS {
        for word in *words {
            match patterns.iter().position(|p| p == word) {
                Some(i) => masks[i] |= bit,
                None => {
                    patterns.push(word);
                    masks.push(*bit);
                }
            }
        }
    }
    let automaton = AhoCorasickBuilder::new()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::Standard)
        .build(&patterns)
        .ok()?;
    Some(Matcher { automaton, masks })
});

/// The groups whose patterns occur in `value` (a class list or an id).
pub(crate) fn mask(value: &str) -> u8 {
    if value.is_empty() {
        return 0;
    }
    let Some(m) = MATCHER.as_ref() else {
        return 0;
    };
    let mut out = 0;
    for hit in m.automaton.find_overlapping_iter(value) {
        out |= m.masks[hit.pattern().as_usize()];
    }
    out
}

/// readability.js's class weight: ±25 for the class, ±25 for the id.
pub(crate) fn weight(class_mask: u8, id_mask: u8) -> f32 {
    let one = |m: u8| {
        let mut w = 0.0;
        if m & NEGATIVE != 0 {
            w -= 25.0;
        }
        if m & POSITIVE != 0 {
            w += 25.0;
        }
        w
    };
    one(class_mask) + one(id_mask)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_and_weights() {
        assert_eq!(mask("site-Sidebar"), UNLIKELY | NEGATIVE);
        assert_eq!(mask("article-body") & (MAYBE | POSITIVE), MAYBE | POSITIVE);
        assert_eq!(mask("plain"), 0);
        assert_eq!(weight(mask("post-content"), mask("comments")), 0.0);
        assert_eq!(weight(mask("share-bar"), 0), -25.0);
    }
}
