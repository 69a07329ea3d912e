//! Any bytes, decoded lossily, through the HTML → Markdown pipeline (with and without
//! main-content extraction): it must not panic, and the Markdown must page losslessly.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let html = String::from_utf8_lossy(data);
    let Ok(base) = url::Url::parse("https://fuzz.example/dir/page.html") else {
        return;
    };
    let _ = tavo_web::html::convert_whole_page(&html, &base);
    let out = tavo_web::html::html_to_markdown(&html, &base);
    let starts = tavo_web::page_starts(&out.markdown, 256);
    let mut rebuilt = String::new();
    for (i, &start) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(out.markdown.len());
        rebuilt.push_str(&out.markdown[start..end]);
    }
    assert_eq!(rebuilt, out.markdown);
});
