//! HTML → Markdown on small documents: one case per construct, malformed markup included
//! (unclosed and stray tags, nested tables, misnested formatting), and main-content
//! extraction on pages with chrome around an article.

use proptest::prelude::*;
use tavo_web::html::{convert_whole_page, html_to_markdown};
use url::Url;

fn base() -> Url {
    Url::parse("https://h.test/d/p.html").expect("static URL")
}

/// (HTML, whole-page Markdown).
const CASES: &[(&str, &str)] = &[
    (
        "<h1>Title</h1><p>Para &amp; more</p><h3>Sub</h3>text",
        "# Title\n\nPara & more\n\n### Sub\n\ntext",
    ),
    ("<p>a<p>b<div>c</div>d", "a\n\nb\n\nc\n\nd"),
    ("a</p>b", "a\n\nb"),
    (
        "<ul><li>one<li>two<ul><li>inner</ul><li>three</ul>after",
        "- one\n- two\n  - inner\n- three\n\nafter",
    ),
    (
        "<ol start=\"3\"><li>x</li><li><p>y</p><p>y2</p></li></ol>",
        "3. x\n\n4. y\n\n   y2",
    ),
    (
        "<table><tr><th>A</th><th>B</th></tr><tr><td colspan=2>wide</td></tr><tr><td>1<td>2</table>",
        "| A | B |\n| --- | --- |\n| wide |  |\n| 1 | 2 |",
    ),
    (
        "<table><td>a</td><td>b</td></table>",
        "| a | b |\n| --- | --- |",
    ),
    (
        "<table><tr><td><h2>Layout</h2><p>only column</p></td></tr></table>",
        "## Layout\n\nonly column",
    ),
    (
        "<table><tr><td>outer<table><tr><td>in1</td><td>in2</td></tr></table></td><td>o2</td></tr></table>",
        "| outer in1 in2 | o2 |\n| --- | --- |",
    ),
    (
        "<div class=\"highlight-source-rust\"><pre>\nfn a() {}\n&lt;T&gt;</pre></div>",
        "```rust\nfn a() {}\n<T>\n```",
    ),
    (
        "<pre><code class=\"language-js\">let x = 1;\n</code></pre><p>after</p>",
        "```js\nlet x = 1;\n```\n\nafter",
    ),
    (
        "<ul><li>item<pre>code\n  indented</pre></li></ul>",
        "- item\n\n  ```\n  code\n    indented\n  ```",
    ),
    (
        "<p>use <code>a`b</code> and <code>plain</code></p>",
        "use `` a`b `` and `plain`",
    ),
    (
        "<script>bad()</script><style>.x{}</style><nav>menu</nav><div hidden>h</div><p style=\"display: none\">h2</p><span aria-hidden=\"true\">h3</span>visible",
        "visible",
    ),
    (
        "<a href=\"/r\">rel</a> <a href=\"javascript:x()\">js</a> <a href=\"#top\">top</a> <a href=\"/e\"></a> <a href=\"/i\"><img src=\"i.png\" alt=\"pic\"></a>",
        "[rel](https://h.test/r) js top [![pic](https://h.test/d/i.png)](https://h.test/i)",
    ),
    (
        "<blockquote><p>q1</p><p>q2</p></blockquote>",
        "> q1\n>\n> q2",
    ),
    (
        "<p>a</p>\n<blockquote>\n<p>q</p></blockquote><p>b</p>",
        "a\n\n> q\n\nb",
    ),
    (
        "<p>line1<br>line2</p><ul><li>a<br>b</li></ul>",
        "line1\nline2\n\n- a\n  b",
    ),
    (
        "<a href=\"/1\">one <a href=\"/2\">two</a>",
        "[one](https://h.test/1) [two](https://h.test/2)",
    ),
    (
        "<p>*stars* _under_ snake_case 1. # hash</p><p>1. looks like list</p><p>- dash</p><p># not heading</p>",
        "\\*stars\\* \\_under\\_ snake_case 1. # hash\n\n1\\. looks like list\n\n\\- dash\n\n\\# not heading",
    ),
    ("<dl><dt>term</dt><dd>def</dd></dl>", "term\n\n: def"),
    ("<p>a <strong> b </strong> c<em></em>d</p>", "a **b** cd"),
    (
        "<h2><a href=\"/x\" title=\"Same\">Same</a></h2><a href=\"/y\" title=\"Other\">link</a>",
        "## [Same](https://h.test/x)\n\n[link](https://h.test/y \"Other\")",
    ),
    (
        "<svg><title>svg title</title><path d=\"M0\"/></svg><p>after svg</p>",
        "after svg",
    ),
    (
        "<table><caption>Cap</caption><tr><td>a|b</td><td>c</td></tr></table>",
        "Cap\n\n| a\\|b | c |\n| --- | --- |",
    ),
    (
        "<p>unclosed <b>bold <a href=\"/l\">link",
        "unclosed **bold [link](https://h.test/l)**",
    ),
    ("<h2>A</h2><h2></h2><h3>  </h3><p>B</p>", "## A\n\nB"),
    ("<p>x<hr>y</p>", "x\n\n---\n\ny"),
    (
        "<p>&nbsp;&nbsp;indent &copy 2024 &#x1F600; &bogus; a&nbsp;&nbsp;b</p>",
        "indent © 2024 😀 &bogus; a b",
    ),
    ("<div><p>x</div>y</p>", "x\n\ny"),
    (
        "<img src=\"data:image/png;base64,AAAA\" alt=\"dot\"><img src=\"data:x\"><img data-src=\"/lazy.png\" alt=\"lazy [1]\">",
        "[image: dot]![lazy \\[1\\]](https://h.test/lazy.png)",
    ),
    (
        "<a href=\"java\tscript:alert(1)\">x</a><img src=\" da\nta:image/png;base64,AAAA\" alt=\"y\">",
        "x[image: y]",
    ),
    (
        "<p>[click](javascript:alert(1))</p>",
        "\\[click](javascript:alert(1))",
    ),
    ("<p>1 < 2 and 3 > 2 <3</p>", "1 < 2 and 3 > 2 <3"),
    (
        "<a href=\"/p?a=1&amp;b=2&copy=3\">q</a> <a href=\"../up (1).html\">paren</a>",
        "[q](https://h.test/p?a=1&b=2&copy=3) [paren](https://h.test/up%20%281%29.html)",
    ),
];

#[test]
fn constructs_convert_as_expected() {
    let mut failures = Vec::new();
    for (html, want) in CASES {
        let got = convert_whole_page(html, &base());
        if got != *want {
            failures.push(format!("{html}\n  want {want:?}\n  got  {got:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A page of chrome around an article: navigation, a sidebar, comments and a footer.
fn news_page(paragraphs: usize) -> String {
    let mut html = String::from(
        "<html><head><title>Keeping a Lantern Lit Through the Night - The Lantern Gazette</title></head><body>\
         <header class=\"site-header\"><a href=\"/\">Gazette</a><ul class=\"menu\"><li><a href=\"/a\">News</a></li><li><a href=\"/b\">Sport</a></li></ul></header>\
         <div class=\"sidebar\"><h3>Trending</h3><ul><li><a href=\"/t1\">Trending story one</a></li><li><a href=\"/t2\">Trending story two</a></li></ul></div>\
         <div id=\"main\"><article class=\"post\"><h1>Keeping a Lantern Lit Through the Night</h1>",
    );
    for i in 0..paragraphs {
        html.push_str(&format!(
            "<p>Paragraph {i}: the keeper trims the wick, cleans the glass, and checks the fuel, \
             because a lantern that gutters at midnight is worse than none, as every sailor knows.</p>"
        ));
    }
    html.push_str(
        "<div class=\"share-tools\"><a href=\"/share/fb\">Share on Facebook</a> <a href=\"/share/x\">Share on X</a></div>\
         </article></div><div id=\"comments\" class=\"comments\"><div class=\"comment\"><p>First comment, with a view, on lanterns.</p></div></div>\
         <footer>© 2026 The Lantern Gazette</footer></body></html>",
    );
    html
}

#[test]
fn extraction_keeps_the_article_and_drops_the_chrome() {
    let out = html_to_markdown(&news_page(8), &base());
    let md = &out.markdown;
    assert_eq!(
        out.title.as_deref(),
        Some("Keeping a Lantern Lit Through the Night")
    );
    assert!(
        md.starts_with("# Keeping a Lantern Lit Through the Night\n\n"),
        "{md}"
    );
    for i in 0..8 {
        assert!(md.contains(&format!("Paragraph {i}:")), "{md}");
    }
    for noise in ["Trending", "Sport", "Share on", "First comment", "©"] {
        assert!(!md.contains(noise), "{noise} leaked:\n{md}");
    }
    assert!(out.warnings.is_empty());
}

#[test]
fn short_pages_and_link_lists_are_converted_whole() {
    let html = "<html><head><title>Links</title></head><body><ul>\
                <li><a href=\"/a\">A</a></li><li><a href=\"/b\">B</a></li></ul></body></html>";
    let out = html_to_markdown(html, &base());
    assert_eq!(
        out.markdown,
        "# Links\n\n- [A](https://h.test/a)\n- [B](https://h.test/b)"
    );
}

#[test]
fn base_href_and_title_fallbacks() {
    let html = "<html><head><base href=\"https://cdn.test/x/\"></head><body>\
                <h1>Only Headline</h1><p><a href=\"y\">y</a></p></body></html>";
    let out = html_to_markdown(html, &base());
    assert_eq!(out.title.as_deref(), Some("Only Headline"));
    assert!(
        out.markdown.contains("[y](https://cdn.test/x/y)"),
        "{}",
        out.markdown
    );
}

/// Tag soup: the constructs the converter treats specially, nested and unbalanced at random.
fn tag_soup() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("<p>".to_string()),
        Just("</p>".to_string()),
        Just("<table><tr><td>".to_string()),
        Just("</td><td colspan=\"9999999\">".to_string()),
        Just("</tr>".to_string()),
        Just("</table>".to_string()),
        Just("<caption>".to_string()),
        Just("<th>".to_string()),
        Just("<pre class=\"language-rs\">".to_string()),
        Just("</pre>".to_string()),
        Just("<code>".to_string()),
        Just("</code>".to_string()),
        Just("<a href=\"../x (1)?q=1\">".to_string()),
        Just("<a href=\"javascript:alert(1)\">".to_string()),
        Just("</a>".to_string()),
        Just("<img src=\"i.png\" alt=\"[x]\">".to_string()),
        Just("<ul><li>".to_string()),
        Just("<ol start=\"18446744073709551615\"><li>".to_string()),
        Just("</li></ul>".to_string()),
        Just("<blockquote>".to_string()),
        Just("<div hidden>".to_string()),
        Just("<svg><path/>".to_string()),
        Just("</svg>".to_string()),
        Just("<script>x</script>".to_string()),
        Just("<h1>".to_string()),
        Just("</h1>".to_string()),
        Just("<br>".to_string()),
        Just("&nbsp;&amp;&#0;&#x110000;".to_string()),
        Just("<!-- c".to_string()),
        Just("<b><i>".to_string()),
        Just("</b>".to_string()),
        "[a-zé東 |*_#<>&;`\n]{0,12}",
    ];
    prop::collection::vec(piece, 0..80).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn tag_soup_never_panics_and_keeps_links_absolute(soup in tag_soup()) {
        let out = html_to_markdown(&soup, &base());
        prop_assert!(std::str::from_utf8(out.markdown.as_bytes()).is_ok());
        prop_assert!(!out.markdown.contains("](../"));
        prop_assert!(!out.markdown.contains("](i.png"));
        prop_assert!(!out.markdown.contains("javascript:"));
        let whole = convert_whole_page(&soup, &base());
        prop_assert!(std::str::from_utf8(whole.as_bytes()).is_ok());
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2000)) {
        let html = String::from_utf8_lossy(&bytes);
        let out = html_to_markdown(&html, &base());
        prop_assert!(std::str::from_utf8(out.markdown.as_bytes()).is_ok());
    }
}
