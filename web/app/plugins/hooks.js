// The plugin runtime's hooks and actions (Tavo §6.7–6.8), on the page's side. Each enabled
// plugin with an `entry` runs it in a hidden sandboxed frame (PluginEntryFrame); the frame
// tells this module which handlers it registered (`tavo.plugin.on`), and this module asks it
// to run them, one at a time, each under a 5-second timeout. The frame is untrusted: a handler
// that throws, answers something that is not a string, or does not answer in time is rolled
// back and the next one runs (fail-open); one plugin never holds up another's notifications.
//
// `runHook(type, payload, opts)` runs one hook over every plugin in plugin order and, within a
// plugin, in registration order; it is the one seam for every hook that rewrites or cancels —
// `input:beforeSend` here, and `generation:prepare` / `generation:success` when the server asks
// the page for them. `notify(type, payload)` delivers a notification.

import { dropPlugin, onToolMessage, setPluginTools } from './functionTools.js';

/** Each handler's time to answer. */
export const HOOK_TIMEOUT_MS = 5000;

/** Notifications also delivered to handlers of another name (Tavo's compatibility alias). */
const ALIASES = /** @type {Record<string, string[]>} */ ({ 'chat:updated': ['chat:changed'] });

/**
 * One running entry frame.
 * @typedef {{pluginId: string, name: string, channel: {post: (m: any) => void} | null, handlers: {hid: number, key: string}[],
 *   ready: boolean, opened: boolean, queue: Promise<void>, calls: Map<number, (r: any) => void>, seq: number,
 *   chatId: number, chat: () => any}} Entry
 */

/** Running entries by plugin id, in plugin order (the order of GET /api/plugins/runtime). @type {Map<string, Entry>} */
export const entries = new Map();

/** What the log of hook failures shows (the app logs; a test may read it). @type {string[]} */
export const hookLog = [];
/** @param {string} text */
function log(text) {
  hookLog.push(text);
  if (hookLog.length > 200) hookLog.splice(0, hookLog.length - 200);
  console.warn(`plugin: ${text}`);
}

/**
 * A frame started: its entry runs; messages of the frame go to `onPluginMessage`.
 * @param {{pluginId: string, name: string, chatId: number, chat: () => any}} p
 * @returns {Entry}
 */
export function attachEntry(p) {
  const e = /** @type {Entry} */ ({
    pluginId: p.pluginId, name: p.name, channel: null, handlers: [], ready: false, opened: false,
    queue: Promise.resolve(), calls: new Map(), seq: 0, chatId: p.chatId, chat: p.chat,
  });
  entries.delete(p.pluginId);
  entries.set(p.pluginId, e);
  return e;
}

/**
 * The plugins' running HTML fragments (`/chat`, `/messages` mounts) that registered handlers
 * with `tavo.plugin.on` (or `onInputAction` / `onSidebarAction`): they get the chat's
 * notifications and may answer the plugin's actions, as its entry does; the generation and
 * input hooks stay the entry's (Tavo §6.8: fragments cannot register them).
 * @type {Set<Entry>}
 */
export const fragments = new Set();
/** Hooks only an entry registers. */
const ENTRY_ONLY = /^(generation|input):/;

/**
 * A fragment frame started. Its handlers count from its first `on`.
 * @param {{pluginId: string, name: string, chatId: number, chat: () => any}} p
 * @returns {Entry}
 */
export function attachFragment(p) {
  const e = /** @type {Entry} */ ({
    pluginId: p.pluginId, name: p.name, channel: null, handlers: [], ready: true, opened: true,
    queue: Promise.resolve(), calls: new Map(), seq: 0, chatId: p.chatId, chat: p.chat,
  });
  fragments.add(e);
  return e;
}
/** A fragment frame went: its handlers with it, its open calls answered. @param {Entry} e */
export function detachFragment(e) {
  fragments.delete(e);
  for (const done of e.calls.values()) done({ ok: false, error: 'the fragment went away' });
  e.calls.clear();
}

/** Puts the entries in the runtime list's order (plugin order). @param {string[]} order */
export function orderEntries(order) {
  const all = [...entries.values()];
  all.sort((a, b) => order.indexOf(a.pluginId) - order.indexOf(b.pluginId));
  entries.clear();
  for (const e of all) entries.set(e.pluginId, e);
}

/**
 * The frame goes (the chat closed, the plugin was disabled, advanced rendering went off):
 * `chat:closed` first, best-effort, then the frame is removed.
 * @param {Entry} e @param {() => void} remove
 */
export function detachEntry(e, remove) {
  if (entries.get(e.pluginId) === e) {
    entries.delete(e.pluginId);
    dropPlugin(e.pluginId);
  }
  if (!e.ready) return remove();
  const closed = deliver(e, 'chat:closed', chatPayload(e, 'chat:closed'));
  Promise.race([closed, new Promise((r) => setTimeout(r, 1000))]).finally(() => {
    for (const done of e.calls.values()) done({ ok: false, error: 'the plugin stopped' });
    e.calls.clear();
    remove();
  });
}

/** A message of an entry frame. @param {Entry} e @param {any} d */
export function onPluginMessage(e, d) {
  if (!d || typeof d.what !== 'string') return;
  switch (d.what) {
    case 'on':
      if (fragments.has(e) && typeof d.key === 'string' && ENTRY_ONLY.test(d.key)) break;
      if (typeof d.key === 'string' && Number.isInteger(d.hid) && !e.handlers.some((h) => h.hid === d.hid)) {
        e.handlers.push({ hid: d.hid, key: d.key });
        // Registered after the chat opened: this handler gets its one catch-up `chat:opened`.
        if (d.key === 'chat:opened' && e.opened) enqueue(e, () => call(e, d.hid, chatPayload(e, 'chat:opened'), false).then(report(e, 'chat:opened')));
      }
      break;
    case 'off':
      e.handlers = e.handlers.filter((h) => h.hid !== d.hid);
      break;
    case 'ready':
      if (!e.ready) {
        e.ready = true;
        e.opened = true;
        deliver(e, 'chat:opened', chatPayload(e, 'chat:opened'));
      }
      break;
    case 'result': {
      const done = e.calls.get(d.id);
      if (done) {
        e.calls.delete(d.id);
        done(d);
      }
      break;
    }
    case 'tools':
      if (e.channel && !fragments.has(e)) setPluginTools(e.pluginId, e.channel, d.tools, d.refresh);
      break;
    case 'tool-started':
    case 'tool-result':
      onToolMessage(d);
      break;
    case 'failed':
      log(`${e.pluginId}: ${String(d.key)} failed: ${String(d.error).slice(0, 300)}`);
      actionFailed(e, String(d.key));
      break;
  }
}

/** @type {(e: Entry, key: string) => void} */
let actionFailed = () => {};
/** What the app does when an action's handler fails after it started. @param {(e: Entry, key: string) => void} f */
export function onActionFailure(f) {
  actionFailed = f;
}

/**
 * Asks the frame to run one handler; answers its result, or a failure after the timeout.
 * @param {Entry} e @param {number} hid @param {any} event @param {boolean} cancellable
 * @returns {Promise<{ok: boolean, text?: any, cancelled?: boolean, reason?: string|null, error?: string, missing?: boolean, timedOut?: boolean}>}
 */
function call(e, hid, event, cancellable) {
  return new Promise((resolve) => {
    if (!e.channel) return resolve({ ok: false, error: 'the plugin is not running' });
    const id = ++e.seq;
    const timer = setTimeout(() => {
      e.calls.delete(id);
      resolve({ ok: false, timedOut: true, error: `no answer in ${HOOK_TIMEOUT_MS / 1000} s` });
    }, HOOK_TIMEOUT_MS);
    e.calls.set(id, (r) => {
      clearTimeout(timer);
      resolve(r);
    });
    e.channel.post({ type: 'plugin-invoke', id, hid, event, cancellable });
  });
}

/** @param {Entry} e @param {string} type */
const report = (e, type) => (/** @type {any} */ r) => {
  if (!r.ok) log(`${e.pluginId}: a ${type} handler ${r.timedOut ? 'timed out' : 'failed'}: ${String(r.error || '').slice(0, 300)}`);
};

/** Runs `job` after the plugin's earlier notifications. @param {Entry} e @param {() => Promise<any>} job */
function enqueue(e, job) {
  const next = e.queue.then(job).catch(() => {});
  e.queue = next;
  return next;
}

/** The handlers of one hook type in registration order (with aliases). @param {Entry} e @param {string} type */
function handlersOf(e, type) {
  const keys = [type, ...(ALIASES[type] || [])];
  return e.handlers.filter((h) => keys.includes(h.key));
}

/** A notification to one plugin: its handlers one after the other, each awaited (timeout). @param {Entry} e @param {string} type @param {any} payload */
function deliver(e, type, payload) {
  return enqueue(e, async () => {
    for (const h of handlersOf(e, type)) await call(e, h.hid, payload, false).then(report(e, type));
  });
}

/** @param {Entry} e @param {string} type */
function chatPayload(e, type) {
  return { type, pluginId: e.pluginId, at: new Date().toISOString(), chatId: e.chatId, chat: e.chat() };
}

/**
 * A notification to every running plugin (chat:* and message:* events, input:afterSend,
 * generation:error / generation:cancelled). `payload` gets `type`, `pluginId` and `at`.
 * @param {string} type @param {Record<string, any>} payload
 */
export function notify(type, payload) {
  for (const e of [...entries.values(), ...fragments]) {
    if (!e.ready || !handlersOf(e, type).length) continue;
    deliver(e, type, { ...payload, type, pluginId: e.pluginId, at: new Date().toISOString() });
  }
}

/**
 * Runs a hook that may rewrite `text` (and, when `cancellable`, cancel) over every running
 * plugin, serially. Each handler works on a private copy: a handler that throws, times out or
 * leaves a text that is not a string (or an empty one, with `nonEmpty`) is rolled back.
 * @param {string} type
 * @param {Record<string, any> & {text: string}} payload
 * @param {{cancellable?: boolean, nonEmpty?: boolean}} [opts]
 * @returns {Promise<{text: string, cancelled: boolean, cancelledBy?: string, reason?: string|null}>}
 */
export async function runHook(type, payload, opts = {}) {
  let text = payload.text;
  for (const e of [...entries.values()]) {
    if (!e.ready) continue;
    for (const h of handlersOf(e, type)) {
      const event = { ...payload, text, type, pluginId: e.pluginId, at: new Date().toISOString() };
      const r = await call(e, h.hid, event, !!opts.cancellable);
      if (!r.ok) {
        report(e, type)(r);
        continue;
      }
      if (opts.cancellable && r.cancelled) return { text, cancelled: true, cancelledBy: e.pluginId, reason: r.reason ?? null };
      if (typeof r.text !== 'string') {
        log(`${e.pluginId}: a ${type} handler left a text that is not a string; its change is rolled back`);
        continue;
      }
      if (opts.nonEmpty && !r.text.trim()) {
        log(`${e.pluginId}: a ${type} handler left an empty text; its change is discarded`);
        continue;
      }
      text = r.text;
    }
  }
  return { text, cancelled: false };
}

/** Whether any plugin's entry is running (hooks are skipped otherwise). */
export const running = () => [...entries.values()].some((e) => e.ready) || fragments.size > 0;

/**
 * Runs an input action or sidebar action of one plugin (`inputActions:<id>`, `sidebar:<id>`).
 * @param {string} pluginId @param {string} key
 * @returns {Promise<'ok'|'missing'|'failed'|'not-running'>}
 */
export async function dispatchAction(pluginId, key) {
  // The entry first, then the plugin's fragments that registered this action.
  const targets = [entries.get(pluginId), ...[...fragments].filter((f) => f.pluginId === pluginId && f.handlers.some((h) => h.key === key))]
    .filter((e) => e && e.ready && e.channel);
  if (!targets.length) return 'not-running';
  let answer = /** @type {'ok'|'missing'|'failed'|'not-running'} */ ('missing');
  for (const e of targets) {
    answer = await dispatchTo(/** @type {Entry} */ (e), key);
    if (answer !== 'missing') return answer;
  }
  return answer;
}

/** @param {Entry} e @param {string} key @returns {Promise<'ok'|'missing'|'failed'>} */
function dispatchTo(e, key) {
  const pluginId = e.pluginId;
  const ch = /** @type {{post: (m: any) => void}} */ (e.channel);
  return new Promise((resolve) => {
    const id = ++e.seq;
    const timer = setTimeout(() => {
      e.calls.delete(id);
      resolve('failed');
    }, HOOK_TIMEOUT_MS);
    e.calls.set(id, (r) => {
      clearTimeout(timer);
      if (r.ok) resolve('ok');
      else if (r.missing) resolve('missing');
      else {
        log(`${pluginId}: ${key} failed: ${String(r.error || '').slice(0, 300)}`);
        resolve('failed');
      }
    });
    ch.post({ type: 'plugin-dispatch', id, key });
  });
}

/** New effective config or locale for a plugin's frames. @param {string} pluginId @param {any} msg */
export function pushToEntry(pluginId, msg) {
  const e = entries.get(pluginId);
  if (e && e.channel) e.channel.post(msg);
}
