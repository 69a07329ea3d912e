//! HTML → Markdown throughput on real large pages (1–5 MB).
//!
//! The pages are not copied into the repository: they are real documents already on a
//! Rust developer machine (htmd's Wikipedia example in the cargo registry, the Rust Book and
//! the Rust Reference single-page prints from rustup's docs), plus a 3 MB article generated
//! here with a news/wiki page's structure (navigation, infobox, cited paragraphs, lists,
//! code, tables, comments, footer) so the bench runs anywhere (`TAVO_BENCH_WRITE_GENERATED=
//! FILE` saves it for Turndown). Set `TAVO_BENCH_PAGES` to a `:`-separated list of HTML files
//! to measure others.
//!
//! Per page: `pipeline` = main-content extraction + conversion (what `tavo_web_fetch` runs),
//! `convert` = the whole page without extraction (the figure comparable to Turndown). With
//! `TAVO_BENCH_BASELINE=1` also the previous pipeline: `baseline_convert` = htmd alone,
//! `baseline_pipeline` = dom_smoothie (readability) + htmd.

use std::fmt::Write as _;
use std::path::PathBuf;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tavo_web::html::{convert_whole_page, html_to_markdown};

fn pages() -> Vec<(String, String)> {
    let mut paths = Vec::new();
    if let Ok(list) = std::env::var("TAVO_BENCH_PAGES") {
        paths.extend(list.split(':').filter(|s| !s.is_empty()).map(PathBuf::from));
    } else {
        let home = std::env::var("HOME").unwrap_or_default();
        let registry = PathBuf::from(&home).join(".cargo/registry/src");
        if let Ok(entries) = std::fs::read_dir(&registry) {
            for index in entries.flatten() {
                let wiki = index
                    .path()
                    .join("htmd-0.5.6/examples/page-to-markdown/html/Elon Musk - Wikipedia.html");
                if wiki.exists() {
                    paths.push(wiki);
                    break;
                }
            }
        }
        let docs = PathBuf::from(&home)
            .join(".rustup/toolchains/stable-x86_64-unknown-linux-gnu/share/doc/rust/html");
        for page in ["book/print.html", "reference/print.html"] {
            let path = docs.join(page);
            if path.exists() {
                paths.push(path);
            }
        }
    }
    let mut out = Vec::new();
    for path in paths {
        let Ok(html) = std::fs::read_to_string(&path) else {
            eprintln!("skipping unreadable {}", path.display());
            continue;
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().replace(' ', "_"))
            .unwrap_or_default();
        let name = match path.parent().and_then(|p| p.file_name()) {
            Some(dir) if name == "print.html" => format!("{}_{name}", dir.to_string_lossy()),
            _ => name,
        };
        out.push((name, html));
    }
    let generated = generated_article(3 << 20);
    // For Turndown (benches/turndown.js) on the very same bytes.
    if let Some(path) = std::env::var_os("TAVO_BENCH_WRITE_GENERATED")
        && let Err(e) = std::fs::write(&path, &generated)
    {
        eprintln!("cannot write the generated page: {e}");
    }
    out.push(("generated_article.html".into(), generated));
    out
}

/// A news/wiki article page of about `size` bytes: page chrome around a long article.
fn generated_article(size: usize) -> String {
    let mut h = String::with_capacity(size + 64 * 1024);
    h.push_str("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Lighthouses of the North Sea - Example Encyclopedia</title>");
    h.push_str("<link rel=\"stylesheet\" href=\"/s.css\"><style>body{font:16px serif}.nav a{color:#333}</style><script>window.dataLayer=[];function gtag(){dataLayer.push(arguments)}</script></head><body class=\"skin\">");
    h.push_str("<header class=\"site-header\"><div class=\"logo\"><a href=\"/\"><img src=\"/logo.png\" alt=\"Example\"></a></div><nav class=\"nav\"><ul>");
    for i in 0..40 {
        let _ = write!(h, "<li><a href=\"/portal/{i}\">Portal {i}</a></li>");
    }
    h.push_str("</ul></nav><form class=\"search\" action=\"/search\"><input name=q><button>Go</button></form></header>");
    h.push_str("<div id=\"content\" class=\"mw-body\"><h1 id=\"firstHeading\">Lighthouses of the North Sea</h1><div id=\"bodyContent\" class=\"content\">");
    h.push_str("<table class=\"infobox\"><caption>North Sea lights</caption><tr><th>Region</th><td>North Sea</td></tr><tr><th>Count</th><td>&gt; 300</td></tr><tr><th>Oldest</th><td><a href=\"/wiki/Tower\">Tower of Hercules</a> (c. 2nd century)</td></tr></table>");
    let mut section = 0;
    while h.len() < size {
        section += 1;
        let _ = write!(
            h,
            "<h2><span class=\"mw-headline\" id=\"s{section}\">Section {section}: keepers &amp; lamps</span></h2>"
        );
        for p in 0..6 {
            let _ = write!(
                h,
                "<p>The light at <a href=\"/wiki/Light_{section}_{p}\" title=\"Light {section}\">station {section}.{p}</a> was first lit in {year}, \
                 when the keepers trimmed the <b>wicks</b> every four hours and logged the weather, the passing ships and the oil burned. \
                 Its lens, a <i>first-order Fresnel</i> design, threw the beam twenty nautical miles, and the tower&#8217;s red and white bands \
                 made it a daymark as well.<sup class=\"reference\"><a href=\"#cite-{section}-{p}\">[{p}]</a></sup> Later the station was \
                 electrified, automated and finally monitored from the shore, with a caf&eacute; in the old oil store.</p>",
                year = 1700 + (section * 7 + p) % 300
            );
        }
        let _ = write!(
            h,
            "<ul><li>Range: {section} nmi</li><li>Height: {} m<ul><li>focal plane</li></ul></li><li>Character: Fl(2) W 10s</li></ol></ul>",
            section % 90 + 10
        );
        if section % 4 == 0 {
            h.push_str("<table class=\"wikitable\"><thead><tr><th>Year</th><th>Keeper</th><th>Notes</th></tr></thead><tbody>");
            for r in 0..8 {
                let _ = write!(
                    h,
                    "<tr><td>{}</td><td>Keeper {r}</td><td>Log | book {r}<br>kept</td></tr>",
                    1800 + r
                );
            }
            h.push_str("</tbody></table>");
        }
        if section % 5 == 0 {
            h.push_str("<pre class=\"language-python\"><code>def beam(range_nmi):\n    return range_nmi * 1852  # metres &lt;approx&gt;\n</code></pre>");
        }
        if section % 7 == 0 {
            h.push_str("<div class=\"thumb\"><img src=\"/img/light.jpg\" alt=\"A light\" width=200><div class=\"caption\">A light at dusk</div></div>");
        }
    }
    h.push_str("</div></div><div id=\"comments\" class=\"comments\">");
    for i in 0..50 {
        let _ = write!(
            h,
            "<div class=\"comment\"><a href=\"/u/{i}\">user{i}</a><p>Great read {i}!</p></div>"
        );
    }
    h.push_str("</div><footer class=\"footer\"><ul>");
    for i in 0..30 {
        let _ = write!(h, "<li><a href=\"/about/{i}\">About {i}</a></li>");
    }
    h.push_str(
        "</ul><p>&copy; 2026 Example</p></footer><script src=\"/app.js\"></script></body></html>",
    );
    h
}

fn bench(c: &mut Criterion) {
    let base = url::Url::parse("https://example.com/docs/page.html").expect("static URL");
    let baseline = std::env::var_os("TAVO_BENCH_BASELINE").is_some();
    let mut group = c.benchmark_group("html_to_markdown");
    group.sample_size(10);
    for (name, html) in pages() {
        group.throughput(Throughput::Bytes(html.len() as u64));
        group.bench_function(format!("pipeline/{name}"), |b| {
            b.iter(|| html_to_markdown(&html, &base));
        });
        group.bench_function(format!("convert/{name}"), |b| {
            b.iter(|| convert_whole_page(&html, &base));
        });
        if baseline {
            group.bench_function(format!("baseline_convert/{name}"), |b| {
                let converter = htmd::HtmlToMarkdown::builder()
                    .skip_tags(vec!["script", "style", "noscript", "template", "head"])
                    .build();
                b.iter(|| converter.convert(&html));
            });
            group.bench_function(format!("baseline_pipeline/{name}"), |b| {
                b.iter(|| {
                    let mut r =
                        dom_smoothie::Readability::new(html.as_str(), Some(base.as_str()), None)
                            .expect("readability parses any string");
                    let article = r.parse().map(|a| a.content.to_string()).unwrap_or_default();
                    htmd::convert(&article)
                });
            });
        }
    }
    group.finish();
}

// `criterion_group!` makes a `pub fn` per group: in a private module it needs no docs.
mod groups {
    use super::*;

    criterion_group!(benches, bench);
}
criterion_main!(groups::benches);
