//! JavaScript `RegExp` semantics through QuickJS-NG (rquickjs), on the shared worker thread
//! of [`crate::js`].
//!
//! Why QuickJS and not a Rust engine: SillyTavern regex scripts rely on exact JS semantics
//! (lookbehind, named groups, `u`/`s`/`y`, lastIndex rules, `String.prototype.replace`), and
//! a hostile or catastrophic pattern must be stoppable. QuickJS gives both: an interrupt
//! handler enforces a deadline per call and the runtime has a memory limit.
//! Each call crosses the FFI boundary once for a whole batch of texts, so callers should
//! batch one rule over many messages.

use std::sync::{Arc, OnceLock};

use crate::js::{JsEngine, JsWorker};
pub use crate::js::{JsError, JsLimits};
use rquickjs::Function;

/// Marks the start of one replacement's output (the caller expands macros inside it).
pub const MARK_OPEN: char = '\u{FDD1}';
/// Marks the end of one replacement's output.
pub const MARK_CLOSE: char = '\u{FDD2}';

const HELPERS: &str = r#"
globalThis.__tavoCounts = [];
globalThis.__tavoReplace = function (src, flags, repl, trims, inputs, mark) {
  const re = new RegExp(src, flags);
  const tpl = repl.replace(/\{\{match\}\}/gi, '$$0');
  const out = new Array(inputs.length);
  const counts = new Array(inputs.length);
  for (let i = 0; i < inputs.length; i++) {
    let n = 0;
    re.lastIndex = 0;
    out[i] = inputs[i].replace(re, function () {
      n++;
      const args = Array.prototype.slice.call(arguments);
      const last = args[args.length - 1];
      const groups = (typeof last === 'object' && last !== null) ? args.pop() : undefined;
      args.pop();
      args.pop();
      const text = tpl.replace(/\$(\d+)|\$<([^>]*)>|\$&/g, function (m, num, name) {
        let v;
        if (num !== undefined) v = args[Number(num)];
        else if (name !== undefined) v = groups ? groups[name] : undefined;
        else v = args[0];
        if (v === undefined || v === null) return '';
        v = String(v);
        for (let t = 0; t < trims.length; t++) if (trims[t]) v = v.split(trims[t]).join('');
        return v;
      });
      return mark ? '\uFDD1' + text + '\uFDD2' : text;
    });
    counts[i] = n;
  }
  globalThis.__tavoCounts = counts;
  return out;
};
globalThis.__tavoFirstMatch = function (patterns, texts) {
  return patterns.map(function (p) {
    let re;
    try { re = new RegExp(p[0], p[1]); } catch (e) { return -2; }
    for (let i = 0; i < texts.length; i++) {
      re.lastIndex = 0;
      if (re.test(texts[i])) return i;
    }
    return -1;
  });
};
globalThis.__tavoCheck = function (src, flags) {
  try { new RegExp(src, flags); return ''; } catch (e) { return String(e && e.message || e); }
};
"#;

/// One rule applied to a batch of texts.
#[derive(Debug, Clone)]
pub struct ReplaceRequest {
    /// The pattern source (no slashes).
    pub source: String,
    /// JavaScript flags (`g`, `i`, `m`, `s`, `u`, `y`, …).
    pub flags: String,
    /// Replacement template: `$1`, `$<name>`, `$&`, `{{match}}`.
    pub replacement: String,
    /// Strings removed from captured text before it is inserted.
    pub trims: Vec<String>,
    /// Wrap each replacement in [`MARK_OPEN`]/[`MARK_CLOSE`] so macros inside it can be
    /// expanded afterwards.
    pub mark: bool,
    /// The texts.
    pub inputs: Vec<String>,
}

/// Outputs of a batch, in input order, with the number of matches replaced in each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplaceOutcome {
    /// Rewritten texts.
    pub outputs: Vec<String>,
    /// Matches replaced per text.
    pub counts: Vec<u32>,
}

/// Handle to the JavaScript regex functions on the shared worker ([`crate::js`]). Cheap to
/// share; calls are serialised.
pub struct JsRegex {
    worker: Arc<JsWorker>,
}

impl std::fmt::Debug for JsRegex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JsRegex")
    }
}

impl JsRegex {
    /// Starts a worker thread of its own with the given limits.
    pub fn start(limits: JsLimits) -> Result<Self, JsError> {
        Ok(Self {
            worker: Arc::new(JsWorker::start(limits)?),
        })
    }

    /// The process-wide worker with default limits (shared with EJS templates).
    pub fn shared() -> Result<&'static JsRegex, JsError> {
        static SHARED: OnceLock<Result<JsRegex, JsError>> = OnceLock::new();
        SHARED
            .get_or_init(|| JsWorker::shared().map(|worker| JsRegex { worker }))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Applies one rule to every input.
    pub fn replace(&self, request: ReplaceRequest) -> Result<ReplaceOutcome, JsError> {
        if request.inputs.is_empty() {
            return Ok(ReplaceOutcome {
                outputs: Vec::new(),
                counts: Vec::new(),
            });
        }
        self.worker.run(move |engine| run_replace(engine, &request))
    }

    /// For each `(source, flags)` pattern, the index of the first text it matches, `-1` for
    /// none, `-2` for an invalid pattern.
    pub fn first_matches(
        &self,
        patterns: Vec<(String, String)>,
        texts: Vec<String>,
    ) -> Result<Vec<i32>, JsError> {
        if patterns.is_empty() {
            return Ok(Vec::new());
        }
        self.worker.run(move |engine| {
            engine.install("regex helpers", HELPERS)?;
            engine.context().with(|ctx| {
                let call = || -> rquickjs::Result<Vec<i32>> {
                    let f: Function = ctx.globals().get("__tavoFirstMatch")?;
                    let patterns: Vec<Vec<String>> =
                        patterns.into_iter().map(|(s, f)| vec![s, f]).collect();
                    f.call((patterns, texts))
                };
                call().map_err(|e| engine.classify(&ctx, e))
            })
        })
    }

    /// Whether the pattern compiles.
    pub fn check(&self, source: &str, flags: &str) -> Result<(), JsError> {
        let (source, flags) = (source.to_owned(), flags.to_owned());
        self.worker.run(move |engine| {
            engine.install("regex helpers", HELPERS)?;
            engine.context().with(|ctx| {
                let call = || -> rquickjs::Result<String> {
                    let f: Function = ctx.globals().get("__tavoCheck")?;
                    f.call((source, flags))
                };
                match call() {
                    Ok(message) if message.is_empty() => Ok(()),
                    Ok(message) => Err(JsError::Syntax(message)),
                    Err(e) => Err(engine.classify(&ctx, e)),
                }
            })
        })
    }
}

fn run_replace(engine: &mut JsEngine, request: &ReplaceRequest) -> Result<ReplaceOutcome, JsError> {
    engine.install("regex helpers", HELPERS)?;
    engine.context().with(|ctx| {
        let call = || -> rquickjs::Result<(Vec<String>, Vec<u32>)> {
            let f: Function = ctx.globals().get("__tavoReplace")?;
            let outputs: Vec<String> = f.call((
                request.source.as_str(),
                request.flags.as_str(),
                request.replacement.as_str(),
                request.trims.clone(),
                request.inputs.clone(),
                request.mark,
            ))?;
            let counts: Vec<u32> = ctx.globals().get("__tavoCounts")?;
            Ok((outputs, counts))
        };
        match call() {
            Ok((outputs, counts)) => Ok(ReplaceOutcome { outputs, counts }),
            Err(e) => Err(engine.classify(&ctx, e)),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn req(source: &str, flags: &str, replacement: &str, inputs: &[&str]) -> ReplaceRequest {
        ReplaceRequest {
            source: source.into(),
            flags: flags.into(),
            replacement: replacement.into(),
            trims: Vec::new(),
            mark: false,
            inputs: inputs.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    fn engine() -> &'static JsRegex {
        JsRegex::shared().unwrap_or_else(|e| panic!("engine: {e}"))
    }

    #[test]
    fn js_replacement_forms() {
        let cases = [
            (r"(\w+)@(\w+)", "g", "$2 at $1", "a@b c@d", "b at a d at c"),
            (
                r"(?<y>\d{4})-(?<m>\d\d)",
                "",
                "$<m>/$<y>",
                "2026-11 and 2025-01",
                "11/2026 and 2025-01",
            ),
            (r"x+", "g", "[$&]", "axxbx", "a[xx]b[x]"),
            (r"x+", "g", "[{{match}}]", "axxbx", "a[xx]b[x]"),
            (r"(?<=\$)\d+", "g", "N", "$12 and 34", "$N and 34"),
            (r"(a)", "g", "$9|$1", "a", "|a"),
            (r"HELLO", "i", "bye", "hello hello", "bye hello"),
            (r"^b", "gm", "B", "a\nb\nb", "a\nB\nB"),
            (r"a.b", "s", "X", "a\nb", "X"),
            (r"\u{1F600}", "u", ":)", "😀!", ":)!"),
            (r"(\w)\1", "g", "<$1>", "aabcc", "<a>b<c>"),
        ];
        for (source, flags, replacement, input, expected) in cases {
            let out = engine()
                .replace(req(source, flags, replacement, &[input]))
                .unwrap_or_else(|e| panic!("{source}: {e}"));
            assert_eq!(out.outputs, vec![expected.to_owned()], "/{source}/{flags}");
        }
    }

    #[test]
    fn trims_apply_to_captured_text() {
        let mut request = req(r"\[(.+?)\]", "g", "<$1>", &["[玩家说：你好]"]);
        request.trims = vec!["玩家说：".into()];
        let out = engine().replace(request).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(out.outputs, vec!["<你好>".to_owned()]);
    }

    #[test]
    fn batches_and_counts() {
        let out = engine()
            .replace(req("o", "g", "0", &["foo", "bar", "o"]))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(out.outputs, vec!["f00", "bar", "0"]);
        assert_eq!(out.counts, vec![2, 0, 1]);
    }

    #[test]
    fn invalid_pattern_is_a_syntax_error() {
        let err = engine().replace(req("(unclosed", "", "", &["x"]));
        assert!(matches!(err, Err(JsError::Syntax(_))), "{err:?}");
        assert!(matches!(engine().check("a(", ""), Err(JsError::Syntax(_))));
        assert_eq!(engine().check("a+", "gi"), Ok(()));
        assert!(matches!(engine().check("a", "q"), Err(JsError::Syntax(_))));
    }

    #[test]
    fn catastrophic_pattern_is_stopped_and_engine_recovers() {
        let js = JsRegex::start(JsLimits {
            deadline: Duration::from_millis(100),
            memory_mib: 32,
        })
        .unwrap_or_else(|e| panic!("{e}"));
        let evil = format!("{}!", "a".repeat(40));
        let err = js.replace(req("^(a+)+$", "", "x", &[&evil]));
        assert_eq!(err, Err(JsError::Timeout(100)));
        let ok = js
            .replace(req("a", "g", "b", &["aa"]))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(ok.outputs, vec!["bb"]);
    }

    #[test]
    fn first_match_indices() {
        let out = engine()
            .first_matches(
                vec![
                    ("dr[a]gon".into(), "i".into()),
                    ("zzz".into(), "".into()),
                    ("(".into(), "".into()),
                ],
                vec!["nothing".into(), "A DRAGON".into()],
            )
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(out, vec![1, -1, -2]);
    }
}
