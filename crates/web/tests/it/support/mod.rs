//! A loopback server of awkward pages for the fetch tests.

use std::collections::BTreeMap;
use std::net::SocketAddr;

use async_compression::Level;
use async_compression::tokio::bufread::{BrotliEncoder, GzipEncoder, ZlibEncoder, ZstdEncoder};
use axum::Router;
use axum::body::Body;
use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tokio::io::AsyncReadExt;

pub const KIB: usize = 1024;

/// Limits small enough to exercise every one of them quickly.
pub fn small_policy() -> tavo_web::FetchPolicy {
    tavo_web::FetchPolicy {
        limits: tavo_web::FetchLimits {
            wire_bytes: 256 * KIB as u64,
            decompressed_bytes: 1024 * KIB as u64,
            html_input_bytes: 512 * KIB as u64,
            markdown_bytes: 300 * KIB as u64,
            ..tavo_web::FetchLimits::default()
        },
        ..tavo_web::FetchPolicy::default()
    }
}

pub async fn compress(coding: &str, data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let result = match coding {
        "gzip" => {
            GzipEncoder::with_quality(data, Level::Fastest)
                .read_to_end(&mut out)
                .await
        }
        "br" => {
            BrotliEncoder::with_quality(data, Level::Fastest)
                .read_to_end(&mut out)
                .await
        }
        "zstd" => {
            ZstdEncoder::with_quality(data, Level::Fastest)
                .read_to_end(&mut out)
                .await
        }
        "deflate" => {
            ZlibEncoder::with_quality(data, Level::Fastest)
                .read_to_end(&mut out)
                .await
        }
        other => panic!("unknown coding {other}"),
    };
    result.expect("compressing test data in memory");
    out
}

fn respond(status: StatusCode, headers: &[(&'static str, String)], body: Body) -> Response {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    for (name, value) in headers {
        if let Ok(v) = HeaderValue::from_str(value) {
            response.headers_mut().insert(*name, v);
        }
    }
    response
}

fn redirect(location: String) -> Response {
    respond(StatusCode::FOUND, &[("location", location)], Body::empty())
}

/// Deterministic text of about `bytes` bytes in paragraphs.
pub fn big_text(bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 100);
    let mut i = 0;
    while out.len() < bytes {
        out.push_str(&format!(
            "Line {i:06}: the quick brown fox jumps over the lazy dog; über café 東京.\n"
        ));
        if i % 7 == 6 {
            out.push('\n');
        }
        i += 1;
    }
    out
}

/// Zeros streamed in 64 KiB chunks without a Content-Length.
fn streamed(total: usize) -> Body {
    let chunks =
        (0..total.div_ceil(64 * KIB)).map(|_| Ok::<_, std::io::Error>(vec![b'a'; 64 * KIB]));
    Body::from_stream(futures_util::stream::iter(chunks))
}

pub const ARTICLE: &str = r#"<!doctype html><html><head><title>Lanterns | Example Site</title>
<style>.x{color:red}</style><script>window.tracking=1</script></head><body>
<nav><a href="/home">Home</a> | <a href="/about">About</a></nav>
<main><article><h1>Field Guide to Lanterns</h1>
<p>Lanterns come in <strong>three</strong> kinds; see <a href="/kinds?x=1">the list</a> and
<a href="guide.html" title="The guide">the guide</a>. Lanterns have lit homes, streets, mines and ships for
centuries, and each kind has its own fuel, its own smell and its own dangers that a careful keeper learns.</p>
<div style="display:none">hidden tracking pixel text</div>
<h2>Kinds</h2><table><tr><td>Oil</td><td>Kerosene</td></tr><tr><td>Electric</td><td>Battery | cells</td></tr></table>
<pre class="language-python">print("*not emphasis*")
for i in range(3):
    print(i)</pre>
<pre><code class="language-rust">fn main() { println!("light"); }</code></pre>
<p>An image: <img src="img/lantern.png" alt="A lantern"> and a data image <img src="data:image/png;base64,AAAA" alt="dot">.</p>
<ul><li>First item</li><li>Second item<ul><li>Nested</li></ul></li></ul>
<p>More prose about lanterns so that the extractor is confident this is the article. Wicks need trimming,
glass needs cleaning, and the fuel must be stored away from the flame. A well-kept lantern lasts a lifetime.</p>
</article></main><footer>© 2026 footer text</footer></body></html>"#;

pub const SHELL: &str = r#"<!doctype html><html><head><title>App</title><script src="/bundle.js"></script></head>
<body><div id="root"></div><noscript>You need to enable JavaScript to run this app.</noscript></body></html>"#;

/// Starts the server; returns its address.
pub async fn serve() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("binding a loopback port");
    let addr = listener
        .local_addr()
        .expect("local address of the listener");
    let port = addr.port();
    let app = Router::new()
        .route(
            "/echo-headers",
            get(|headers: HeaderMap| async move {
                let map: BTreeMap<String, String> = headers
                    .iter()
                    .map(|(k, v)| (k.to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
                    .collect();
                axum::Json(map)
            }),
        )
        .route(
            "/redir/{n}",
            get(|Path(n): Path<u32>| async move {
                if n <= 1 {
                    redirect("/echo-headers".into())
                } else {
                    redirect(format!("/redir/{}", n - 1))
                }
            }),
        )
        .route("/same", get(|| async { redirect("/echo-headers".into()) }))
        .route(
            "/cross",
            get(move || async move { redirect(format!("http://localhost:{port}/echo-headers")) }),
        )
        .route(
            "/cross-and-back",
            get(move || async move { redirect(format!("http://localhost:{port}/back")) }),
        )
        .route(
            "/back",
            get(move || async move { redirect(format!("http://127.0.0.1:{port}/echo-headers")) }),
        )
        .route(
            "/no-location",
            get(|| async { respond(StatusCode::FOUND, &[], Body::empty()) }),
        )
        .route("/to-ftp", get(|| async { redirect("ftp://127.0.0.1/file".into()) }))
        .route(
            "/bomb/{coding}",
            get(|Path(coding): Path<String>| async move {
                let zeros = vec![0u8; 8 * 1024 * KIB];
                let body = compress(&coding, &zeros).await;
                respond(
                    StatusCode::OK,
                    &[("content-type", "text/html".into()), ("content-encoding", coding)],
                    Body::from(body),
                )
            }),
        )
        .route(
            "/compressed/{coding}",
            get(|Path(coding): Path<String>| async move {
                let body = compress(&coding, ARTICLE.as_bytes()).await;
                respond(
                    StatusCode::OK,
                    &[("content-type", "text/html; charset=utf-8".into()), ("content-encoding", coding)],
                    Body::from(body),
                )
            }),
        )
        .route(
            "/raw-deflate",
            get(|| async {
                // zlib minus its 2-byte header and 4-byte checksum is raw DEFLATE.
                let zlib = compress("deflate", b"raw deflate body").await;
                let raw = zlib[2..zlib.len() - 4].to_vec();
                respond(
                    StatusCode::OK,
                    &[("content-type", "text/plain".into()), ("content-encoding", "deflate".into())],
                    Body::from(raw),
                )
            }),
        )
        .route(
            "/too-big/with-length",
            get(|| async {
                respond(
                    StatusCode::OK,
                    &[("content-type", "text/plain".into())],
                    Body::from(vec![b'a'; 300 * KIB]),
                )
            }),
        )
        .route(
            "/too-big/streamed",
            get(|| async { respond(StatusCode::OK, &[("content-type", "text/plain".into())], streamed(300 * KIB)) }),
        )
        .route(
            "/too-big/decompressed",
            get(|| async {
                // Text that compresses well: 2 MiB on output from a small wire body.
                let body = compress("gzip", &vec![b'x'; 2048 * KIB]).await;
                respond(
                    StatusCode::OK,
                    &[("content-type", "text/plain".into()), ("content-encoding", "gzip".into())],
                    Body::from(body),
                )
            }),
        )
        .route(
            "/html-over-input-limit",
            get(|| async {
                let mut html = String::from("<html><head><title>Long</title></head><body>");
                while html.len() < 700 * KIB {
                    html.push_str("<p>A paragraph of the long page, repeated to exceed the limit.</p>\n");
                }
                html.push_str("</body></html>");
                let body = compress("gzip", html.as_bytes()).await;
                respond(
                    StatusCode::OK,
                    &[("content-type", "text/html".into()), ("content-encoding", "gzip".into())],
                    Body::from(body),
                )
            }),
        )
        .route(
            "/markdown-over-limit",
            get(|| async {
                let body = compress("gzip", big_text(400 * KIB).as_bytes()).await;
                respond(
                    StatusCode::OK,
                    &[("content-type", "text/markdown".into()), ("content-encoding", "gzip".into())],
                    Body::from(body),
                )
            }),
        )
        .route(
            "/big.txt",
            get(|| async {
                respond(
                    StatusCode::OK,
                    &[("content-type", "text/plain; charset=utf-8".into())],
                    Body::from(big_text(1024 * KIB)),
                )
            }),
        )
        .route("/article.html", get(|| async { respond(StatusCode::OK, &[("content-type", "text/html".into())], Body::from(ARTICLE)) }))
        .route("/shell.html", get(|| async { respond(StatusCode::OK, &[("content-type", "text/html".into())], Body::from(SHELL)) }))
        .route("/no-type-html", get(|| async { respond(StatusCode::OK, &[], Body::from(ARTICLE)) }))
        .route(
            "/octet-html",
            get(|| async { respond(StatusCode::OK, &[("content-type", "application/octet-stream".into())], Body::from(ARTICLE)) }),
        )
        .route(
            "/pdf",
            get(|| async { respond(StatusCode::OK, &[("content-type", "application/pdf".into())], Body::from("%PDF-1.7 ...")) }),
        )
        .route(
            "/lying-pdf",
            get(|| async { respond(StatusCode::OK, &[("content-type", "text/html".into())], Body::from("%PDF-1.7 ...")) }),
        )
        .route(
            "/png-no-type",
            get(|| async { respond(StatusCode::OK, &[], Body::from(&b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"[..])) }),
        )
        .route(
            "/json-no-type",
            get(|| async { respond(StatusCode::OK, &[], Body::from(r#"{"lanterns":[{"kind":"oil","lumens":120}]}"#)) }),
        )
        .route(
            "/feed.xml",
            get(|| async {
                respond(
                    StatusCode::OK,
                    &[("content-type", "application/rss+xml".into())],
                    Body::from("<?xml version=\"1.0\"?><rss><channel><title>News</title></channel></rss>"),
                )
            }),
        )
        .route(
            "/latin1-header",
            get(|| async {
                respond(
                    StatusCode::OK,
                    &[("content-type", "text/plain; charset=ISO-8859-1".into())],
                    Body::from(&b"Caf\xe9 cr\xe8me br\xfbl\xe9e"[..]),
                )
            }),
        )
        .route(
            "/cp1251-meta",
            get(|| async {
                let mut body = b"<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=windows-1251\"><title>\xcf\xf0\xe8\xe2\xe5\xf2</title></head><body><p>".to_vec();
                body.extend_from_slice(b"\xcf\xf0\xe8\xe2\xe5\xf2, \xec\xe8\xf0!</p></body></html>");
                respond(StatusCode::OK, &[("content-type", "text/html".into())], Body::from(body))
            }),
        )
        .route(
            "/sjis-meta",
            get(|| async {
                let (text, _, _) = encoding_rs::SHIFT_JIS.encode("<html><head><meta charset=\"shift_jis\"><title>東京</title></head><body><p>東京の夜景</p></body></html>");
                respond(StatusCode::OK, &[("content-type", "text/html".into())], Body::from(text.into_owned()))
            }),
        )
        .route(
            "/status/404",
            get(|| async { (StatusCode::NOT_FOUND, [(header::CONTENT_TYPE, "text/plain")], "no such page").into_response() }),
        )
        .route(
            "/deep",
            get(|| async {
                let body = format!("<title>Deep</title>{}bottom{}", "<div>".repeat(200_000), "</div>".repeat(200_000));
                respond(StatusCode::OK, &[("content-type", "text/html".into())], Body::from(body))
            }),
        )
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(std::time::Duration::from_secs(5)).await;
                "late"
            }),
        );
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    addr
}
