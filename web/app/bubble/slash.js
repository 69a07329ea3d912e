// `triggerSlash(cmd)` (seed 002 "兼容性"): the SillyTavern (STscript) slash commands scripts
// migrated from SillyTavern call most, run by the app for a bubble, each mapped onto the same
// TavoJS methods the bridge gives the frame (so the operation layer, the soft returns and the
// one question per card apply unchanged). A command not in `COMMANDS` is refused with its
// name and the list, never ignored.
//
// Syntax (STscript's, the subset that maps): commands separated by `|` (a `\|` is a literal
// bar); `name=value` named arguments first (`value` may be "quoted"); the rest is the unnamed
// argument. The previous command's result is the pipe: `{{pipe}}` stands for it, and a command
// given no unnamed argument takes it. `{{getvar::x}}` and `{{getglobalvar::x}}` read
// variables. The result of the last command is what `triggerSlash` resolves to (a string).

/** Everything a command may use. @typedef {{invoke: (method: string, args: any[]) => Promise<any>, vars: () => Promise<{chat: any, global: any}>, trigger: () => Promise<void>}} SlashEnv */

/** The longest command line, and the most commands in one pipe. */
export const MAX_SLASH = 20000;
export const MAX_PIPE = 50;

/** A variable's value as STscript prints it. @param {any} v */
const text = (v) => (v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v));

/** STscript values are text; numbers, booleans and JSON objects/arrays are kept as such. @param {string} s */
function valueOf(s) {
  const t = s.trim();
  if (/^-?\d+(\.\d+)?$/.test(t)) return Number(t);
  if (t === 'true' || t === 'false') return t === 'true';
  if (/^[[{]/.test(t)) {
    try {
      return JSON.parse(t);
    } catch {
      /* text */
    }
  }
  return s;
}

/** @param {string} name */
function varName(name) {
  const n = String(name || '').trim();
  if (!n) throw new Error('a variable command needs a name (key=NAME or the unnamed argument)');
  return n;
}

/**
 * A variable command of one scope.
 * @param {'chat'|'global'} scope
 * @param {'set'|'get'|'add'|'inc'|'dec'|'flush'} what
 * @returns {(env: SlashEnv, a: Args) => Promise<string>}
 */
function variable(scope, what) {
  return async (env, a) => {
    if (what === 'set') {
      const name = varName(a.named.key ?? a.named.name);
      const v = valueOf(a.unnamed);
      await env.invoke('variable.set', [{ name, value: v, scope }]);
      return text(v);
    }
    const name = varName(a.named.key ?? a.named.name ?? a.unnamed);
    const current = pathGet((await env.vars())[scope], name);
    if (what === 'get') return text(current);
    if (what === 'flush') {
      await env.invoke('variable.unset', [{ name, scope }]);
      return '';
    }
    /** @type {any} */
    let next;
    if (what === 'inc' || what === 'dec') next = (Number(current) || 0) + (what === 'inc' ? 1 : -1);
    else {
      const add = valueOf(a.unnamed);
      if (Array.isArray(current)) next = [...current, add];
      else if ((typeof current === 'number' || current == null) && typeof add === 'number') next = (current || 0) + add;
      else next = text(current) + text(add);
    }
    await env.invoke('variable.set', [{ name, value: next, scope }]);
    return text(next);
  };
}

/** A dotted path in an object (STscript's `key=a.b`). @param {any} root @param {string} path */
function pathGet(root, path) {
  /** @type {any} */
  let cur = root;
  for (const seg of path.split('.')) {
    if (cur === null || typeof cur !== 'object' || !Object.prototype.hasOwnProperty.call(cur, seg)) return undefined;
    cur = cur[seg];
  }
  return cur;
}

/** @typedef {{named: Record<string, string>, unnamed: string}} Args */

/** The supported commands: name → {named arguments it reads, run}. @type {Map<string, {named: string[], run: (env: SlashEnv, a: Args) => Promise<string>}>} */
export const COMMANDS = new Map();
/** @param {string[]} names @param {string[]} named @param {(env: SlashEnv, a: Args) => Promise<string>} run */
const cmd = (names, named, run) => names.forEach((n) => COMMANDS.set(n, { named, run }));

cmd(['echo'], ['severity', 'title', 'timeout'], async (env, a) => {
  await env.invoke('utils.toast', [a.unnamed]);
  return a.unnamed;
});
cmd(['pass', 'return'], [], async (_env, a) => a.unnamed);
cmd(['send'], ['at', 'name', 'compact', 'return'], async (env, a) => {
  if (!a.unnamed.trim()) throw new Error('/send needs the text to send');
  const id = await env.invoke('message.append', [{ role: 'user', content: a.unnamed }]);
  if (id == null) throw new Error('/send: the message could not be added');
  return '';
});
cmd(['sendas'], ['name', 'avatar', 'compact', 'at', 'return'], async (env, a) => {
  const name = String(a.named.name || '').trim();
  if (!name) throw new Error('/sendas needs name=CHARACTER');
  if (!a.unnamed.trim()) throw new Error('/sendas needs the text to send');
  const chat = await env.invoke('chat.current', []);
  const member = (chat?.characters || []).find((/** @type {any} */ c) => String(c.name).toLowerCase() === name.toLowerCase());
  if (!member) throw new Error(`/sendas: “${name}” is not a character of this chat`);
  const id = await env.invoke('message.append', [{ role: 'assistant', characterId: member.id, content: a.unnamed }]);
  if (id == null) throw new Error('/sendas: the message could not be added');
  return '';
});
cmd(['sys', 'nar'], ['at', 'compact', 'return'], async (env, a) => {
  if (!a.unnamed.trim()) throw new Error('/sys needs the text of the narrator message');
  const id = await env.invoke('message.append', [{ role: 'system', content: a.unnamed }]);
  if (id == null) throw new Error('/sys: the message could not be added');
  return '';
});
cmd(['trigger'], ['await'], async (env) => {
  await env.trigger();
  return '';
});
cmd(['gen'], ['lock', 'name', 'length', 'as', 'trim'], async (env, a) => env.invoke('generate', [a.unnamed, { context: true }]));
cmd(['genraw'], ['lock', 'instruct', 'stop', 'as', 'system', 'length', 'trim', 'prefill'], async (env, a) => env.invoke('generate', [a.unnamed, { context: false }]));
cmd(['setinput'], [], async (env, a) => {
  await env.invoke('input.set', [a.unnamed]);
  return a.unnamed;
});
for (const [prefix, scope] of /** @type {const} */ ([['', 'chat'], ['global', 'global']])) {
  cmd([`set${prefix}var`], ['key', 'index', 'as'], variable(scope, 'set'));
  cmd([`get${prefix}var`], ['key', 'index'], variable(scope, 'get'));
  cmd([`add${prefix}var`], ['key'], variable(scope, 'add'));
  cmd([`inc${prefix}var`], [], variable(scope, 'inc'));
  cmd([`dec${prefix}var`], [], variable(scope, 'dec'));
  cmd([`flush${prefix}var`], [], variable(scope, 'flush'));
}

/** The command list for error messages and the README. */
export const supported = () => [...COMMANDS.keys()].map((n) => '/' + n).join(', ');

/** Splits a command line at top-level bars (not in quotes, not `\|`). @param {string} line */
export function splitPipe(line) {
  /** @type {string[]} */
  const parts = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (ch === '\\' && line[i + 1] === '|') {
      cur += '|';
      i++;
    } else if (ch === '"') {
      quoted = !quoted;
      cur += ch;
    } else if (ch === '|' && !quoted) {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  parts.push(cur);
  return parts.map((p) => p.trim()).filter((p) => p);
}

/** `/name key=value … rest` → name, named arguments the command knows, unnamed text. @param {string} part */
export function parseCommand(part) {
  const m = /^\/([A-Za-z][\w-]*)(?:\s+|$)/.exec(part);
  if (!m) throw new Error(`triggerSlash: “${part.slice(0, 60)}” is not a slash command (it must start with /)`);
  const name = m[1].toLowerCase();
  const spec = COMMANDS.get(name);
  if (!spec) throw new Error(`triggerSlash: /${name} is not supported in Tavo; supported: ${supported()}`);
  let rest = part.slice(m[0].length);
  /** @type {Record<string, string>} */
  const named = Object.create(null);
  for (;;) {
    const a = /^([A-Za-z_][\w-]*)=("(?:[^"\\]|\\.)*"|\S*)\s*/.exec(rest);
    if (!a || !spec.named.includes(a[1])) break;
    named[a[1]] = a[2].startsWith('"') ? a[2].slice(1, -1).replace(/\\(.)/g, '$1') : a[2];
    rest = rest.slice(a[0].length);
  }
  let unnamed = rest.trim();
  if (/^"(?:[^"\\]|\\.)*"$/.test(unnamed)) unnamed = unnamed.slice(1, -1).replace(/\\(.)/g, '$1');
  return { name, spec, named, unnamed };
}

/** `{{pipe}}`, `{{getvar::x}}`, `{{getglobalvar::x}}` in one argument. @param {string} s @param {string} pipe @param {SlashEnv} env */
async function substitute(s, pipe, env) {
  let out = s.replace(/\{\{pipe\}\}/gi, () => pipe);
  if (/\{\{get(global)?var::/i.test(out)) {
    const v = await env.vars();
    out = out.replace(/\{\{get(global)?var::([^}]+)\}\}/gi, (_all, g, name) => text(pathGet(g ? v.global : v.chat, String(name).trim())));
  }
  return out;
}

/**
 * Runs a command line; resolves to the last command's result.
 * @param {any} line @param {SlashEnv} env
 */
export async function runSlash(line, env) {
  if (typeof line !== 'string' || !line.trim()) throw new Error('triggerSlash needs a command (a string such as "/echo hi")');
  if (line.length > MAX_SLASH) throw new Error(`triggerSlash: the command line is longer than ${MAX_SLASH} characters`);
  const parts = splitPipe(line.trim());
  if (parts.length > MAX_PIPE) throw new Error(`triggerSlash: at most ${MAX_PIPE} commands in one line`);
  // Every command is checked before the first one runs: an unknown one changes nothing.
  const parsed = parts.map(parseCommand);
  let pipe = '';
  for (const p of parsed) {
    const uses = /\{\{pipe\}\}/i.test(p.unnamed);
    /** @type {Record<string, string>} */
    const named = Object.create(null);
    for (const [k, v] of Object.entries(p.named)) named[k] = await substitute(v, pipe, env);
    let unnamed = await substitute(p.unnamed, pipe, env);
    if (!unnamed && !uses) unnamed = pipe;
    pipe = text(await p.spec.run(env, { named, unnamed }));
  }
  return pipe;
}
