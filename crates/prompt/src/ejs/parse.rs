//! The EJS tag syntax (Tavo §4.2) parsed in Rust, and the JavaScript function body it
//! compiles to.
//!
//! Why in Rust: the parser must never panic on any field a card carries (a proptest and a
//! fuzz target hold it to that), a template with a broken tag must be recognised before any
//! JavaScript runs, and every tag keeps its byte offset so `--explain` can point at the one
//! that failed.
//!
//! Forms: `<%= expr %>` (HTML-escaped output, as EJS escapes: `& < > " '`), `<%- expr %>`
//! (raw output), `<% code %>`, `<%# comment %>`, `<%_` / `_%>` (EJS whitespace slurping),
//! `-%>` (drops the one newline after the tag), `<%%` and `%%>` (literal `<%` / `%>`), and
//! `<#escape-ejs>…</#escape-ejs>` (everything inside is literal; an unclosed block runs to
//! the end of the field). There is no `include`, no partials and no custom delimiters
//! (Tavo: "a common subset").

use std::borrow::Cow;

/// Opens a literal block.
pub const ESCAPE_OPEN: &str = "<#escape-ejs>";
/// Closes a literal block.
pub const ESCAPE_CLOSE: &str = "</#escape-ejs>";

/// One piece of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment<'a> {
    /// Literal text.
    Text(Cow<'a, str>),
    /// `<%= %>` (escaped) or `<%- %>` (raw) output of an expression.
    Output {
        /// The expression.
        code: &'a str,
        /// HTML-escape the value.
        escape: bool,
        /// Byte offset of the tag's `<%`.
        offset: usize,
    },
    /// `<% %>`: code run for its effects (and `print`).
    Code {
        /// The statements.
        code: &'a str,
        /// Byte offset of the tag's `<%`.
        offset: usize,
    },
}

/// Why a template cannot be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ParseError {
    /// Byte offset of the offending tag.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
}

/// Whether `text` contains anything the EJS stage would change. Text without it skips the
/// JavaScript engine entirely.
pub fn has_template(text: &str) -> bool {
    text.contains("<%") || text.contains(ESCAPE_OPEN)
}

/// Splits `src` into segments.
pub fn parse(src: &str) -> Result<Vec<Segment<'_>>, ParseError> {
    let mut segments = Vec::new();
    let mut text = String::new();
    let mut i = 0;
    while i < src.len() {
        let rest = &src[i..];
        if let Some(body) = rest.strip_prefix(ESCAPE_OPEN) {
            match body.find(ESCAPE_CLOSE) {
                Some(end) => {
                    text.push_str(&body[..end]);
                    i += ESCAPE_OPEN.len() + end + ESCAPE_CLOSE.len();
                }
                None => {
                    text.push_str(body);
                    i = src.len();
                }
            }
            continue;
        }
        if rest.starts_with("<%%") {
            text.push_str("<%");
            i += 3;
            continue;
        }
        if rest.starts_with("%%>") {
            text.push_str("%>");
            i += 3;
            continue;
        }
        if rest.starts_with("<%") {
            let offset = i;
            let (kind, open_len) = match rest.as_bytes().get(2) {
                Some(b'=') => (Kind::Escaped, 3),
                Some(b'-') => (Kind::Raw, 3),
                Some(b'#') => (Kind::Comment, 3),
                Some(b'_') => (Kind::Slurp, 3),
                _ => (Kind::Code, 2),
            };
            if kind == Kind::Slurp {
                // `<%_` strips the spaces and tabs before it on its line.
                let kept = text.trim_end_matches([' ', '\t']).len();
                text.truncate(kept);
            }
            let body_start = i + open_len;
            let Some(close) = src[body_start..].find("%>").map(|c| body_start + c) else {
                return Err(ParseError {
                    offset,
                    message: format!(
                        "the tag at byte {offset} is never closed: add %> (write <%% for a literal <%)"
                    ),
                });
            };
            let before_close = src.as_bytes()[body_start..close].last().copied();
            let (code_end, trim) = match before_close {
                Some(b'-') => (close - 1, Trim::Newline),
                Some(b'_') => (close - 1, Trim::Slurp),
                _ => (close, Trim::None),
            };
            let code = &src[body_start..code_end.max(body_start)];
            if !text.is_empty() {
                segments.push(Segment::Text(Cow::Owned(std::mem::take(&mut text))));
            }
            match kind {
                Kind::Escaped | Kind::Raw => segments.push(Segment::Output {
                    code,
                    escape: kind == Kind::Escaped,
                    offset,
                }),
                Kind::Code | Kind::Slurp => segments.push(Segment::Code { code, offset }),
                Kind::Comment => {}
            }
            i = close + 2;
            if trim == Trim::Slurp {
                i += src[i..].len() - src[i..].trim_start_matches([' ', '\t']).len();
            }
            if trim != Trim::None {
                if src[i..].starts_with("\r\n") {
                    i += 2;
                } else if src[i..].starts_with('\n') {
                    i += 1;
                }
            }
            continue;
        }
        // Copy up to the next place a tag could start.
        let step = rest.chars().next().map_or(1, char::len_utf8);
        let next = rest[step..]
            .find(['<', '%'])
            .map_or(src.len(), |n| i + step + n);
        text.push_str(&src[i..next]);
        i = next;
    }
    if !text.is_empty() {
        segments.push(Segment::Text(Cow::Owned(text)));
    }
    Ok(segments)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Escaped,
    Raw,
    Comment,
    Slurp,
    Code,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trim {
    None,
    Newline,
    Slurp,
}

/// The body of the JavaScript function a template runs as. It appends to `__out`, records
/// the offset of the tag running in `__pos.at` (so an error names its tag) and returns the
/// output. Expressions and code get a newline before what follows them, so a trailing
/// `// comment` inside a tag cannot swallow the rest.
pub fn compile(segments: &[Segment<'_>]) -> String {
    let mut body = String::from(
        "let __out = '';\n\
         const print = function () { for (let i = 0; i < arguments.length; i++) __out += __raw(arguments[i]); };\n",
    );
    for segment in segments {
        match segment {
            Segment::Text(text) => {
                body.push_str("__out += ");
                body.push_str(&js_string(text));
                body.push_str(";\n");
            }
            Segment::Output {
                code,
                escape,
                offset,
            } => {
                let f = if *escape { "__esc" } else { "__raw" };
                body.push_str(&format!("__pos.at = {offset};\n__out += {f}(("));
                body.push_str(code);
                body.push_str("\n));\n");
            }
            Segment::Code { code, offset } => {
                body.push_str(&format!("__pos.at = {offset};\n"));
                body.push_str(code);
                body.push_str("\n;\n");
            }
        }
    }
    body.push_str("return __out;\n");
    body
}

/// A JavaScript string literal for `text`.
fn js_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(src: &str) -> Vec<Segment<'_>> {
        parse(src).unwrap_or_else(|e| panic!("{src}: {e}"))
    }

    #[test]
    fn tag_forms() {
        let s = texts("a<%= x %>b<%- y -%>\nc<% z %><%# note %>d");
        assert_eq!(
            s,
            vec![
                Segment::Text("a".into()),
                Segment::Output {
                    code: " x ",
                    escape: true,
                    offset: 1
                },
                Segment::Text("b".into()),
                Segment::Output {
                    code: " y ",
                    escape: false,
                    offset: 10
                },
                Segment::Text("c".into()),
                Segment::Code {
                    code: " z ",
                    offset: 21
                },
                Segment::Text("d".into()),
            ]
        );
    }

    #[test]
    fn literals_and_escape_blocks() {
        assert_eq!(
            texts("<%% x %%> <#escape-ejs><%= no %></#escape-ejs>!"),
            vec![Segment::Text("<% x %> <%= no %>!".into())]
        );
        assert_eq!(
            texts("<#escape-ejs><% open"),
            vec![Segment::Text("<% open".into())]
        );
    }

    #[test]
    fn slurping_trims_the_line() {
        let s = texts("a\n   <%_ x _%>   \nb");
        assert_eq!(
            s,
            vec![
                Segment::Text("a\n".into()),
                Segment::Code {
                    code: " x ",
                    offset: 5
                },
                Segment::Text("b".into()),
            ]
        );
    }

    #[test]
    fn unclosed_tag_is_an_error_with_its_offset() {
        let err = parse("ok <%= 1 + ").err();
        assert_eq!(err.map(|e| e.offset), Some(3));
    }

    #[test]
    fn compiled_body_quotes_text() {
        let body = compile(&texts("\"q\"\\\n<%= 1 // c %>"));
        assert!(body.contains(r#"__out += "\"q\"\\\n";"#), "{body}");
        assert!(body.contains("__esc(( 1 // c \n));"), "{body}");
    }
}
