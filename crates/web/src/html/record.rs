//! What the converter records for main-content extraction: readability's statistics per
//! element and each element's byte range in the Markdown.

use super::tags::Tag;

/// Running totals; an element's figures are the difference between its close and its open.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Stats {
    /// Bytes of text.
    pub text: u32,
    /// Bytes of text inside links.
    pub links: u32,
    pub commas: u32,
    pub paragraphs: u32,
    pub items: u32,
    pub images: u32,
    pub embeds: u32,
}

impl Stats {
    pub(crate) fn since(&self, earlier: &Stats) -> Stats {
        Stats {
            text: self.text.wrapping_sub(earlier.text),
            links: self.links.wrapping_sub(earlier.links),
            commas: self.commas.wrapping_sub(earlier.commas),
            paragraphs: self.paragraphs.wrapping_sub(earlier.paragraphs),
            items: self.items.wrapping_sub(earlier.items),
            images: self.images.wrapping_sub(earlier.images),
            embeds: self.embeds.wrapping_sub(earlier.embeds),
        }
    }

    /// Share of the text inside links (0 when there is no text).
    pub(crate) fn link_density(&self) -> f32 {
        if self.text == 0 {
            0.0
        } else {
            self.links as f32 / self.text as f32
        }
    }
}

/// An element closed at the top level of the document.
#[derive(Debug, Clone)]
pub(crate) struct Record {
    pub node: u32,
    pub parent: u32,
    pub tag: Tag,
    /// Byte range of its Markdown (starting with its own separator).
    pub start: u32,
    pub end: u32,
    /// readability.js's content score (before link-density scaling), if it was scored.
    pub score: Option<f32>,
    /// Class and id weight.
    pub weight: f32,
    pub stats: Stats,
    /// Matches readability's unlikely-candidate patterns.
    pub unlikely: bool,
    /// Number of child elements.
    pub children: u32,
}

/// The converter's output: the whole document's Markdown and what extraction needs.
#[derive(Debug, Default)]
pub(crate) struct Converted {
    pub markdown: String,
    /// Post-order; the document itself (node 0) is last.
    pub records: Vec<Record>,
    /// `parents[node]` is the parent node (0 for the document).
    pub parents: Vec<u32>,
    /// The first `<title>`, whitespace collapsed.
    pub title: Option<String>,
    /// Texts of `<h1>` and `<h2>` elements, in order (at most 64).
    pub headings: Vec<(u8, String)>,
    pub h1_count: usize,
}
