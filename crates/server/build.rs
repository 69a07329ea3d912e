//! Embeds the browser app (`web/` at the workspace root) in the server: every file with its
//! ETag (a digest of its bytes) and, for text, gzip and brotli copies compressed once here, so
//! serving is a table look-up. Also records the digest of `index.html`'s inline import map for
//! the page's Content-Security-Policy.
//!
//! `index.html` is rewritten on the way in: each of the app's own files it names (`src`/`href`)
//! and every module under `app/` (as import-map entries) gets `?v=<its ETag>`, so a page load
//! finds them in the browser's cache without asking (the server marks a request whose `v` is
//! the file's current tag immutable). Relative imports between modules are remapped by the same
//! map, so a module has one URL within the page and a new build is fetched afresh.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use base64::Engine as _;

#[path = "src/slim.rs"]
#[allow(dead_code)]
mod slim;
use sha2::{Digest, Sha256};

/// Files of `web/` that are tooling, not the app.
fn skipped(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    name.starts_with('.')
        || rel.starts_with("tests/")
        || rel.contains("node_modules/")
        || name == "jsconfig.json"
        || name == "tsconfig.json"
        || name == "SHA256SUMS"
        || name == "README.md"
        || name.ends_with(".d.ts")
        || name.ends_with(".map")
}

fn compressible(rel: &str) -> bool {
    [
        ".html", ".js", ".mjs", ".css", ".json", ".svg", ".txt", ".md",
    ]
    .iter()
    .any(|e| rel.ends_with(e))
        || rel.ends_with("LICENSE")
}

fn walk(dir: &Path, base: &Path, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        let rel = path
            .strip_prefix(base)
            .unwrap_or(&path)
            .to_string_lossy()
            .replace('\\', "/");
        if path.is_dir() {
            if !skipped(&format!("{rel}/")) && !rel.starts_with("tests") {
                walk(&path, base, out);
            }
        } else if !skipped(&rel) {
            out.push((rel, path));
        }
    }
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let _ = enc.write_all(data);
    enc.finish().unwrap_or_default()
}

fn brotli(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let params = brotli::enc::BrotliEncoderParams {
        quality: 11,
        lgwin: 22,
        ..Default::default()
    };
    let _ = brotli::BrotliCompress(&mut &data[..], &mut out, &params);
    out
}

/// The served copy of one of the app's own scripts or stylesheets (see `src/slim.rs`); `None`
/// for other files. Vendored libraries are served byte for byte as `web/vendor/SHA256SUMS`
/// records them (they are minified builds already).
fn slimmed(rel: &str, data: &[u8]) -> Option<Vec<u8>> {
    if rel.starts_with("vendor/") {
        return None;
    }
    let text = std::str::from_utf8(data).ok()?;
    if rel.ends_with(".js") || rel.ends_with(".mjs") {
        Some(slim::javascript(text).into_bytes())
    } else if rel.ends_with(".css") {
        Some(slim::css(text).into_bytes())
    } else {
        None
    }
}

/// A file's ETag and URL version: 64 bits of its SHA-256, in hex. Enough to tell versions apart
/// (a cache busts on any change), and short, since `index.html` carries one per module.
fn tag_of(data: &[u8]) -> String {
    hex::encode(&Sha256::digest(data)[..8])
}

/// `index.html` with `?v=<tag>` on every own file it names and an import-map entry per module
/// of `app/` (see the crate's doc). `tags` are the files' paths relative to `web/` and ETags.
fn versioned_index(page: &str, tags: &[(&str, &str)]) -> String {
    let mut out = page.to_string();
    for (rel, tag) in tags {
        if rel.starts_with("vendor/") || *rel == "index.html" {
            continue;
        }
        for attr in ["src", "href"] {
            out = out.replace(
                &format!("{attr}=\"/{rel}\""),
                &format!("{attr}=\"/{rel}?v={tag}\""),
            );
        }
    }
    let entries: String = tags
        .iter()
        .filter(|(rel, _)| rel.starts_with("app/") && rel.ends_with(".js"))
        .map(|(rel, tag)| format!(",\"/{rel}\":\"/{rel}?v={tag}\""))
        .collect();
    // The map is `{"imports":{…}}`: the entries go before its last two braces.
    if let Some(map) = import_map(&out)
        && let Some(close) = map.trim_end().strip_suffix("}}")
    {
        let rewritten = format!("{close}{entries}}}}}");
        out = out.replacen(map, &rewritten, 1);
    }
    out
}

/// The text between `<script type="importmap">` and its `</script>`.
fn import_map(html: &str) -> Option<&str> {
    let open = "<script type=\"importmap\">";
    let start = html.find(open)? + open.len();
    let len = html[start..].find("</script>")?;
    Some(&html[start..start + len])
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let web = manifest.join("../../web");
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default());
    println!("cargo:rerun-if-changed={}", web.display());
    println!("cargo:rerun-if-changed=build.rs");

    let mut files = Vec::new();
    walk(&web, &web, &mut files);
    let packed = out_dir.join("web");
    let _ = std::fs::create_dir_all(&packed);
    let mut code = String::from("pub static ASSETS: &[Asset] = &[\n");
    let mut csp_hash = String::new();
    let read: Vec<(String, PathBuf, Vec<u8>, String)> = files
        .iter()
        .enumerate()
        .filter_map(|(i, (rel, path))| {
            let data = std::fs::read(path).ok()?;
            let (data, path) = match slimmed(rel, &data) {
                Some(served) => {
                    let file = packed.join(format!("{i}.slim"));
                    let _ = std::fs::write(&file, &served);
                    (served, file)
                }
                None => (data, path.clone()),
            };
            let etag = tag_of(&data);
            Some((rel.clone(), path, data, etag))
        })
        .collect();
    let tags: Vec<(&str, &str)> = read
        .iter()
        .map(|(rel, _, _, etag)| (rel.as_str(), etag.as_str()))
        .collect();
    for (i, (rel, path, data, etag)) in read.iter().enumerate() {
        let (data, path, etag) = if rel == "index.html" {
            let page = versioned_index(&String::from_utf8_lossy(data), &tags).into_bytes();
            let file = packed.join("index.html");
            let _ = std::fs::write(&file, &page);
            let etag = tag_of(&page);
            (page, file, etag)
        } else {
            (data.clone(), path.clone(), etag.clone())
        };
        if rel == "index.html"
            && let Some(map) = import_map(&String::from_utf8_lossy(&data))
        {
            csp_hash = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(map));
        }
        let variant = |suffix: &str, bytes: Vec<u8>| -> String {
            if bytes.is_empty() || bytes.len() + 64 >= data.len() {
                return "None".into();
            }
            let file = packed.join(format!("{i}.{suffix}"));
            let _ = std::fs::write(&file, &bytes);
            format!("Some(include_bytes!({:?}))", file.display().to_string())
        };
        let (gz, br) = if compressible(rel) {
            (variant("gz", gzip(&data)), variant("br", brotli(&data)))
        } else {
            ("None".into(), "None".into())
        };
        let source = path.canonicalize().unwrap_or_else(|_| path.clone());
        let _ = writeln!(
            code,
            "    Asset {{ path: {:?}, body: include_bytes!({:?}), gzip: {gz}, brotli: {br}, etag: {:?} }},",
            format!("/{rel}"),
            source.display().to_string(),
            format!("\"{etag}\""),
        );
    }
    code.push_str("];\n");
    let _ = writeln!(
        code,
        "/// `sha256-…` of index.html's inline import map (empty when it has none).\npub const IMPORT_MAP_HASH: &str = {:?};",
        csp_hash
    );
    let _ = std::fs::write(out_dir.join("web_assets.rs"), code);
}
