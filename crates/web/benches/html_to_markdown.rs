//! HTML → Markdown throughput on real large pages (1–5 MB).
//!
//! The pages are not copied into the repository: they are real documents already on a
//! Rust developer machine (htmd's Wikipedia example in the cargo registry, the Rust Book and
//! the Rust Reference single-page prints from rustup's docs). Set `TAVO_BENCH_PAGES` to a
//! `:`-separated list of HTML files to measure others. Two figures per page:
//! `pipeline` = main-content extraction + conversion (what `tavo_web_fetch` runs), and
//! `convert` = htmd with our handlers over the whole page (the part comparable to Turndown).

use std::path::PathBuf;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tavo_web::html::{convert, html_to_markdown};

fn pages() -> Vec<PathBuf> {
    if let Ok(list) = std::env::var("TAVO_BENCH_PAGES") {
        return list
            .split(':')
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
            .collect();
    }
    let home = std::env::var("HOME").unwrap_or_default();
    let registry = PathBuf::from(&home).join(".cargo/registry/src");
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&registry) {
        for index in entries.flatten() {
            let wiki = index
                .path()
                .join("htmd-0.5.6/examples/page-to-markdown/html/Elon Musk - Wikipedia.html");
            if wiki.exists() {
                out.push(wiki);
                break;
            }
        }
    }
    let docs = PathBuf::from(&home)
        .join(".rustup/toolchains/stable-x86_64-unknown-linux-gnu/share/doc/rust/html");
    for page in ["book/print.html", "reference/print.html"] {
        let path = docs.join(page);
        if path.exists() {
            out.push(path);
        }
    }
    out
}

fn bench(c: &mut Criterion) {
    let base = url::Url::parse("https://example.com/docs/page.html").expect("static URL");
    let pages = pages();
    if pages.is_empty() {
        eprintln!("no benchmark pages found; set TAVO_BENCH_PAGES=/path/a.html:/path/b.html");
    }
    let mut group = c.benchmark_group("html_to_markdown");
    group.sample_size(10);
    for path in pages {
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
        group.throughput(Throughput::Bytes(html.len() as u64));
        group.bench_function(format!("pipeline/{name}"), |b| {
            b.iter(|| html_to_markdown(&html, &base));
        });
        group.bench_function(format!("convert/{name}"), |b| {
            let converter = convert::converter(&base, true);
            b.iter(|| converter.convert(&html));
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
