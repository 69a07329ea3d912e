//! Macros `{{…}}`: every macro of Tavo's list (reference §3) with SillyTavern's legacy
//! aliases, evaluated against a [`MacroContext`] and per-generation [`MacroState`].
//!
//! Decisions where the sources are silent or disagree:
//! - Names are case-insensitive (SillyTavern); unknown macros stay verbatim.
//! - A known macro with wrong arguments stays as written and yields a [`MacroDiagnostic`].
//! - Escapes: `\{\{` and `\}\}` (pairs) render literal braces; single `\{` is left alone so
//!   LaTeX-like text survives.
//! - `{{trim}}` removes itself and all whitespace on both sides (Tavo: "spaces and newlines").
//! - Side-effect macros (`setvar`, `addvar`, `incvar`, `decvar`, `deletevar`) render as
//!   empty text (Tavo's shorthand-regex example would otherwise leak numbers into messages).
//! - `{{getvar}}` of a missing variable is empty.

mod clock;
mod context;
mod dice;
mod eval;
mod syntax;
mod vars;

#[cfg(test)]
mod tests;

pub use context::MacroContext;
pub use dice::Dice;
pub use eval::{
    MacroDiagnostic, MacroState, RenderOptions, Rendered, regex_escape, seeded_percent,
};

pub use vars::{VarOverlay, VarScope, Variables};
