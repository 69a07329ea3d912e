//! SillyTavern's conditional macro: `{{if cond}}…{{else}}…{{/if}}` (block) and
//! `{{if cond::text}}` (inline), with `{{if::cond}}` accepted as a spelling of the block.
//!
//! Why the branches are found before anything is evaluated: only the chosen branch may run,
//! so a `{{setvar}}` in the other one must not happen. Nested blocks pair by depth; a stray
//! `{{else}}` or `{{/if}}` is an unknown macro and stays as written.

use super::eval::Evaluator;
use super::helpers::arity;
use super::syntax::{find_close, name_len, split_args};
use super::vars::{VarScope, render_value};

/// The condition text when `inner` (between `{{` and `}}`) is an `if`.
fn if_condition(inner: &str) -> Option<&str> {
    let t = inner.trim_start();
    let head = t.get(..2)?;
    if !head.eq_ignore_ascii_case("if") {
        return None;
    }
    let rest = &t[2..];
    if let Some(r) = rest.strip_prefix("::") {
        Some(r)
    } else if rest.starts_with(char::is_whitespace) {
        Some(rest.trim_start())
    } else {
        None
    }
}

fn is_block_if(inner: &str) -> bool {
    if_condition(inner).is_some_and(|c| split_args(c).len() < 2)
}

/// The `{{else}}` (open, close) at the block's own level and the `{{/if}}` (open, close)
/// that ends a block whose body starts at `from`.
type BlockEnd = (Option<(usize, usize)>, usize, usize);

fn find_block_end(src: &str, from: usize) -> Option<BlockEnd> {
    let mut depth = 0usize;
    let mut else_at = None;
    let mut i = from;
    while let Some(rel) = src.get(i..).and_then(|rest| rest.find("{{")) {
        let open = i + rel;
        let Some(close) = find_close(src, open) else {
            i = open + 2;
            continue;
        };
        let inner = src[open + 2..close].trim();
        if is_block_if(inner) {
            depth += 1;
        } else if inner.eq_ignore_ascii_case("/if") {
            if depth == 0 {
                return Some((else_at, open, close));
            }
            depth -= 1;
        } else if inner.eq_ignore_ascii_case("else") && depth == 0 && else_at.is_none() {
            else_at = Some((open, close));
        }
        i = close + 2;
    }
    None
}

impl Evaluator<'_, '_> {
    /// When the macro at `open..close+2` of `src` is an `if`, its output and the index after
    /// the whole construct; `None` for every other macro. A block without `{{/if}}` stays as
    /// written, with a diagnostic.
    pub(super) fn conditional(
        &mut self,
        src: &str,
        open: usize,
        close: usize,
        base: usize,
    ) -> Option<(String, usize)> {
        let inner = &src[open + 2..close];
        let cond = if_condition(inner)?;
        let parts = split_args(cond);
        if parts.len() >= 2 {
            let chosen = self.truthy(parts[0], base + open);
            let body = parts[1..].join("::");
            let out = if chosen {
                self.expand(&body, base + open).trim().to_owned()
            } else {
                String::new()
            };
            return Some((out, close + 2));
        }
        let Some((else_at, end_open, end_close)) = find_block_end(src, close + 2) else {
            self.diagnostics.push(super::MacroDiagnostic {
                offset: base + open,
                text: src[open..close + 2].to_owned(),
                message: "{{if}} has no {{/if}}: it was left as written (write {{if cond}}…{{/if}}, or {{if cond::text}} inline)".into(),
                field: None,
            });
            return Some((src[open..close + 2].to_owned(), close + 2));
        };
        let (then, otherwise) = match else_at {
            Some((e_open, e_close)) => ((close + 2, e_open), Some((e_close + 2, end_open))),
            None => ((close + 2, end_open), None),
        };
        let branch = if self.truthy(cond, base + open) {
            Some(then)
        } else {
            otherwise
        };
        let out = match branch {
            Some((from, to)) => self.expand(&src[from..to], base + from).trim().to_owned(),
            None => String::new(),
        };
        Some((out, end_close + 2))
    }

    /// SillyTavern's truth of a condition: `!` negates; a nested macro, `.chatVar`,
    /// `$globalVar`, a macro name without braces, or literal text; false when the value is
    /// empty, `false`, `off` or `0`.
    fn truthy(&mut self, cond: &str, offset: usize) -> bool {
        let mut c = cond.trim();
        let mut negate = false;
        while let Some(rest) = c.strip_prefix('!') {
            negate = !negate;
            c = rest.trim_start();
        }
        let value = if c.contains("{{") {
            self.expand_arg(c, offset)
        } else if let Some(name) = c.strip_prefix('.') {
            self.vars
                .get(VarScope::Chat, name.trim())
                .map(render_value)
                .unwrap_or_default()
        } else if let Some(name) = c.strip_prefix('$') {
            self.vars
                .get(VarScope::Global, name.trim())
                .map(render_value)
                .unwrap_or_default()
        } else if !c.is_empty()
            && name_len(c) == c.len()
            && arity(&c.to_ascii_lowercase()).is_some_and(|(min, _)| min == 0)
        {
            self.depth += 1;
            let value = self.evaluate(c, &format!("{{{{{c}}}}}"), offset);
            self.depth -= 1;
            value
        } else {
            c.to_owned()
        };
        let v = value.trim();
        let falsy = v.is_empty()
            || ["false", "off", "0"]
                .iter()
                .any(|f| v.eq_ignore_ascii_case(f));
        falsy == negate
    }
}
