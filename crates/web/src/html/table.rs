//! Tables as compact pipe tables.
//!
//! Unlike htmd's own handler this one also converts tables without `<th>` (the first row
//! becomes the header row, which reads better to a model than an empty header), never pads
//! cells to column width (padding is pure token cost), expands `colspan` so columns line up,
//! and flattens nested or single-column layout tables into plain blocks.

use std::rc::Rc;

use htmd::Element;
use htmd::element_handler::{HandlerResult, Handlers};
use markup5ever_rcdom::{Node, NodeData};

use super::convert::collapse_whitespace;

/// Cells wider than this are still kept whole; colspans beyond it are clamped.
const MAX_COLSPAN: usize = 32;

pub(crate) fn table_handler(handlers: &dyn Handlers, element: Element) -> Option<HandlerResult> {
    if inside_table(element.node) {
        let content = handlers.walk_children(element.node).content;
        return Some(format!(" {} ", collapse_whitespace(&content)).into());
    }
    let mut caption = None;
    let mut rows: Vec<Row> = Vec::new();
    for child in element.node.children.borrow().iter() {
        match tag(child) {
            Some("caption") => {
                caption = Some(collapse_whitespace(&handlers.walk_children(child).content));
            }
            Some("thead" | "tbody" | "tfoot") => {
                for row in child.children.borrow().iter() {
                    if tag(row) == Some("tr") {
                        rows.push(read_row(handlers, row));
                    }
                }
            }
            Some("tr") => rows.push(read_row(handlers, child)),
            _ => {}
        }
    }
    rows.retain(|r| !r.cells.is_empty());
    let columns = rows.iter().map(|r| r.cells.len()).max().unwrap_or(0);
    if columns <= 1 {
        // A layout table (or an empty one): its content as ordinary blocks.
        let content = handlers.walk_children(element.node).content;
        let content = content.trim_matches('\n');
        if content.trim().is_empty() {
            return Some(String::new().into());
        }
        return Some(format!("\n\n{content}\n\n").into());
    }
    let mut out = String::from("\n\n");
    if let Some(caption) = caption.filter(|c| !c.is_empty()) {
        out.push_str(&caption);
        out.push_str("\n\n");
    }
    let mut rows = rows.into_iter();
    if let Some(header) = rows.next() {
        push_row(&mut out, &header.cells, columns);
        out.push('|');
        for _ in 0..columns {
            out.push_str(" --- |");
        }
        out.push('\n');
    }
    for row in rows {
        push_row(&mut out, &row.cells, columns);
    }
    out.push('\n');
    Some(out.into())
}

struct Row {
    cells: Vec<String>,
}

fn read_row(handlers: &dyn Handlers, row: &Rc<Node>) -> Row {
    let mut cells = Vec::new();
    for cell in row.children.borrow().iter() {
        let NodeData::Element { name, attrs, .. } = &cell.data else {
            continue;
        };
        if !matches!(&*name.local, "td" | "th") {
            continue;
        }
        let span = attrs
            .borrow()
            .iter()
            .find(|a| &*a.name.local == "colspan")
            .and_then(|a| a.value.trim().parse::<usize>().ok())
            .unwrap_or(1)
            .clamp(1, MAX_COLSPAN);
        let content = handlers.walk_children(cell).content;
        cells.push(cell_text(&content));
        for _ in 1..span {
            cells.push(String::new());
        }
    }
    Row { cells }
}

/// One line of cell text: newlines become spaces, pipes are escaped.
fn cell_text(content: &str) -> String {
    collapse_whitespace(content).replace('|', "\\|")
}

fn push_row(out: &mut String, cells: &[String], columns: usize) {
    out.push('|');
    for i in 0..columns {
        let cell = cells.get(i).map(String::as_str).unwrap_or("");
        if cell.is_empty() {
            out.push_str("  |");
        } else {
            out.push(' ');
            out.push_str(cell);
            out.push_str(" |");
        }
    }
    out.push('\n');
}

fn tag(node: &Rc<Node>) -> Option<&str> {
    match &node.data {
        NodeData::Element { name, .. } => Some(&name.local),
        _ => None,
    }
}

fn inside_table(node: &Rc<Node>) -> bool {
    let mut current = parent(node);
    while let Some(p) = current {
        if matches!(tag(&p), Some("td" | "th")) {
            return true;
        }
        current = parent(&p);
    }
    false
}

fn parent(node: &Rc<Node>) -> Option<Rc<Node>> {
    let weak = node.parent.take();
    let strong = weak.as_ref().and_then(|w| w.upgrade());
    node.parent.set(weak);
    strong
}
