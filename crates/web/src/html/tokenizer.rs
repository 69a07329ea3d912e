//! A forgiving HTML tokenizer over a `&str`, without allocation per token.
//!
//! It follows the WHATWG tokenizer where the difference shows in Markdown: `<` not followed
//! by a letter is text, comments run to `-->` (or the end), `<!...>` and `<?...>` are bogus
//! comments, attribute values may hold `>` when quoted, a tag cut off by the end of input is
//! dropped, and the content of raw-text elements (`script`, `style`, `title`, `textarea`, ...)
//! runs to the matching end tag without being tokenized. Entities are left in place: the
//! converter decodes them where the text is used.

use memchr::memchr;

/// One token. Names are as written (compare with `eq_ignore_ascii_case`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Token<'a> {
    /// Character data, entities not decoded.
    Text(&'a str),
    /// The content of a raw-text element, up to (not including) its end tag.
    RawText(&'a str),
    /// `<name attrs...>`; `attrs` are read with [`Tokenizer::attrs`].
    Start {
        name: &'a str,
        self_closing: bool,
        /// Byte range of the attribute source inside the input.
        attrs: (usize, usize),
    },
    /// `</name>`.
    End { name: &'a str },
}

/// Elements whose content is not markup.
const RAW_TEXT: &[&str] = &[
    "script", "style", "title", "textarea", "xmp", "iframe", "noembed", "noframes", "noscript",
];

/// Streams [`Token`]s from an HTML string.
pub(crate) struct Tokenizer<'a> {
    input: &'a str,
    pos: usize,
    /// Set after a raw-text start tag: the next token is its content.
    raw_end: Option<&'static str>,
}

impl<'a> Tokenizer<'a> {
    pub(crate) fn new(input: &'a str) -> Self {
        Self {
            input,
            pos: 0,
            raw_end: None,
        }
    }

    /// The attribute source of a start tag as `(name, raw value)` pairs.
    pub(crate) fn attrs(&self, range: (usize, usize)) -> Attrs<'a> {
        Attrs {
            src: self.input.get(range.0..range.1).unwrap_or(""),
            pos: 0,
        }
    }

    fn raw_text(&mut self, name: &'static str) -> Token<'a> {
        let bytes = self.input.as_bytes();
        let start = self.pos;
        let mut at = start;
        while let Some(off) = memchr(b'<', &bytes[at..]) {
            let lt = at + off;
            let after = lt + 2 + name.len();
            if bytes.get(lt + 1) == Some(&b'/')
                && bytes.len() >= after
                && bytes[lt + 2..after].eq_ignore_ascii_case(name.as_bytes())
                && bytes
                    .get(after)
                    .is_none_or(|b| matches!(b, b'>' | b'/' | b' ' | b'\t' | b'\n' | b'\r' | 0x0c))
            {
                self.pos = lt;
                return Token::RawText(&self.input[start..lt]);
            }
            at = lt + 1;
        }
        self.pos = bytes.len();
        Token::RawText(&self.input[start..])
    }

    /// Parses a tag starting at `lt` (the `<`); `None` when the input ends inside it.
    fn tag(&mut self, lt: usize, closing: bool) -> Option<Token<'a>> {
        let bytes = self.input.as_bytes();
        let name_start = lt + if closing { 2 } else { 1 };
        let mut i = name_start;
        while i < bytes.len()
            && !matches!(bytes[i], b' ' | b'\t' | b'\n' | b'\r' | 0x0c | b'/' | b'>')
        {
            i += 1;
        }
        // Tag names start with an ASCII letter, so `i` is a char boundary (the name ends at ASCII).
        let name = &self.input[name_start..i];
        let attrs_start = i;
        // Jump between `>` and quotes; a quote right after `=` opens a value that may hold `>`.
        while let Some(off) = memchr::memchr3(b'>', b'"', b'\'', &bytes[i..]) {
            let at = i + off;
            let b = bytes[at];
            if b == b'>' {
                i = at;
                break;
            }
            if value_can_start(bytes, at) {
                match memchr(b, &bytes[at + 1..]) {
                    Some(close) => i = at + 1 + close + 1,
                    None => {
                        i = bytes.len();
                        break;
                    }
                }
            } else {
                i = at + 1;
            }
        }
        if i < bytes.len() && bytes[i] != b'>' {
            i = bytes.len();
        }
        if i >= bytes.len() {
            self.pos = bytes.len();
            return None;
        }
        let self_closing = i > attrs_start && bytes[i - 1] == b'/';
        self.pos = i + 1;
        if closing {
            return Some(Token::End { name });
        }
        self.raw_end = RAW_TEXT
            .iter()
            .find(|r| r.eq_ignore_ascii_case(name))
            .copied();
        Some(Token::Start {
            name,
            self_closing,
            attrs: (attrs_start, i),
        })
    }

    /// Skips a comment or bogus comment starting at `lt`.
    fn comment(&mut self, lt: usize) {
        let bytes = self.input.as_bytes();
        if bytes[lt..].starts_with(b"<!--") {
            let body = lt + 4;
            // `<!-->` and `<!--->` end at once.
            if bytes[body..].starts_with(b">") {
                self.pos = body + 1;
                return;
            }
            if bytes[body..].starts_with(b"->") {
                self.pos = body + 2;
                return;
            }
            self.pos =
                memchr::memmem::find(&bytes[body..], b"-->").map_or(bytes.len(), |p| body + p + 3);
            return;
        }
        self.pos = memchr(b'>', &bytes[lt..]).map_or(bytes.len(), |p| lt + p + 1);
    }
}

/// A quote opens an attribute value only right after `=` (ignoring spaces).
fn value_can_start(bytes: &[u8], i: usize) -> bool {
    let mut j = i;
    while j > 0 {
        j -= 1;
        match bytes[j] {
            b' ' | b'\t' | b'\n' | b'\r' | 0x0c => continue,
            b'=' => return true,
            _ => return false,
        }
    }
    false
}

impl<'a> Iterator for Tokenizer<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        if let Some(name) = self.raw_end.take() {
            return Some(self.raw_text(name));
        }
        let bytes = self.input.as_bytes();
        loop {
            if self.pos >= bytes.len() {
                return None;
            }
            let start = self.pos;
            let Some(off) = memchr(b'<', &bytes[start..]) else {
                self.pos = bytes.len();
                return Some(Token::Text(&self.input[start..]));
            };
            let lt = start + off;
            let next = bytes.get(lt + 1).copied();
            let is_markup = match next {
                Some(b) if b.is_ascii_alphabetic() => true,
                Some(b'/') => bytes
                    .get(lt + 2)
                    .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'>'),
                Some(b'!' | b'?') => true,
                _ => false,
            };
            if !is_markup {
                // A literal `<`: text up to and including it (the converter joins text runs).
                self.pos = lt + 1;
                return Some(Token::Text(&self.input[start..=lt]));
            }
            if lt > start {
                self.pos = lt;
                return Some(Token::Text(&self.input[start..lt]));
            }
            match next {
                Some(b'!' | b'?') => self.comment(lt),
                Some(b'/') if bytes.get(lt + 2) == Some(&b'>') => self.pos = lt + 3,
                Some(b'/') => {
                    if let Some(t) = self.tag(lt, true) {
                        return Some(t);
                    }
                }
                _ => {
                    if let Some(t) = self.tag(lt, false) {
                        return Some(t);
                    }
                }
            }
        }
    }
}

/// Attributes of one start tag.
pub(crate) struct Attrs<'a> {
    src: &'a str,
    pos: usize,
}

impl<'a> Iterator for Attrs<'a> {
    /// `(name, raw value)`; the value still has its entities.
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<(&'a str, &'a str)> {
        let b = self.src.as_bytes();
        let ws = |c: u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0c | b'/');
        while self.pos < b.len() && ws(b[self.pos]) {
            self.pos += 1;
        }
        if self.pos >= b.len() {
            return None;
        }
        let name_start = self.pos;
        // The first character may be `=` (it is then part of the name, as in the standard).
        self.pos += 1;
        while self.pos < b.len() && !ws(b[self.pos]) && b[self.pos] != b'=' {
            self.pos += 1;
        }
        let name = self.src.get(name_start..self.pos).unwrap_or("");
        let mut j = self.pos;
        while j < b.len() && matches!(b[j], b' ' | b'\t' | b'\n' | b'\r' | 0x0c) {
            j += 1;
        }
        if j >= b.len() || b[j] != b'=' {
            return Some((name, ""));
        }
        j += 1;
        while j < b.len() && matches!(b[j], b' ' | b'\t' | b'\n' | b'\r' | 0x0c) {
            j += 1;
        }
        let value = match b.get(j) {
            Some(&q @ (b'"' | b'\'')) => {
                let start = j + 1;
                let end = memchr(q, &b[start..]).map_or(b.len(), |p| start + p);
                self.pos = (end + 1).min(b.len());
                self.src.get(start..end).unwrap_or("")
            }
            _ => {
                let start = j;
                let mut end = j;
                while end < b.len() && !matches!(b[end], b' ' | b'\t' | b'\n' | b'\r' | 0x0c) {
                    end += 1;
                }
                self.pos = end;
                self.src.get(start..end).unwrap_or("")
            }
        };
        Some((name, value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(html: &str) -> Vec<Token<'_>> {
        Tokenizer::new(html).collect()
    }

    #[test]
    fn tags_text_and_comments() {
        let t = tokens("a<b>c</b><!-- x > y -->d<!doctype html>e<?php ?>f");
        assert_eq!(t[0], Token::Text("a"));
        assert!(matches!(t[1], Token::Start { name: "b", .. }));
        assert_eq!(t[2], Token::Text("c"));
        assert_eq!(t[3], Token::End { name: "b" });
        assert_eq!(
            &t[4..],
            &[Token::Text("d"), Token::Text("e"), Token::Text("f")]
        );
    }

    #[test]
    fn lone_angle_brackets_are_text() {
        let t = tokens("1 < 2 <3 and a<b>x");
        let text: String = t
            .iter()
            .take_while(|t| matches!(t, Token::Text(_)))
            .map(|t| match t {
                Token::Text(s) => *s,
                _ => "",
            })
            .collect();
        assert_eq!(text, "1 < 2 <3 and a");
        assert!(
            t.iter()
                .any(|t| matches!(t, Token::Start { name: "b", .. }))
        );
    }

    #[test]
    fn quoted_attribute_values_may_hold_angle_brackets() {
        let html = r#"<a title="x > y" href='/p?a=1&amp;b=2' data-x=z disabled>t</a>"#;
        let mut tk = Tokenizer::new(html);
        let Some(Token::Start { attrs, .. }) = tk.next() else {
            panic!("start tag expected");
        };
        let attrs: Vec<_> = tk.attrs(attrs).collect();
        assert_eq!(
            attrs,
            vec![
                ("title", "x > y"),
                ("href", "/p?a=1&amp;b=2"),
                ("data-x", "z"),
                ("disabled", "")
            ]
        );
        assert_eq!(tk.next(), Some(Token::Text("t")));
    }

    #[test]
    fn raw_text_runs_to_its_end_tag() {
        let t = tokens("<script>if (a<b) { x = '</p>' }</SCRIPT >after");
        assert_eq!(t[1], Token::RawText("if (a<b) { x = '</p>' }"));
        assert_eq!(t[2], Token::End { name: "SCRIPT" });
        assert_eq!(t[3], Token::Text("after"));
        let t = tokens("<style>never closed");
        assert_eq!(t[1], Token::RawText("never closed"));
    }

    #[test]
    fn a_tag_cut_by_the_end_is_dropped() {
        assert_eq!(tokens("x<a href=\"y"), vec![Token::Text("x")]);
        assert_eq!(tokens("x<!-- open"), vec![Token::Text("x")]);
    }
}
