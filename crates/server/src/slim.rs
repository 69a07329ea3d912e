//! What the server serves of the app's JavaScript and CSS: the source without its comments and
//! indentation, **line for line**. The build script (`build.rs`) runs every `.js`, `.mjs` and
//! `.css` file of `web/` through here before compressing it.
//!
//! Why not a minifier: the app has no build step on purpose, and a stack trace or a DevTools
//! breakpoint should point at the line a contributor reads in `web/`. Keeping every newline
//! does that; only columns move (by the indentation removed). Comments are a third of the app's
//! own bytes (JSDoc types for `tsc --checkJs`, and the "why" notes), which is what takes the
//! app under its 150 KB budget.
//!
//! The JavaScript side is a lexer, not a regex: strings, template literals (with `${}` nesting)
//! and regular-expression literals are copied as they are, so `"//"`, `` `/*` `` and `/[/*]/`
//! survive. What is removed:
//! - `//` and `/* */` comments, except `/*! … */` (licence headers); a block comment with
//!   newlines leaves its newlines, one without leaves a space (so `a/**/b` stays two tokens);
//! - indentation and trailing blanks of lines in code;
//! - indentation inside `` html`…` `` templates (htm drops whitespace around newlines, and HTML
//!   collapses the rest), but never inside any other template literal, whose text is data.
//!
//! The browser stage of `.ci/run` checks the result independently: `tests/e2e/tests/slim.test.js`
//! parses every served file and its source with TypeScript and compares the two programs.

/// `source` as served: see the module's doc. Lines are kept one for one.
pub fn javascript(source: &str) -> String {
    Lexer::new(source).run()
}

/// A stylesheet without its comments and indentation; lines kept one for one.
pub fn css(source: &str) -> String {
    let b = source.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let mut line_start = true;
    while i < b.len() {
        let c = b[i];
        if line_start && (c == b' ' || c == b'\t') {
            i += 1;
            continue;
        }
        line_start = false;
        match c {
            b'/' if b.get(i + 1) == Some(&b'*') && b.get(i + 2) != Some(&b'!') => {
                let end = find(b, i + 2, b"*/").map_or(b.len(), |e| e + 2);
                push_comment_gap(&mut out, &b[i..end]);
                i = end;
            }
            b'"' | b'\'' => {
                let end = string_end(b, i);
                out.extend_from_slice(&b[i..end]);
                i = end;
            }
            b'\n' => {
                trim_trailing_blanks(&mut out);
                out.push(b'\n');
                line_start = true;
                i += 1;
            }
            // Blanks beside punctuation that ends a token: after `{ } ; , :`, before
            // `{ } ; ,`. Never before `:` (`a :hover` is not `a:hover`), never inside strings.
            b' ' | b'\t' => {
                let after = out.last().is_some_and(|p| b"{};,:".contains(p));
                let next = b[i..].iter().find(|&&n| n != b' ' && n != b'\t');
                let before = next.is_some_and(|n| b"{};,".contains(n));
                if !after && !before {
                    out.push(c);
                }
                i += 1;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    trim_trailing_blanks(&mut out);
    String::from_utf8(out).unwrap_or_else(|_| source.to_string())
}

/// What came before a `/`, which decides whether it starts a regular expression.
#[derive(Clone, Copy, PartialEq)]
enum Prev {
    /// Start of input, an operator or an opening bracket: a `/` here starts a regex.
    Operator,
    /// A value (identifier, number, string, `)` or `]`): a `/` here divides.
    Value,
}

/// One level of `{`…`}` nesting in code: a plain brace, or the `${` of a template literal
/// (whose closing `}` returns to the template's text).
#[derive(Clone, Copy)]
enum Brace {
    Plain,
    Template { html: bool },
}

struct Lexer<'a> {
    b: &'a [u8],
    i: usize,
    out: Vec<u8>,
    braces: Vec<Brace>,
    prev: Prev,
    /// The last identifier, to tell `return /re/` from `x / y` and `` html`…` `` from others.
    word: &'a [u8],
    line_start: bool,
}

/// Keywords after which a `/` starts a regular expression, not a division.
const REGEX_AFTER: &[&[u8]] = &[
    b"return",
    b"typeof",
    b"instanceof",
    b"in",
    b"of",
    b"new",
    b"delete",
    b"void",
    b"throw",
    b"case",
    b"do",
    b"else",
    b"yield",
    b"await",
];

impl<'a> Lexer<'a> {
    fn new(source: &'a str) -> Self {
        Self {
            b: source.as_bytes(),
            i: 0,
            out: Vec::with_capacity(source.len()),
            braces: Vec::new(),
            prev: Prev::Operator,
            word: b"",
            line_start: true,
        }
    }

    fn run(mut self) -> String {
        while self.i < self.b.len() {
            self.code_step();
        }
        trim_trailing_blanks(&mut self.out);
        // The input was UTF-8 and only ASCII bytes were removed, so this cannot fail; the
        // fallback keeps the source rather than serving nothing.
        String::from_utf8(self.out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into())
    }

    fn peek(&self, ahead: usize) -> Option<u8> {
        self.b.get(self.i + ahead).copied()
    }

    /// One token (or blank) of code.
    fn code_step(&mut self) {
        let c = self.b[self.i];
        if self.line_start && (c == b' ' || c == b'\t') {
            self.i += 1;
            return;
        }
        self.line_start = false;
        match c {
            b'\n' => {
                trim_trailing_blanks(&mut self.out);
                self.out.push(b'\n');
                self.line_start = true;
                self.i += 1;
            }
            b'/' if self.peek(1) == Some(b'/') => {
                self.i = find(self.b, self.i, b"\n").unwrap_or(self.b.len());
            }
            b'/' if self.peek(1) == Some(b'*') => {
                let end = find(self.b, self.i + 2, b"*/").map_or(self.b.len(), |e| e + 2);
                if self.peek(2) == Some(b'!') {
                    self.out.extend_from_slice(&self.b[self.i..end]);
                } else {
                    push_comment_gap(&mut self.out, &self.b[self.i..end]);
                }
                self.i = end;
            }
            b'/' if self.regex_allowed() => {
                let end = regex_end(self.b, self.i);
                self.out.extend_from_slice(&self.b[self.i..end]);
                self.i = end;
                self.prev = Prev::Value;
            }
            b'"' | b'\'' => {
                let end = string_end(self.b, self.i);
                self.out.extend_from_slice(&self.b[self.i..end]);
                self.i = end;
                self.prev = Prev::Value;
            }
            b'`' => {
                let html = self.prev == Prev::Value && self.word == b"html";
                self.out.push(b'`');
                self.i += 1;
                self.template_text(html);
            }
            b'{' => {
                self.braces.push(Brace::Plain);
                self.punct(c, Prev::Operator);
            }
            b'}' => match self.braces.pop() {
                Some(Brace::Template { html }) => {
                    self.out.push(b'}');
                    self.i += 1;
                    self.template_text(html);
                }
                // After a block's `}` a `/` usually starts a regex; after an object literal's it
                // would divide, which nobody writes. Erring this way only copies a division as is.
                _ => self.punct(c, Prev::Operator),
            },
            b')' | b']' => self.punct(c, Prev::Value),
            c if c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80 => {
                let start = self.i;
                while self.i < self.b.len() {
                    let d = self.b[self.i];
                    if d.is_ascii_alphanumeric() || d == b'_' || d == b'$' || d >= 0x80 {
                        self.i += 1;
                    } else {
                        break;
                    }
                }
                self.word = &self.b[start..self.i];
                self.out.extend_from_slice(self.word);
                self.prev = if REGEX_AFTER.contains(&self.word) {
                    Prev::Operator
                } else {
                    Prev::Value
                };
            }
            b' ' | b'\t' | b'\r' => {
                self.out.push(c);
                self.i += 1;
            }
            _ => self.punct(c, Prev::Operator),
        }
    }

    fn punct(&mut self, c: u8, prev: Prev) {
        self.out.push(c);
        self.i += 1;
        self.prev = prev;
        self.word = b"";
    }

    fn regex_allowed(&self) -> bool {
        self.prev == Prev::Operator
    }

    /// The text of a template literal, from just after its opening `` ` `` (or a `${…}`'s
    /// closing `}`) to its end or its next `${`.
    fn template_text(&mut self, html: bool) {
        let mut line_start = false;
        while self.i < self.b.len() {
            let c = self.b[self.i];
            if html && line_start && (c == b' ' || c == b'\t') {
                self.i += 1;
                continue;
            }
            line_start = false;
            match c {
                b'\\' => {
                    let end = (self.i + 2).min(self.b.len());
                    self.out.extend_from_slice(&self.b[self.i..end]);
                    self.i = end;
                }
                b'`' => {
                    self.out.push(b'`');
                    self.i += 1;
                    self.prev = Prev::Value;
                    self.word = b"";
                    return;
                }
                b'$' if self.peek(1) == Some(b'{') => {
                    self.out.extend_from_slice(b"${");
                    self.i += 2;
                    self.braces.push(Brace::Template { html });
                    self.prev = Prev::Operator;
                    self.word = b"";
                    return;
                }
                b'\n' => {
                    if html {
                        trim_trailing_blanks(&mut self.out);
                    }
                    self.out.push(b'\n');
                    self.i += 1;
                    line_start = true;
                }
                _ => {
                    self.out.push(c);
                    self.i += 1;
                }
            }
        }
    }
}

/// A removed comment leaves its newlines (so lines stay where they were), or one space when it
/// has none (so the tokens on either side stay apart).
fn push_comment_gap(out: &mut Vec<u8>, comment: &[u8]) {
    let newlines = comment.iter().filter(|&&c| c == b'\n').count();
    if newlines == 0 {
        if !matches!(out.last(), None | Some(b' ' | b'\t' | b'\n')) {
            out.push(b' ');
        }
        return;
    }
    for _ in 0..newlines {
        trim_trailing_blanks(out);
        out.push(b'\n');
    }
}

fn trim_trailing_blanks(out: &mut Vec<u8>) {
    while matches!(out.last(), Some(b' ' | b'\t' | b'\r')) {
        out.pop();
    }
}

fn find(b: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    b.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

/// The end (exclusive) of the quoted string starting at `start`.
fn string_end(b: &[u8], start: usize) -> usize {
    let quote = b[start];
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            c if c == quote => return i + 1,
            // An unterminated string ends at the line (a syntax error either way).
            b'\n' => return i,
            _ => i += 1,
        }
    }
    b.len()
}

/// The end (exclusive) of the regular-expression literal starting at `start`, flags included.
/// A `/` inside a character class does not end it. A literal cannot span lines: at a newline
/// the scan stops, and the text read so far is copied as it is.
fn regex_end(b: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    let mut class = false;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'[' => {
                class = true;
                i += 1;
            }
            b']' => {
                class = false;
                i += 1;
            }
            b'/' if !class => {
                i += 1;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                return i;
            }
            b'\n' => return i,
            _ => i += 1,
        }
    }
    b.len().min(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each case: source, then what is served.
    const JS: &[(&str, &str)] = &[
        ("let a = 1; // one\nlet b = 2;", "let a = 1;\nlet b = 2;"),
        (
            "/** doc\n * more\n */\nfunction f() {}",
            "\n\n\nfunction f() {}",
        ),
        ("a/**/b", "a b"),
        ("/*! licence */\nx", "/*! licence */\nx"),
        ("  if (x) {\n    y();\n  }\n", "if (x) {\ny();\n}\n"),
        ("const u = 'http://x'; // c", "const u = 'http://x';"),
        ("const s = \"/* no */\";", "const s = \"/* no */\";"),
        ("const r = /[/*]\\/x/g; // c", "const r = /[/*]\\/x/g;"),
        ("return /\\/\\/ a/.test(s)", "return /\\/\\/ a/.test(s)"),
        ("x = a / b / c; // d", "x = a / b / c;"),
        ("x = (a) / 2 // d", "x = (a) / 2"),
        (
            "t = `a // b ${ c /* in */ } /* d */`",
            "t = `a // b ${ c  } /* d */`",
        ),
        ("t = `\n    kept\n`", "t = `\n    kept\n`"),
        (
            "html`\n    <div>\n      ${x}\n    </div>\n  `",
            "html`\n<div>\n${x}\n</div>\n`",
        ),
        (
            "t = `${`inner ${'}'} // x`} // y`",
            "t = `${`inner ${'}'} // x`} // y`",
        ),
        ("if (a) {} /re/.test(b)", "if (a) {} /re/.test(b)"),
        ("a = 'it\\'s // ok' // c", "a = 'it\\'s // ok'"),
        ("é = 1 // c\n", "é = 1\n"),
    ];

    #[test]
    fn javascript_loses_comments_and_indentation_but_no_token() {
        for (source, served) in JS {
            assert_eq!(javascript(source), *served, "source: {source:?}");
        }
    }

    #[test]
    fn lines_are_kept_one_for_one() {
        let source = "/* a\n b */ x = 1;\n  // c\n  y = `\n  ${z}\n`;\n";
        let served = javascript(source);
        assert_eq!(served.lines().count(), source.lines().count());
    }

    #[test]
    fn css_loses_comments_and_indentation() {
        assert_eq!(
            css("/* head */\n.a {\n  content: \"/* no */\"; /* c */\n}\n"),
            "\n.a{\ncontent:\"/* no */\";\n}\n"
        );
        assert_eq!(
            css("a :hover , b > c { margin: 0 auto ; font: 1em/2 x, 'a b' }"),
            "a :hover,b > c{margin:0 auto;font:1em/2 x,'a b'}"
        );
    }
}
