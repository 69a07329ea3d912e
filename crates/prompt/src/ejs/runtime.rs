//! Running a compiled template on the shared JavaScript worker: the helpers a template sees
//! (Tavo §4.3–4.4), and what comes back (the output and the variable writes, in order).
//!
//! Why a fresh context per call: template code may change globals or prototypes; in its own
//! context (same runtime, so the same deadline and memory limit) nothing it does survives
//! into the next field or into the regex helpers.
//!
//! Variables cross as JSON: the chat and global objects go in, and every write comes back
//! as an operation (`set` / `del` at a dotted path) for the caller to stage. Writes are not
//! applied by copying the objects back, so a value the template never touched keeps its
//! exact JSON (a 64-bit integer stays exact).

use serde::Deserialize;
use serde_json::Value;

use crate::js::{JsEngine, JsError};
use crate::macros::VarScope;

/// The helpers, evaluated in the call's fresh context. `__tavoEjs(body, vars, consts,
/// reEscape, seed)` returns JSON: `{out, ops}` or `{error, at}`.
const PRELUDE: &str = r#"
(function () {
  'use strict';
  // Captured before any template runs: a template that replaces JSON.stringify cannot
  // forge the reply.
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const own = (o, k) => o !== null && typeof o === 'object' && Object.prototype.hasOwnProperty.call(o, k);
  const isPlain = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
  const copy = (v) => {
    if (v === undefined) return null;
    const s = stringify(v);
    return s === undefined ? null : parse(s);
  };
  // Dotted paths exactly as tavo_model::variables reads and writes them.
  function getPath(root, path) {
    const segs = String(path).split('.');
    if (!own(root, segs[0])) return undefined;
    let cur = root[segs[0]];
    for (let i = 1; i < segs.length; i++) {
      const seg = segs[i];
      if (Array.isArray(cur)) {
        if (!/^\+?\d+$/.test(seg)) return undefined;
        const n = Number(seg);
        if (n >= cur.length) return undefined;
        cur = cur[n];
      } else if (isPlain(cur)) {
        if (!own(cur, seg)) return undefined;
        cur = cur[seg];
      } else {
        return undefined;
      }
    }
    return cur;
  }
  function setPath(root, path, value) {
    const segs = String(path).split('.');
    let cur = root;
    for (let i = 0; i < segs.length - 1; i++) {
      if (!isPlain(cur[segs[i]])) cur[segs[i]] = {};
      cur = cur[segs[i]];
    }
    cur[segs[segs.length - 1]] = value;
  }
  function unsetPath(root, path) {
    const segs = String(path).split('.');
    let cur = root;
    for (let i = 0; i < segs.length - 1; i++) {
      if (!isPlain(cur[segs[i]]) || !own(cur, segs[i])) return;
      cur = cur[segs[i]];
    }
    delete cur[segs[segs.length - 1]];
  }
  // Tavo: getvar without a scope looks in chat, then global; `cache`, `message` and
  // `initial` read like chat; writes go to chat unless the scope is `global`.
  const scopeName = (s) => (s === undefined || s === null) ? null : String(s).toLowerCase();
  const writeScope = (opts) => scopeName(isPlain(opts) ? opts.scope : undefined) === 'global' ? 'global' : 'chat';
  const isOptions = (o) => isPlain(o) && (own(o, 'scope') || own(o, 'defaults'));

  function toPath(p) {
    if (Array.isArray(p)) return p.map(String);
    const out = [];
    const re = /\[\s*(?:"([^"]*)"|'([^']*)'|([^\]]*?))\s*\]|([^.[\]]+)/g;
    const s = String(p);
    let m;
    while ((m = re.exec(s)) !== null) {
      out.push(m[1] !== undefined ? m[1] : m[2] !== undefined ? m[2] : m[3] !== undefined ? m[3] : m[4]);
    }
    return out;
  }
  function cloneDeep(v) {
    if (Array.isArray(v)) return v.map(cloneDeep);
    if (v instanceof Date) return new Date(v.getTime());
    if (isPlain(v)) {
      const o = {};
      for (const k of Object.keys(v)) o[k] = cloneDeep(v[k]);
      return o;
    }
    return v;
  }
  const lodash = {
    get(obj, path, dflt) {
      let cur = obj;
      for (const k of toPath(path)) {
        if (cur === null || cur === undefined) return dflt;
        cur = cur[k];
      }
      return cur === undefined ? dflt : cur;
    },
    has(obj, path) {
      const keys = toPath(path);
      if (keys.length === 0) return false;
      let cur = obj;
      for (const k of keys) {
        if (!own(cur, k)) return false;
        cur = cur[k];
      }
      return true;
    },
    set(obj, path, value) {
      if (obj === null || typeof obj !== 'object') return obj;
      const keys = toPath(path);
      let cur = obj;
      for (let i = 0; i < keys.length - 1; i++) {
        const next = cur[keys[i]];
        if (next === null || typeof next !== 'object') cur[keys[i]] = /^\d+$/.test(keys[i + 1]) ? [] : {};
        cur = cur[keys[i]];
      }
      if (keys.length > 0) cur[keys[keys.length - 1]] = value;
      return obj;
    },
    unset(obj, path) {
      const keys = toPath(path);
      let cur = obj;
      for (let i = 0; i < keys.length - 1; i++) {
        if (cur === null || typeof cur !== 'object') return true;
        cur = cur[keys[i]];
      }
      if (cur !== null && typeof cur === 'object' && keys.length > 0) return delete cur[keys[keys.length - 1]];
      return true;
    },
    cloneDeep,
  };

  globalThis.__tavoEjs = function (body, varsJson, constsJson, reEscape, seed) {
    delete globalThis.__tavoEjs;
    const vars = parse(varsJson);
    const consts = parse(constsJson);
    const ops = [];
    // Seeded, so a prompt built twice with the same seed is the same prompt.
    let s = seed >>> 0;
    Math.random = function () {
      s = (s + 0x6D2B79F5) >>> 0;
      let t = s;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const reEsc = (t) => reEscape ? t.replace(/[\\^$.*+?()[\]{}|\/-]/g, '\\$&') : t;
    const __raw = (v) => (v === undefined || v === null) ? '' : reEsc(String(v));
    const html = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&#34;', "'": '&#39;' };
    const __esc = (v) => (v === undefined || v === null) ? '' : reEsc(String(v).replace(/[&<>"']/g, (c) => html[c]));
    function getvar(key, opts) {
      let scope = null;
      let dflt = '';
      if (arguments.length >= 2) {
        if (isOptions(opts)) {
          scope = scopeName(opts.scope);
          if (own(opts, 'defaults')) dflt = opts.defaults;
        } else {
          dflt = opts;
        }
      }
      let v;
      if (scope === null) {
        v = getPath(vars.chat, key);
        if (v === undefined || v === null) v = getPath(vars.global, key);
      } else {
        v = getPath(scope === 'global' ? vars.global : vars.chat, key);
      }
      return (v === undefined || v === null) ? dflt : copy(v);
    }
    function setvar(key, value, opts) {
      const scope = writeScope(opts);
      const v = copy(value);
      setPath(vars[scope], key, v);
      ops.push(['set', scope, String(key), copy(v)]);
    }
    function step(name, sign, key, n, opts) {
      if (isPlain(n)) { opts = n; n = undefined; }
      const by = n === undefined ? 1 : Number(n);
      if (!Number.isFinite(by)) throw new TypeError(name + '("' + key + '"): the step ' + String(n) + ' is not a number');
      const cur = isPlain(opts) && own(opts, 'scope') ? getvar(key, { scope: opts.scope }) : getvar(key);
      const base = (cur === '' || cur === null) ? 0 : Number(cur);
      if (!Number.isFinite(base)) throw new TypeError(name + '("' + key + '"): the variable holds ' + stringify(cur) + ', not a number');
      const next = base + sign * by;
      setvar(key, next, opts);
      return next;
    }
    const incvar = (key, n, opts) => step('incvar', 1, key, n, opts);
    const decvar = (key, n, opts) => step('decvar', -1, key, n, opts);
    function delvar(key, opts) {
      const scope = writeScope(opts);
      unsetPath(vars[scope], key);
      ops.push(['del', scope, String(key)]);
    }
    const pos = { at: -1 };
    let fn;
    try {
      fn = new Function('__pos', '__raw', '__esc', 'getvar', 'setvar', 'incvar', 'decvar', 'delvar', '_',
        'charName', 'userName', 'lastUserMessage', 'lastCharMessage', 'characterId', body);
    } catch (e) {
      return stringify({ error: String(e && e.name ? e.name + ': ' + e.message : e), at: -1 });
    }
    try {
      const out = fn(pos, __raw, __esc, getvar, setvar, incvar, decvar, delvar, lodash,
        consts.charName, consts.userName, consts.lastUserMessage, consts.lastCharMessage, consts.characterId);
      return stringify({ out: String(out), ops });
    } catch (e) {
      return stringify({ error: String(e && e.name ? e.name + ': ' + e.message : e), at: pos.at });
    }
  };
})();
"#;

/// One variable write of a template, in the order it ran.
#[derive(Debug, Clone, PartialEq)]
pub enum VarOp {
    /// `setvar`, `incvar`, `decvar`: the value written at a dotted path.
    Set {
        /// Chat or global.
        scope: VarScope,
        /// Dotted path.
        path: String,
        /// The value as written.
        value: Value,
    },
    /// `delvar`.
    Delete {
        /// Chat or global.
        scope: VarScope,
        /// Dotted path.
        path: String,
    },
}

/// What one call needs.
#[derive(Debug, Clone)]
pub struct CallInput {
    /// The compiled function body ([`super::parse::compile`]).
    pub body: String,
    /// `{"chat": {…}, "global": {…}}`.
    pub vars_json: String,
    /// The injected constants as a JSON object.
    pub consts_json: String,
    /// Regex-escape every output (a `findRegex` rendered with `substitution: escaped`).
    pub regex_escape: bool,
    /// Seed of `Math.random`.
    pub seed: u32,
}

/// What a call gave.
#[derive(Debug, Clone, PartialEq)]
pub enum CallOutcome {
    /// The template ran.
    Rendered {
        /// Its output.
        text: String,
        /// Its variable writes.
        ops: Vec<VarOp>,
    },
    /// The template threw (or did not compile).
    Failed {
        /// The JavaScript error.
        message: String,
        /// Byte offset of the tag that was running, when known.
        tag: Option<usize>,
    },
}

#[derive(Deserialize)]
struct Reply {
    out: Option<String>,
    #[serde(default)]
    ops: Vec<Vec<Value>>,
    error: Option<String>,
    at: Option<i64>,
}

/// Runs one call on the worker thread (the closure given to [`crate::js::JsWorker::run`]).
pub fn run(engine: &mut JsEngine, input: CallInput) -> Result<CallOutcome, JsError> {
    let context = engine.fresh_context()?;
    let raw = context.with(|ctx| {
        let call = || -> rquickjs::Result<String> {
            ctx.eval::<(), _>(PRELUDE)?;
            let f: rquickjs::Function = ctx.globals().get("__tavoEjs")?;
            f.call((
                input.body.as_str(),
                input.vars_json.as_str(),
                input.consts_json.as_str(),
                input.regex_escape,
                input.seed,
            ))
        };
        call().map_err(|e| engine.classify(&ctx, e))
    });
    drop(context);
    let raw = match raw {
        Ok(raw) => raw,
        Err(JsError::Syntax(message) | JsError::Engine(message)) => {
            return Ok(CallOutcome::Failed { message, tag: None });
        }
        Err(limit) => return Err(limit),
    };
    let reply: Reply = serde_json::from_str(&raw)
        .map_err(|e| JsError::Engine(format!("the template runner answered badly: {e}")))?;
    if let Some(message) = reply.error {
        // QuickJS throws `null` when it cannot even allocate the error object.
        if message.contains("out of memory") || message == "null" {
            return Err(JsError::OutOfMemory(engine.limits().memory_mib));
        }
        if engine.timed_out() {
            return Err(JsError::Timeout(engine.limits().deadline.as_millis() as u64));
        }
        let tag = reply.at.and_then(|at| usize::try_from(at).ok());
        return Ok(CallOutcome::Failed { message, tag });
    }
    let ops = reply.ops.into_iter().filter_map(op_of).collect();
    Ok(CallOutcome::Rendered {
        text: reply.out.unwrap_or_default(),
        ops,
    })
}

fn op_of(raw: Vec<Value>) -> Option<VarOp> {
    let mut items = raw.into_iter();
    let kind = items.next()?;
    let scope = match items.next()?.as_str()? {
        "global" => VarScope::Global,
        _ => VarScope::Chat,
    };
    let path = items.next()?.as_str()?.to_owned();
    match kind.as_str()? {
        "set" => Some(VarOp::Set {
            scope,
            path,
            value: items.next().unwrap_or(Value::Null),
        }),
        "del" => Some(VarOp::Delete { scope, path }),
        _ => None,
    }
}
