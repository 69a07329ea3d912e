//! Per-generation macro state and the rendering API: EJS first, then the `{{…}}` evaluator
//! ([`super::eval`]), with every variable write staged until the caller commits the text.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use super::context::MacroContext;
use super::eval::Evaluator;
use super::helpers::apply_trim_marks;
use super::syntax::rewrite_legacy_tokens;
use super::vars::{VarOverlay, Variables};
use crate::ejs::{Templates, VarOp};

/// A macro that could not be evaluated (it stays in the output as written), or a field
/// whose EJS template failed (the field was used as written).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MacroDiagnostic {
    /// Byte offset of the macro's `{{` (or the failing tag's `<%`) in its field.
    pub offset: usize,
    /// The macro or tag as written.
    pub text: String,
    /// What is wrong and how to fix it.
    pub message: String,
    /// The card field the problem is in, when it is not the field being rendered (a card
    /// field reached through `{{description}}` and friends: `character.description`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

/// How one rendering treats macro results.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RenderOptions {
    /// Escape every top-level macro result (and every EJS output) for use inside a
    /// JavaScript regex (regex `substitution: 'escaped'`).
    pub regex_escape_results: bool,
    /// Expand macros only: the text is not an EJS template (text that came from a chat
    /// message, such as a regex capture, or a message shown to the user).
    pub skip_templates: bool,
}

/// The output of one rendering. Its variable writes are staged: pass it to
/// [`MacroState::commit`] when the text is actually used, or drop it to discard them.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The text with EJS rendered and macros expanded.
    pub text: String,
    /// Macros left as written and EJS fields that fell back, with why.
    pub diagnostics: Vec<MacroDiagnostic>,
    staged: Option<Variables>,
}

impl Rendered {
    /// Whether rendering wrote any variable.
    pub fn has_side_effects(&self) -> bool {
        self.staged.is_some()
    }
}

/// Per-generation macro state: the committed variables, the seeded random generator (so the
/// same seed and inputs always give the same prompt) and the EJS stage.
#[derive(Debug, Clone)]
pub struct MacroState {
    vars: Variables,
    rng: ChaCha8Rng,
    seed: u64,
    changed: bool,
    templates: Templates,
}

impl MacroState {
    /// State for one generation, EJS on (Tavo's default).
    pub fn new(vars: Variables, seed: u64) -> Self {
        Self {
            vars,
            rng: ChaCha8Rng::seed_from_u64(seed),
            seed,
            changed: false,
            templates: Templates::new(),
        }
    }

    /// Replaces the EJS stage ([`Templates::off`] when the global switch is off).
    pub fn set_templates(&mut self, templates: Templates) {
        self.templates = templates;
    }

    /// The committed variables.
    pub fn variables(&self) -> &Variables {
        &self.vars
    }

    /// Whether any committed rendering changed a variable.
    pub fn variables_changed(&self) -> bool {
        self.changed
    }

    /// Consumes the state, returning the variables.
    pub fn into_variables(self) -> Variables {
        self.vars
    }

    /// Renders `text`; variable writes are staged in the result.
    pub fn render(&mut self, text: &str, ctx: &MacroContext) -> Rendered {
        self.render_with(text, ctx, RenderOptions::default())
    }

    /// Renders `text` and commits its variable writes at once (for text that is always used).
    pub fn render_used(&mut self, text: &str, ctx: &MacroContext) -> Rendered {
        let mut rendered = self.render(text, ctx);
        self.commit(&mut rendered);
        rendered
    }

    /// Renders with explicit options: EJS first, then macros (Tavo §4.1).
    pub fn render_with(
        &mut self,
        text: &str,
        ctx: &MacroContext,
        options: RenderOptions,
    ) -> Rendered {
        let off = Templates::off();
        let templates = if options.skip_templates {
            &off
        } else {
            &self.templates
        };
        let stage = templates.render(
            text,
            &self.vars,
            ctx,
            self.seed,
            options.regex_escape_results,
        );
        let (text, ops, mut diagnostics) = match &stage {
            Some(stage) => (
                stage.text.as_str(),
                stage.ops.as_slice(),
                stage.diagnostic.iter().cloned().collect(),
            ),
            None => (text, &[][..], Vec::new()),
        };
        if ops.is_empty() && !text.contains("{{") && !text.contains('<') && !text.contains('\\') {
            return Rendered {
                text: text.to_owned(),
                diagnostics,
                staged: None,
            };
        }
        let source = rewrite_legacy_tokens(text);
        let mut evaluator = Evaluator {
            ctx,
            vars: VarOverlay::new(&self.vars),
            rng: &mut self.rng,
            seed: self.seed,
            diagnostics: Vec::new(),
            options,
            depth: 0,
            templates,
        };
        apply_ops(&mut evaluator.vars, ops);
        let expanded = evaluator.expand(&source, 0);
        diagnostics.append(&mut evaluator.diagnostics);
        let staged = evaluator.vars.into_staged();
        Rendered {
            text: apply_trim_marks(&expanded),
            diagnostics,
            staged,
        }
    }

    /// Only the EJS stage (no macros), writes staged in the result: a regex rule's
    /// replacement is rendered once before the rule runs, and its macros are expanded per
    /// match afterwards.
    pub fn render_template_only(&mut self, text: &str, ctx: &MacroContext) -> Rendered {
        let Some(stage) = self
            .templates
            .render(text, &self.vars, ctx, self.seed, false)
        else {
            return Rendered {
                text: text.to_owned(),
                diagnostics: Vec::new(),
                staged: None,
            };
        };
        let mut overlay = VarOverlay::new(&self.vars);
        apply_ops(&mut overlay, &stage.ops);
        Rendered {
            text: stage.text,
            diagnostics: stage.diagnostic.into_iter().collect(),
            staged: overlay.into_staged(),
        }
    }

    /// Applies a rendering's staged variable writes.
    pub fn commit(&mut self, rendered: &mut Rendered) {
        if let Some(staged) = rendered.staged.take() {
            if staged != self.vars {
                self.changed = true;
            }
            self.vars = staged;
        }
    }
}

/// Stages a template's variable writes, in the order they ran.
pub(super) fn apply_ops(vars: &mut VarOverlay<'_>, ops: &[VarOp]) {
    for op in ops {
        match op {
            VarOp::Set { scope, path, value } => vars.set(*scope, path, value.clone()),
            VarOp::Delete { scope, path } => vars.unset(*scope, path),
        }
    }
}
