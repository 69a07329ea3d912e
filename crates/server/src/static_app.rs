//! The browser app: the files of `web/`, embedded at build time (see `build.rs`), served at `/`.
//!
//! - A path naming an embedded file gets it, with its content type and an `ETag` (a digest of
//!   its bytes; `If-None-Match` → 304). Vendored libraries live under versioned folders
//!   (`/vendor/preact-11.2.0/…`), so they are cached as immutable; so is an app file asked for
//!   at its current version (`/app/store.js?v=<ETag>`, the form the page's import map uses,
//!   see `build.rs`); any other request for one is revalidated (`no-cache`, a 304 when unchanged).
//! - Text files carry gzip and brotli copies compressed by `build.rs`; the smallest one the
//!   client accepts is sent (`Vary: Accept-Encoding`).
//! - Any other GET outside `/api/` that accepts `text/html` is a screen of the app
//!   (`/chats/12`, `/characters/3`, `/settings`): it gets `index.html`, whose script reads the
//!   address. Everything else keeps the API's JSON 404.
//!
//! These files are public (the login screen must load before the token is known); the guard
//! still applies the host check to them, and every `/api/` route stays behind the token.

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

/// One embedded file.
#[derive(Debug)]
pub struct Asset {
    /// Its URL path (`/index.html`, `/app/main.js`).
    pub path: &'static str,
    /// The bytes as written.
    pub body: &'static [u8],
    /// A gzip copy, when smaller.
    pub gzip: Option<&'static [u8]>,
    /// A brotli copy, when smaller.
    pub brotli: Option<&'static [u8]>,
    /// The quoted entity tag.
    pub etag: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/web_assets.rs"));

/// The embedded file at `path`, if any.
pub fn asset(path: &str) -> Option<&'static Asset> {
    let path = if path == "/" { "/index.html" } else { path };
    ASSETS.iter().find(|a| a.path == path)
}

/// Whether `path` is an app address rather than an API one.
pub fn is_app_path(path: &str) -> bool {
    path != "/api" && !path.starts_with("/api/")
}

fn content_type(path: &str) -> &'static str {
    let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
    match ext {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "webp" => "image/webp",
        _ => "text/plain; charset=utf-8",
    }
}

/// The page's policy: scripts only from this origin (plus the inline import map, by digest),
/// no plugins, no framing by other sites.
fn csp() -> String {
    let map = if IMPORT_MAP_HASH.is_empty() {
        String::new()
    } else {
        format!(" 'sha256-{IMPORT_MAP_HASH}'")
    };
    format!(
        "default-src 'self'; script-src 'self'{map}; style-src 'self' 'unsafe-inline'; \
         img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; \
         form-action 'self'; frame-ancestors 'none'"
    )
}

fn accepts(headers: &HeaderMap, name: header::HeaderName, token: &str) -> bool {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|item| {
            let mut parts = item.split(';');
            let value = parts.next().unwrap_or_default().trim();
            let refused = parts.any(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .and_then(|q| q.trim().parse::<f32>().ok())
                    == Some(0.0)
            });
            !refused && value.eq_ignore_ascii_case(token)
        })
}

/// The document every script bubble's frame loads (`web/app/bubble/frame.html`, with
/// `runtime.js` inlined where it says `<!--tavo-runtime-->`, so the frame's policy needs no
/// source but inline scripts).
pub const FRAME_PATH: &str = "/app/bubble/frame.html";

/// A bubble frame's own policy. `sandbox allow-scripts` (also set on the `<iframe>`) gives it
/// an opaque origin even when opened on its own; `allow-modals` lets a message's script show
/// the browser's `prompt()`/`confirm()`/`alert()` (the `<iframe>` of a plugin frame withholds
/// it, and the sandbox in force is the intersection of both); scripts run inline only; it may show images,
/// media, fonts and styles from anywhere (cards link them), but `connect-src 'none'` and
/// `form-action 'none'` leave it no request of its own: everything it asks goes to the app
/// over its `MessageChannel`, and the API refuses an opaque origin anyway.
pub const FRAME_CSP: &str = "sandbox allow-scripts allow-modals; default-src 'none'; \
     script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline' *; \
     img-src * data: blob:; media-src * data: blob:; font-src * data:; connect-src 'none'; \
     frame-src 'none'; worker-src 'none'; object-src 'none'; form-action 'none'; \
     manifest-src 'none'";

/// The frame document with its runtime inlined, built once.
fn frame_document() -> Option<&'static (String, String)> {
    static DOC: std::sync::OnceLock<Option<(String, String)>> = std::sync::OnceLock::new();
    DOC.get_or_init(|| {
        let page = asset(FRAME_PATH)?;
        let runtime = asset("/app/bubble/runtime.js")?;
        let page = std::str::from_utf8(page.body).ok()?;
        let runtime = std::str::from_utf8(runtime.body).ok()?;
        // `</script` inside the runtime would end the inline script early.
        let runtime = runtime.replace("</script", "<\\/script");
        let body = page.replacen("<!--tavo-runtime-->", &runtime, 1);
        let etag = format!("\"frame-{}\"", body.len());
        Some((body, etag))
    })
    .as_ref()
}

/// Serves the bubble frame document under [`FRAME_CSP`].
fn frame_response(method: &Method, headers: &HeaderMap) -> Option<Response> {
    let (body, etag) = frame_document()?;
    let mut response = Response::new(Body::empty());
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(FRAME_CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Ok(v) = HeaderValue::from_str(etag) {
        h.insert(header::ETAG, v);
    }
    let fresh = headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|t| t.split(',').any(|t| t.trim() == etag));
    if fresh {
        *response.status_mut() = StatusCode::NOT_MODIFIED;
        return Some(response);
    }
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(body.len()));
    if *method != Method::HEAD {
        *response.body_mut() = Body::from(body.as_str());
    }
    Some(response)
}

/// Whether a request's query names `asset` at its current version (`?v=<its ETag>`, as the
/// rewritten `index.html` asks for it): such an answer never changes, so it may be cached
/// for good. Any other version, or none, is revalidated.
fn names_current_version(asset: &Asset, query: Option<&str>) -> bool {
    let tag = asset.etag.trim_matches('"');
    query.is_some_and(|q| q.split('&').any(|kv| kv.strip_prefix("v=") == Some(tag)))
}

/// Serves `asset` for a request with these headers; `current` when the request named the
/// asset's current version (see [`names_current_version`]).
pub fn respond(
    asset: &'static Asset,
    current: bool,
    method: &Method,
    headers: &HeaderMap,
) -> Response {
    let mut response = Response::new(Body::empty());
    let h = response.headers_mut();
    h.insert(header::ETAG, HeaderValue::from_static(asset.etag));
    h.insert(header::VARY, HeaderValue::from_static("Accept-Encoding"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(if asset.path.starts_with("/vendor/") || current {
            "public, max-age=31536000, immutable"
        } else {
            "no-cache"
        }),
    );
    if asset.path.ends_with(".html") {
        if let Ok(v) = HeaderValue::from_str(&csp()) {
            h.insert(header::CONTENT_SECURITY_POLICY, v);
        }
        h.insert(
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        );
    }
    let fresh = headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| t.trim().trim_start_matches("W/") == asset.etag || t.trim() == "*");
    if fresh {
        *response.status_mut() = StatusCode::NOT_MODIFIED;
        return response;
    }
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(content_type(asset.path)),
    );
    let (bytes, encoding) = match (asset.brotli, asset.gzip) {
        (Some(br), _) if accepts(headers, header::ACCEPT_ENCODING, "br") => (br, Some("br")),
        (_, Some(gz)) if accepts(headers, header::ACCEPT_ENCODING, "gzip") => (gz, Some("gzip")),
        _ => (asset.body, None),
    };
    if let Some(encoding) = encoding {
        h.insert(header::CONTENT_ENCODING, HeaderValue::from_static(encoding));
    }
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(bytes.len()));
    if *method != Method::HEAD {
        *response.body_mut() = Body::from(bytes);
    }
    response
}

/// The router's fallback: an embedded file, the app for a screen address, else the API's 404.
pub async fn fallback(method: Method, uri: Uri, headers: HeaderMap) -> Response {
    let path = uri.path();
    if (method == Method::GET || method == Method::HEAD) && is_app_path(path) {
        if path == FRAME_PATH
            && let Some(frame) = frame_response(&method, &headers)
        {
            return frame;
        }
        if let Some(asset) = asset(path) {
            let current = names_current_version(asset, uri.query());
            return respond(asset, current, &method, &headers);
        }
        // A screen of the app (not a missing script or image, which keep their 404).
        let last = path.rsplit('/').next().unwrap_or_default();
        if accepts(&headers, header::ACCEPT, "text/html")
            && !last.contains('.')
            && let Some(index) = asset("/index.html")
        {
            return respond(index, false, &method, &headers);
        }
    }
    crate::routes::not_found().await.into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(path: &str, accept: &str, encoding: &str) -> Response {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT,
            HeaderValue::from_str(accept).unwrap_or(HeaderValue::from_static("*/*")),
        );
        headers.insert(
            header::ACCEPT_ENCODING,
            HeaderValue::from_str(encoding).unwrap_or(HeaderValue::from_static("identity")),
        );
        let uri: Uri = path.parse().unwrap_or_default();
        let rt = tokio::runtime::Builder::new_current_thread().build();
        let Ok(rt) = rt else {
            panic!("no runtime");
        };
        rt.block_on(fallback(Method::GET, uri, headers))
    }

    #[test]
    fn the_index_is_embedded_with_its_policy() {
        let r = request("/", "text/html", "br, gzip");
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(r.headers()[header::CONTENT_ENCODING], "br");
        let csp = r.headers()[header::CONTENT_SECURITY_POLICY]
            .to_str()
            .unwrap_or_default();
        assert!(csp.contains("'sha256-"), "{csp}");
        assert!(r.headers().contains_key(header::ETAG));
    }

    #[test]
    fn the_bubble_frame_has_its_own_sandboxing_policy_and_the_runtime_inline() {
        let r = request(FRAME_PATH, "text/html", "br, gzip");
        assert_eq!(r.status(), StatusCode::OK);
        let csp = r.headers()[header::CONTENT_SECURITY_POLICY]
            .to_str()
            .unwrap_or_default();
        assert!(
            csp.starts_with("sandbox allow-scripts allow-modals;"),
            "{csp}"
        );
        assert!(csp.contains("connect-src 'none'"), "{csp}");
        assert!(!csp.contains("allow-same-origin"), "{csp}");
        let body = frame_document().map(|d| d.0.as_str()).unwrap_or_default();
        assert!(
            !body.contains("<!--tavo-runtime-->"),
            "the runtime is inlined"
        );
        assert!(
            body.contains("tavo-init"),
            "the runtime answers the app's init"
        );
    }

    #[test]
    fn screens_get_the_index_and_the_api_keeps_its_404() {
        for path in ["/chats/12", "/characters/3", "/settings"] {
            let r = request(path, "text/html,application/xhtml+xml", "gzip");
            assert_eq!(r.status(), StatusCode::OK, "{path}");
            assert_eq!(
                r.headers()[header::CONTENT_TYPE],
                "text/html; charset=utf-8"
            );
            assert_eq!(r.headers()[header::CONTENT_ENCODING], "gzip");
        }
        assert_eq!(
            request("/api/nothing", "text/html", "").status(),
            StatusCode::NOT_FOUND
        );
        assert_eq!(
            request("/chats/12", "application/json", "").status(),
            StatusCode::NOT_FOUND
        );
        assert_eq!(
            request("/app/missing.js", "text/html", "").status(),
            StatusCode::NOT_FOUND
        );
    }

    #[test]
    fn a_matching_etag_is_not_modified_and_vendor_files_are_immutable() {
        let Some(a) = ASSETS
            .iter()
            .find(|a| a.path.starts_with("/vendor/") && a.path.ends_with(".mjs"))
        else {
            panic!("no vendored file embedded");
        };
        let mut headers = HeaderMap::new();
        headers.insert(header::IF_NONE_MATCH, HeaderValue::from_static(a.etag));
        let r = respond(a, false, &Method::GET, &headers);
        assert_eq!(r.status(), StatusCode::NOT_MODIFIED);
        assert!(
            r.headers()[header::CACHE_CONTROL]
                .to_str()
                .unwrap_or_default()
                .contains("immutable")
        );
        let r = respond(a, false, &Method::GET, &HeaderMap::new());
        assert_eq!(
            r.headers()[header::CONTENT_TYPE],
            "text/javascript; charset=utf-8"
        );
        assert!(!r.headers().contains_key(header::CONTENT_ENCODING));
    }

    /// The page names its own files at their current version, every module of `app/` is in
    /// the import map, and only a request for the current version may be cached for good.
    #[test]
    fn the_index_names_current_versions_and_only_those_are_immutable() {
        let index = asset("/index.html").map(|a| a.body).unwrap_or_default();
        let index = String::from_utf8_lossy(index);
        let Some(main) = asset("/app/main.js") else {
            panic!("no app/main.js embedded");
        };
        let tag = main.etag.trim_matches('"');
        assert!(
            index.contains(&format!("src=\"/app/main.js?v={tag}\"")),
            "{index}"
        );
        let Some(store) = asset("/app/store.js") else {
            panic!("no app/store.js embedded");
        };
        let store_tag = store.etag.trim_matches('"');
        assert!(
            index.contains(&format!(
                "\"/app/store.js\":\"/app/store.js?v={store_tag}\""
            )),
            "{index}"
        );
        let cache = |query: &str| {
            let r = request(&format!("/app/main.js{query}"), "*/*", "");
            assert_eq!(r.status(), StatusCode::OK, "{query}");
            r.headers()[header::CACHE_CONTROL]
                .to_str()
                .unwrap_or_default()
                .to_string()
        };
        assert!(cache(&format!("?v={tag}")).contains("immutable"));
        assert_eq!(cache("?v=0000"), "no-cache");
        assert_eq!(cache(""), "no-cache");
    }
}
