//! `tavo_web_fetch` against a loopback server of awkward pages.

use std::sync::Mutex;
use std::time::Duration;

use crate::support::{self, KIB, serve, small_policy};
use serde_json::json;
use tavo_web::{
    AddressPolicy, FetchArgs, FetchCache, FetchError, FetchPolicy, FetchRequest, FetchResult,
    Warning, WebFetcher,
};

fn fetcher(policy: FetchPolicy) -> WebFetcher {
    WebFetcher::new(policy).expect("building the HTTP client")
}

async fn get(policy: FetchPolicy, url: String) -> Result<FetchResult, FetchError> {
    let f = fetcher(policy);
    let cache = Mutex::new(f.new_cache());
    f.call(&cache, FetchArgs::Url(FetchRequest::new(url))).await
}

async fn get_with(url: String, headers: &[(&str, &str)]) -> Result<FetchResult, FetchError> {
    let f = fetcher(FetchPolicy::default());
    let cache = Mutex::new(f.new_cache());
    let request = FetchRequest {
        url,
        headers: headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    };
    f.call(&cache, FetchArgs::Url(request)).await
}

fn code(result: Result<FetchResult, FetchError>) -> String {
    match result {
        Ok(r) => format!("ok: {:?}", r.warnings),
        Err(e) => e.code().to_string(),
    }
}

#[tokio::test]
async fn same_origin_redirects_keep_caller_headers() {
    let addr = serve().await;
    let r = get_with(format!("http://{addr}/same"), &[("X-Secret", "s3cret")])
        .await
        .expect("same-origin redirect is followed");
    assert!(r.markdown.contains("s3cret"), "{}", r.markdown);
    assert!(r.warnings.is_empty());
    assert_eq!(r.final_url, format!("http://{addr}/echo-headers"));
}

#[tokio::test]
async fn cross_origin_redirects_drop_every_caller_header_and_warn() {
    let addr = serve().await;
    let headers = [
        ("X-Secret", "s3cret"),
        ("Authorization", "Bearer t0ken"),
        ("Cookie", "c=1"),
    ];
    let r = get_with(format!("http://{addr}/cross"), &headers)
        .await
        .expect("cross-origin redirect is followed");
    for secret in ["s3cret", "t0ken", "c=1"] {
        assert!(
            !r.markdown.contains(secret),
            "{secret} leaked: {}",
            r.markdown
        );
    }
    assert_eq!(r.warnings, vec![Warning::CrossOriginHeadersDropped]);
    assert!(r.final_url.starts_with("http://localhost:"));

    // Coming back to the first origin does not bring the headers back.
    let r = get_with(format!("http://{addr}/cross-and-back"), &headers)
        .await
        .expect("redirect chain is followed");
    assert!(!r.markdown.contains("s3cret"));
    assert_eq!(r.final_url, format!("http://{addr}/echo-headers"));
}

#[tokio::test]
async fn five_redirects_are_followed_and_a_sixth_fails() {
    let addr = serve().await;
    let r = get(FetchPolicy::default(), format!("http://{addr}/redir/5")).await;
    assert!(
        r.expect("five redirects")
            .final_url
            .ends_with("/echo-headers")
    );
    let err = get(FetchPolicy::default(), format!("http://{addr}/redir/6")).await;
    assert_eq!(code(err), "too_many_redirects");
}

#[tokio::test]
async fn broken_redirects_fail_clearly() {
    let addr = serve().await;
    assert_eq!(
        code(get(FetchPolicy::default(), format!("http://{addr}/no-location")).await),
        "bad_redirect"
    );
    assert_eq!(
        code(get(FetchPolicy::default(), format!("http://{addr}/to-ftp")).await),
        "bad_redirect"
    );
}

#[tokio::test]
async fn decompression_bombs_stop_at_the_decompressed_limit() {
    let addr = serve().await;
    for coding in ["gzip", "br", "zstd", "deflate"] {
        let err = get(small_policy(), format!("http://{addr}/bomb/{coding}")).await;
        match err {
            Err(FetchError::TooLarge { which, limit }) => {
                assert_eq!(which, tavo_web::BodyLimit::Decompressed, "{coding}");
                assert_eq!(limit, 1024 * KIB as u64);
            }
            other => panic!(
                "{coding}: expected content_too_large, got {:?}",
                other.map(|r| r.warnings)
            ),
        }
    }
}

#[tokio::test]
async fn compressed_pages_are_decoded() {
    let addr = serve().await;
    for coding in ["gzip", "br", "zstd", "deflate"] {
        let r = get(
            FetchPolicy::default(),
            format!("http://{addr}/compressed/{coding}"),
        )
        .await
        .unwrap_or_else(|e| panic!("{coding}: {e}"));
        assert!(r.markdown.contains("Field Guide to Lanterns"), "{coding}");
    }
    let r = get(FetchPolicy::default(), format!("http://{addr}/raw-deflate")).await;
    assert_eq!(r.expect("raw deflate").markdown, "raw deflate body");
}

#[tokio::test]
async fn wire_limit_holds_with_and_without_content_length() {
    let addr = serve().await;
    for path in ["too-big/with-length", "too-big/streamed"] {
        match get(small_policy(), format!("http://{addr}/{path}")).await {
            Err(FetchError::TooLarge { which, .. }) => {
                assert_eq!(which, tavo_web::BodyLimit::Wire, "{path}")
            }
            other => panic!("{path}: {:?}", other.map(|r| r.markdown.len())),
        }
    }
    match get(
        small_policy(),
        format!("http://{addr}/too-big/decompressed"),
    )
    .await
    {
        Err(FetchError::TooLarge { which, .. }) => {
            assert_eq!(which, tavo_web::BodyLimit::Decompressed)
        }
        other => panic!("{:?}", other.map(|r| r.markdown.len())),
    }
}

#[tokio::test]
async fn html_input_and_markdown_limits_cut_with_a_warning() {
    let addr = serve().await;
    let r = get(
        small_policy(),
        format!("http://{addr}/html-over-input-limit"),
    )
    .await
    .expect("long HTML is cut, not refused");
    assert!(
        r.warnings.contains(&Warning::HtmlInputTruncated),
        "{:?}",
        r.warnings
    );

    let f = fetcher(small_policy());
    let doc = f
        .fetch(FetchRequest::new(format!(
            "http://{addr}/markdown-over-limit"
        )))
        .await
        .expect("long Markdown is cut, not refused");
    assert!(doc.warnings.contains(&Warning::MarkdownTruncated));
    assert!(doc.markdown.len() <= 300 * KIB);
    assert!(doc.limit_truncated);
    assert!(doc.markdown.ends_with('\n'), "cut on a line end");
}

#[tokio::test]
async fn binary_and_mislabelled_content_types() {
    let addr = serve().await;
    let p = FetchPolicy::default;
    match get(p(), format!("http://{addr}/pdf")).await {
        Err(e @ FetchError::UnsupportedContentType { .. }) => {
            assert!(e.to_string().contains("application/pdf"), "{e}");
        }
        other => panic!("{:?}", other.map(|r| r.content_type)),
    }
    assert_eq!(
        code(get(p(), format!("http://{addr}/lying-pdf")).await),
        "unsupported_content_type"
    );
    match get(p(), format!("http://{addr}/png-no-type")).await {
        Err(e) => assert!(e.to_string().contains("image/png"), "{e}"),
        Ok(r) => panic!("png read as {}", r.content_type),
    }
    let r = get(p(), format!("http://{addr}/no-type-html"))
        .await
        .expect("sniffed HTML");
    assert_eq!(r.content_type, "text/html");
    assert!(r.markdown.contains("## Field Guide to Lanterns"));
    let r = get(p(), format!("http://{addr}/octet-html"))
        .await
        .expect("sniffed HTML");
    assert_eq!(r.content_type, "text/html");
    let r = get(p(), format!("http://{addr}/json-no-type"))
        .await
        .expect("sniffed JSON");
    assert_eq!(r.content_type, "application/json");
    assert!(r.markdown.starts_with("```json\n") && r.markdown.contains("\"lumens\": 120"));
    let r = get(p(), format!("http://{addr}/feed.xml"))
        .await
        .expect("XML");
    assert!(r.markdown.starts_with("```xml\n<?xml"));
}

#[tokio::test]
async fn charsets_from_header_and_meta() {
    let addr = serve().await;
    let p = FetchPolicy::default;
    let r = get(p(), format!("http://{addr}/latin1-header"))
        .await
        .expect("latin1");
    assert_eq!(r.markdown, "Café crème brûlée");
    let r = get(p(), format!("http://{addr}/cp1251-meta"))
        .await
        .expect("cp1251");
    assert!(r.markdown.contains("Привет, мир!"), "{}", r.markdown);
    assert_eq!(r.title.as_deref(), Some("Привет"));
    let r = get(p(), format!("http://{addr}/sjis-meta"))
        .await
        .expect("sjis");
    assert!(r.markdown.contains("東京の夜景"), "{}", r.markdown);
}

#[tokio::test]
async fn article_reads_well() {
    let addr = serve().await;
    let r = get(
        FetchPolicy::default(),
        format!("http://{addr}/article.html"),
    )
    .await
    .expect("article");
    let md = &r.markdown;
    // readability.js keeps the full title when stripping the site name would leave one word,
    // and demotes the article's h1 below it.
    assert_eq!(r.title.as_deref(), Some("Lanterns | Example Site"));
    assert!(
        md.starts_with("# Lanterns | Example Site\n\n## Field Guide to Lanterns\n"),
        "{md}"
    );
    assert!(md.contains("## Kinds"));
    assert!(
        md.contains("| Oil | Kerosene |\n| --- | --- |\n| Electric | Battery \\| cells |"),
        "{md}"
    );
    assert!(
        md.contains("```python\nprint(\"*not emphasis*\")\nfor i in range(3):\n    print(i)\n```"),
        "{md}"
    );
    assert!(
        md.contains("```rust\nfn main() { println!(\"light\"); }\n```"),
        "{md}"
    );
    assert!(md.contains(&format!("[the list](http://{addr}/kinds?x=1)")));
    assert!(md.contains(&format!(
        "[the guide](http://{addr}/guide.html \"The guide\")"
    )));
    assert!(md.contains(&format!("![A lantern](http://{addr}/img/lantern.png)")));
    assert!(!md.contains("base64"), "data URLs are not inlined");
    assert!(md.contains("- Second item\n  - Nested"), "{md}");
    for noise in [
        "window.tracking",
        ".x{color",
        "hidden tracking",
        "footer text",
        "[Home]",
    ] {
        assert!(!md.contains(noise), "{noise} leaked:\n{md}");
    }
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

#[tokio::test]
async fn javascript_shell_returns_static_content_with_a_warning() {
    let addr = serve().await;
    let r = get(FetchPolicy::default(), format!("http://{addr}/shell.html"))
        .await
        .expect("shell is not an error");
    assert_eq!(r.warnings, vec![Warning::JavascriptRequired]);
    assert!(!r.markdown.contains("enable JavaScript"));
}

#[tokio::test]
async fn deeply_nested_html_returns_its_text_instead_of_crashing() {
    let addr = serve().await;
    let r = get(FetchPolicy::default(), format!("http://{addr}/deep"))
        .await
        .expect("deep page");
    assert_eq!(r.warnings, vec![Warning::HtmlTooDeep]);
    assert!(r.markdown.contains("bottom"));
}

#[tokio::test]
async fn http_errors_are_pages_with_a_warning() {
    let addr = serve().await;
    let r = get(FetchPolicy::default(), format!("http://{addr}/status/404"))
        .await
        .expect("404 page");
    assert_eq!(r.status, 404);
    assert_eq!(r.markdown, "no such page");
    assert_eq!(r.warnings, vec![Warning::HttpErrorStatus]);
}

#[tokio::test]
async fn cursor_paging_over_a_megabyte_is_lossless_and_never_downloads_again() {
    let addr = serve().await;
    let f = fetcher(FetchPolicy::default());
    let cache = Mutex::new(f.new_cache());
    let first = f
        .call(
            &cache,
            FetchArgs::Url(FetchRequest::new(format!("http://{addr}/big.txt"))),
        )
        .await
        .expect("first page");
    assert!(first.truncated);
    let mut text = first.markdown.clone();
    let mut next = first.next_cursor.clone();
    let mut pages = 1;
    while let Some(cursor) = next {
        // The URL given alongside is ignored: cursor wins (and this URL would fail).
        let args =
            FetchArgs::from_json(&json!({"url": "http://127.0.0.1:1/nothing", "cursor": cursor}))
                .expect("arguments");
        let page = f
            .call(&cache, args)
            .await
            .expect("next page from the snapshot");
        assert!(page.markdown.len() <= 24 * KIB);
        assert!(page.markdown.len() >= 12 * KIB || page.next_cursor.is_none());
        assert_eq!(page.url, first.url);
        text.push_str(&page.markdown);
        next = page.next_cursor;
        pages += 1;
    }
    assert_eq!(text, support::big_text(1024 * KIB));
    assert!(pages >= 42, "{pages} pages");
}

#[tokio::test]
async fn expired_and_foreign_cursors_fail_without_fetching() {
    let addr = serve().await;
    let f = fetcher(FetchPolicy::default());
    // A cache that holds one 1 MiB document at a time.
    let cache = Mutex::new(FetchCache::new(1100 * KIB as u64, 24 * KIB));
    let url = format!("http://{addr}/big.txt");
    let first = f
        .call(&cache, FetchArgs::Url(FetchRequest::new(url.clone())))
        .await
        .expect("fetch");
    let old_cursor = first.next_cursor.expect("a long document has a cursor");
    f.call(&cache, FetchArgs::Url(FetchRequest::new(url)))
        .await
        .expect("second fetch");
    let err = f.call(&cache, FetchArgs::Cursor(old_cursor.clone())).await;
    assert_eq!(code(err), "cursor_expired");

    let other_reply = Mutex::new(f.new_cache());
    let err = f.call(&other_reply, FetchArgs::Cursor(old_cursor)).await;
    assert_eq!(code(err), "invalid_cursor");
    let err = f
        .call(&other_reply, FetchArgs::Cursor("not-a-real-cursor".into()))
        .await;
    assert_eq!(code(err), "invalid_cursor");
}

#[tokio::test]
async fn public_only_policy_refuses_loopback_names_and_literals() {
    let addr = serve().await;
    let policy = FetchPolicy {
        addresses: AddressPolicy::PublicOnly,
        ..FetchPolicy::default()
    };
    assert_eq!(
        code(get(policy.clone(), format!("http://{addr}/echo-headers")).await),
        "address_not_allowed"
    );
    let named = format!("http://localhost:{}/echo-headers", addr.port());
    assert_eq!(code(get(policy, named).await), "address_not_allowed");
}

#[tokio::test]
async fn total_timeout_is_enforced() {
    let addr = serve().await;
    let policy = FetchPolicy {
        total_timeout: Duration::from_millis(300),
        ..FetchPolicy::default()
    };
    assert_eq!(
        code(get(policy, format!("http://{addr}/slow")).await),
        "timeout"
    );
}

#[tokio::test]
async fn audit_records_keep_the_request_and_only_metadata_of_the_result() {
    let addr = serve().await;
    let request = FetchRequest {
        url: format!("http://{addr}/article.html?q=1#frag"),
        headers: vec![("Authorization".into(), "Bearer secret".into())],
    };
    let audit = request.audit();
    assert_eq!(audit.url, format!("http://{addr}/article.html?q=1#frag"));
    assert_eq!(audit.headers[0].1, "Bearer secret");
    let doc = fetcher(FetchPolicy::default())
        .fetch(request)
        .await
        .expect("fetch");
    let result_audit = serde_json::to_value(doc.audit()).expect("serialises");
    let keys: Vec<&str> = result_audit
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert_eq!(
        keys,
        [
            "finalUrl",
            "status",
            "mime",
            "contentBytes",
            "durationMs",
            "warnings"
        ]
    );
    assert_eq!(
        result_audit["finalUrl"],
        format!("http://{addr}/article.html?q=1")
    );
}

#[tokio::test]
async fn invalid_headers_name_the_header_but_never_echo_the_value() {
    let addr = serve().await;
    let err = get_with(
        format!("http://{addr}/echo-headers"),
        &[("X-Key", "secret\nInjected: 1")],
    )
    .await
    .expect_err("newline in a header value");
    assert_eq!(err.code(), "invalid_arguments");
    assert!(err.to_string().contains("headers.X-Key"));
    assert!(!err.to_string().contains("secret"));
}
