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
//! - EJS (`<% %>`, [`crate::ejs`]) runs first on every rendered text and on every card field
//!   a macro reaches; a failing template leaves its field as written (macros still apply).
//! - `{{if cond}}…{{else}}…{{/if}}` and `{{if cond::text}}` (SillyTavern): `cond` is a macro
//!   name without braces (`{{if description}}`), `.name` / `$name` (chat / global variable),
//!   a nested macro, or literal text; `!` negates; empty, `false`, `off` and `0` are false
//!   (case-insensitive, trimmed). Only the chosen branch is evaluated, and it is trimmed.
//! - `{{outlet::name}}`: the lorebook entries activated with SillyTavern's position
//!   "outlet" under that name, joined by newlines (empty when none).

mod clock;
mod conditional;
mod context;
mod dice;
mod eval;
mod helpers;
mod state;
mod syntax;
mod vars;

#[cfg(test)]
mod tests;

pub use context::MacroContext;
pub use dice::Dice;
pub(crate) use helpers::Fnv;
pub use helpers::{regex_escape, seeded_percent};
pub use state::{MacroDiagnostic, MacroState, RenderOptions, Rendered};

pub use vars::{VarOverlay, VarScope, Variables};
