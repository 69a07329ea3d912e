//! Bytes → text → JSON, tolerating what SillyTavern tolerates.
//!
//! Real files carry a UTF-8 BOM, Windows-1252 bytes, or raw control characters inside JSON
//! strings (`presets/atelier-v5-cp1252.json` has 652 raw U+001A). Each repair is reported as a
//! [`Warning`] that says what was done; anything else that is not JSON is refused with the line
//! and column.

use crate::error::{FormatError, Result, Warning};
use serde_json::Value;

/// Decodes file bytes to text: strips a UTF-8 BOM, decodes UTF-16 with a BOM, and falls back to
/// Windows-1252 (with a warning) when the bytes are not UTF-8.
pub fn decode_text(bytes: &[u8], warnings: &mut Vec<Warning>) -> String {
    if let Some(rest) = bytes.strip_prefix(b"\xEF\xBB\xBF") {
        warnings.push(Warning::new(
            "encoding.bom",
            "a UTF-8 byte-order mark was skipped",
        ));
        return decode_utf8_or_cp1252(rest, warnings);
    }
    if bytes.starts_with(b"\xFF\xFE") || bytes.starts_with(b"\xFE\xFF") {
        let (text, enc, had_errors) = encoding_rs::Encoding::for_bom(bytes)
            .map(|(enc, _)| {
                let (t, had) = enc.decode_with_bom_removal(bytes);
                (t.into_owned(), enc.name(), had)
            })
            .unwrap_or_else(|| (String::new(), "UTF-16", true));
        let extra = if had_errors {
            " (invalid sequences replaced by U+FFFD)"
        } else {
            ""
        };
        warnings.push(Warning::new(
            "encoding.utf16",
            format!("the file is {enc}; it was decoded to UTF-8{extra}"),
        ));
        return text;
    }
    decode_utf8_or_cp1252(bytes, warnings)
}

fn decode_utf8_or_cp1252(bytes: &[u8], warnings: &mut Vec<Warning>) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_owned(),
        Err(e) => {
            let (text, _, _) = encoding_rs::WINDOWS_1252.decode(bytes);
            warnings.push(Warning::new(
                "encoding.cp1252",
                format!(
                    "the file is not UTF-8 (first invalid byte at offset {}); it was decoded as Windows-1252",
                    e.valid_up_to()
                ),
            ));
            text.into_owned()
        }
    }
}

/// Parses JSON text. Raw control characters inside strings (invalid JSON, but written by some
/// tools) are escaped and kept, with a warning giving their count.
pub fn parse_json(text: &str, warnings: &mut Vec<Warning>) -> Result<Value> {
    let mut owned: Option<String> = None;
    // Each repair is applied at most once, in the order the parser reports the problems.
    let (mut fixed_controls, mut fixed_surrogates) = (false, false);
    loop {
        let current = owned.as_deref().unwrap_or(text);
        let err = match serde_json::from_str::<Value>(current) {
            Ok(v) => return Ok(v),
            Err(e) => e,
        };
        let msg = err.to_string();
        if msg.contains("control character") && !fixed_controls {
            let (fixed, count) = escape_control_chars_in_strings(current);
            warnings.push(Warning::new(
                "json.control-chars",
                format!("{count} raw control characters inside JSON strings were kept as \\u escapes (the file is not strict JSON)"),
            ));
            owned = Some(fixed);
            fixed_controls = true;
        } else if (msg.contains("surrogate") || msg.contains("hex escape")) && !fixed_surrogates {
            let (fixed, count) = replace_lone_surrogates(current);
            warnings.push(Warning::new(
                "json.lone-surrogate",
                format!("{count} unpaired UTF-16 surrogate escapes (invalid Unicode, e.g. half an emoji) were replaced by U+FFFD"),
            ));
            owned = Some(fixed);
            fixed_surrogates = true;
        } else {
            return Err(json_error(err));
        }
    }
}

/// Replaces `\uD800`–`\uDFFF` escapes that do not form a valid pair with `\uFFFD`.
fn replace_lone_surrogates(text: &str) -> (String, usize) {
    fn hex4(s: &[u8]) -> Option<u32> {
        let h = std::str::from_utf8(s.get(..4)?).ok()?;
        u32::from_str_radix(h, 16).ok()
    }
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let (mut i, mut start, mut count) = (0usize, 0usize, 0usize);
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        if b.get(i + 1) != Some(&b'u') {
            i += 2;
            continue;
        }
        let Some(code) = hex4(&b[i + 2..]) else {
            i += 2;
            continue;
        };
        let is_high = (0xD800..0xDC00).contains(&code);
        let is_low = (0xDC00..0xE000).contains(&code);
        if is_high
            && b.get(i + 6) == Some(&b'\\')
            && b.get(i + 7) == Some(&b'u')
            && hex4(&b[i + 8..]).is_some_and(|c| (0xDC00..0xE000).contains(&c))
        {
            i += 12;
            continue;
        }
        if is_high || is_low {
            out.push_str(&text[start..i]);
            out.push_str("\\ufffd");
            count += 1;
            i += 6;
            start = i;
            continue;
        }
        i += 6;
    }
    out.push_str(&text[start..]);
    (out, count)
}

/// Decodes and parses in one step.
pub fn bytes_to_json(bytes: &[u8], warnings: &mut Vec<Warning>) -> Result<Value> {
    let text = decode_text(bytes, warnings);
    parse_json(&text, warnings)
}

fn json_error(e: serde_json::Error) -> FormatError {
    FormatError::whole(format!("not valid JSON: {e}"))
}

/// Replaces raw U+0000–U+001F inside JSON string literals with `\u00XX` escapes.
fn escape_control_chars_in_strings(text: &str) -> (String, usize) {
    let mut out = String::with_capacity(text.len() + 64);
    let (mut in_string, mut escaped, mut count) = (false, false, 0usize);
    for ch in text.chars() {
        if in_string {
            if escaped {
                escaped = false;
            } else if ch == '\\' {
                escaped = true;
            } else if ch == '"' {
                in_string = false;
            } else if (ch as u32) < 0x20 {
                out.push_str(&format!("\\u{:04x}", ch as u32));
                count += 1;
                continue;
            }
        } else if ch == '"' {
            in_string = true;
        }
        out.push(ch);
    }
    (out, count)
}

/// The file name without directory and extension (`foo/bar.json` → `bar`).
pub fn file_stem(file_name: &str) -> String {
    let base = file_name.rsplit(['/', '\\']).next().unwrap_or(file_name);
    match base.rfind('.') {
        Some(i) if i > 0 => base[..i].to_owned(),
        _ => base.to_owned(),
    }
}

/// The bytes without a leading UTF-8 BOM.
pub fn strip_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bom_is_skipped_with_warning() {
        let mut w = Vec::new();
        let v = bytes_to_json(b"\xEF\xBB\xBF{\"a\":1}", &mut w).unwrap();
        assert_eq!(v["a"], 1);
        assert_eq!(w[0].code, "encoding.bom");
    }

    #[test]
    fn cp1252_falls_back_with_warning() {
        let mut w = Vec::new();
        let v = bytes_to_json(b"{\"a\":\"caf\xE9 \x93q\x94\"}", &mut w).unwrap();
        assert_eq!(v["a"], "café \u{201c}q\u{201d}");
        assert_eq!(w[0].code, "encoding.cp1252");
    }

    #[test]
    fn raw_control_chars_are_recovered() {
        let mut w = Vec::new();
        let v = parse_json("{\"a\":\"x\u{1a}y\\\"\u{1}\"}", &mut w).unwrap();
        assert_eq!(v["a"], "x\u{1a}y\"\u{1}");
        assert!(w[0].message.starts_with("2 raw control"));
    }

    #[test]
    fn broken_json_is_refused_with_position() {
        let mut w = Vec::new();
        let e = parse_json("{\"a\":", &mut w).unwrap_err();
        assert!(e.message.contains("line 1"), "{e}");
    }

    #[test]
    fn lone_surrogates_are_replaced() {
        let mut w = Vec::new();
        let v = parse_json(r#"{"a":"x\ud83d y \ud83d\ude00 \\ud800 \udc00"}"#, &mut w).unwrap();
        assert_eq!(v["a"], "x\u{fffd} y \u{1f600} \\ud800 \u{fffd}");
        assert_eq!(w[0].code, "json.lone-surrogate");
        assert!(w[0].message.starts_with("2 unpaired"));
    }

    #[test]
    fn stems() {
        assert_eq!(file_stem("a/b/c.card.json"), "c.card");
        assert_eq!(file_stem("C:\\x\\y.png"), "y");
        assert_eq!(file_stem(".hidden"), ".hidden");
    }
}
