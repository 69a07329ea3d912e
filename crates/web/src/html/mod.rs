//! HTML → Markdown, main content first, in one pass.
//!
//! [`tokenizer`] streams tokens; [`convert`] keeps a small stack of open elements (the
//! implicit closes of the HTML standard, no tree) and writes Markdown directly while
//! recording readability.js's statistics for every element; [`extract`] picks the article by
//! those scores and cuts its byte ranges out of the Markdown; [`title`] applies
//! readability's title rules. Written in-house because the measured alternative
//! (html5ever's tree + dom_smoothie's readability + htmd) ran at 7–24 MiB/s on 1–5 MB pages
//! against a 50 MB/s target: see BENCHMARKS.md and the crate README.

mod attrs;
pub(crate) mod convert;
mod depth;
mod entities;
mod extract;
mod links;
mod record;
mod table;
mod tags;
mod title;
mod tokenizer;
mod weights;
mod writer;

use url::Url;

use crate::warning::Warning;

/// Below this many letters and digits a page with scripts is treated as a JavaScript shell.
const SHELL_TEXT_CHARS: usize = 200;

/// The Markdown of one HTML document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HtmlMarkdown {
    /// The article title (from `<title>`, cleaned of site-name suffixes), if any.
    pub title: Option<String>,
    /// Markdown starting with `# title` when there is one.
    pub markdown: String,
    /// `javascript_required` when the page looks like a script-rendered shell.
    pub warnings: Vec<Warning>,
}

/// Converts `html`, resolving relative links against `page_url` (and `<base href>`).
pub fn html_to_markdown(html: &str, page_url: &Url) -> HtmlMarkdown {
    let base = base_url(html, page_url);
    let Some(converted) = convert::convert(html, &base) else {
        return HtmlMarkdown {
            title: None,
            markdown: depth::plain_text(html),
            warnings: vec![Warning::HtmlTooDeep],
        };
    };
    let title = title::article_title(
        converted.title.as_deref(),
        &converted.headings,
        converted.h1_count,
    );
    let article = extract::extract(&converted);
    let body = match &article {
        // readability.js demotes the article's <h1>s: the title is the only top heading.
        Some(article) => tidy(&article.markdown(&converted.markdown), true),
        None => tidy(&converted.markdown, false),
    };
    let mut warnings = Vec::new();
    if looks_like_js_shell(html, &body, article.is_some()) {
        warnings.push(Warning::JavascriptRequired);
    }
    let markdown = with_title(title.as_deref(), body);
    HtmlMarkdown {
        title,
        markdown,
        warnings,
    }
}

/// Whole-page Markdown without main-content extraction (every element but scripts, styles,
/// hidden elements and page chrome): the figure comparable to Turndown in the benchmarks.
pub fn convert_whole_page(html: &str, page_url: &Url) -> String {
    match convert::convert(html, page_url) {
        Some(converted) => tidy(&converted.markdown, false),
        None => depth::plain_text(html),
    }
}

/// The page URL joined with the document's `<base href>`, if it has one in its head.
fn base_url(html: &str, page_url: &Url) -> Url {
    let head_end = html.len().min(64 * 1024);
    let head_end = (0..=head_end)
        .rev()
        .find(|&i| html.is_char_boundary(i))
        .unwrap_or(0);
    let head = &html[..head_end];
    let lower = head.to_ascii_lowercase();
    let Some(pos) = lower.find("<base") else {
        return page_url.clone();
    };
    let tag_end = lower[pos..].find('>').map_or(lower.len(), |e| pos + e);
    let tag = &head[pos..tag_end];
    let lower_tag = &lower[pos..tag_end];
    let Some(href_pos) = lower_tag.find("href") else {
        return page_url.clone();
    };
    let rest = tag[href_pos + 4..].trim_start();
    let Some(rest) = rest.strip_prefix('=') else {
        return page_url.clone();
    };
    let rest = rest.trim_start();
    let value = match rest.chars().next() {
        Some(q @ ('"' | '\'')) => rest[1..].split(q).next().unwrap_or(""),
        _ => rest
            .split(|c: char| c.is_whitespace() || c == '>')
            .next()
            .unwrap_or(""),
    };
    page_url
        .join(value.trim())
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .unwrap_or_else(|| page_url.clone())
}

/// Prepends `# title` unless the Markdown already opens with that heading.
fn with_title(title: Option<&str>, body: String) -> String {
    let Some(title) = title.filter(|t| !t.is_empty()) else {
        return body;
    };
    // The page's own top heading (often the article headline, cleaner than <title>) wins.
    let first = body.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    if first.starts_with("# ") {
        return body;
    }
    let title = title.replace('\n', " ");
    if body.is_empty() {
        format!("# {title}\n")
    } else {
        format!("# {title}\n\n{body}")
    }
}

/// Collapses runs of blank lines and trailing spaces left between blocks; with `demote_h1`,
/// `# ` headings outside code fences become `## `.
fn tidy(markdown: &str, demote_h1: bool) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut blank_run = 0;
    let mut in_fence: Option<String> = None;
    for line in markdown.split('\n') {
        let trimmed_start = line.trim_start();
        if let Some(fence) = &in_fence {
            out.push_str(line);
            out.push('\n');
            if trimmed_start.starts_with(fence.as_str()) && trimmed_start.trim() == fence.as_str() {
                in_fence = None;
            }
            continue;
        }
        if trimmed_start.starts_with("```") || trimmed_start.starts_with("~~~") {
            let marker = trimmed_start.chars().next().unwrap_or('`');
            let fence: String = trimmed_start.chars().take_while(|&c| c == marker).collect();
            in_fence = Some(fence);
        }
        let line = line.trim_end_matches([' ', '\t']);
        if demote_h1 && line.starts_with("# ") {
            out.push('#');
        }
        // Keep Markdown hard breaks ("two spaces") out: htmd emits them for <br>.
        if line.is_empty() {
            blank_run += 1;
            if blank_run > 1 {
                continue;
            }
        } else {
            blank_run = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim_matches('\n').to_string()
}

/// A page whose static text is (almost) nothing and that says it needs JavaScript, or loads
/// scripts while having no main content or an empty application mount point. A short article
/// that happens to load an analytics script is not a shell.
fn looks_like_js_shell(html: &str, markdown: &str, main_content_found: bool) -> bool {
    let text_chars = markdown
        .chars()
        .filter(|c| c.is_alphanumeric())
        .take(SHELL_TEXT_CHARS)
        .count();
    if text_chars >= SHELL_TEXT_CHARS {
        return false;
    }
    let mut scripts = 0usize;
    let mut says_needs_js = false;
    let bytes = html.as_bytes();
    for (i, _) in html.match_indices('<') {
        let tag = &bytes[i + 1..bytes.len().min(i + 9)];
        if tag.len() >= 6 && tag[..6].eq_ignore_ascii_case(b"script") {
            scripts += 1;
        } else if tag.len() >= 8 && tag.eq_ignore_ascii_case(b"noscript") {
            let window = &html.as_bytes()[i..bytes.len().min(i + 400)];
            let lower = window.to_ascii_lowercase();
            says_needs_js |= crate::charset::find(&lower, b"javascript").is_some();
        }
    }
    says_needs_js || (scripts > 0 && (!main_content_found || has_empty_mount_point(html)))
}

/// `<div id="root"></div>` and the like: where a single-page application renders itself.
fn has_empty_mount_point(html: &str) -> bool {
    const MOUNTS: [&str; 6] = [
        "id=\"root\"></div>",
        "id=\"app\"></div>",
        "id=\"__next\"></div>",
        "id=\"__nuxt\"></div>",
        "id=\"svelte\"></div>",
        "id=\"main\"></div>",
    ];
    MOUNTS.iter().any(|m| html.contains(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(url: &str) -> Url {
        Url::parse(url).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn tidy_collapses_blank_runs_but_not_inside_fences() {
        assert_eq!(tidy("a\n\n\n\nb  \n", false), "a\n\nb");
        assert_eq!(tidy("```\nx\n\n\n\ny\n```", false), "```\nx\n\n\n\ny\n```");
        assert_eq!(tidy("# a\n```\n# b\n```", true), "## a\n```\n# b\n```");
    }

    #[test]
    fn base_href_changes_the_link_base() {
        let html = "<html><head><base href=\"/docs/\"></head><body><p>x</p></body></html>";
        assert_eq!(
            base_url(html, &page("http://h.test/a/b")).as_str(),
            "http://h.test/docs/"
        );
    }

    use proptest::prelude::*;

    /// Tag soup from the constructs the handlers care about, nested and unbalanced at random.
    fn tag_soup() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("<p>".to_string()),
            Just("</p>".to_string()),
            Just("<table><tr><td>".to_string()),
            Just("</td><td colspan=\"3\">".to_string()),
            Just("</table>".to_string()),
            Just("<th>".to_string()),
            Just("<pre class=\"language-rs\">".to_string()),
            Just("</pre>".to_string()),
            Just("<code>".to_string()),
            Just("<a href=\"../x (1)?q=1\">".to_string()),
            Just("<a href=\"javascript:alert(1)\">".to_string()),
            Just("</a>".to_string()),
            Just("<img src=\"i.png\" alt=\"[x]\">".to_string()),
            Just("<ul><li>".to_string()),
            Just("<div hidden>".to_string()),
            Just("<script>x</script>".to_string()),
            Just("<h1>".to_string()),
            Just("```".to_string()),
            "[a-zé東 |*_#<>&;\n]{0,12}",
        ];
        prop::collection::vec(piece, 0..60).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn converter_never_panics_and_keeps_links_absolute(soup in tag_soup()) {
            let url = page("http://h.test/dir/page.html");
            let out = html_to_markdown(&soup, &url);
            prop_assert!(!out.markdown.contains("](../"));
            prop_assert!(!out.markdown.contains("](i.png"));
            prop_assert!(!out.markdown.contains("javascript:"));
        }

        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,400}") {
            let _ = html_to_markdown(&text, &page("http://h.test/"));
        }
    }

    #[test]
    fn title_is_not_repeated() {
        assert_eq!(with_title(Some("T"), "# T\n\nx".into()), "# T\n\nx");
        assert_eq!(with_title(Some("T"), "x".into()), "# T\n\nx");
        assert_eq!(with_title(None, "x".into()), "x");
    }
}
