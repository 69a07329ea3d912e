//! What each element does when it opens and when it closes: the Markdown it starts and
//! finishes, the writer state it pushes and pops, and readability's paragraph scoring.

use super::{Converter, ListState, NONE, Open, PreState, Record, Role, Stats};
use crate::content::fenced;
use crate::html::attrs::Attrs;
use crate::html::entities;
use crate::html::links::{absolute, class_language, clean_language};
use crate::html::table::{Table, collapse_whitespace};
use crate::html::tags::Tag;

impl Converter<'_> {
    /// Opens an element outside code blocks; returns what its close must do.
    pub(super) fn open_role(&mut self, tag: Tag, a: &Attrs<'_>) -> Role {
        match tag {
            Tag::Title => Role::Title,
            Tag::P => {
                self.totals.paragraphs += 1;
                self.w.block(2);
                Role::Plain
            }
            Tag::H(level) => {
                self.w.block(2);
                let base = self.w.prefix_len();
                self.w
                    .set_marker(base, format!("{} ", "#".repeat(level as usize)));
                self.heading_depth += 1;
                if level <= 2 && self.capture.is_none() {
                    self.capture = Some((level, String::new()));
                }
                Role::Heading
            }
            Tag::Ul | Tag::Ol => {
                let in_item = self.stack.iter().rev().take(8).any(|o| o.tag == Tag::Li);
                self.w.block(if in_item { 1 } else { 2 });
                let next = a.start.trim().parse::<u64>().unwrap_or(1);
                self.lists.push(ListState {
                    ordered: tag == Tag::Ol,
                    next,
                });
                Role::List
            }
            Tag::Li => {
                self.totals.items += 1;
                self.w.block(1);
                let marker = match self.lists.last_mut() {
                    Some(list) if list.ordered => {
                        let n = list.next;
                        list.next = list.next.saturating_add(1);
                        format!("{n}. ")
                    }
                    _ => "- ".to_string(),
                };
                let prefix = self.w.prefix_len();
                self.w.push_prefix(&" ".repeat(marker.len()));
                self.w.set_marker(prefix, marker);
                Role::Item { prefix }
            }
            Tag::Dt => {
                self.w.block(1);
                Role::Plain
            }
            Tag::Dd => {
                self.w.block(1);
                let prefix = self.w.prefix_len();
                self.w.push_prefix("  ");
                self.w.set_marker(prefix, ": ".into());
                Role::Item { prefix }
            }
            Tag::Blockquote => {
                self.w.block(2);
                let prefix = self.w.prefix_len();
                self.w.push_prefix("> ");
                Role::Quote { prefix }
            }
            Tag::Pre => {
                let lang = if !a.lang.is_empty() {
                    clean_language(a.lang)
                } else {
                    class_language(a.class)
                        .or_else(|| {
                            self.stack
                                .last()
                                .and_then(|p| class_language(self.slice(p.class)))
                        })
                        .unwrap_or_default()
                };
                self.pre = Some(PreState {
                    buf: String::new(),
                    lang,
                    fresh: true,
                });
                Role::Pre
            }
            Tag::Strong => Role::Inline {
                id: self.w.open_inline("**"),
                closer: "**",
            },
            Tag::Em => Role::Inline {
                id: self.w.open_inline("*"),
                closer: "*",
            },
            Tag::Code => {
                self.code_depth += 1;
                Role::Code {
                    id: self.w.open_inline("`"),
                }
            }
            Tag::A => self.open_link(a),
            Tag::Table if self.tables.is_empty() => {
                self.tables.push(Table::default());
                Role::Table
            }
            Tag::Table => {
                self.flat_tables += 1;
                self.w.space();
                Role::FlatTable
            }
            Tag::Tr | Tag::Td | Tag::Th | Tag::Caption | Tag::RowGroup
                if self.flat_tables > 0 || self.tables.is_empty() =>
            {
                self.w.space();
                Role::Plain
            }
            Tag::Tr => {
                if let Some(t) = self.tables.last_mut() {
                    t.start_row();
                }
                Role::Row
            }
            Tag::Td | Tag::Th => {
                let span = a.colspan.trim().parse::<usize>().unwrap_or(1);
                if let Some(t) = self.tables.last_mut() {
                    t.ensure_row();
                }
                self.w.enter();
                Role::Cell { span }
            }
            Tag::Caption => {
                self.w.enter();
                Role::Caption
            }
            t if t.is_block() => {
                self.w.block(2);
                Role::Plain
            }
            _ => Role::Plain,
        }
    }

    fn open_link(&mut self, a: &Attrs<'_>) -> Role {
        let href = entities::decode(a.href.trim(), true);
        let script = href
            .get(..11)
            .is_some_and(|p| p.eq_ignore_ascii_case("javascript:"));
        // In-page anchors and script links mean nothing outside the page: keep the text.
        if href.is_empty() || href.starts_with('#') || script {
            return Role::Plain;
        }
        let Some(url) = absolute(self.base, &href) else {
            return Role::Plain;
        };
        self.link_depth += 1;
        let title = collapse_whitespace(&entities::decode(a.title, true));
        Role::Link {
            id: self.w.open_inline("["),
            closer: url,
            title: (!title.is_empty()).then_some(title),
        }
    }

    pub(super) fn image(&mut self, a: &Attrs<'_>) {
        self.totals.images += 1;
        let alt = collapse_whitespace(&entities::decode(a.alt, true))
            .replace('[', "\\[")
            .replace(']', "\\]");
        let src = [a.src, a.data_src]
            .into_iter()
            .map(str::trim)
            .find(|s| !s.is_empty() && !s.starts_with("data:"));
        match src.and_then(|s| absolute(self.base, &entities::decode(s, true))) {
            Some(url) => self.w.raw_inline(&format!("![{alt}]({url})")),
            // Inline data URLs would cost the model thousands of tokens of base64.
            None if alt.is_empty() => {}
            None => self.w.raw_inline(&format!("[image: {alt}]")),
        }
    }

    /// Inside `<pre>` only line breaks, the code language and nesting matter.
    pub(super) fn start_in_pre(&mut self, tag: Tag, name: &str, a: &Attrs<'_>) {
        match tag {
            Tag::Br => {
                if let Some(pre) = &mut self.pre {
                    pre.buf.push('\n');
                }
            }
            t if t.is_void() => {}
            _ => {
                if tag == Tag::Code
                    && let Some(pre) = &mut self.pre
                    && pre.lang.is_empty()
                {
                    let lang = if a.lang.is_empty() {
                        class_language(a.class).unwrap_or_default()
                    } else {
                        clean_language(a.lang)
                    };
                    pre.lang = lang;
                }
                let skip = matches!(tag, Tag::Skipped | Tag::Foreign);
                let node = self.new_node();
                let role = if skip { Role::Skip } else { Role::Plain };
                self.push(tag, name, node, role, a, false);
            }
        }
    }

    pub(super) fn close(&mut self, mut open: Open) {
        let stats = self.totals.since(&open.snap);
        match std::mem::replace(&mut open.role, Role::Plain) {
            Role::Skip | Role::Foreign => {
                self.skip_depth = self.skip_depth.saturating_sub(1);
                if open.tag == Tag::Foreign {
                    self.foreign_depth = self.foreign_depth.saturating_sub(1);
                }
                return;
            }
            Role::Plain => {
                if open.tag.is_block() {
                    self.w.block(2);
                }
            }
            Role::Inline { id, closer } => {
                self.w.close_inline(id, closer);
            }
            Role::Code { id } => {
                self.code_depth = self.code_depth.saturating_sub(1);
                if let Some(pos) = self.w.close_inline(id, "`") {
                    let end = self.w.out.len() - 1;
                    if self
                        .w
                        .out
                        .get(pos + 1..end)
                        .is_some_and(|s| s.contains('`'))
                    {
                        // A backtick inside: fence with two and pad, as CommonMark allows.
                        let inner = self.w.out[pos + 1..end].to_string();
                        self.w.out.truncate(pos);
                        self.w.out.push_str("`` ");
                        self.w.out.push_str(&inner);
                        self.w.out.push_str(" ``");
                    }
                }
            }
            Role::Link { id, closer, title } => {
                self.link_depth = self.link_depth.saturating_sub(1);
                // A title that repeats the link text is noise (Wikipedia sets one on every link).
                let title = title.filter(|t| {
                    self.w
                        .written_at(id)
                        .and_then(|pos| self.w.out.get(pos + 1..))
                        .is_none_or(|text| text != t)
                });
                let closer = match title {
                    Some(t) => format!("]({closer} \"{}\")", t.replace('"', "\\\"")),
                    None => format!("]({closer})"),
                };
                self.w.close_inline(id, &closer);
            }
            Role::Heading => {
                self.heading_depth = self.heading_depth.saturating_sub(1);
                self.w.clear_marker();
                self.w.block(2);
                if let Some((level, text)) = self.capture.take() {
                    if level == 1 {
                        self.out.h1_count += 1;
                    }
                    if self.out.headings.len() < 64 {
                        self.out.headings.push((level, collapse_whitespace(&text)));
                    }
                }
            }
            Role::List => {
                self.lists.pop();
                // A nested list ends on the next line of its item; a top-level one with a gap.
                let nested = self.stack.iter().rev().take(8).any(|o| o.tag == Tag::Li);
                self.w.block(if nested { 1 } else { 2 });
            }
            Role::Item { prefix } => {
                self.w.clear_marker();
                self.w.pop_prefix(prefix);
                self.w.block(1);
            }
            Role::Quote { prefix } => {
                self.w.pop_prefix(prefix);
                self.w.block(2);
            }
            Role::Pre => {
                if let Some(pre) = self.pre.take() {
                    let text = pre.buf.trim_matches('\n');
                    if !text.trim().is_empty() {
                        self.w.raw_block(&fenced(&pre.lang, text));
                    }
                }
            }
            Role::Table => {
                if let Some(table) = self.tables.pop() {
                    table.render(&mut self.w);
                }
            }
            Role::FlatTable => {
                self.flat_tables = self.flat_tables.saturating_sub(1);
                self.w.space();
            }
            Role::Row => {
                if let Some(t) = self.tables.last_mut() {
                    t.end_row();
                }
            }
            Role::Cell { span } => {
                let cell = self.w.leave();
                if let Some(t) = self.tables.last_mut() {
                    t.push_cell(cell, span);
                }
            }
            Role::Caption => {
                let caption = self.w.leave();
                if let Some(t) = self.tables.last_mut() {
                    t.caption = Some(collapse_whitespace(&caption));
                }
            }
            Role::Title => {}
        }
        if open.unlikely {
            self.unlikely_depth = self.unlikely_depth.saturating_sub(1);
        }
        self.score_paragraph(&open, &stats);
        if open.start != NONE && self.w.at_top() {
            self.out.records.push(Record {
                node: open.node,
                parent: self
                    .out
                    .parents
                    .get(open.node as usize)
                    .copied()
                    .unwrap_or(0),
                tag: open.tag,
                start: open.start,
                end: self.w.out.len() as u32,
                score: open.score,
                weight: open.weight,
                stats,
                unlikely: open.unlikely,
                children: open.children,
            });
        }
    }

    /// readability.js: a paragraph of 25+ characters adds `1 + commas + min(len/100, 3)` to
    /// its ancestors, divided by 1, 2, then 3× the level, five levels up.
    fn score_paragraph(&mut self, open: &Open, stats: &Stats) {
        let paragraph_like =
            open.tag.is_paragraph_like() || (open.tag == Tag::Div && !open.has_block_child);
        if !paragraph_like || self.unlikely_depth > 0 || open.unlikely || stats.text < 25 {
            return;
        }
        let score = 1.0 + stats.commas as f32 + (stats.text / 100).min(3) as f32;
        let depth = self.stack.len();
        for level in 0..5usize {
            let divider = match level {
                0 => 1.0,
                1 => 2.0,
                l => l as f32 * 3.0,
            };
            let ancestor = if level < depth {
                &mut self.stack[depth - 1 - level]
            } else if level == depth {
                &mut self.root
            } else {
                break;
            };
            let base = ancestor.tag.base_score() + ancestor.weight;
            *ancestor.score.get_or_insert(base) += score / divider;
        }
    }
}
