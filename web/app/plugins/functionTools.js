// Function tools registered by plugin code (seed 001's registerFunctionTool), on the page's
// side: each plugin's entry frame reports the tools it registered — with `shouldRegister`
// already evaluated there — and runs their `action` when the engine calls one. This module
// keeps the union, which pageLink.js publishes, and routes calls to the frame that owns the
// tool. The frames are untrusted: a call that gets no answer in time fails (the server's
// time-out, tools.pageCallTimeoutSeconds, sent with the call; its own error reaches the model
// first, the page's timer only frees what the frame never answered).

import { signal } from '@preact/signals';

/** The server's default wait for a page tool (tools.pageCallTimeoutSeconds), when a call does not say. */
export const PAGE_TOOL_TIMEOUT_MS = 120_000;

/** The page's timer runs this much longer than the server's, which speaks first. */
const PAGE_TIMER_SLACK_MS = 5_000;

/** Longest time-out the settings allow (tools.pageCallTimeoutSeconds ≤ 3600). */
const MAX_TIMEOUT_MS = 3_600_000;

/**
 * @typedef {{name: string, displayName?: string, description: string, parameters: any, stealth?: boolean}} ToolSpec
 * @typedef {{post: (m: any) => void}} Port
 */

/** Tools by plugin id: what each frame registered (and whose shouldRegister is true). @type {Map<string, {port: Port, tools: ToolSpec[]}>} */
const byPlugin = new Map();
/** Calls waiting for a frame's answer, with the plugin whose frame runs them. @type {Map<number, {resolve: (r: any) => void, toast: (t: string) => void, pluginId: string, name: string}>} */
const waiting = new Map();
let seq = 0;
let toolCalling = false;
/** @type {Set<() => void>} */
const listeners = new Set();

/** What the chat's side panel lists: each plugin's offered tools, in plugin order. @type {import('@preact/signals').Signal<{pluginId: string, tools: ToolSpec[]}[]>} */
export const offeredTools = signal(/** @type {{pluginId: string, tools: ToolSpec[]}[]} */ ([]));

const changed = () => {
  offeredTools.value = [...byPlugin.entries()].map(([pluginId, e]) => ({ pluginId, tools: e.tools }));
  listeners.forEach((f) => f());
};

/** @param {() => void} f @returns {() => void} */
export function onToolsChanged(f) {
  listeners.add(f);
  return () => listeners.delete(f);
}

/** The chat whose page link has said whether tools are on (null: not known yet). @type {number|null} */
let knownFor = null;
/** Entry frames waiting to start until it is known. @type {Set<() => void>} */
const knownWaiters = new Set();

/**
 * Whether the server will offer tools (`tools.enabled`): what isToolCallingSupported() says.
 * The page link's first event gives it for `chatId`; frames waiting for it start then.
 * @param {boolean} on @param {number} chatId
 */
export function setToolCalling(on, chatId) {
  toolCalling = on;
  knownFor = chatId;
  for (const { port } of byPlugin.values()) port.post({ type: 'plugin-tool-calling', value: on });
  for (const f of [...knownWaiters]) f();
}

/** The page link of the chat went away: what it said no longer holds for the next chat. */
export function forgetToolCalling() {
  knownFor = null;
}

/**
 * Resolves once the page link of `chatId` has said whether tools are on, so an entry frame's
 * isToolCallingSupported() is right from its first read (an entry that registers tools
 * typically asks it at the top). If the link cannot say within `ms` (the server is down, the
 * stream keeps failing), it resolves anyway and the frame starts with the last known value;
 * the link's answer reaches the frame when it comes.
 * @param {number} chatId @param {number} [ms]
 * @returns {Promise<void>}
 */
export function toolCallingKnown(chatId, ms = 5000) {
  if (knownFor === chatId) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      if (knownFor !== chatId) return;
      finish();
    };
    const finish = () => {
      clearTimeout(timer);
      knownWaiters.delete(done);
      resolve();
    };
    const timer = setTimeout(finish, ms);
    knownWaiters.add(done);
  });
}

/** @returns {boolean} */
export const isToolCalling = () => toolCalling;

/** A frame's current registrations; `refresh` is the number of the refresh it answers.
 * @param {string} pluginId @param {Port} port @param {any} tools @param {any} [refresh] */
export function setPluginTools(pluginId, port, tools, refresh) {
  const list = Array.isArray(tools) ? tools.filter((t) => t && typeof t.name === 'string').map((t) => ({
    name: t.name, displayName: typeof t.displayName === 'string' ? t.displayName : undefined,
    description: String(t.description ?? ''), parameters: t.parameters ?? { type: 'object' }, stealth: !!t.stealth,
  })) : [];
  if (!byPlugin.has(pluginId)) port.post({ type: 'plugin-tool-calling', value: toolCalling });
  byPlugin.set(pluginId, { port, tools: list });
  changed();
  if (Number.isInteger(refresh)) answered(pluginId, refresh);
}

/** Refreshes under way: number → the plugins still to answer and the waiter. @type {Map<number, {left: Set<string>, done: () => void}>} */
const refreshing = new Map();
let refreshSeq = 0;
/** The longest a generation waits for the pages' answers (a frame stuck in a loop). */
export const REFRESH_MS = 2000;

/** @param {string} pluginId @param {number} n */
function answered(pluginId, n) {
  const r = refreshing.get(n);
  if (!r) return;
  r.left.delete(pluginId);
  if (!r.left.size) r.done();
}

/** A frame went away: its tools go, and its open calls fail. @param {string} pluginId */
export function dropPlugin(pluginId) {
  if (byPlugin.delete(pluginId)) changed();
  // Its open calls fail now, with the reason, instead of waiting out their time.
  for (const [id, w] of [...waiting]) {
    if (w.pluginId !== pluginId) continue;
    waiting.delete(id);
    w.resolve({ ok: false, error: `${w.name} stopped: the plugin ${pluginId} that ran it went away (disabled, uninstalled, or its chat closed)` });
  }
  for (const n of [...refreshing.keys()]) answered(pluginId, n);
}

/** Every registered tool, later plugins winning a name (as a second registerFunctionTool would). @returns {ToolSpec[]} */
export function toolList() {
  const out = new Map();
  for (const { tools } of byPlugin.values()) for (const t of tools) out.set(t.name, t);
  return [...out.values()];
}

/**
 * Asks every frame to evaluate shouldRegister again and waits for each one's answer (its
 * `tools` message naming this refresh), so the generation offers what the pages say now — a
 * busy frame is waited for, up to REFRESH_MS; a frame that went away counts as answered.
 */
export async function refreshTools() {
  if (!byPlugin.size) return;
  const n = ++refreshSeq;
  await new Promise((resolve) => {
    const timer = setTimeout(() => finish(), REFRESH_MS);
    const finish = () => {
      clearTimeout(timer);
      refreshing.delete(n);
      resolve(null);
    };
    refreshing.set(n, { left: new Set(byPlugin.keys()), done: finish });
    for (const { port } of byPlugin.values()) port.post({ type: 'plugin-tools-refresh', refresh: n });
  });
}

/**
 * Runs a tool in the frame that registered it.
 * @param {string} name @param {any} args @param {(text: string) => void} showToast
 * @param {number} [timeoutMs] how long the server waits for the answer
 * @returns {Promise<{ok: true, result: string} | {ok: false, error: string}>}
 */
export function callTool(name, args, showToast, timeoutMs = PAGE_TOOL_TIMEOUT_MS) {
  const wait = Math.min(Math.max(Number(timeoutMs) || PAGE_TOOL_TIMEOUT_MS, 1000), MAX_TIMEOUT_MS);
  let owner = null;
  let ownerId = '';
  for (const [pluginId, entry] of byPlugin) {
    if (entry.tools.some((t) => t.name === name)) {
      owner = entry;
      ownerId = pluginId;
    }
  }
  if (!owner) return Promise.resolve({ ok: false, error: `no plugin on this page registers ${name} any more` });
  const port = owner.port;
  return new Promise((resolve) => {
    const id = ++seq;
    const timer = setTimeout(() => {
      waiting.delete(id);
      resolve({ ok: false, error: `${name} did not answer in ${Math.round(wait / 1000)} s` });
    }, wait + PAGE_TIMER_SLACK_MS);
    waiting.set(id, {
      resolve: (r) => {
        clearTimeout(timer);
        resolve(r);
      },
      toast: showToast,
      pluginId: ownerId,
      name,
    });
    port.post({ type: 'plugin-tool-call', id, name, args });
  });
}

/** A frame's message about a call: `tool-started` {id, toast} or `tool-result` {id, ok, result|error}. @param {any} d */
export function onToolMessage(d) {
  const w = waiting.get(d.id);
  if (!w) return;
  if (d.what === 'tool-started') {
    if (typeof d.toast === 'string' && d.toast) w.toast(d.toast);
    return;
  }
  waiting.delete(d.id);
  if (d.ok) w.resolve({ ok: true, result: typeof d.result === 'string' ? d.result : JSON.stringify(d.result ?? '') });
  else w.resolve({ ok: false, error: String(d.error || 'the tool failed') });
}
