//! The Markdown output of the streaming converter: block breaks, line prefixes (list indents,
//! `> ` quotes), lazily written markers and inline delimiters, collapsed whitespace and
//! escaping.
//!
//! Everything structural is written lazily, right before the next piece of content: a block
//! break, a list marker, a heading's `## `, an opening `**` or `[`. An element that turns out
//! empty therefore leaves no trace, and an element's Markdown always starts with its own
//! separator, so the byte range of any element can be cut out or moved without re-flowing
//! the rest (main-content extraction relies on this).

use super::entities;

/// Writing state of one output buffer (the document, or one table cell).
#[derive(Debug, Default)]
struct State {
    /// Written at the start of every line (list indentation, `> `).
    prefix: String,
    /// Newlines owed before the next content (0, 1 or 2).
    pending_break: u8,
    /// A list or heading marker for the next line: the prefix length to write before it.
    marker: Option<(usize, String)>,
    /// Whitespace seen since the last content.
    pending_space: bool,
    /// Opening delimiters (`**`, `[`, `` ` ``) waiting for content, with their ids.
    pending_inline: Vec<(u32, &'static str)>,
    /// Openers already written: id and byte position.
    written_inline: Vec<(u32, usize)>,
    /// Something besides the prefix is on the current line.
    line_has_content: bool,
    /// Anything was written to this buffer.
    started: bool,
    /// Prefix length when content was last written: blank lines between blocks carry only
    /// the part shared with it (no `>` line between a paragraph and a following quote).
    written_prefix: usize,
}

/// Text escaping context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Escape {
    /// Ordinary prose.
    Prose,
    /// Link text or image alt: brackets are escaped too.
    Bracketed,
    /// Inline code: nothing is escaped.
    Code,
}

/// Markdown output with nested buffers for table cells.
#[derive(Debug, Default)]
pub(crate) struct Writer {
    /// The buffer being written.
    pub(crate) out: String,
    st: State,
    saved: Vec<(String, State)>,
    next_id: u32,
}

#[inline]
pub(crate) fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0c)
}

/// Bytes that need more than a copy in prose: whitespace, `&`, `,` (counted) and
/// Markdown syntax characters.
static SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    let list = b" \t\n\r\x0c&,*_`[]\\";
    let mut i = 0;
    while i < list.len() {
        t[list[i] as usize] = true;
        i += 1;
    }
    t
};

impl Writer {
    pub(crate) fn with_capacity(n: usize) -> Self {
        Self {
            out: String::with_capacity(n),
            ..Self::default()
        }
    }

    /// True while writing the top-level document (not a table cell).
    pub(crate) fn at_top(&self) -> bool {
        self.saved.is_empty()
    }

    /// Starts a fresh buffer (a table cell); [`Writer::leave`] returns its Markdown.
    pub(crate) fn enter(&mut self) {
        let out = std::mem::take(&mut self.out);
        let st = std::mem::take(&mut self.st);
        self.saved.push((out, st));
    }

    /// Ends the buffer started by [`Writer::enter`], restoring the outer one.
    pub(crate) fn leave(&mut self) -> String {
        match self.saved.pop() {
            Some((out, st)) => {
                self.st = st;
                std::mem::replace(&mut self.out, out)
            }
            None => String::new(),
        }
    }

    /// Asks for `n` newlines (1: next line, 2: new paragraph) before the next content.
    pub(crate) fn block(&mut self, n: u8) {
        self.st.pending_break = self.st.pending_break.max(n);
    }

    /// Whitespace between inline content.
    pub(crate) fn space(&mut self) {
        self.st.pending_space = true;
    }

    /// The current line prefix length (to restore with [`Writer::pop_prefix`]).
    pub(crate) fn prefix_len(&self) -> usize {
        self.st.prefix.len()
    }

    pub(crate) fn push_prefix(&mut self, s: &str) {
        self.st.prefix.push_str(s);
    }

    pub(crate) fn pop_prefix(&mut self, len: usize) {
        self.st.prefix.truncate(len);
    }

    /// A marker (`- `, `3. `, `## `) written at the start of the next line, after the
    /// first `base` bytes of the prefix.
    pub(crate) fn set_marker(&mut self, base: usize, marker: String) {
        self.st.marker = Some((base, marker));
    }

    /// Drops a marker that never got content (an empty heading or list item).
    pub(crate) fn clear_marker(&mut self) {
        self.st.marker = None;
    }

    /// Queues an opening delimiter; returns the id to pass to [`Writer::close_inline`].
    pub(crate) fn open_inline(&mut self, delimiter: &'static str) -> u32 {
        self.next_id = self.next_id.wrapping_add(1);
        self.st.pending_inline.push((self.next_id, delimiter));
        self.next_id
    }

    /// Writes `closer` if the opener `id` reached the output and returns the opener's byte
    /// position; otherwise drops the opener (the element was empty) and returns `None`.
    pub(crate) fn close_inline(&mut self, id: u32, closer: &str) -> Option<usize> {
        if let Some(i) = self.st.pending_inline.iter().rposition(|(p, _)| *p == id) {
            self.st.pending_inline.truncate(i);
            return None;
        }
        let i = self.st.written_inline.iter().rposition(|(p, _)| *p == id)?;
        let (_, pos) = self.st.written_inline.remove(i);
        self.out.push_str(closer);
        Some(pos)
    }

    /// Where the opener `id` was written, if it was.
    pub(crate) fn written_at(&self, id: u32) -> Option<usize> {
        self.st
            .written_inline
            .iter()
            .rev()
            .find(|(p, _)| *p == id)
            .map(|(_, pos)| *pos)
    }

    /// Writes whatever is owed before content; returns true at the start of a line.
    fn begin_content(&mut self) -> bool {
        let st = &mut self.st;
        let fresh_line = if st.pending_break > 0 || !st.started {
            if st.started {
                self.out.push('\n');
                let shared = st.written_prefix.min(st.prefix.len());
                let blank = st.prefix.get(..shared).unwrap_or("").trim_end();
                for _ in 1..st.pending_break {
                    self.out.push_str(blank);
                    self.out.push('\n');
                }
            }
            match st.marker.take() {
                Some((base, marker)) => {
                    self.out
                        .push_str(st.prefix.get(..base).unwrap_or(&st.prefix));
                    self.out.push_str(&marker);
                }
                None => self.out.push_str(&st.prefix),
            }
            st.pending_break = 0;
            st.started = true;
            st.written_prefix = st.prefix.len();
            st.line_has_content = false;
            true
        } else {
            if st.pending_space && st.line_has_content {
                self.out.push(' ');
            }
            !st.line_has_content
        };
        st.pending_space = false;
        for (id, delimiter) in st.pending_inline.drain(..) {
            st.written_inline.push((id, self.out.len()));
            self.out.push_str(delimiter);
        }
        st.line_has_content = true;
        fresh_line
    }

    /// A line break inside a block (`<br>`).
    pub(crate) fn line_break(&mut self) {
        if !self.st.started || self.st.pending_break > 0 || !self.st.line_has_content {
            return;
        }
        self.out.push('\n');
        self.out.push_str(&self.st.prefix);
        self.st.line_has_content = false;
        self.st.pending_space = false;
    }

    /// Inline content that is already Markdown (an image, a link target).
    pub(crate) fn raw_inline(&mut self, markdown: &str) {
        self.begin_content();
        self.out.push_str(markdown);
    }

    /// A block of preformatted Markdown lines (a fenced code block, a table): each line gets
    /// the current prefix. Pending inline delimiters wait for the content after it.
    pub(crate) fn raw_block(&mut self, markdown: &str) {
        let pending = std::mem::take(&mut self.st.pending_inline);
        self.block(2);
        self.begin_content();
        let mut lines = markdown.split('\n');
        if let Some(first) = lines.next() {
            self.out.push_str(first);
        }
        for line in lines {
            self.out.push('\n');
            if line.is_empty() {
                self.out.push_str(self.st.prefix.trim_end());
            } else {
                self.out.push_str(&self.st.prefix);
                self.out.push_str(line);
            }
        }
        self.st.pending_inline = pending;
        self.block(2);
    }

    /// Character data: whitespace collapsed, entities decoded, Markdown syntax escaped.
    /// Returns the number of commas (readability's content signal).
    pub(crate) fn text(&mut self, s: &str, escape: Escape) -> usize {
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() && is_ws(b[i]) {
            i += 1;
        }
        if i > 0 {
            self.st.pending_space = true;
        }
        let mut n = b.len();
        while n > i && is_ws(b[n - 1]) {
            n -= 1;
        }
        if i >= n {
            return 0;
        }
        let fresh_line = self.begin_content();
        let content_start = self.out.len();
        if fresh_line && escape == Escape::Prose {
            i += self.escape_line_start(&b[i..n]);
        }
        let mut commas = 0;
        let mut run = i;
        while i < n {
            // Fast scan: ordinary bytes and single spaces are copied as they are.
            while i < n {
                let c = b[i];
                if !SPECIAL[c as usize] || (c == b' ' && !is_ws(b[i + 1])) {
                    i += 1;
                } else {
                    break;
                }
            }
            self.out.push_str(&s[run..i]);
            if i >= n {
                break;
            }
            let c = b[i];
            i += 1;
            match c {
                b' ' | b'\t' | b'\n' | b'\r' | 0x0c => {
                    // A whitespace run inside the text (the ends were trimmed): one space.
                    while is_ws(b[i]) {
                        i += 1;
                    }
                    self.out.push(' ');
                }
                b'&' => match entities::reference(&s[i..n], false) {
                    Some(((first, second), used)) => {
                        if first == '\u{a0}' {
                            // `&nbsp;` runs are spacing: one space, none at a line start
                            // (four would make the line a code block).
                            let last = self.out.as_bytes().last().copied();
                            let at_start = fresh_line && self.out.len() == content_start;
                            if !at_start && last != Some(b' ') {
                                self.out.push(' ');
                            }
                        } else {
                            self.out.push(first);
                        }
                        if let Some(second) = second {
                            self.out.push(second);
                        }
                        i += used;
                    }
                    None => self.out.push('&'),
                },
                b',' => {
                    commas += 1;
                    self.out.push(',');
                }
                _ if escape == Escape::Code => self.out.push(c as char),
                // Page text like `[x](javascript:…)` must not become a link: `[` is escaped.
                b']' if escape == Escape::Prose => self.out.push(']'),
                b'_' => {
                    let before = self.out.as_bytes().last().copied().unwrap_or(b' ');
                    let after = b.get(i).copied().unwrap_or(b' ');
                    if before.is_ascii_alphanumeric() && after.is_ascii_alphanumeric() {
                        self.out.push('_');
                    } else {
                        self.out.push_str("\\_");
                    }
                }
                b'\\' => {
                    if b.get(i).is_some_and(u8::is_ascii_punctuation) {
                        self.out.push_str("\\\\");
                    } else {
                        self.out.push('\\');
                    }
                }
                _ => {
                    self.out.push('\\');
                    self.out.push(c as char);
                }
            }
            run = i;
        }
        if n < b.len() {
            self.st.pending_space = true;
        }
        commas
    }

    /// Escapes what would read as block syntax at the start of a line; returns how many
    /// bytes of `word` it wrote itself.
    fn escape_line_start(&mut self, word: &[u8]) -> usize {
        let end = word.iter().position(|&b| is_ws(b)).unwrap_or(word.len());
        let word = &word[..end];
        let Some(&first) = word.first() else {
            return 0;
        };
        match first {
            b'#' | b'>' | b'=' | b'|' => self.out.push('\\'),
            b'-' | b'+' if word.iter().all(|&c| c == first) => self.out.push('\\'),
            b'0'..=b'9' => {
                let digits = word.iter().take_while(|c| c.is_ascii_digit()).count();
                if digits == word.len() - 1 && matches!(word[digits], b'.' | b')') {
                    // `1.` → `1\.`: the digits are ASCII, so these slices are whole chars.
                    for &d in &word[..digits] {
                        self.out.push(d as char);
                    }
                    self.out.push('\\');
                    self.out.push(word[digits] as char);
                    return word.len();
                }
            }
            _ => {}
        }
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_collapses_and_breaks_are_lazy() {
        let mut w = Writer::default();
        w.block(2);
        w.text("  hello \n  world ", Escape::Prose);
        w.block(2);
        w.block(1);
        w.text("next", Escape::Prose);
        w.block(2);
        assert_eq!(w.out, "hello world\n\nnext");
    }

    #[test]
    fn markers_and_prefixes() {
        let mut w = Writer::default();
        let base = w.prefix_len();
        w.block(1);
        w.push_prefix("  ");
        w.set_marker(base, "- ".into());
        w.text("a", Escape::Prose);
        w.line_break();
        w.text("b", Escape::Prose);
        assert_eq!(w.out, "- a\n  b");
    }

    #[test]
    fn empty_inline_elements_leave_nothing() {
        let mut w = Writer::default();
        w.text("x", Escape::Prose);
        let m = w.open_inline("**");
        assert_eq!(w.close_inline(m, "**"), None);
        w.space();
        let m = w.open_inline("**");
        w.text("y ", Escape::Prose);
        assert_eq!(w.close_inline(m, "**"), Some(2));
        w.text("z", Escape::Prose);
        assert_eq!(w.out, "x **y** z");
    }

    #[test]
    fn escaping() {
        let mut w = Writer::default();
        w.text(
            "# not a heading, *not* _em_ snake_case a&amp;b [x] 1.",
            Escape::Prose,
        );
        assert_eq!(
            w.out,
            "\\# not a heading, \\*not\\* \\_em\\_ snake_case a&b \\[x] 1."
        );
        let mut w = Writer::default();
        w.text("1. item", Escape::Prose);
        assert_eq!(w.out, "1\\. item");
    }
}
