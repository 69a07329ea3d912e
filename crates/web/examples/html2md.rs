//! Converts an HTML file as `tavo_web_fetch` would: `cargo run -p tavo-web --example html2md
//! -- FILE.html [PAGE_URL] [--whole] [--repeat=N]` prints the Markdown (`--whole`: no main-content
//! extraction) and, on stderr, the title, warnings and throughput.

use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let whole = args.iter().any(|a| a == "--whole");
    let mut positional = args.iter().filter(|a| !a.starts_with("--"));
    let Some(path) = positional.next() else {
        eprintln!("usage: html2md FILE.html [PAGE_URL] [--whole]");
        return ExitCode::from(2);
    };
    let page = positional
        .next()
        .map_or("https://example.com/page.html", String::as_str);
    let html = match std::fs::read(path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) => {
            eprintln!("cannot read {path}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let Ok(url) = url::Url::parse(page) else {
        eprintln!("not a URL: {page}");
        return ExitCode::from(2);
    };
    // `--repeat=N` converts N times (for profilers); the time reported is per conversion.
    let repeat = args
        .iter()
        .find_map(|a| a.strip_prefix("--repeat="))
        .and_then(|n| n.parse::<u32>().ok())
        .unwrap_or(1)
        .max(1);
    let started = Instant::now();
    let mut result = (String::new(), None, Vec::new());
    for _ in 0..repeat {
        result = if whole {
            (
                tavo_web::html::convert_whole_page(&html, &url),
                None,
                Vec::new(),
            )
        } else {
            let out = tavo_web::html::html_to_markdown(&html, &url);
            (out.markdown, out.title, out.warnings)
        };
    }
    let (markdown, title, warnings) = result;
    let secs = started.elapsed().as_secs_f64() / f64::from(repeat);
    println!("{markdown}");
    eprintln!(
        "title: {title:?}; warnings: {warnings:?}; {} KiB HTML -> {} KiB Markdown in {:.1} ms ({:.1} MiB/s)",
        html.len() / 1024,
        markdown.len() / 1024,
        secs * 1000.0,
        html.len() as f64 / 1048576.0 / secs
    );
    ExitCode::SUCCESS
}
