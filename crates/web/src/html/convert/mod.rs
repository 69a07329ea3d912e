//! One pass from HTML tokens to Markdown, with readability's statistics on the side.
//!
//! A small stack of open elements stands in for the DOM: start tags close what the standard
//! closes implicitly (`<p>` before a block, `<li>` before `<li>`, cells before cells), end
//! tags pop back to their element within its scope, stray end tags are ignored. Each element
//! writes its Markdown as it goes ([`Writer`]); tables and code blocks are buffered until
//! they close. Every element closed at the top level leaves a [`Record`]: its byte range in
//! the Markdown, readability.js's content score, text and link lengths. Main-content
//! extraction ([`super::extract`]) then selects and cuts ranges instead of re-parsing.

mod elements;

use url::Url;

use super::attrs::{Attrs, read_attrs, role_is_chrome, style_hides};
use super::entities;
pub(crate) use super::record::{Converted, Record, Stats};
use super::table::{Table, collapse_whitespace};
use super::tags::Tag;
use super::tokenizer::{Token, Tokenizer};
use super::weights;
use super::writer::{Escape, Writer};

/// No range: the element opened inside a table cell, a code block or a skipped subtree.
pub(crate) const NONE: u32 = u32::MAX;

/// Deepest element nesting converted. Real pages stay far below (Wikipedia peaks around 30);
/// deeper input is reduced to its text (see [`super::depth`]), which also keeps end-tag
/// matching linear.
pub(crate) const MAX_DEPTH: usize = 512;

/// What closing an element has to undo or finish.
#[derive(Debug)]
enum Role {
    Plain,
    Skip,
    Inline {
        id: u32,
        closer: &'static str,
    },
    Link {
        id: u32,
        closer: String,
        title: Option<String>,
    },
    Code {
        id: u32,
    },
    Heading,
    List,
    Item {
        prefix: usize,
    },
    Quote {
        prefix: usize,
    },
    Pre,
    Table,
    FlatTable,
    Row,
    Cell {
        span: usize,
    },
    Caption,
    Title,
    Foreign,
}

#[derive(Debug)]
struct Open {
    tag: Tag,
    /// Name as written, as a range of the input (end tags match it case-insensitively).
    name: (u32, u32),
    node: u32,
    start: u32,
    snap: Stats,
    score: Option<f32>,
    weight: f32,
    unlikely: bool,
    children: u32,
    has_block_child: bool,
    /// The `class` attribute as a range of the input (code-block languages).
    class: (u32, u32),
    role: Role,
}

struct PreState {
    buf: String,
    lang: String,
    fresh: bool,
}

struct ListState {
    ordered: bool,
    next: u64,
}

/// Converts `html` to Markdown with records for extraction; `None` when the nesting exceeds
/// [`MAX_DEPTH`].
pub(crate) fn convert(html: &str, base: &Url) -> Option<Converted> {
    let mut c = Converter {
        input: html,
        base,
        w: Writer::with_capacity(html.len() / 3),
        stack: Vec::with_capacity(64),
        totals: Stats::default(),
        skip_depth: 0,
        unlikely_depth: 0,
        link_depth: 0,
        code_depth: 0,
        heading_depth: 0,
        foreign_depth: 0,
        flat_tables: 0,
        lists: Vec::new(),
        tables: Vec::new(),
        pre: None,
        capture: None,
        out: Converted {
            parents: vec![0],
            ..Converted::default()
        },
        root: Open {
            tag: Tag::Body,
            name: (0, 0),
            node: 0,
            start: 0,
            snap: Stats::default(),
            score: None,
            weight: 0.0,
            unlikely: false,
            children: 0,
            has_block_child: false,
            class: (0, 0),
            role: Role::Plain,
        },
    };
    let mut tokens = Tokenizer::new(html);
    while let Some(token) = tokens.next() {
        match token {
            Token::Text(text) => c.text(text),
            Token::RawText(text) => c.raw_text(text),
            Token::Start {
                name,
                self_closing,
                attrs,
            } => {
                let attrs = read_attrs(&tokens, attrs);
                c.start(name, self_closing, &attrs);
                if c.stack.len() > MAX_DEPTH {
                    return None;
                }
            }
            Token::End { name } => c.end(name),
        }
    }
    Some(c.finish())
}

struct Converter<'a> {
    input: &'a str,
    base: &'a Url,
    w: Writer,
    stack: Vec<Open>,
    totals: Stats,
    skip_depth: u32,
    unlikely_depth: u32,
    link_depth: u32,
    code_depth: u32,
    heading_depth: u32,
    foreign_depth: u32,
    flat_tables: u32,
    lists: Vec<ListState>,
    tables: Vec<Table>,
    pre: Option<PreState>,
    /// Text of the `<h1>`/`<h2>` being read (level, text).
    capture: Option<(u8, String)>,
    out: Converted,
    root: Open,
}

impl<'a> Converter<'a> {
    fn offset(&self, s: &str) -> u32 {
        (s.as_ptr() as usize).wrapping_sub(self.input.as_ptr() as usize) as u32
    }

    fn slice(&self, range: (u32, u32)) -> &'a str {
        self.input
            .get(range.0 as usize..range.1 as usize)
            .unwrap_or("")
    }

    fn text(&mut self, text: &str) {
        if self.skip_depth > 0 {
            return;
        }
        if let Some(pre) = &mut self.pre {
            let text = if pre.fresh {
                pre.fresh = false;
                text.strip_prefix("\r\n")
                    .or_else(|| text.strip_prefix('\n'))
                    .unwrap_or(text)
            } else {
                text
            };
            let before = pre.buf.len();
            entities::decode_into(&mut pre.buf, text, false);
            self.totals.text += (pre.buf.len() - before) as u32;
            return;
        }
        if let Some((_, captured)) = &mut self.capture {
            entities::decode_into(captured, text, false);
        }
        let escape = if self.code_depth > 0 {
            Escape::Code
        } else if self.link_depth > 0 {
            Escape::Bracketed
        } else {
            Escape::Prose
        };
        let before = self.w.out.len();
        let commas = self.w.text(text, escape);
        let written = self.w.out.len().saturating_sub(before) as u32;
        self.totals.text += written;
        self.totals.commas += commas as u32;
        if self.link_depth > 0 {
            self.totals.links += written;
        }
    }

    fn raw_text(&mut self, text: &str) {
        if matches!(
            self.stack.last(),
            Some(Open {
                role: Role::Title,
                ..
            })
        ) && self.out.title.is_none()
        {
            let title = collapse_whitespace(&entities::decode(text, false));
            if !title.is_empty() {
                self.out.title = Some(title);
            }
        }
    }

    fn top_is(&self, pred: impl Fn(Tag) -> bool) -> bool {
        self.stack.last().is_some_and(|o| pred(o.tag))
    }

    /// Index of the nearest open element matching `pred`, not looking past a scope boundary
    /// or an element matching `stop`.
    fn find_in_scope(
        &self,
        pred: impl Fn(Tag) -> bool,
        stop: impl Fn(Tag) -> bool,
    ) -> Option<usize> {
        for (i, open) in self.stack.iter().enumerate().rev() {
            if pred(open.tag) {
                return Some(i);
            }
            if open.tag.is_scope_boundary() || stop(open.tag) {
                return None;
            }
        }
        None
    }

    fn pop_to(&mut self, index: usize) {
        while self.stack.len() > index {
            if let Some(open) = self.stack.pop() {
                self.close(open);
            }
        }
    }

    /// The implicit end tags a start tag causes.
    fn close_implied(&mut self, tag: Tag) {
        if tag.is_block()
            && let Some(i) = self.find_in_scope(|t| t == Tag::P, |_| false)
        {
            self.pop_to(i);
        }
        let found = match tag {
            Tag::Li => self.find_in_scope(
                |t| t == Tag::Li,
                |t| t.is_block() && !matches!(t, Tag::Div | Tag::P | Tag::Li),
            ),
            Tag::Dt | Tag::Dd => self.find_in_scope(
                |t| matches!(t, Tag::Dt | Tag::Dd),
                |t| t.is_block() && !matches!(t, Tag::Div | Tag::P | Tag::Dt | Tag::Dd),
            ),
            Tag::H(_) if self.top_is(|t| matches!(t, Tag::H(_))) => Some(self.stack.len() - 1),
            Tag::A => self.find_in_scope(|t| t == Tag::A, |_| false),
            Tag::Tr if self.flat_tables == 0 => self.find_in_scope(
                |t| matches!(t, Tag::Tr | Tag::Td | Tag::Th | Tag::Caption),
                |t| matches!(t, Tag::RowGroup),
            ),
            Tag::Td | Tag::Th if self.flat_tables == 0 => self.find_in_scope(
                |t| matches!(t, Tag::Td | Tag::Th | Tag::Caption),
                |t| matches!(t, Tag::Tr | Tag::RowGroup),
            ),
            Tag::RowGroup | Tag::Caption if self.flat_tables == 0 => self
                .stack
                .iter()
                .rposition(|o| o.tag == Tag::Table)
                .map(|i| i + 1)
                .filter(|&i| i < self.stack.len()),
            _ => None,
        };
        if let Some(i) = found {
            self.pop_to(i);
        }
    }

    fn start(&mut self, name: &str, self_closing: bool, a: &Attrs<'_>) {
        let tag = Tag::of(name);
        if matches!(tag, Tag::Html | Tag::Head | Tag::Body) {
            return;
        }
        if self.skip_depth > 0 {
            if tag.is_void() || (self_closing && self.foreign_depth > 0) {
                return;
            }
            if tag == Tag::Foreign {
                self.foreign_depth += 1;
            }
            let node = self.new_node();
            self.push(tag, name, node, Role::Skip, a, false);
            return;
        }
        if self.pre.is_some() {
            self.start_in_pre(tag, name, a);
            return;
        }
        self.close_implied(tag);
        if let Some(parent) = self.stack.last_mut() {
            parent.children += 1;
            parent.has_block_child |= tag.is_block();
        } else {
            self.root.children += 1;
            self.root.has_block_child |= tag.is_block();
        }
        let hidden = a.hidden || a.aria_hidden || style_hides(a.style) || role_is_chrome(a.role);
        if hidden && tag.is_void() {
            return;
        }
        if tag == Tag::Skipped || tag == Tag::Foreign || (hidden && !tag.is_void()) {
            if tag == Tag::Skipped
                && ["iframe", "video", "object"]
                    .iter()
                    .any(|e| name.eq_ignore_ascii_case(e))
            {
                self.totals.embeds += 1;
            }
            if tag == Tag::Foreign {
                if self_closing {
                    return;
                }
                self.foreign_depth += 1;
            }
            let node = self.new_node();
            let role = if tag == Tag::Foreign {
                Role::Foreign
            } else {
                Role::Skip
            };
            self.push(tag, name, node, role, a, false);
            return;
        }
        match tag {
            Tag::VoidOther => {
                if name.eq_ignore_ascii_case("embed") {
                    self.totals.embeds += 1;
                }
            }
            Tag::Br => {
                if self.heading_depth > 0 || self.link_depth > 0 {
                    self.w.space();
                } else {
                    self.w.line_break();
                }
            }
            Tag::Hr => {
                self.w.raw_block("---");
            }
            Tag::Img => self.image(a),
            _ => {
                let role = self.open_role(tag, a);
                let node = self.new_node();
                self.push(tag, name, node, role, a, true);
            }
        }
    }

    fn new_node(&mut self) -> u32 {
        let parent = self.stack.last().map_or(0, |o| o.node);
        self.out.parents.push(parent);
        (self.out.parents.len() - 1) as u32
    }

    fn push(&mut self, tag: Tag, name: &str, node: u32, role: Role, a: &Attrs<'_>, live: bool) {
        let name_start = self.offset(name);
        let class_start = self.offset(a.class);
        let mut open = Open {
            tag,
            name: (name_start, name_start + name.len() as u32),
            node,
            start: NONE,
            snap: self.totals,
            score: None,
            weight: 0.0,
            unlikely: false,
            children: 0,
            has_block_child: false,
            class: (class_start, class_start + a.class.len() as u32),
            role,
        };
        if matches!(open.role, Role::Skip | Role::Foreign) {
            self.skip_depth += 1;
        } else if live {
            if self.w.at_top() && self.pre.is_none() {
                open.start = self.w.out.len() as u32;
            }
            if tag.has_weight() && (!a.class.is_empty() || !a.id.is_empty()) {
                let class_mask = weights::mask(a.class);
                let id_mask = weights::mask(a.id);
                open.weight = weights::weight(class_mask, id_mask);
                let any = class_mask | id_mask;
                open.unlikely = any & weights::UNLIKELY != 0
                    && any & weights::MAYBE == 0
                    && self.tables.is_empty()
                    && self.code_depth == 0;
                if open.unlikely {
                    self.unlikely_depth += 1;
                }
            }
        }
        self.stack.push(open);
    }

    fn end(&mut self, name: &str) {
        let tag = Tag::of(name);
        match tag {
            Tag::Html | Tag::Head | Tag::Body => return,
            Tag::Br if self.skip_depth == 0 => {
                // `</br>` is a `<br>` (as in browsers).
                self.start(name, false, &Attrs::default());
                return;
            }
            _ => {}
        }
        let found = self.stack.iter().enumerate().rev().find_map(|(i, open)| {
            let matches = open.tag == tag && self.slice(open.name).eq_ignore_ascii_case(name);
            let boundary = match tag {
                Tag::Table | Tag::RowGroup | Tag::Tr | Tag::Td | Tag::Th | Tag::Caption => {
                    matches!(open.tag, Tag::Table | Tag::Html)
                }
                _ => open.tag.is_scope_boundary(),
            };
            if matches {
                Some(Some(i))
            } else if boundary {
                Some(None)
            } else {
                None
            }
        });
        match found {
            Some(Some(i)) => self.pop_to(i),
            // A stray `</p>` is an empty paragraph to a browser: the text around it separates.
            _ if tag == Tag::P && self.skip_depth == 0 && self.pre.is_none() => self.w.block(2),
            _ => {}
        }
    }

    fn finish(mut self) -> Converted {
        self.pop_to(0);
        let stats = self.totals.since(&self.root.snap);
        self.out.records.push(Record {
            node: 0,
            parent: 0,
            tag: Tag::Body,
            start: 0,
            end: self.w.out.len() as u32,
            score: self.root.score,
            weight: 0.0,
            stats,
            unlikely: false,
            children: self.root.children,
        });
        self.out.markdown = std::mem::take(&mut self.w.out);
        self.out
    }
}
