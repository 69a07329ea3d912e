//! Main-content extraction on the converter's records, after readability.js.
//!
//! readability.js scores paragraphs into their ancestors, takes the best-scoring ancestor
//! (scaled by its link density), climbs to a parent that scores better, adds siblings that
//! score well, then removes "unlikely" and link-heavy blocks from the result. The converter
//! has already computed every score and statistic during its single pass, and every
//! element's Markdown is a contiguous byte range, so here selection and cleaning are range
//! arithmetic over the records: no tree, no second parse.

use super::convert::{Converted, NONE, Record};
use super::tags::Tag;

/// Below this much text the unlikely-pattern removals are undone (readability retries
/// without them when its result is shorter than its 500-character threshold).
const CHAR_THRESHOLD: u32 = 500;

/// The article: byte ranges of the converter's Markdown, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Article {
    pub ranges: Vec<(usize, usize)>,
}

impl Article {
    /// The article's Markdown, cut from the whole document's.
    pub(crate) fn markdown(&self, document: &str) -> String {
        let total = self.ranges.iter().map(|(s, e)| e - s).sum();
        let mut out = String::with_capacity(total);
        for &(s, e) in &self.ranges {
            if let Some(part) = document.get(s..e) {
                out.push_str(part);
            }
        }
        out
    }
}

fn final_score(r: &Record) -> Option<f32> {
    r.score.map(|s| s * (1.0 - r.stats.link_density()))
}

/// Selects the article, or `None` when nothing scored (short pages, link lists, app shells).
pub(crate) fn extract(c: &Converted) -> Option<Article> {
    let records = &c.records;
    let mut by_node = vec![NONE; c.parents.len()];
    for (i, r) in records.iter().enumerate() {
        if let Some(slot) = by_node.get_mut(r.node as usize) {
            *slot = i as u32;
        }
    }
    let record_of = |node: u32| -> Option<usize> {
        by_node
            .get(node as usize)
            .copied()
            .filter(|&i| i != NONE)
            .map(|i| i as usize)
    };
    let parent_of = |node: u32| c.parents.get(node as usize).copied().unwrap_or(0);

    let mut top = None;
    let mut best = f32::MIN;
    for (i, r) in records.iter().enumerate() {
        if let Some(s) = final_score(r)
            && s > best
        {
            best = s;
            top = Some(i);
        }
    }
    let mut top = top?;

    // Climb while a parent scores better (readability's `parentOfTopCandidate` loop).
    let mut last = best;
    let threshold = best / 3.0;
    let mut node = records[top].node;
    while node != 0 {
        node = parent_of(node);
        if node == 0 {
            break;
        }
        let Some(pi) = record_of(node) else {
            continue;
        };
        let Some(ps) = final_score(&records[pi]) else {
            continue;
        };
        if ps < threshold {
            break;
        }
        if ps > last {
            top = pi;
            break;
        }
        last = ps;
    }
    // An only child says no more than its parent.
    while records[top].node != 0 {
        let parent = records[top].parent;
        match record_of(parent) {
            Some(pi) if parent != 0 && records[pi].children == 1 => top = pi,
            _ => break,
        }
    }

    let chosen = &records[top];
    let mut ranges: Vec<(usize, usize)> = if chosen.node == 0 {
        vec![(chosen.start as usize, chosen.end as usize)]
    } else {
        siblings(c, chosen)
    };
    ranges.sort_unstable();

    let removals = |with_unlikely: bool| -> Vec<(usize, usize)> {
        let mut cut: Vec<(usize, usize)> = records
            .iter()
            .filter(|r| r.node != 0 && r.node != chosen.node && r.start < r.end)
            .filter(|r| {
                // Strictly inside one of the (sorted, disjoint) selected ranges.
                let (start, end) = (r.start as usize, r.end as usize);
                let i = ranges.partition_point(|&(s, _)| s <= start);
                i > 0 && {
                    let (s, e) = ranges[i - 1];
                    end <= e && (start, end) != (s, e)
                }
            })
            .filter(|r| (with_unlikely && r.unlikely) || cleaned_conditionally(r))
            .map(|r| (r.start as usize, r.end as usize))
            .collect();
        cut.sort_unstable_by_key(|&(s, e)| (s, std::cmp::Reverse(e)));
        let mut outer: Vec<(usize, usize)> = Vec::with_capacity(cut.len());
        for r in cut {
            if outer.last().is_none_or(|&(_, e)| r.0 >= e) {
                outer.push(r);
            }
        }
        outer
    };
    let text_of = |ranges: &[(usize, usize)]| -> u32 {
        // Text bytes of the kept ranges, from the records that are exactly those ranges,
        // approximated by the Markdown length when a range is not one element.
        ranges.iter().map(|(s, e)| (e - s) as u32).sum()
    };
    let mut cut = removals(true);
    let kept = subtract(&ranges, &cut);
    if text_of(&kept) < CHAR_THRESHOLD && !cut.is_empty() {
        cut = removals(false);
    }
    let kept = subtract(&ranges, &cut);
    let has_text = kept.iter().any(|&(s, e)| {
        c.markdown
            .get(s..e)
            .is_some_and(|t| t.chars().any(char::is_alphanumeric))
    });
    has_text.then_some(Article { ranges: kept })
}

/// The chosen element and its siblings that look like part of the article.
fn siblings(c: &Converted, chosen: &Record) -> Vec<(usize, usize)> {
    let top_score = final_score(chosen).unwrap_or(0.0);
    let threshold = (top_score * 0.2).max(10.0);
    c.records
        .iter()
        .filter(|r| r.parent == chosen.parent && r.node != 0)
        .filter(|r| {
            if r.node == chosen.node {
                return true;
            }
            if final_score(r).is_some_and(|s| s >= threshold) {
                return true;
            }
            if r.tag != Tag::P {
                return false;
            }
            let len = r.stats.text;
            let density = r.stats.link_density();
            let text = c
                .markdown
                .get(r.start as usize..r.end as usize)
                .unwrap_or("");
            (len > 80 && density < 0.25)
                || (len > 0
                    && len <= 80
                    && density == 0.0
                    && (text.trim_end().ends_with('.') || text.contains(". ")))
        })
        .map(|r| (r.start as usize, r.end as usize))
        .collect()
}

/// readability.js `_cleanConditionally`: link-heavy or image-heavy blocks with few commas.
fn cleaned_conditionally(r: &Record) -> bool {
    if !matches!(
        r.tag,
        Tag::Form | Tag::Fieldset | Tag::Table | Tag::Ul | Tag::Div
    ) {
        return false;
    }
    let weight = r.weight;
    if weight + r.score.unwrap_or(0.0) < 0.0 {
        return true;
    }
    let s = &r.stats;
    if s.commas >= 10 {
        return false;
    }
    let density = s.link_density();
    if r.tag == Tag::Table {
        // Data tables stay; a table that is nearly all links is navigation.
        return density > 0.5;
    }
    let is_list = r.tag == Tag::Ul;
    let paragraphs = s.paragraphs as f32;
    let images = s.images as f32;
    let items = s.items as f32 - 100.0;
    (images > 1.0 && paragraphs / images < 0.5)
        || (!is_list && items > paragraphs)
        || (!is_list && s.text < 25 && (s.images == 0 || s.images > 2) && density > 0.0)
        || (!is_list && weight < 25.0 && density > 0.2)
        || (weight >= 25.0 && density > 0.5)
        || (s.embeds == 1 && s.text < 75)
        || s.embeds > 1
}

/// `ranges` minus the `cut` ranges (both sorted and disjoint), in one merge pass.
fn subtract(ranges: &[(usize, usize)], cut: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let mut out = Vec::with_capacity(ranges.len() + cut.len());
    let mut c = 0;
    for &(s, e) in ranges {
        while c < cut.len() && cut[c].1 <= s {
            c += 1;
        }
        let mut at = s;
        let mut k = c;
        while k < cut.len() && cut[k].0 < e {
            let (cs, ce) = cut[k];
            if cs > at {
                out.push((at, cs));
            }
            at = at.max(ce);
            k += 1;
        }
        if at < e {
            out.push((at, e));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subtracting_ranges() {
        assert_eq!(
            subtract(&[(0, 10)], &[(2, 4), (6, 7)]),
            vec![(0, 2), (4, 6), (7, 10)]
        );
        assert_eq!(
            subtract(&[(0, 10), (20, 30)], &[(5, 25)]),
            vec![(0, 5), (25, 30)]
        );
        assert_eq!(subtract(&[(0, 10)], &[]), vec![(0, 10)]);
    }
}
