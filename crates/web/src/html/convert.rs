//! htmd configured for model-readable Markdown, with the handlers it lacks.
//!
//! Measured gaps of htmd 0.5.6 that these handlers close (see `reference/crates.md` §3.3):
//! script/style/noscript text is emitted unless skipped; a bare `<pre>` is not fenced; tables
//! without `<th>` become one paragraph per cell; tables are padded to column width (a quarter
//! of a Wikipedia page's output was padding). Links and images are made absolute against the
//! page URL (or its `<base href>`), so the model can fetch them next.

use std::rc::Rc;

use htmd::element_handler::{HandlerResult, Handlers};
use htmd::options::{BulletListMarker, HrStyle, Options};
use htmd::{Element, HtmlToMarkdown};
use markup5ever_rcdom::{Node, NodeData};
use url::Url;

use super::table::table_handler;
use crate::content::fenced;

/// Tags whose content never reaches the model.
const ALWAYS_SKIPPED: &[&str] = &[
    "script", "style", "noscript", "template", "head", "svg", "iframe", "canvas", "object",
    "embed", "button", "input", "select", "textarea", "dialog", "map", "audio", "video", "source",
    "track", "link", "meta",
];

/// Page chrome, skipped when converting a whole page (main-content extraction already drops it).
const CHROME: &[&str] = &["nav", "footer", "form", "aside"];

/// Generic containers checked for `hidden` / `display:none` / `aria-hidden`.
const HIDEABLE: &[&str] = &[
    "div",
    "section",
    "span",
    "p",
    "ul",
    "ol",
    "li",
    "header",
    "main",
    "article",
    "dl",
    "figure",
    "details",
    "blockquote",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
];

/// Builds a converter whose links resolve against `base`. `whole_page` also drops page chrome.
pub fn converter(base: &Url, whole_page: bool) -> HtmlToMarkdown {
    let options = Options {
        bullet_list_marker: BulletListMarker::Dash,
        ul_bullet_spacing: 1,
        ol_number_spacing: 1,
        hr_style: HrStyle::Dashes,
        ..Options::default()
    };
    let mut skipped: Vec<&str> = ALWAYS_SKIPPED.to_vec();
    if whole_page {
        skipped.extend_from_slice(CHROME);
    }
    let link_base = base.clone();
    let image_base = base.clone();
    HtmlToMarkdown::builder()
        .options(options)
        .add_handler(HIDEABLE.to_vec(), hidden_handler)
        .skip_tags(skipped)
        .add_handler(vec!["a"], move |h: &dyn Handlers, e: Element| {
            anchor_handler(&link_base, h, e)
        })
        .add_handler(vec!["img"], move |_: &dyn Handlers, e: Element| {
            image_handler(&image_base, &e)
        })
        .add_handler(vec!["pre"], pre_handler)
        .add_handler(vec!["table"], table_handler)
        .build()
}

pub(crate) fn attr<'a>(element: &'a Element, name: &str) -> Option<&'a str> {
    element
        .attrs
        .iter()
        .find(|a| &*a.name.local == name)
        .map(|a| &*a.value)
}

fn hidden_handler(handlers: &dyn Handlers, element: Element) -> Option<HandlerResult> {
    if is_hidden(&element) {
        return Some(String::new().into());
    }
    handlers.fallback(element)
}

fn is_hidden(element: &Element) -> bool {
    if attr(element, "hidden").is_some() {
        return true;
    }
    if attr(element, "aria-hidden").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
        return true;
    }
    attr(element, "style").is_some_and(|style| {
        let compact: String = style
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
            .to_ascii_lowercase();
        compact.contains("display:none") || compact.contains("visibility:hidden")
    })
}

/// Resolves `href` against `base`, percent-encoding the parentheses Markdown would misread.
pub(crate) fn absolute(base: &Url, href: &str) -> Option<String> {
    let href = href.trim();
    if href.is_empty() {
        return None;
    }
    let url = base.join(href).ok()?;
    Some(url.as_str().replace('(', "%28").replace(')', "%29"))
}

fn anchor_handler(base: &Url, handlers: &dyn Handlers, element: Element) -> Option<HandlerResult> {
    let content = handlers.walk_children(element.node).content;
    let text = collapse_whitespace(&content);
    if text.is_empty() {
        return Some(String::new().into());
    }
    let href = attr(&element, "href").map(str::trim).unwrap_or("");
    let lower = href.get(..11).unwrap_or(href).to_ascii_lowercase();
    // In-page anchors and script links mean nothing outside the page: keep the text only.
    if href.is_empty() || href.starts_with('#') || lower.starts_with("javascript:") {
        return Some(text.into());
    }
    let Some(url) = absolute(base, href) else {
        return Some(text.into());
    };
    let title = attr(&element, "title")
        .map(collapse_whitespace)
        .filter(|t| !t.is_empty() && *t != text)
        .map(|t| format!(" \"{}\"", t.replace('"', "\\\"")))
        .unwrap_or_default();
    Some(format!("[{text}]({url}{title})").into())
}

fn image_handler(base: &Url, element: &Element) -> Option<HandlerResult> {
    let alt = attr(element, "alt")
        .map(collapse_whitespace)
        .unwrap_or_default();
    let alt = alt.replace('[', "\\[").replace(']', "\\]");
    let src = ["src", "data-src", "data-original"]
        .iter()
        .filter_map(|name| attr(element, name))
        .map(str::trim)
        .find(|s| !s.is_empty() && !s.starts_with("data:"));
    match src.and_then(|s| absolute(base, s)) {
        Some(url) => Some(format!("![{alt}]({url})").into()),
        // Inline data URLs would cost the model thousands of tokens of base64.
        None if alt.is_empty() => Some(String::new().into()),
        None => Some(format!("[image: {alt}]").into()),
    }
}

fn pre_handler(_: &dyn Handlers, element: Element) -> Option<HandlerResult> {
    let mut text = String::new();
    collect_text(element.node, &mut text);
    let text = text.trim_matches('\n');
    if text.trim().is_empty() {
        return Some(String::new().into());
    }
    let language = code_language(&element).unwrap_or_default();
    Some(format!("\n\n{}\n\n", fenced(&language, text)).into())
}

/// The raw text under `node`, with `<br>` as newlines (what a `<pre>` displays).
pub(crate) fn collect_text(node: &Rc<Node>, out: &mut String) {
    for child in node.children.borrow().iter() {
        match &child.data {
            NodeData::Text { contents } => out.push_str(&contents.borrow()),
            NodeData::Element { name, .. } if &*name.local == "br" => out.push('\n'),
            NodeData::Element { .. } => collect_text(child, out),
            _ => {}
        }
    }
}

/// The language of a code block: from the `<pre>`, its `<code>` child, or its parent
/// (GitHub wraps blocks in `div.highlight-source-rust`).
fn code_language(element: &Element) -> Option<String> {
    if let Some(lang) = attr(element, "data-lang").or_else(|| attr(element, "data-language")) {
        return Some(clean_language(lang));
    }
    let mut classes: Vec<String> = attr(element, "class")
        .map(String::from)
        .into_iter()
        .collect();
    for child in element.node.children.borrow().iter() {
        if let NodeData::Element { name, attrs, .. } = &child.data
            && &*name.local == "code"
        {
            for a in attrs.borrow().iter() {
                if matches!(&*a.name.local, "class" | "data-lang" | "data-language") {
                    classes.push(a.value.to_string());
                }
            }
        }
    }
    if let Some(parent) = element.node.parent.take() {
        if let Some(parent_rc) = parent.upgrade()
            && let NodeData::Element { attrs, .. } = &parent_rc.data
        {
            for a in attrs.borrow().iter() {
                if &*a.name.local == "class" {
                    classes.push(a.value.to_string());
                }
            }
        }
        element.node.parent.set(Some(parent));
    }
    classes
        .iter()
        .flat_map(|c| c.split_whitespace())
        .find_map(|class| {
            ["language-", "lang-", "highlight-source-", "highlight-"]
                .iter()
                .find_map(|prefix| class.strip_prefix(prefix))
                .filter(|l| !l.is_empty())
                .map(clean_language)
        })
}

fn clean_language(lang: &str) -> String {
    lang.trim()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '#' | '-' | '_' | '.'))
        .take(32)
        .collect()
}

/// Collapses every whitespace run (newlines included) to one space and trims.
pub(crate) fn collapse_whitespace(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}
