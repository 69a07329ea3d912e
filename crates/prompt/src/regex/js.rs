//! JavaScript `RegExp` semantics through QuickJS-NG (rquickjs), on one worker thread.
//!
//! Why QuickJS and not a Rust engine: SillyTavern regex scripts rely on exact JS semantics
//! (lookbehind, named groups, `u`/`s`/`y`, lastIndex rules, `String.prototype.replace`), and
//! a hostile or catastrophic pattern must be stoppable. QuickJS gives both: an interrupt
//! handler enforces a deadline per call and the runtime has a memory limit.
//! Each call crosses the FFI boundary once for a whole batch of texts, so callers should
//! batch one rule over many messages.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use rquickjs::{Context, Function, Runtime};

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

/// Why a JavaScript call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsError {
    /// The pattern is not a valid JavaScript regex.
    #[error("invalid regex: {0}")]
    Syntax(String),
    /// The call ran past its deadline (a catastrophic pattern) and was stopped.
    #[error("stopped after {0} ms: the pattern backtracks too much on this text")]
    Timeout(u64),
    /// The call exceeded the engine's memory limit and was stopped.
    #[error("stopped: the regex engine ran out of its {0} MiB memory limit")]
    OutOfMemory(usize),
    /// The engine itself failed.
    #[error("regex engine error: {0}")]
    Engine(String),
}

/// Limits applied to every call.
#[derive(Debug, Clone, Copy)]
pub struct JsLimits {
    /// Wall-clock deadline of one call.
    pub deadline: Duration,
    /// Memory limit of the runtime, in MiB.
    pub memory_mib: usize,
}

impl Default for JsLimits {
    fn default() -> Self {
        Self {
            deadline: Duration::from_millis(500),
            memory_mib: 64,
        }
    }
}

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

enum Job {
    Replace(ReplaceRequest, Sender<Result<ReplaceOutcome, JsError>>),
    FirstMatch(
        Vec<(String, String)>,
        Vec<String>,
        Sender<Result<Vec<i32>, JsError>>,
    ),
    Check(String, String, Sender<Result<(), JsError>>),
}

/// Handle to the JavaScript regex worker. Cheap to share; calls are serialised.
pub struct JsRegex {
    sender: Mutex<Sender<Job>>,
}

impl std::fmt::Debug for JsRegex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JsRegex")
    }
}

impl JsRegex {
    /// Starts a worker thread with the given limits.
    pub fn start(limits: JsLimits) -> Result<Self, JsError> {
        let (sender, receiver) = mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), JsError>>();
        std::thread::Builder::new()
            .name("tavo-js-regex".into())
            .spawn(move || worker(limits, receiver, ready_tx))
            .map_err(|e| JsError::Engine(format!("cannot start the regex worker thread: {e}")))?;
        ready_rx
            .recv()
            .map_err(|_| JsError::Engine("the regex worker stopped while starting".into()))??;
        Ok(Self {
            sender: Mutex::new(sender),
        })
    }

    /// The process-wide worker with default limits.
    pub fn shared() -> Result<&'static JsRegex, JsError> {
        static SHARED: OnceLock<Result<JsRegex, JsError>> = OnceLock::new();
        SHARED
            .get_or_init(|| JsRegex::start(JsLimits::default()))
            .as_ref()
            .map_err(Clone::clone)
    }

    fn send<T>(&self, make: impl FnOnce(Sender<Result<T, JsError>>) -> Job) -> Result<T, JsError> {
        let (tx, rx) = mpsc::channel();
        {
            let sender = self
                .sender
                .lock()
                .map_err(|_| JsError::Engine("the regex worker lock is poisoned".into()))?;
            sender
                .send(make(tx))
                .map_err(|_| JsError::Engine("the regex worker has stopped".into()))?;
        }
        rx.recv()
            .map_err(|_| JsError::Engine("the regex worker has stopped".into()))?
    }

    /// Applies one rule to every input.
    pub fn replace(&self, request: ReplaceRequest) -> Result<ReplaceOutcome, JsError> {
        if request.inputs.is_empty() {
            return Ok(ReplaceOutcome {
                outputs: Vec::new(),
                counts: Vec::new(),
            });
        }
        self.send(|tx| Job::Replace(request, tx))
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
        self.send(|tx| Job::FirstMatch(patterns, texts, tx))
    }

    /// Whether the pattern compiles.
    pub fn check(&self, source: &str, flags: &str) -> Result<(), JsError> {
        self.send(|tx| Job::Check(source.to_owned(), flags.to_owned(), tx))
    }
}

struct Engine {
    _runtime: Runtime,
    context: Context,
}

fn build_engine(
    limits: JsLimits,
    deadline: Arc<AtomicU64>,
    epoch: Instant,
) -> Result<Engine, JsError> {
    let runtime = Runtime::new().map_err(|e| JsError::Engine(e.to_string()))?;
    runtime.set_memory_limit(limits.memory_mib << 20);
    runtime.set_max_stack_size(1 << 20);
    runtime.set_interrupt_handler(Some(Box::new(move || {
        let limit = deadline.load(Ordering::Relaxed);
        limit != 0 && epoch.elapsed().as_nanos() as u64 > limit
    })));
    let context = Context::full(&runtime).map_err(|e| JsError::Engine(e.to_string()))?;
    context
        .with(|ctx| ctx.eval::<(), _>(HELPERS))
        .map_err(|e| JsError::Engine(format!("helper setup failed: {e}")))?;
    Ok(Engine {
        _runtime: runtime,
        context,
    })
}

fn worker(limits: JsLimits, jobs: Receiver<Job>, ready: Sender<Result<(), JsError>>) {
    let epoch = Instant::now();
    let deadline = Arc::new(AtomicU64::new(0));
    let mut engine = match build_engine(limits, deadline.clone(), epoch) {
        Ok(engine) => {
            let _ = ready.send(Ok(()));
            engine
        }
        Err(err) => {
            let _ = ready.send(Err(err));
            return;
        }
    };
    while let Ok(job) = jobs.recv() {
        let started = epoch.elapsed();
        deadline.store(
            (started + limits.deadline).as_nanos() as u64,
            Ordering::Relaxed,
        );
        let failed = match job {
            Job::Replace(request, reply) => {
                let result = run_replace(&engine.context, &request, limits, epoch, &deadline);
                let failed = matches!(result, Err(JsError::Timeout(_) | JsError::OutOfMemory(_)));
                let _ = reply.send(result);
                failed
            }
            Job::FirstMatch(patterns, texts, reply) => {
                let result = engine.context.with(|ctx| {
                    let call = || -> rquickjs::Result<Vec<i32>> {
                        let f: Function = ctx.globals().get("__tavoFirstMatch")?;
                        let patterns: Vec<Vec<String>> =
                            patterns.into_iter().map(|(s, f)| vec![s, f]).collect();
                        f.call((patterns, texts))
                    };
                    call().map_err(|e| classify(&ctx, e, limits, epoch, &deadline))
                });
                let failed = matches!(result, Err(JsError::Timeout(_) | JsError::OutOfMemory(_)));
                let _ = reply.send(result);
                failed
            }
            Job::Check(source, flags, reply) => {
                let result = engine.context.with(|ctx| {
                    let call = || -> rquickjs::Result<String> {
                        let f: Function = ctx.globals().get("__tavoCheck")?;
                        f.call((source, flags))
                    };
                    match call() {
                        Ok(message) if message.is_empty() => Ok(()),
                        Ok(message) => Err(JsError::Syntax(message)),
                        Err(e) => Err(classify(&ctx, e, limits, epoch, &deadline)),
                    }
                });
                let _ = reply.send(result);
                false
            }
        };
        deadline.store(0, Ordering::Relaxed);
        if failed {
            // A stopped call may leave garbage behind; start from a clean runtime.
            match build_engine(limits, deadline.clone(), epoch) {
                Ok(fresh) => engine = fresh,
                Err(_) => return,
            }
        }
    }
}

fn run_replace(
    context: &Context,
    request: &ReplaceRequest,
    limits: JsLimits,
    epoch: Instant,
    deadline: &AtomicU64,
) -> Result<ReplaceOutcome, JsError> {
    context.with(|ctx| {
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
            Err(e) => Err(classify(&ctx, e, limits, epoch, deadline)),
        }
    })
}

fn classify(
    ctx: &rquickjs::Ctx<'_>,
    error: rquickjs::Error,
    limits: JsLimits,
    epoch: Instant,
    deadline: &AtomicU64,
) -> JsError {
    let limit = deadline.load(Ordering::Relaxed);
    let timed_out = limit != 0 && epoch.elapsed().as_nanos() as u64 > limit;
    let message = if error.is_exception() {
        let caught = ctx.catch();
        match caught.as_exception() {
            Some(exception) => exception.message().unwrap_or_default(),
            None => caught
                .as_string()
                .and_then(|s| s.to_string().ok())
                .unwrap_or_else(|| "uncaught exception".to_owned()),
        }
    } else {
        error.to_string()
    };
    if timed_out || message.contains("interrupted") {
        JsError::Timeout(limits.deadline.as_millis() as u64)
    } else if message.contains("out of memory") || matches!(error, rquickjs::Error::Allocation) {
        JsError::OutOfMemory(limits.memory_mib)
    } else if message.contains("regular expression")
        || message.contains("invalid")
        || message.contains("unexpected")
        || message.contains("expecting")
        || message.contains("nothing to repeat")
        || message.contains("flags")
    {
        JsError::Syntax(message)
    } else {
        JsError::Engine(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
