//! What kind of document a response is: from the declared `Content-Type`, checked against the
//! first bytes because servers lie (HTML served as `application/octet-stream`, a PDF served
//! as `text/html`, no header at all).

/// The document kinds web fetch turns into Markdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `text/html`, `application/xhtml+xml`.
    Html,
    /// `text/markdown`: returned as is.
    Markdown,
    /// `text/plain` and other `text/*`: returned as is.
    Text,
    /// `application/json`, `*+json`: pretty-printed in a fenced block.
    Json,
    /// `application/xml`, `text/xml`, `*+xml` (RSS, Atom): fenced block.
    Xml,
}

/// What the `Content-Type` header alone says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Declared {
    /// A readable kind.
    Readable(Kind),
    /// PDF, images, audio, video, fonts, archives: refused without reading the body.
    Binary,
    /// Missing, `application/octet-stream` or an unknown type: decided by sniffing.
    Unknown,
}

/// A parsed `Content-Type` header.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct ContentType {
    /// Lower-case `type/subtype`, without parameters.
    pub essence: Option<String>,
    /// The `charset` parameter, if any.
    pub charset: Option<String>,
}

impl ContentType {
    pub(crate) fn parse(header: Option<&str>) -> Self {
        let Some(header) = header else {
            return Self::default();
        };
        let mut parts = header.split(';');
        let essence = parts
            .next()
            .map(|e| e.trim().to_ascii_lowercase())
            .filter(|e| e.contains('/'));
        let charset = parts.find_map(|p| {
            let (k, v) = p.split_once('=')?;
            k.trim()
                .eq_ignore_ascii_case("charset")
                .then(|| v.trim().trim_matches(['"', '\'']).to_string())
        });
        Self { essence, charset }
    }

    pub(crate) fn declared(&self) -> Declared {
        let Some(essence) = self.essence.as_deref() else {
            return Declared::Unknown;
        };
        let (top, sub) = essence.split_once('/').unwrap_or((essence, ""));
        match (top, sub) {
            ("text", "html") | ("application", "xhtml+xml") => Declared::Readable(Kind::Html),
            ("text", "markdown" | "x-markdown") => Declared::Readable(Kind::Markdown),
            ("text", "xml") => Declared::Readable(Kind::Xml),
            ("application", "json") => Declared::Readable(Kind::Json),
            (_, s) if s.ends_with("+json") => Declared::Readable(Kind::Json),
            ("application", "xml") => Declared::Readable(Kind::Xml),
            ("image", "svg+xml") => Declared::Readable(Kind::Xml),
            ("image" | "audio" | "video" | "font" | "model", _) => Declared::Binary,
            (_, s) if s.ends_with("+xml") => Declared::Readable(Kind::Xml),
            ("text", _) => Declared::Readable(Kind::Text),
            (
                "application",
                "javascript" | "ecmascript" | "x-javascript" | "x-sh" | "x-yaml" | "yaml" | "toml"
                | "x-toml" | "sql" | "graphql",
            ) => Declared::Readable(Kind::Text),
            (
                "application",
                "pdf"
                | "zip"
                | "gzip"
                | "x-gzip"
                | "x-tar"
                | "x-7z-compressed"
                | "x-rar-compressed"
                | "vnd.rar"
                | "msword"
                | "wasm"
                | "x-bzip2"
                | "x-xz"
                | "zstd"
                | "x-msdownload"
                | "vnd.android.package-archive"
                | "x-apple-diskimage"
                | "x-iso9660-image",
            ) => Declared::Binary,
            ("application", s)
                if s.starts_with("vnd.openxmlformats") || s.starts_with("vnd.ms-") =>
            {
                Declared::Binary
            }
            _ => Declared::Unknown,
        }
    }
}

/// What the first bytes say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Sniffed {
    Readable(Kind),
    /// A recognised binary signature, with the MIME type to name in the error.
    Binary(&'static str),
}

/// Binary signatures checked before anything else.
const SIGNATURES: &[(&[u8], &str)] = &[
    (b"%PDF-", "application/pdf"),
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"PK\x03\x04", "application/zip"),
    (b"\x1f\x8b", "application/gzip"),
    (b"7z\xbc\xaf\x27\x1c", "application/x-7z-compressed"),
    (b"Rar!\x1a\x07", "application/vnd.rar"),
    (b"\x00\x00\x01\x00", "image/x-icon"),
    (b"\x7fELF", "application/x-executable"),
    (b"MZ", "application/x-msdownload"),
    (b"OggS", "audio/ogg"),
    (b"ID3", "audio/mpeg"),
    (b"fLaC", "audio/flac"),
    (b"\x1a\x45\xdf\xa3", "video/webm"),
    (b"wOFF", "font/woff"),
    (b"wOF2", "font/woff2"),
    (b"\x00asm", "application/wasm"),
];

/// Classifies a body by its first bytes.
pub(crate) fn sniff(body: &[u8]) -> Sniffed {
    for (magic, mime) in SIGNATURES {
        if body.starts_with(magic) {
            return Sniffed::Binary(mime);
        }
    }
    if body.len() >= 12 && &body[..4] == b"RIFF" {
        return Sniffed::Binary(match &body[8..12] {
            b"WEBP" => "image/webp",
            b"WAVE" => "audio/wav",
            b"AVI " => "video/x-msvideo",
            _ => "application/octet-stream",
        });
    }
    if body.len() >= 12 && &body[4..8] == b"ftyp" {
        return Sniffed::Binary("video/mp4");
    }
    let head = &body[..body.len().min(1024)];
    let has_utf16_bom = head.starts_with(b"\xff\xfe") || head.starts_with(b"\xfe\xff");
    if !has_utf16_bom && head.contains(&0) {
        return Sniffed::Binary("application/octet-stream");
    }
    Sniffed::Readable(sniff_text_kind(head))
}

fn sniff_text_kind(head: &[u8]) -> Kind {
    let start = head
        .strip_prefix(b"\xef\xbb\xbf")
        .unwrap_or(head)
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .map_or(&[][..], |p| &head[p..]);
    let lower: Vec<u8> = start.iter().take(512).map(u8::to_ascii_lowercase).collect();
    let has = |needle: &[u8]| crate::charset::find(&lower, needle).is_some();
    if lower.starts_with(b"<!doctype html")
        || lower.starts_with(b"<html")
        || lower.starts_with(b"<head")
        || lower.starts_with(b"<body")
        || ((lower.starts_with(b"<!--") || lower.starts_with(b"<!doctype")) && has(b"<html"))
    {
        return Kind::Html;
    }
    if lower.starts_with(b"<?xml") || lower.starts_with(b"<rss") || lower.starts_with(b"<feed") {
        return if has(b"<html") { Kind::Html } else { Kind::Xml };
    }
    if matches!(start.first(), Some(b'{') | Some(b'[')) {
        return Kind::Json;
    }
    Kind::Text
}

/// The MIME type to report for a sniffed kind when the server sent none.
pub(crate) fn kind_mime(kind: Kind) -> &'static str {
    match kind {
        Kind::Html => "text/html",
        Kind::Markdown => "text/markdown",
        Kind::Text => "text/plain",
        Kind::Json => "application/json",
        Kind::Xml => "application/xml",
    }
}

/// Markdown for the non-HTML kinds.
pub(crate) fn text_to_markdown(kind: Kind, text: String) -> String {
    match kind {
        Kind::Markdown | Kind::Text | Kind::Html => text,
        Kind::Json => match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(value) => fenced(
                "json",
                &serde_json::to_string_pretty(&value).unwrap_or(text),
            ),
            // Declared JSON that does not parse is still worth showing verbatim.
            Err(_) => fenced("json", &text),
        },
        Kind::Xml => fenced("xml", text.trim()),
    }
}

/// A fenced code block whose fence is longer than any backtick run inside.
pub(crate) fn fenced(lang: &str, body: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for b in body.bytes() {
        if b == b'`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    let fence = "`".repeat(3.max(longest + 1));
    let body = body.trim_end_matches('\n');
    format!("{fence}{lang}\n{body}\n{fence}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_types_map_to_kinds() {
        let kind = |h: &str| ContentType::parse(Some(h)).declared();
        assert_eq!(
            kind("text/html; charset=UTF-8"),
            Declared::Readable(Kind::Html)
        );
        assert_eq!(kind("application/ld+json"), Declared::Readable(Kind::Json));
        assert_eq!(kind("application/rss+xml"), Declared::Readable(Kind::Xml));
        assert_eq!(kind("text/csv"), Declared::Readable(Kind::Text));
        assert_eq!(kind("application/pdf"), Declared::Binary);
        assert_eq!(kind("image/png"), Declared::Binary);
        assert_eq!(kind("application/octet-stream"), Declared::Unknown);
        assert_eq!(ContentType::parse(None).declared(), Declared::Unknown);
        let ct = ContentType::parse(Some("text/plain; Charset=\"Shift_JIS\""));
        assert_eq!(ct.charset.as_deref(), Some("Shift_JIS"));
    }

    #[test]
    fn sniffing_finds_binaries_and_text_kinds() {
        assert_eq!(sniff(b"%PDF-1.7\n..."), Sniffed::Binary("application/pdf"));
        assert_eq!(
            sniff(b"\x89PNG\r\n\x1a\n...."),
            Sniffed::Binary("image/png")
        );
        assert_eq!(
            sniff(b"abc\0def"),
            Sniffed::Binary("application/octet-stream")
        );
        assert_eq!(
            sniff(b"  <!DOCTYPE html><p>x"),
            Sniffed::Readable(Kind::Html)
        );
        assert_eq!(
            sniff(b"<?xml version='1.0'?><rss/>"),
            Sniffed::Readable(Kind::Xml)
        );
        assert_eq!(sniff(b"{\"a\":1}"), Sniffed::Readable(Kind::Json));
        assert_eq!(sniff(b"hello"), Sniffed::Readable(Kind::Text));
    }

    #[test]
    fn json_is_pretty_printed_and_fences_outgrow_backticks() {
        let md = text_to_markdown(Kind::Json, "{\"a\":[1,2]}".into());
        assert!(md.starts_with("```json\n{\n"));
        assert_eq!(fenced("", "a ```` b"), "`````\na ```` b\n`````");
    }
}
