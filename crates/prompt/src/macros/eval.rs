//! The macro evaluator: walks `{{…}}` left to right, resolving nested macros inside
//! arguments first (SillyTavern's order), and writes variable side effects into an overlay.
//! [`super::state::MacroState`] drives it.

use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;
use serde_json::Value;

use super::clock;
use super::context::MacroContext;
use super::dice::Dice;
use super::helpers::{Fnv, TRIM_MARK, arity, choice_items, regex_escape, repeat_count, scope_of};
use super::state::{MacroDiagnostic, RenderOptions, apply_ops};
use super::syntax::{find_close, name_len, rewrite_legacy_tokens, split_args};
use super::vars::{
    VarOverlay, add_values, as_number, number_to_value, parse_macro_value, render_value,
};
use crate::ejs::Templates;

/// How deep card fields may reference each other through macros.
const MAX_FIELD_NESTING: usize = 6;

pub(super) struct Evaluator<'a, 'v> {
    pub(super) ctx: &'a MacroContext,
    pub(super) vars: VarOverlay<'v>,
    pub(super) rng: &'a mut ChaCha8Rng,
    pub(super) seed: u64,
    pub(super) diagnostics: Vec<MacroDiagnostic>,
    pub(super) options: RenderOptions,
    pub(super) depth: usize,
    pub(super) templates: &'a Templates,
}

impl Evaluator<'_, '_> {
    pub(super) fn expand(&mut self, src: &str, base: usize) -> String {
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
                if let Some((value, end)) = self.conditional(src, i, close, base) {
                    out.push_str(&value);
                    i = end;
                    literal = i;
                    continue;
                }
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

    pub(super) fn expand_arg(&mut self, src: &str, base: usize) -> String {
        self.depth += 1;
        let value = self.expand(src, base);
        self.depth -= 1;
        value.trim().to_owned()
    }

    /// Card and persona fields may contain EJS and macros themselves (`{{char}} is …`):
    /// the field's template is rendered against the variables as they stand (its writes are
    /// staged with this rendering's), then its macros are expanded with the same context, up
    /// to a nesting limit that stops self-reference.
    fn expand_field(&mut self, value: &str, field: &str) -> String {
        if self.depth >= MAX_FIELD_NESTING {
            return value.to_owned();
        }
        let stage = self
            .templates
            .render(value, self.vars.view(), self.ctx, self.seed, false);
        let value = match stage {
            Some(stage) => {
                apply_ops(&mut self.vars, &stage.ops);
                if let Some(mut d) = stage.diagnostic {
                    d.field = Some(field.to_owned());
                    self.diagnostics.push(d);
                }
                std::borrow::Cow::Owned(stage.text)
            }
            None => std::borrow::Cow::Borrowed(value),
        };
        if !(value.contains("{{") || value.contains('<')) {
            return value.into_owned();
        }
        self.depth += 1;
        let expanded = self.expand(&rewrite_legacy_tokens(&value), 0);
        self.depth -= 1;
        expanded
    }

    fn report(&mut self, offset: usize, raw: &str, message: impl Into<String>) -> String {
        self.diagnostics.push(MacroDiagnostic {
            offset,
            text: raw.to_owned(),
            message: message.into(),
            field: None,
        });
        raw.to_owned()
    }

    pub(super) fn evaluate(&mut self, inner: &str, raw: &str, offset: usize) -> String {
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
                field: None,
            });
        }
        self.depth += 1;
        let inner = self.expand(inner, offset + 2);
        self.depth -= 1;
        format!("{{{{{inner}}}}}")
    }

    fn dispatch(&mut self, name: &str, args: &[String]) -> Result<String, String> {
        let value = match self.context_macro(name, args)? {
            Some(v) => Some(v),
            None => match self.clock_macro(name, args)? {
                Some(v) => Some(v),
                None => match self.text_macro(name, args)? {
                    Some(v) => Some(v),
                    None => self.variable_macro(name, args)?,
                },
            },
        };
        value.ok_or_else(|| format!("{{{{{name}}}}} is not supported"))
    }

    /// Names, the character's and persona's fields, the chat's messages, the model.
    fn context_macro(&mut self, name: &str, args: &[String]) -> Result<Option<String>, String> {
        let ctx = self.ctx;
        let arg = |i: usize| args.get(i).map(String::as_str).unwrap_or("");
        Ok(Some(match name {
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
            "chardescription" | "description" => {
                self.expand_field(&ctx.description, "character.description")
            }
            "charpersonality" | "personality" => {
                self.expand_field(&ctx.personality, "character.personality")
            }
            "charscenario" => self.expand_field(&ctx.char_scenario, "character.scenario"),
            "scenario" => self.expand_field(ctx.scenario(), "character.scenario"),
            "persona" => self.expand_field(&ctx.persona, "persona.description"),
            "charprompt" => self.expand_field(&ctx.char_prompt, "character.systemPrompt"),
            "charinstruction" | "charjailbreak" => {
                self.expand_field(&ctx.char_instruction, "character.postHistoryInstructions")
            }
            "mesexamplesraw" => ctx.mes_examples_raw.clone(),
            "mesexamples" => self.expand_field(&ctx.mes_examples_raw, "character.mesExample"),
            "charversion" | "version" | "char_version" => ctx.char_version.clone(),
            "charcreatornotes" | "creatornotes" => ctx.creator_notes.clone(),
            "chardepthprompt" => self.expand_field(&ctx.depth_prompt, "character.depthPrompt"),
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
            _ => return Ok(None),
        }))
    }

    /// The time and date, now or at an offset, and the time since the user's last message.
    fn clock_macro(&mut self, name: &str, args: &[String]) -> Result<Option<String>, String> {
        let ctx = self.ctx;
        let arg = |i: usize| args.get(i).map(String::as_str).unwrap_or("");
        Ok(Some(match name {
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
            _ => return Ok(None),
        }))
    }

    /// Text helpers and chance: `noop`, `trim`, `newline`, `reverse`, `outlet`, `random`, `pick`, `roll`.
    fn text_macro(&mut self, name: &str, args: &[String]) -> Result<Option<String>, String> {
        let ctx = self.ctx;
        let arg = |i: usize| args.get(i).map(String::as_str).unwrap_or("");
        Ok(Some(match name {
            "noop" => String::new(),
            "trim" => TRIM_MARK.to_string(),
            "newline" => "\n".repeat(repeat_count(name, args)?),
            "space" => " ".repeat(repeat_count(name, args)?),
            "reverse" => arg(0).chars().rev().collect(),
            "outlet" => ctx.outlets.get(arg(0)).cloned().unwrap_or_default(),
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
            _ => return Ok(None),
        }))
    }

    /// The chat's and the global variables: set, add, increment, read, test, delete.
    fn variable_macro(&mut self, name: &str, args: &[String]) -> Result<Option<String>, String> {
        let arg = |i: usize| args.get(i).map(String::as_str).unwrap_or("");
        Ok(Some(match name {
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
            _ => return Ok(None),
        }))
    }
}
