//! The article title, by readability.js's rules for `<title>` (`_getArticleTitle`).
//!
//! Site names are cut from titles like "Story headline | Site", unless that leaves too few
//! words; "Site: Story" keeps the part after the colon unless a heading repeats the whole
//! title; very short or very long titles give way to a lone `<h1>`.

/// Separators of a hierarchical title.
const SEPARATORS: &[char] = &['|', '-', '\\', '/', '>', '»'];

fn word_count(s: &str) -> usize {
    // readability.js: `str.split(/\s+/).length` (an empty string counts as one word).
    s.split_whitespace().count().max(1)
}

/// Byte positions of ` x ` where `x` is one of `separators`.
fn separator_positions(s: &str, separators: &[char]) -> Vec<usize> {
    let chars: Vec<(usize, char)> = s.char_indices().collect();
    let mut out = Vec::new();
    for w in chars.windows(3) {
        if w[0].1 == ' ' && separators.contains(&w[1].1) && w[2].1 == ' ' {
            out.push(w[0].0);
        }
    }
    out
}

/// The article title from the document title and its `<h1>`/`<h2>` texts.
pub(crate) fn article_title(
    document_title: Option<&str>,
    headings: &[(u8, String)],
    h1_count: usize,
) -> Option<String> {
    let orig = document_title.map(str::trim).unwrap_or("");
    let mut cur = orig.to_string();
    let mut hierarchical = false;
    let separators = separator_positions(orig, SEPARATORS);
    if let Some(&last) = separators.last() {
        hierarchical = !separator_positions(orig, &['\\', '/', '>', '»']).is_empty();
        cur = orig[..last].to_string();
        if word_count(&cur) < 3 {
            // Too short: drop the first part instead.
            cur = match orig.find(SEPARATORS) {
                Some(p) => orig[p..].chars().skip(1).collect(),
                None => orig.to_string(),
            };
        }
    } else if orig.contains(": ") {
        let matched = headings.iter().any(|(_, h)| h.trim() == orig);
        if !matched {
            let after_last = orig.rfind(':').map_or(orig, |p| &orig[p + 1..]);
            cur = after_last.to_string();
            if word_count(&cur) < 3 {
                cur = orig.find(':').map_or(orig, |p| &orig[p + 1..]).to_string();
            } else if orig.find(':').is_some_and(|p| word_count(&orig[..p]) > 5) {
                cur = orig.to_string();
            }
        }
    } else if (orig.chars().count() > 150 || orig.chars().count() < 15)
        && h1_count == 1
        && let Some((_, h1)) = headings.iter().find(|(level, _)| *level == 1)
    {
        cur = h1.clone();
    }
    let cur = cur.split_whitespace().collect::<Vec<_>>().join(" ");
    let count = word_count(&cur);
    let cur = if count <= 4
        && (!hierarchical || count != word_count(&orig.replace(SEPARATORS, "")) - 1)
    {
        orig.to_string()
    } else {
        cur
    };
    let cur = if cur.trim().is_empty() {
        // No <title>: the page's own headline.
        headings
            .iter()
            .find(|(level, _)| *level == 1)
            .map(|(_, h)| h.clone())
            .unwrap_or_default()
    } else {
        cur
    };
    let cur = cur.trim().to_string();
    (!cur.is_empty()).then_some(cur)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn title(t: &str) -> Option<String> {
        article_title(Some(t), &[], 0)
    }

    #[test]
    fn readability_title_rules() {
        assert_eq!(
            title("A Long Story About Lanterns | Example Site").as_deref(),
            Some("A Long Story About Lanterns")
        );
        // Cutting the site name would leave one word: the whole title stays.
        assert_eq!(
            title("Lanterns | Example Site").as_deref(),
            Some("Lanterns | Example Site")
        );
        assert_eq!(
            title("Example Site: How to keep a lantern lit all night").as_deref(),
            Some("How to keep a lantern lit all night")
        );
        assert_eq!(title("   ").as_deref(), None);
        assert_eq!(
            article_title(Some("Short"), &[(1, "The Real Headline Here".into())], 1).as_deref(),
            Some("Short")
        );
        assert_eq!(
            article_title(None, &[(1, "Headline".into())], 1).as_deref(),
            Some("Headline")
        );
    }
}
