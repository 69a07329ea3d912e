//! The macro evaluator: walks `{{…}}` left to right, resolving nested macros inside
//! arguments first (SillyTavern's order), and writes variable side effects into an overlay.

use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use serde_json::Value;

use super::clock;
use super::context::MacroContext;
use super::dice::Dice;
use super::syntax::{find_close, name_len, rewrite_legacy_tokens, split_args, split_commas};
use super::vars::{
    VarOverlay, VarScope, Variables, add_values, as_number, number_to_value, parse_macro_value,
    render_value,
};

/// Marks where `{{trim}}` stood until the post-pass removes it with the whitespace around it.
const TRIM_MARK: char = '\u{FDD0}';
/// Largest `n` accepted by `{{newline::n}}` / `{{space::n}}` (guards against huge outputs).
const MAX_REPEAT: usize = 1000;
/// How deep card fields may reference each other through macros.
const MAX_FIELD_NESTING: usize = 6;

/// A macro that could not be evaluated. The macro text stays in the output as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MacroDiagnostic {
    /// Byte offset of the macro's `{{` in the rendered field.
    pub offset: usize,
    /// The macro as written.
    pub text: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// How one rendering treats macro results.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RenderOptions {
    /// Escape every top-level macro result for use inside a JavaScript regex
    /// (regex `substitution: 'escaped'`).
    pub regex_escape_results: bool,
}

/// The output of one rendering. Its variable writes are staged: pass it to
/// [`MacroState::commit`] when the text is actually used, or drop it to discard them.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The text with macros expanded.
    pub text: String,
    /// Macros left as written, with why.
    pub diagnostics: Vec<MacroDiagnostic>,
    staged: Option<Variables>,
}

impl Rendered {
    /// Whether rendering wrote any variable.
    pub fn has_side_effects(&self) -> bool {
        self.staged.is_some()
    }
}

/// Per-generation macro state: the committed variables and the seeded random generator, so
/// the same seed and inputs always give the same prompt.
#[derive(Debug, Clone)]
pub struct MacroState {
    vars: Variables,
    rng: ChaCha8Rng,
    seed: u64,
    changed: bool,
}

impl MacroState {
    /// State for one generation.
    pub fn new(vars: Variables, seed: u64) -> Self {
        Self {
            vars,
            rng: ChaCha8Rng::seed_from_u64(seed),
            seed,
            changed: false,
        }
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

    /// Renders with explicit options.
    pub fn render_with(
        &mut self,
        text: &str,
        ctx: &MacroContext,
        options: RenderOptions,
    ) -> Rendered {
        if !text.contains("{{") && !text.contains('<') && !text.contains('\\') {
            return Rendered {
                text: text.to_owned(),
                diagnostics: Vec::new(),
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
        };
        let expanded = evaluator.expand(&source, 0);
        let diagnostics = std::mem::take(&mut evaluator.diagnostics);
        let staged = evaluator.vars.into_staged();
        Rendered {
            text: apply_trim_marks(&expanded),
            diagnostics,
            staged,
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

struct Evaluator<'a, 'v> {
    ctx: &'a MacroContext,
    vars: VarOverlay<'v>,
    rng: &'a mut ChaCha8Rng,
    seed: u64,
    diagnostics: Vec<MacroDiagnostic>,
    options: RenderOptions,
    depth: usize,
}

impl Evaluator<'_, '_> {
    fn expand(&mut self, src: &str, base: usize) -> String {
        let bytes = src.as_bytes();
        let mut out = String::with_capacity(src.len());
        let mut literal = 0;
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'\\' {
                let escaped = if src[i..].starts_with("\\{\\{") {
                    Some("{{")
                } else if src[i..].starts_with("\\}\\}") {
                    Some("}}")
                } else {
                    None
                };
                if let Some(braces) = escaped {
                    out.push_str(&src[literal..i]);
                    out.push_str(braces);
                    i += 4;
                    literal = i;
                    continue;
                }
            }
            if bytes[i] == b'{'
                && bytes.get(i + 1) == Some(&b'{')
                && let Some(close) = find_close(src, i)
            {
                out.push_str(&src[literal..i]);
                let raw = &src[i..close + 2];
                let inner = &src[i + 2..close];
                let value = self.evaluate(inner, raw, base + i);
                out.push_str(&value);
                i = close + 2;
                literal = i;
                continue;
            }
            i += 1;
        }
        out.push_str(&src[literal..]);
        out
    }

    fn expand_arg(&mut self, src: &str, base: usize) -> String {
        self.depth += 1;
        let value = self.expand(src, base);
        self.depth -= 1;
        value.trim().to_owned()
    }

    /// Card and persona fields may contain macros themselves (`{{char}} is …`); they are
    /// expanded with the same context, up to a nesting limit that stops self-reference.
    fn expand_field(&mut self, value: &str) -> String {
        if self.depth >= MAX_FIELD_NESTING || !(value.contains("{{") || value.contains('<')) {
            return value.to_owned();
        }
        self.depth += 1;
        let expanded = self.expand(&rewrite_legacy_tokens(value), 0);
        self.depth -= 1;
        expanded
    }

    fn report(&mut self, offset: usize, raw: &str, message: impl Into<String>) -> String {
        self.diagnostics.push(MacroDiagnostic {
            offset,
            text: raw.to_owned(),
            message: message.into(),
        });
        raw.to_owned()
    }

    fn evaluate(&mut self, inner: &str, raw: &str, offset: usize) -> String {
        let lead = inner.len() - inner.trim_start().len();
        let body = &inner[lead..];
        if body.starts_with("//") {
            return String::new();
        }
        let nlen = name_len(body);
        if nlen == 0 {
            // `{{ }}`, `{{"a": 1}}`: not a macro name, so not worth a diagnostic.
            return self.unknown(inner, offset, None);
        }
        let mut name = body[..nlen].to_ascii_lowercase();
        let mut rest = &body[nlen..];
        if name.starts_with("time_utc") && name.len() > "time_utc".len() {
            // Legacy `{{time_UTC-5}}`: the offset was read as part of the name.
            rest = &body["time_utc".len()..nlen];
            name.truncate("time_utc".len());
        }
        let arg_base = offset + 2 + lead + nlen;
        let raw_args: Vec<(&str, usize)> = if rest.trim().is_empty() {
            Vec::new()
        } else if let Some(tail) = rest.strip_prefix("::") {
            let mut pos = arg_base + 2;
            split_args(tail)
                .into_iter()
                .map(|part| {
                    let at = pos;
                    pos += part.len() + 2;
                    (part, at)
                })
                .collect()
        } else if let Some(tail) = rest.strip_prefix(':') {
            vec![(tail, arg_base + 1)]
        } else if rest.starts_with(char::is_whitespace) {
            vec![(rest, arg_base)]
        } else if name == "time_utc" {
            // Legacy `{{time_UTC+9}}` → `{{time::UTC+9}}`.
            return match clock::time_at_offset(&self.ctx.now, &format!("UTC{}", rest.trim())) {
                Some(time) => self.finish(time),
                None => self.report(
                    offset,
                    raw,
                    "time_UTC needs a whole-hour offset such as {{time_UTC+9}}",
                ),
            };
        } else {
            return self.unknown(inner, offset, Some(&body[..nlen]));
        };
        let Some(arity) = arity(&name) else {
            return self.unknown(inner, offset, Some(&body[..nlen]));
        };
        if raw_args.len() < arity.0 || raw_args.len() > arity.1 {
            let expected = if arity.0 == arity.1 {
                format!("{}", arity.0)
            } else if arity.1 == usize::MAX {
                format!("at least {}", arity.0)
            } else {
                format!("{} to {}", arity.0, arity.1)
            };
            return self.report(
                offset,
                raw,
                format!(
                    "{{{{{name}}}}} takes {expected} argument(s) separated by '::', got {}",
                    raw_args.len()
                ),
            );
        }
        let args: Vec<String> = raw_args
            .iter()
            .map(|(part, at)| self.expand_arg(part, *at))
            .collect();
        match self.dispatch(&name, &args) {
            Ok(value) => self.finish(value),
            Err(message) => self.report(offset, raw, message),
        }
    }

    fn finish(&self, value: String) -> String {
        if self.depth == 0 && self.options.regex_escape_results {
            regex_escape(&value)
        } else {
            value
        }
    }

    /// Unknown macros stay verbatim, with the macros nested inside them resolved. A name
    /// that no macro has is reported (`--explain` lists it): a typo such as `{{usr}}` would
    /// otherwise reach the model silently.
    fn unknown(&mut self, inner: &str, offset: usize, name: Option<&str>) -> String {
        // `{{match}}` is the regex replacement's whole match, expanded there.
        if let Some(name) = name.filter(|n| !n.eq_ignore_ascii_case("match")) {
            self.diagnostics.push(MacroDiagnostic {
                offset,
                text: format!("{{{{{inner}}}}}"),
                message: format!(
                    "unknown macro {{{{{name}}}}}: it was left as written (check the name; arguments follow '::')"
                ),
            });
        }
        self.depth += 1;
        let inner = self.expand(inner, offset + 2);
        self.depth -= 1;
        format!("{{{{{inner}}}}}")
    }

    fn dispatch(&mut self, name: &str, args: &[String]) -> Result<String, String> {
        let ctx = self.ctx;
        let arg = |i: usize| args.get(i).map(String::as_str).unwrap_or("");
        Ok(match name {
            "user" => ctx.user.clone(),
            "char" => ctx.char.clone(),
            "group" => ctx.group(),
            "charifnotgroup" => ctx.group(),
            "groupnotmuted" => ctx.group_not_muted_names(),
            "notchar" => {
                if ctx.is_group() {
                    let mut names: Vec<&str> = ctx
                        .group_members
                        .iter()
                        .map(String::as_str)
                        .filter(|n| *n != ctx.char)
                        .collect();
                    names.push(&ctx.user);
                    names.join(", ")
                } else {
                    ctx.user.clone()
                }
            }
            "chardescription" | "description" => self.expand_field(&ctx.description),
            "charpersonality" | "personality" => self.expand_field(&ctx.personality),
            "charscenario" => self.expand_field(&ctx.char_scenario),
            "scenario" => self.expand_field(ctx.scenario()),
            "persona" => self.expand_field(&ctx.persona),
            "charprompt" => self.expand_field(&ctx.char_prompt),
            "charinstruction" | "charjailbreak" => self.expand_field(&ctx.char_instruction),
            "mesexamplesraw" => ctx.mes_examples_raw.clone(),
            "mesexamples" => self.expand_field(&ctx.mes_examples_raw),
            "charversion" | "version" | "char_version" => ctx.char_version.clone(),
            "charcreatornotes" | "creatornotes" => ctx.creator_notes.clone(),
            "chardepthprompt" => self.expand_field(&ctx.depth_prompt),
            "charfirstmessage" | "greeting" => {
                let index = if args.is_empty() {
                    0
                } else {
                    arg(0).parse::<usize>().map_err(|_| {
                        format!(
                            "{{{{{name}}}}} takes a greeting index (0 = first message), got '{}'",
                            arg(0)
                        )
                    })?
                };
                ctx.greetings.get(index).cloned().unwrap_or_default()
            }
            "original" => ctx.original.clone().unwrap_or_default(),
            "lastmessage" => ctx.last_message.clone(),
            "lastchatmessage" => ctx
                .last_chat_message
                .clone()
                .unwrap_or_else(|| ctx.last_message.clone()),
            "input" | "lastusermessage" => ctx.last_user_message.clone(),
            "lastcharmessage" => ctx.last_char_message.clone(),
            "lastmessageid" => ctx
                .last_message_index
                .map(|i| i.to_string())
                .unwrap_or_default(),
            "model" => ctx.model.clone(),
            "ismobile" => "false".to_owned(),
            "time" => {
                if args.is_empty() {
                    clock::time(&ctx.now)
                } else {
                    clock::time_at_offset(&ctx.now, arg(0)).ok_or_else(|| {
                        format!(
                            "{{{{time::…}}}} needs an offset such as UTC+9 or UTC-5, got '{}'",
                            arg(0)
                        )
                    })?
                }
            }
            "date" => clock::date(&ctx.now),
            "weekday" => clock::weekday(&ctx.now),
            "isotime" => clock::isotime(&ctx.now),
            "isodate" => clock::isodate(&ctx.now),
            "idleduration" | "idle_duration" => {
                clock::idle_duration(&ctx.now, ctx.idle_since.as_ref())
            }
            "noop" => String::new(),
            "trim" => TRIM_MARK.to_string(),
            "newline" => "\n".repeat(repeat_count(name, args)?),
            "space" => " ".repeat(repeat_count(name, args)?),
            "reverse" => arg(0).chars().rev().collect(),
            "random" => {
                let items = choice_items(args);
                items.choose(self.rng).cloned().unwrap_or_default()
            }
            "pick" => {
                // Stable across re-renders of the same text with the same seed.
                let items = choice_items(args);
                if items.is_empty() {
                    String::new()
                } else {
                    let mut hasher = Fnv::new(self.seed);
                    hasher.write(args.join("::").as_bytes());
                    items[(hasher.finish() % items.len() as u64) as usize].clone()
                }
            }
            "roll" | "dice" => {
                let dice = Dice::parse(arg(0)).ok_or_else(|| {
                    format!("{{{{{name}::…}}}} needs a dice formula such as 3d6, d20 or 2d10+1, got '{}'", arg(0))
                })?;
                dice.roll(self.rng).to_string()
            }
            "setvar" | "setglobalvar" => {
                let value = args[1..].join("::");
                self.vars
                    .set(scope_of(name), arg(0), parse_macro_value(&value));
                String::new()
            }
            "addvar" | "addglobalvar" => {
                let scope = scope_of(name);
                let value = args[1..].join("::");
                let updated = add_values(self.vars.get(scope, arg(0)), &value);
                self.vars.set(scope, arg(0), updated);
                String::new()
            }
            "incvar" | "incglobalvar" | "decvar" | "decglobalvar" => {
                let scope = scope_of(name);
                let step = if name.starts_with("inc") { 1.0 } else { -1.0 };
                let current = match self.vars.get(scope, arg(0)) {
                    None | Some(Value::Null) => 0.0,
                    Some(value) => as_number(value).ok_or_else(|| {
                        format!(
                            "{{{{{name}::{}}}}}: the variable holds {}, not a number; set it with {{{{setvar::{}::0}}}} first",
                            arg(0),
                            render_value(value),
                            arg(0)
                        )
                    })?,
                };
                self.vars
                    .set(scope, arg(0), number_to_value(current + step));
                String::new()
            }
            "getvar" | "getglobalvar" => self
                .vars
                .get(scope_of(name), arg(0))
                .map(render_value)
                .unwrap_or_default(),
            "hasvar" | "varexists" | "hasglobalvar" | "globalvarexists" => {
                self.vars.get(scope_of(name), arg(0)).is_some().to_string()
            }
            "deletevar" | "flushvar" | "deleteglobalvar" | "flushglobalvar" => {
                self.vars.unset(scope_of(name), arg(0));
                String::new()
            }
            other => return Err(format!("{{{{{other}}}}} is not supported")),
        })
    }
}

/// Accepted argument counts per macro name (lower case); `None` = not a known macro.
fn arity(name: &str) -> Option<(usize, usize)> {
    const MANY: usize = usize::MAX;
    Some(match name {
        "user" | "char" | "group" | "charifnotgroup" | "groupnotmuted" | "notchar"
        | "chardescription" | "description" | "charpersonality" | "personality"
        | "charscenario" | "scenario" | "persona" | "charprompt" | "charinstruction"
        | "charjailbreak" | "mesexamples" | "mesexamplesraw" | "charversion" | "version"
        | "char_version" | "charcreatornotes" | "creatornotes" | "chardepthprompt" | "original"
        | "lastmessage" | "lastchatmessage" | "input" | "lastusermessage" | "lastcharmessage"
        | "lastmessageid" | "model" | "ismobile" | "date" | "weekday" | "isotime" | "isodate"
        | "idleduration" | "idle_duration" | "noop" | "trim" => (0, 0),
        "time" | "newline" | "space" | "charfirstmessage" | "greeting" => (0, 1),
        "reverse" | "roll" | "dice" | "incvar" | "incglobalvar" | "decvar" | "decglobalvar"
        | "getvar" | "getglobalvar" | "hasvar" | "varexists" | "hasglobalvar"
        | "globalvarexists" | "deletevar" | "flushvar" | "deleteglobalvar" | "flushglobalvar" => {
            (1, 1)
        }
        "random" | "pick" => (1, MANY),
        "setvar" | "setglobalvar" | "addvar" | "addglobalvar" => (2, MANY),
        _ => return None,
    })
}

fn scope_of(name: &str) -> VarScope {
    if name.contains("global") {
        VarScope::Global
    } else {
        VarScope::Chat
    }
}

fn repeat_count(name: &str, args: &[String]) -> Result<usize, String> {
    match args.first() {
        None => Ok(1),
        Some(n) => n
            .parse::<usize>()
            .ok()
            .filter(|n| *n <= MAX_REPEAT)
            .ok_or_else(|| {
                format!("{{{{{name}::n}}}} needs a count from 0 to {MAX_REPEAT}, got '{n}'")
            }),
    }
}

/// `{{random::a::b}}` lists its items as arguments; `{{random::a,b}}` and
/// `{{random: a, b}}` give one comma-separated argument.
fn choice_items(args: &[String]) -> Vec<String> {
    if args.len() == 1 {
        split_commas(&args[0])
    } else {
        args.to_vec()
    }
}

/// Removes each `{{trim}}` mark together with the whitespace on both sides of it.
fn apply_trim_marks(text: &str) -> String {
    if !text.contains(TRIM_MARK) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut pieces = text.split(TRIM_MARK).peekable();
    let mut first = true;
    while let Some(piece) = pieces.next() {
        let piece = if first { piece } else { piece.trim_start() };
        first = false;
        if pieces.peek().is_some() {
            out.push_str(piece.trim_end());
        } else {
            out.push_str(piece);
        }
    }
    out
}

/// Escapes JavaScript regex syntax characters (for `substitution: 'escaped'`).
pub fn regex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\^$.*+?()[]{}|/-".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// FNV-1a: a small stable hash for `{{pick}}` (stable across runs and platforms, unlike
/// `DefaultHasher`).
pub(crate) struct Fnv(u64);

impl Fnv {
    pub(crate) fn new(seed: u64) -> Self {
        let mut hasher = Self(0xcbf2_9ce4_8422_2325);
        hasher.write(&seed.to_le_bytes());
        hasher
    }

    pub(crate) fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 ^= u64::from(*byte);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }

    pub(crate) fn finish(&self) -> u64 {
        self.0
    }
}

/// Draws a float in `[0, 100)` from a generator seeded by `(seed, key)`: used where a random
/// decision must not depend on evaluation order (lorebook probability).
pub fn seeded_percent(seed: u64, key: &str) -> f64 {
    let mut hasher = Fnv::new(seed);
    hasher.write(key.as_bytes());
    let mut rng = ChaCha8Rng::seed_from_u64(hasher.finish());
    rng.random_range(0.0..100.0)
}
