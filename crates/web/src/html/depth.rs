//! The fallback for pathologically deep HTML.
//!
//! The converter is iterative, but end-tag matching walks the open-element stack, so
//! 100 000 nested `<div>`s (500 KB, well under the input limit) would make it quadratic.
//! Past [`super::convert::MAX_DEPTH`] open elements the page is reduced to its text by a
//! linear scan instead.

/// Elements whose content is raw text (tags inside do not nest).
const RAW_TEXT: &[&str] = &["script", "style", "textarea", "title", "xmp", "noscript"];

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
    super::entities::decode(word, false)
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
    #[test]
    fn ordinary_pages_are_shallow_and_bombs_are_deep() {
        let url = url::Url::parse("http://h.test/").unwrap_or_else(|e| panic!("{e}"));
        let deep = |html: &str| super::super::convert::convert(html, &url).is_none();
        let page = "<html><body><div><p>a<br>b<img src=x></p><p>c</div><script>if (a<b) {}</script></body></html>";
        assert!(!deep(page));
        assert!(deep(&"<div>".repeat(10_000)));
        assert!(!deep(&"<div></div>".repeat(10_000)));
        assert!(!deep(&"<p>para".repeat(10_000)));
        assert!(!deep(&"<li>item".repeat(10_000)));
        assert!(!deep(&"<table><tr><td>cell".repeat(100)));
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
            "<div><section>".repeat(super::super::convert::MAX_DEPTH / 2 - 4),
            "</section></div>".repeat(super::super::convert::MAX_DEPTH / 2 - 4)
        );
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
