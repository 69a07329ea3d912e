//! Splitting a long document into pages of about `page_bytes`.
//!
//! Cuts land on a UTF-8 boundary, preferably after a blank line (a paragraph end), else after
//! a newline, else after a space, looking back at most half a page. Pages concatenate back to
//! exactly the original text: nothing is trimmed or re-flowed.

/// Start offsets of every page of `text` (the first is always 0; an empty text has one page).
pub fn page_starts(text: &str, page_bytes: usize) -> Vec<usize> {
    let page_bytes = page_bytes.max(16);
    let mut starts = vec![0];
    let mut start = 0;
    while text.len() - start > page_bytes {
        let cut = cut_point(text, start, page_bytes);
        starts.push(cut);
        start = cut;
    }
    starts
}

/// The end of the page that begins at `start` (exclusive), `start < cut <= start + page_bytes`.
fn cut_point(text: &str, start: usize, page_bytes: usize) -> usize {
    let hard_end = floor_char_boundary(text, start + page_bytes);
    let window_start = start + page_bytes / 2;
    let window = &text.as_bytes()[window_start.min(hard_end)..hard_end];
    let after = |needle: &[u8]| -> Option<usize> {
        window
            .windows(needle.len())
            .rposition(|w| w == needle)
            .map(|p| window_start + p + needle.len())
    };
    after(b"\n\n")
        .or_else(|| after(b"\n"))
        .or_else(|| after(b" "))
        .filter(|&c| c > start && c <= hard_end)
        .unwrap_or(if hard_end > start {
            hard_end
        } else {
            // A single character longer than the page (impossible for UTF-8 unless the
            // page is under 4 bytes); move past it rather than loop forever.
            ceil_char_boundary(text, start + 1)
        })
}

fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    if i >= text.len() {
        return text.len();
    }
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char_boundary(text: &str, mut i: usize) -> usize {
    while i < text.len() && !text.is_char_boundary(i) {
        i += 1;
    }
    i.min(text.len())
}

/// Cuts `text` to at most `limit` bytes on a UTF-8 boundary, preferring a line end in the
/// last 4 KiB. Returns whether anything was cut.
pub fn truncate_to(text: &mut String, limit: usize) -> bool {
    if text.len() <= limit {
        return false;
    }
    let end = floor_char_boundary(text, limit);
    let floor = end.saturating_sub(4096);
    let cut = text.as_bytes()[floor..end]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(end, |p| floor + p + 1);
    text.truncate(cut);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn pages(text: &str, size: usize) -> Vec<&str> {
        let starts = page_starts(text, size);
        starts
            .iter()
            .enumerate()
            .map(|(i, &s)| &text[s..starts.get(i + 1).copied().unwrap_or(text.len())])
            .collect()
    }

    #[test]
    fn prefers_paragraph_boundaries() {
        let text = format!(
            "{}\n\n{}\n{}",
            "a".repeat(60),
            "b".repeat(20),
            "c".repeat(40)
        );
        let p = pages(&text, 100);
        assert_eq!(p[0], format!("{}\n\n", "a".repeat(60)));
        assert_eq!(p.concat(), text);
    }

    #[test]
    fn short_text_is_one_page() {
        assert_eq!(page_starts("", 100), vec![0]);
        assert_eq!(page_starts("abc", 100), vec![0]);
    }

    #[test]
    fn truncation_lands_on_a_line_end() {
        let mut s = "line one\nline two\nline three".to_string();
        assert!(truncate_to(&mut s, 20));
        assert_eq!(s, "line one\nline two\n");
        let mut short = "x".to_string();
        assert!(!truncate_to(&mut short, 20));
    }

    proptest! {
        #[test]
        fn pages_are_lossless_bounded_and_on_char_boundaries(
            text in "([a-zé東 ]{0,40}\n{0,2}){0,200}",
            size in 16usize..300,
        ) {
            let p = pages(&text, size);
            prop_assert_eq!(p.concat(), text.clone());
            for page in &p {
                prop_assert!(page.len() <= size);
            }
            prop_assert!(p.iter().skip(1).all(|page| !page.is_empty()));
        }
    }
}
