//! A guard against pathologically deep HTML.
//!
//! html5ever builds any depth iteratively, but htmd (and readability) walk the tree
//! recursively: 100 000 nested `<div>`s — 500 KB, well under the input limit — would overflow
//! the converter thread's stack and take the whole process down (and html5ever's scope checks
//! make parsing such a document quadratic). A linear pre-scan estimates the nesting depth;
//! past [`MAX_DEPTH`] the page is reduced to its text by a linear scan, never parsed.

/// Deepest nesting handed to the recursive converters. Real pages stay far below (Wikipedia
/// peaks around 30); measured safe on a 2 MiB thread stack.
pub(crate) const MAX_DEPTH: usize = 512;

/// Elements that never have children.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr",
];

/// Elements a sibling of the same name implicitly closes.
const AUTO_CLOSING: &[&str] = &[
    "p", "li", "dt", "dd", "tr", "td", "th", "option", "optgroup",
];

/// Elements whose content is raw text (tags inside do not nest).
const RAW_TEXT: &[&str] = &["script", "style", "textarea", "title", "xmp", "noscript"];

/// An estimate of the deepest element nesting, stopping early once `limit` is exceeded.
pub(crate) fn exceeds(html: &str, limit: usize) -> bool {
    let bytes = html.as_bytes();
    let mut stack: Vec<&[u8]> = Vec::new();
    let mut i = 0;
    while let Some(offset) = bytes[i..].iter().position(|&b| b == b'<') {
        let start = i + offset + 1;
        i = start;
        let closing = bytes.get(start) == Some(&b'/');
        let name_start = if closing { start + 1 } else { start };
        let name_len = bytes[name_start..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric())
            .count();
        if name_len == 0 {
            continue;
        }
        let name = &bytes[name_start..name_start + name_len];
        let tag_end = bytes[name_start..]
            .iter()
            .position(|&b| b == b'>')
            .map_or(bytes.len(), |p| name_start + p);
        let self_closing = tag_end > 0 && bytes.get(tag_end - 1) == Some(&b'/');
        i = tag_end.min(bytes.len());
        if closing {
            // Pop back to the matching element if it is near the top (html5ever's recovery).
            if let Some(pos) = stack
                .iter()
                .rev()
                .take(64)
                .position(|open| open.eq_ignore_ascii_case(name))
            {
                let keep = stack.len() - pos - 1;
                stack.truncate(keep);
            }
            continue;
        }
        let is = |list: &[&str]| list.iter().any(|t| t.as_bytes().eq_ignore_ascii_case(name));
        if self_closing || is(VOID) {
            continue;
        }
        if is(RAW_TEXT) {
            // Skip to the matching end tag: nothing inside nests.
            let lower_end: Vec<u8> = [b"</".as_slice(), name].concat().to_ascii_lowercase();
            let mut j = i;
            while let Some(p) = bytes[j..].iter().position(|&b| b == b'<') {
                let at = j + p;
                if bytes.len() >= at + lower_end.len()
                    && bytes[at..at + lower_end.len()].eq_ignore_ascii_case(&lower_end)
                {
                    break;
                }
                j = at + 1;
            }
            i = j;
            continue;
        }
        if is(AUTO_CLOSING) {
            // `<p>a<p>b`, `<li>x<li>y`: a new one closes the previous (html5ever does too).
            if let Some(pos) = stack
                .iter()
                .rev()
                .take(64)
                .position(|open| open.eq_ignore_ascii_case(name))
            {
                let keep = stack.len() - pos - 1;
                stack.truncate(keep);
            }
        }
        stack.push(name);
        if stack.len() > limit {
            return true;
        }
    }
    false
}

/// The visible text of a document by a linear scan (no tree: html5ever's scope checks are
/// quadratic in the depth, so deep documents are not parsed at all). Tags are dropped, block
/// tags start a new line, script/style content is skipped, the common entities are decoded.
pub(crate) fn plain_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 4);
    let mut rest = html;
    while let Some(lt) = rest.find('<') {
        push_text(&mut out, &rest[..lt]);
        let after = &rest[lt + 1..];
        let gt = after.find('>').map_or(after.len(), |p| p + 1);
        let tag = &after[..gt.saturating_sub(1).min(after.len())];
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(char::is_ascii_alphanumeric)
            .collect::<String>()
            .to_ascii_lowercase();
        rest = &after[gt.min(after.len())..];
        if !tag.starts_with('/') && RAW_TEXT.contains(&name.as_str()) {
            let close = format!("</{name}");
            let end = find_ignore_case(rest, &close).unwrap_or(rest.len());
            rest = &rest[end..];
            continue;
        }
        if BLOCK.contains(&name.as_str()) && !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
    }
    push_text(&mut out, rest);
    out.trim().to_string()
}

const BLOCK: &[&str] = &[
    "p",
    "div",
    "li",
    "br",
    "tr",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "section",
    "article",
    "table",
    "ul",
    "ol",
    "pre",
    "blockquote",
];

fn push_text(out: &mut String, text: &str) {
    let words = text.split_whitespace();
    for word in words {
        if !out.is_empty() && !out.ends_with('\n') && !out.ends_with(' ') {
            out.push(' ');
        }
        out.push_str(&decode_entities(word));
    }
}

fn decode_entities(word: &str) -> std::borrow::Cow<'_, str> {
    if !word.contains('&') {
        return word.into();
    }
    word.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&nbsp;", " ")
        .replace("&amp;", "&")
        .into()
}

fn find_ignore_case(haystack: &str, needle: &str) -> Option<usize> {
    let n = needle.len();
    haystack
        .as_bytes()
        .windows(n)
        .position(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_pages_are_shallow_and_bombs_are_deep() {
        let page = "<html><body><div><p>a<br>b<img src=x></p><p>c</div><script>if (a<b) {}</script></body></html>";
        assert!(!exceeds(page, 5));
        let bomb = "<div>".repeat(10_000);
        assert!(exceeds(&bomb, MAX_DEPTH));
        let closed = "<div></div>".repeat(10_000);
        assert!(!exceeds(&closed, MAX_DEPTH));
        let unclosed_paragraphs = "<p>para".repeat(10_000);
        assert!(!exceeds(&unclosed_paragraphs, MAX_DEPTH));
    }

    #[test]
    fn deep_documents_convert_to_text_without_recursion() {
        let bomb = format!(
            "{}deep &amp; text<script>x<y</script>{}",
            "<div><span>".repeat(100_000),
            "</span></div>".repeat(10)
        );
        let md = super::super::html_to_markdown(
            &bomb,
            &url::Url::parse("http://h.test/").unwrap_or_else(|e| panic!("{e}")),
        );
        assert_eq!(md.markdown, "deep & text");
        assert!(md.warnings.contains(&crate::warning::Warning::HtmlTooDeep));
    }

    #[test]
    fn the_depth_limit_is_safe_on_a_small_stack() {
        let html = format!(
            "{}<p>leaf</p>{}",
            "<div><section>".repeat(MAX_DEPTH / 2 - 4),
            "</section></div>".repeat(MAX_DEPTH / 2 - 4)
        );
        assert!(!exceeds(&html, MAX_DEPTH));
        let handle = std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn(move || {
                let url = url::Url::parse("http://h.test/").unwrap_or_else(|e| panic!("{e}"));
                super::super::html_to_markdown(&html, &url).markdown
            })
            .unwrap_or_else(|e| panic!("{e}"));
        let md = handle
            .join()
            .unwrap_or_else(|_| panic!("converter overflowed a 2 MiB stack"));
        assert!(md.contains("leaf"));
    }
}
