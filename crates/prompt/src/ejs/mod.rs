//! EJS templates (Tavo §4): `<% %>` tags in every prompt-generating field, rendered before the
//! `{{…}}` macros, in the JavaScript engine regex rules use ([`crate::js`]), under the same
//! deadline and memory limit.
//!
//! Where it runs: inside [`crate::macros::MacroState`]'s rendering, so every field that is
//! macro-expanded is EJS-rendered first — preset segments, card fields (through
//! `{{description}}` and friends, and the card's main prompt, post-history instructions and
//! examples), greetings, lorebook content and macro keys, regex find and trim strings — and
//! the regex pipeline renders a rule's replacement once before the rule runs.
//!
//! Rules (Tavo §4.5 and the decisions where it is silent):
//! - A field whose template fails in any way (a tag never closed, a syntax error, an unknown
//!   function, a thrown error, the deadline, the memory limit) is used **whole as written**;
//!   macros still apply to it, and a diagnostic names the tag (`tavo prompt --explain`).
//! - Variable writes are staged with the field's macro writes: they happen only when the
//!   field's text is used, once per use, exactly as `{{setvar}}` does.
//! - `getvar` sees the writes made earlier in the same generation.
//! - A template that hit the deadline is not run again in the same generation (it falls
//!   back at once), and after [`GENERATION_BUDGET`] of template time in one generation the
//!   remaining templates fall back, so no chat of many looping fields can stall a reply.
//! - `Math.random` is seeded from the generation's seed and the template, so `--seed`
//!   reproduces a prompt.

mod parse;
mod runtime;

#[cfg(test)]
mod tests;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;

pub use parse::{ESCAPE_CLOSE, ESCAPE_OPEN, ParseError, Segment, compile, has_template, parse};
pub use runtime::{CallInput, CallOutcome, VarOp};

use crate::js::{JsError, JsLimits, JsWorker};
use crate::macros::{MacroContext, MacroDiagnostic, Variables};

/// The global switch's setting key (Tavo: Settings → Chat settings → Compatibility →
/// "启用 EJS 模板", on by default; stored in the library settings).
pub const SETTING: &str = "ejs.enabled";

/// Template time one generation may spend before the remaining templates fall back.
pub const GENERATION_BUDGET: Duration = Duration::from_secs(2);

/// Handle to the template runner on a JavaScript worker.
#[derive(Debug)]
pub struct Ejs {
    worker: Arc<JsWorker>,
}

impl Ejs {
    /// A runner on the process-wide worker (shared with regex rules).
    pub fn shared() -> Result<Arc<Ejs>, JsError> {
        static SHARED: std::sync::OnceLock<Result<Arc<Ejs>, JsError>> = std::sync::OnceLock::new();
        SHARED
            .get_or_init(|| JsWorker::shared().map(|worker| Arc::new(Ejs { worker })))
            .clone()
    }

    /// A runner on a worker of its own (tests use short deadlines).
    pub fn start(limits: JsLimits) -> Result<Arc<Ejs>, JsError> {
        Ok(Arc::new(Ejs {
            worker: Arc::new(JsWorker::start(limits)?),
        }))
    }

    /// Runs one compiled template.
    pub fn call(&self, input: CallInput) -> Result<CallOutcome, JsError> {
        self.worker.run(move |engine| runtime::run(engine, input))
    }
}

/// Which runner a [`Templates`] uses.
#[derive(Debug, Clone, Default)]
enum Mode {
    /// EJS is switched off: tags stay as written.
    Off,
    /// The process-wide runner, started on first use.
    #[default]
    Shared,
    /// A given runner.
    Engine(Arc<Ejs>),
}

#[derive(Debug, Default)]
struct Guard {
    spent: Duration,
    timed_out: HashSet<u64>,
}

/// The EJS stage of one generation: the switch, the runner and the time guard. Clones share
/// the guard (a lorebook key probe spends the same budget as the field it probes).
#[derive(Debug, Clone, Default)]
pub struct Templates {
    mode: Mode,
    guard: Arc<Mutex<Guard>>,
}

/// A field after its EJS stage.
#[derive(Debug, Clone)]
pub struct TemplateOutput {
    /// The rendered text, or the field as written when the template failed.
    pub text: String,
    /// Variable writes to stage (none after a failure).
    pub ops: Vec<VarOp>,
    /// Why the field fell back, when it did.
    pub diagnostic: Option<MacroDiagnostic>,
}

impl Templates {
    /// The default: on, with the process-wide runner.
    pub fn new() -> Self {
        Self::default()
    }

    /// EJS off (Settings → "启用 EJS 模板" unticked): tags stay as written.
    pub fn off() -> Self {
        Self {
            mode: Mode::Off,
            ..Self::default()
        }
    }

    /// On, with a given runner.
    pub fn with_engine(engine: Arc<Ejs>) -> Self {
        Self {
            mode: Mode::Engine(engine),
            ..Self::default()
        }
    }

    /// Whether templates are rendered.
    pub fn enabled(&self) -> bool {
        !matches!(self.mode, Mode::Off)
    }

    /// Renders the EJS of `field` against `vars`; `None` when EJS is off or the field has no
    /// template (the caller keeps the text as it is).
    pub fn render(
        &self,
        field: &str,
        vars: &Variables,
        ctx: &MacroContext,
        seed: u64,
        regex_escape: bool,
    ) -> Option<TemplateOutput> {
        if !self.enabled() || !has_template(field) {
            return None;
        }
        let fallback = |offset: usize, tag: String, message: String| TemplateOutput {
            text: field.to_owned(),
            ops: Vec::new(),
            diagnostic: Some(MacroDiagnostic {
                offset,
                text: tag,
                message,
                field: None,
            }),
        };
        let segments = match parse(field) {
            Ok(segments) => segments,
            Err(e) => {
                return Some(fallback(
                    e.offset,
                    tag_at(field, e.offset),
                    format!("EJS: {}; {FALLBACK}", e.message),
                ));
            }
        };
        let body = compile(&segments);
        let key = hash(seed, field);
        let engine = match &self.mode {
            Mode::Off => return None,
            Mode::Shared => match Ejs::shared() {
                Ok(engine) => engine,
                Err(e) => {
                    return Some(fallback(0, excerpt(field), format!("EJS: {e}; {FALLBACK}")));
                }
            },
            Mode::Engine(engine) => engine.clone(),
        };
        if let Ok(guard) = self.guard.lock() {
            if guard.timed_out.contains(&key) {
                return Some(fallback(
                    0,
                    excerpt(field),
                    format!(
                        "EJS: this template already ran out of time in this generation; {FALLBACK}"
                    ),
                ));
            }
            if guard.spent >= GENERATION_BUDGET {
                return Some(fallback(
                    0,
                    excerpt(field),
                    format!(
                        "EJS: this generation's templates already ran {} ms, so the rest are not run; {FALLBACK}",
                        GENERATION_BUDGET.as_millis()
                    ),
                ));
            }
        }
        let input = CallInput {
            body,
            vars_json: json!({"chat": vars.chat, "global": vars.global}).to_string(),
            consts_json: json!({
                "charName": ctx.char,
                "userName": ctx.user,
                "lastUserMessage": ctx.last_user_message,
                "lastCharMessage": ctx.last_char_message,
                "characterId": ctx.character_id,
            })
            .to_string(),
            regex_escape,
            seed: (key ^ (key >> 32)) as u32,
        };
        let started = Instant::now();
        let outcome = engine.call(input);
        if let Ok(mut guard) = self.guard.lock() {
            guard.spent += started.elapsed();
            if matches!(outcome, Err(JsError::Timeout(_))) {
                guard.timed_out.insert(key);
            }
        }
        Some(match outcome {
            Ok(CallOutcome::Rendered { text, ops }) => TemplateOutput {
                text,
                ops,
                diagnostic: None,
            },
            Ok(CallOutcome::Failed { message, tag }) => match tag {
                Some(at) => fallback(at, tag_at(field, at), format!("EJS: {message}; {FALLBACK}")),
                None => fallback(0, excerpt(field), format!("EJS: {message}; {FALLBACK}")),
            },
            Err(JsError::Timeout(ms)) => fallback(
                0,
                excerpt(field),
                format!(
                    "EJS: the template was stopped after {ms} ms (an endless loop?); {FALLBACK}"
                ),
            ),
            Err(JsError::OutOfMemory(mib)) => fallback(
                0,
                excerpt(field),
                format!("EJS: the template was stopped at the {mib} MiB memory limit; {FALLBACK}"),
            ),
            Err(JsError::Syntax(e) | JsError::Engine(e)) => {
                fallback(0, excerpt(field), format!("EJS: {e}; {FALLBACK}"))
            }
        })
    }
}

const FALLBACK: &str = "the whole field was used as written (macros still applied). Fix the tag, write <%% for a literal <%, or switch EJS off with `tavo settings set ejs.enabled false`";

/// The tag starting at byte `at` (up to its `%>`, at most 120 bytes).
fn tag_at(field: &str, at: usize) -> String {
    let Some(rest) = field.get(at..) else {
        return excerpt(field);
    };
    let end = rest.find("%>").map_or(rest.len(), |e| e + 2);
    truncate(&rest[..end], 120)
}

fn excerpt(field: &str) -> String {
    truncate(field, 120)
}

fn truncate(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

fn hash(seed: u64, text: &str) -> u64 {
    let mut h = crate::macros::Fnv::new(seed);
    h.write(text.as_bytes());
    h.finish()
}
