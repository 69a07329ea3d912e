//! Tables as compact pipe tables.
//!
//! Cells are converted into their own buffers while the table streams by; when it closes,
//! the table is written at once. Unlike htmd's handler this also converts tables without
//! `<th>` (the first row becomes the header row, which reads better to a model than an empty
//! header), never pads cells to column width (padding is pure token cost), expands `colspan`
//! so columns line up, and writes single-column layout tables as plain blocks. Tables nested
//! in a cell are flattened into the cell's text by the converter.

use super::writer::Writer;

/// Colspans beyond this are clamped (a hostile `colspan=1000000` must not allocate).
const MAX_COLSPAN: usize = 32;

/// A table being read.
#[derive(Debug, Default)]
pub(crate) struct Table {
    rows: Vec<Vec<(String, usize)>>,
    row_open: bool,
    /// The `<caption>`, whitespace collapsed.
    pub(crate) caption: Option<String>,
}

impl Table {
    pub(crate) fn start_row(&mut self) {
        self.rows.push(Vec::new());
        self.row_open = true;
    }

    /// A cell outside any `<tr>` starts one (as the HTML parser does).
    pub(crate) fn ensure_row(&mut self) {
        if !self.row_open {
            self.start_row();
        }
    }

    pub(crate) fn end_row(&mut self) {
        self.row_open = false;
    }

    pub(crate) fn push_cell(&mut self, markdown: String, span: usize) {
        self.ensure_row();
        if let Some(row) = self.rows.last_mut() {
            row.push((markdown, span.clamp(1, MAX_COLSPAN)));
        }
    }

    /// Writes the table: a pipe table when it has two columns or more, else its cells as
    /// ordinary blocks.
    pub(crate) fn render(mut self, w: &mut Writer) {
        self.rows.retain(|r| !r.is_empty());
        let columns = self
            .rows
            .iter()
            .map(|r| r.iter().map(|(_, span)| span).sum::<usize>())
            .max()
            .unwrap_or(0);
        if columns <= 1 {
            for (cell, _) in self.rows.iter().flatten() {
                let cell = cell.trim_matches('\n');
                if !cell.trim().is_empty() {
                    w.raw_block(cell);
                }
            }
            return;
        }
        let mut out = String::new();
        if let Some(caption) = self.caption.filter(|c| !c.is_empty()) {
            out.push_str(&caption);
            out.push_str("\n\n");
        }
        for (i, row) in self.rows.iter().enumerate() {
            let mut used = 0;
            out.push('|');
            for (cell, span) in row {
                let text = collapse_whitespace(cell).replace('|', "\\|");
                if text.is_empty() {
                    out.push_str("  |");
                } else {
                    out.push(' ');
                    out.push_str(&text);
                    out.push_str(" |");
                }
                for _ in 1..*span {
                    out.push_str("  |");
                }
                used += span;
            }
            for _ in used..columns {
                out.push_str("  |");
            }
            out.push('\n');
            if i == 0 {
                out.push('|');
                for _ in 0..columns {
                    out.push_str(" --- |");
                }
                out.push('\n');
            }
        }
        out.pop();
        w.raw_block(&out);
    }
}

/// Collapses every whitespace run (newlines included) to one space and trims.
pub(crate) fn collapse_whitespace(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(table: Table) -> String {
        let mut w = Writer::default();
        table.render(&mut w);
        w.out
    }

    #[test]
    fn first_row_is_the_header_and_spans_expand() {
        let mut t = Table::default();
        t.start_row();
        t.push_cell("A".into(), 1);
        t.push_cell("B".into(), 1);
        t.push_cell("C".into(), 1);
        t.end_row();
        t.push_cell("wide | cell".into(), 2);
        t.push_cell("x\n\ny".into(), 1);
        assert_eq!(
            render(t),
            "| A | B | C |\n| --- | --- | --- |\n| wide \\| cell |  | x y |"
        );
    }

    #[test]
    fn single_column_tables_are_blocks() {
        let mut t = Table::default();
        t.push_cell("# Title".into(), 1);
        t.start_row();
        t.push_cell("para".into(), 1);
        assert_eq!(render(t), "# Title\n\npara");
    }

    #[test]
    fn colspans_are_clamped() {
        let mut t = Table::default();
        t.push_cell("a".into(), 1_000_000);
        assert_eq!(
            render(t).matches('|').count(),
            MAX_COLSPAN + 1 + MAX_COLSPAN + 1
        );
    }
}
