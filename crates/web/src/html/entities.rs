//! Character references (`&amp;`, `&#233;`, `&#x1F600;`, legacy `&copy` without `;`), decoded
//! with the WHATWG table html5ever ships, the way a browser would.

use std::borrow::Cow;

use markup5ever::data::{C1_REPLACEMENTS, NAMED_ENTITIES};

/// Longest entity name in the table (`&CounterClockwiseContourIntegral;`).
const MAX_NAME: usize = 32;

/// `text` with its character references decoded. In attribute values a legacy name without
/// `;` followed by an alphanumeric or `=` stays literal (`?a=1&copy=2` is a query, not `©`).
pub(crate) fn decode(text: &str, in_attribute: bool) -> Cow<'_, str> {
    if !text.contains('&') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    decode_into(&mut out, text, in_attribute);
    Cow::Owned(out)
}

/// Appends `text` to `out` with its character references decoded.
pub(crate) fn decode_into(out: &mut String, text: &str, in_attribute: bool) {
    let mut rest = text;
    while let Some(amp) = memchr::memchr(b'&', rest.as_bytes()) {
        out.push_str(&rest[..amp]);
        let after = &rest[amp + 1..];
        match reference(after, in_attribute) {
            Some((decoded, used)) => {
                out.push(decoded.0);
                if let Some(second) = decoded.1 {
                    out.push(second);
                }
                rest = &after[used..];
            }
            None => {
                out.push('&');
                rest = after;
            }
        }
    }
    out.push_str(rest);
}

type Chars = (char, Option<char>);

/// The reference at the start of `s` (just after `&`) and how many bytes it used.
pub(crate) fn reference(s: &str, in_attribute: bool) -> Option<(Chars, usize)> {
    let bytes = s.as_bytes();
    if bytes.first() == Some(&b'#') {
        return numeric(s);
    }
    let name_len = bytes
        .iter()
        .take(MAX_NAME)
        .take_while(|b| b.is_ascii_alphanumeric())
        .count();
    if name_len == 0 {
        return None;
    }
    if bytes.get(name_len) == Some(&b';')
        && let Some(&(a, b)) = NAMED_ENTITIES.get(&s[..=name_len])
        && a != 0
    {
        return Some((chars(a, b), name_len + 1));
    }
    // Legacy references without `;`: the longest known prefix.
    for len in (2..=name_len.min(6)).rev() {
        if let Some(&(a, b)) = NAMED_ENTITIES.get(&s[..len])
            && a != 0
        {
            let next = bytes.get(len);
            if in_attribute && next.is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'=') {
                return None;
            }
            return Some((chars(a, b), len));
        }
    }
    None
}

fn chars(a: u32, b: u32) -> Chars {
    let first = char::from_u32(a).unwrap_or('\u{FFFD}');
    let second = (b != 0).then(|| char::from_u32(b).unwrap_or('\u{FFFD}'));
    (first, second)
}

fn numeric(s: &str) -> Option<(Chars, usize)> {
    let bytes = s.as_bytes();
    let (hex, digits_start) = match bytes.get(1) {
        Some(b'x' | b'X') => (true, 2),
        _ => (false, 1),
    };
    let digits = bytes[digits_start..]
        .iter()
        .take_while(|b| {
            if hex {
                b.is_ascii_hexdigit()
            } else {
                b.is_ascii_digit()
            }
        })
        .count();
    if digits == 0 {
        return None;
    }
    let end = digits_start + digits;
    let radix = if hex { 16 } else { 10 };
    // Saturate instead of overflowing: any huge value is out of range anyway.
    let value = s[digits_start..end].bytes().fold(0u32, |acc, d| {
        let v = (d as char).to_digit(radix).unwrap_or(0);
        acc.saturating_mul(radix).saturating_add(v)
    });
    let used = if bytes.get(end) == Some(&b';') {
        end + 1
    } else {
        end
    };
    let c = match value {
        0x80..=0x9F => C1_REPLACEMENTS[(value - 0x80) as usize].unwrap_or('\u{FFFD}'),
        0 => '\u{FFFD}',
        v => char::from_u32(v).unwrap_or('\u{FFFD}'),
    };
    Some(((c, None), used))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_numeric_and_legacy_references() {
        let cases = [
            ("a &amp; b", "a & b"),
            ("&lt;p&gt;", "<p>"),
            ("caf&eacute; &#233; &#xE9; &#XE9", "café é é é"),
            ("&copy 2026", "© 2026"),
            ("&notit;", "¬it;"),
            ("&unknown; & &#;", "&unknown; & &#;"),
            ("&#0; &#x110000; &#128;", "\u{FFFD} \u{FFFD} €"),
            ("&NotEqualTilde;", "\u{2242}\u{338}"),
            ("&#99999999999999999999;", "\u{FFFD}"),
        ];
        for (input, want) in cases {
            assert_eq!(decode(input, false), want, "{input}");
        }
    }

    #[test]
    fn attributes_keep_query_strings_literal() {
        assert_eq!(decode("/p?a=1&copy=2&amp;b", true), "/p?a=1&copy=2&b");
        assert_eq!(decode("/p?x&copy", true), "/p?x©");
    }
}
