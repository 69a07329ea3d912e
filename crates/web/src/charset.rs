//! Bytes → text with the right character encoding.
//!
//! Precedence follows the HTML standard's encoding sniffing: a byte-order mark wins, then the
//! `charset` parameter of `Content-Type`, then (HTML only) a `<meta charset>` /
//! `<meta http-equiv="Content-Type">` found by a prescan of the first bytes, or (XML only) the
//! `encoding` of the XML declaration; UTF-8 otherwise. Undecodable bytes become U+FFFD, never an
//! error: a page with one bad byte is still worth reading.

use encoding_rs::{Encoding, UTF_8};

use crate::content::Kind;

/// How far into an HTML document the `<meta>` prescan looks. The standard says 1024 bytes;
/// real pages often put a long `<head>` before the tag, so a little more is read.
const PRESCAN_BYTES: usize = 4096;

/// Decodes `body` to a `String`, consuming it (valid UTF-8 is moved, not copied).
pub(crate) fn decode(body: Vec<u8>, header_charset: Option<&str>, kind: Kind) -> String {
    let (encoding, bom_len) = detect(&body, header_charset, kind);
    if encoding == UTF_8 {
        let mut body = body;
        if bom_len > 0 {
            body.drain(..bom_len);
        }
        return match String::from_utf8(body) {
            Ok(text) => text,
            Err(err) => String::from_utf8_lossy(err.as_bytes()).into_owned(),
        };
    }
    let (text, _had_errors) = encoding.decode_without_bom_handling(&body[bom_len..]);
    text.into_owned()
}

/// The encoding to use and the length of a BOM to skip.
pub(crate) fn detect(
    body: &[u8],
    header_charset: Option<&str>,
    kind: Kind,
) -> (&'static Encoding, usize) {
    if let Some((encoding, bom_len)) = Encoding::for_bom(body) {
        return (encoding, bom_len);
    }
    if let Some(encoding) = header_charset.and_then(|l| Encoding::for_label(l.trim().as_bytes())) {
        return (encoding, 0);
    }
    let declared = match kind {
        Kind::Html => prescan_meta(&body[..body.len().min(PRESCAN_BYTES)]),
        Kind::Xml => xml_declaration(&body[..body.len().min(PRESCAN_BYTES)]),
        // JSON is UTF-8 by RFC 8259; Markdown and text have nowhere to declare it.
        _ => None,
    };
    // A document cannot declare itself UTF-16 in ASCII-compatible bytes (HTML standard).
    match declared {
        Some(enc) if enc == encoding_rs::UTF_16LE || enc == encoding_rs::UTF_16BE => (UTF_8, 0),
        Some(enc) => (enc, 0),
        None => (UTF_8, 0),
    }
}

/// Finds the charset declared by a `<meta>` tag in `head`.
fn prescan_meta(head: &[u8]) -> Option<&'static Encoding> {
    let lower = head.to_ascii_lowercase();
    let mut from = 0;
    while let Some(pos) = find(&lower[from..], b"<meta") {
        let start = from + pos + 5;
        let end = lower[start..]
            .iter()
            .position(|&b| b == b'>')
            .map_or(lower.len(), |e| start + e);
        let tag = &lower[start..end];
        if let Some(enc) = charset_in(tag).and_then(Encoding::for_label) {
            return Some(enc);
        }
        from = end;
    }
    None
}

/// The value after `charset=` in a tag's attribute text (covers both the `charset` attribute
/// and `content="text/html; charset=..."`).
fn charset_in(tag: &[u8]) -> Option<&[u8]> {
    let pos = find(tag, b"charset")?;
    let rest = &tag[pos + 7..];
    let rest = trim_start(rest);
    let rest = rest.strip_prefix(b"=")?;
    let rest = trim_start(rest);
    let rest = rest
        .strip_prefix(b"\"")
        .or_else(|| rest.strip_prefix(b"'"))
        .unwrap_or(rest);
    let len = rest
        .iter()
        .position(|&b| {
            matches!(b, b'"' | b'\'' | b';' | b' ' | b'/' | b'>') || b.is_ascii_whitespace()
        })
        .unwrap_or(rest.len());
    (len > 0).then(|| &rest[..len])
}

/// The `encoding` pseudo-attribute of `<?xml ... ?>`.
fn xml_declaration(head: &[u8]) -> Option<&'static Encoding> {
    let head = trim_start(head);
    if !head.starts_with(b"<?xml") {
        return None;
    }
    let end = find(head, b"?>")?;
    let decl = &head[..end];
    let pos = find(decl, b"encoding")?;
    let rest = trim_start(&decl[pos + 8..]);
    let rest = trim_start(rest.strip_prefix(b"=")?);
    let quote = *rest.first()?;
    if quote != b'"' && quote != b'\'' {
        return None;
    }
    let value = &rest[1..];
    let len = value.iter().position(|&b| b == quote)?;
    Encoding::for_label(&value[..len])
}

fn trim_start(bytes: &[u8]) -> &[u8] {
    let skip = bytes.iter().take_while(|b| b.is_ascii_whitespace()).count();
    &bytes[skip..]
}

pub(crate) fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || haystack.len() < needle.len() {
        return None;
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_charset_decodes_latin1_and_shift_jis() {
        let latin1 = b"caf\xe9".to_vec();
        assert_eq!(decode(latin1, Some("ISO-8859-1"), Kind::Text), "café");
        let (sjis, _, _) = encoding_rs::SHIFT_JIS.encode("東京");
        assert_eq!(
            decode(sjis.into_owned(), Some("shift_jis"), Kind::Text),
            "東京"
        );
    }

    #[test]
    fn meta_charset_and_http_equiv_are_found_by_the_prescan() {
        let mut page = b"<html><head><meta charset=\"windows-1251\"></head><body>".to_vec();
        page.extend_from_slice(b"\xcf\xf0\xe8\xe2\xe5\xf2</body></html>");
        assert!(decode(page, None, Kind::Html).contains("Привет"));
        let page =
            b"<meta http-equiv='Content-Type' content='text/html; charset=gbk'>\xc4\xe3\xba\xc3";
        assert!(decode(page.to_vec(), None, Kind::Html).ends_with("你好"));
    }

    #[test]
    fn bom_beats_header_and_meta() {
        let mut body = vec![0xEF, 0xBB, 0xBF];
        body.extend_from_slice("<meta charset=latin1>é".as_bytes());
        let text = decode(body, Some("iso-8859-1"), Kind::Html);
        assert!(text.ends_with('é'));
        assert!(!text.starts_with('\u{feff}'));
    }

    #[test]
    fn xml_declaration_encoding_is_honoured() {
        let body = b"<?xml version=\"1.0\" encoding=\"ISO-8859-7\"?><a>\xe1</a>".to_vec();
        assert!(decode(body, None, Kind::Xml).contains("<a>α</a>"));
    }

    #[test]
    fn utf16_meta_is_treated_as_utf8_and_bad_bytes_are_replaced() {
        let body = b"<meta charset=utf-16>ok \xff".to_vec();
        assert!(decode(body, None, Kind::Html).ends_with("ok \u{fffd}"));
    }
}
