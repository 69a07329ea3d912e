// The page's link to the engine (GET /api/pages/events): how the open chat's plugins take part
// in replies that run in the server. The engine sends requests on this stream and the page
// answers each with POST /api/pages/{page}/answers/{id}:
// - `tool.call` {name, arguments, chatId, timeoutMs}: a function tool a plugin registered with
//   SillyTavern.getContext().registerFunctionTool (seed 001) — run in that plugin's frame, its
//   `formatMessage` shown as a toast while it runs;
// - `hook` {type, event}: generation:prepare / generation:success run over every plugin
//   (plugins/hooks.js, each handler 5 s, fail-open) and answer the text; generation:error /
//   generation:cancelled are notifications;
// - `input.send` {text|null, source: 'mcp'}: MCP's tavo_input_send, sent like the Send button
//   (input:beforeSend may rewrite or cancel it).
// Closing the chat (or the tab) ends the stream: the server forgets the page's tools and
// fails any call it had open at once. A reconnect is a new page, which registers again.
import { followSse, get, post, put } from '../api.js';
import { chatView, setDraft, toast, libraryListeners } from '../store.js';
import { sendInput } from './send.js';
import { notify, runHook } from './hooks.js';
import { callTool, forgetToolCalling, refreshTools, setToolCalling, toolList, onToolsChanged } from './functionTools.js';

/** The page id the server gave this link, while connected. */
let pageId = /** @type {string|null} */ (null);

/** Sends the registered tools of every plugin to the server (replaces the page's list). */
async function publish() {
  if (!pageId) return;
  try {
    const r = await put(`/api/pages/${pageId}/tools`, { tools: toolList() });
    for (const t of (r && r.tools) || []) {
      if (!t.registered) toast(`Function tool ${t.name} was refused: ${t.error}`, 'error');
    }
  } catch (e) {
    // The link dropped between the event and the call: the reconnect publishes again.
  }
}

/** @param {string} id @param {{ok: boolean, result?: any, error?: any}} answer */
function answer(id, answer) {
  if (!pageId) return;
  post(`/api/pages/${pageId}/answers/${id}`, answer).catch(() => {
    // 410: nobody waits any more (timed out, reply cancelled); nothing to do.
  });
}

/** @param {{id: string, method: string, params: any}} req */
async function handle(req) {
  const p = req.params || {};
  if (req.method === 'tool.call') {
    const r = await callTool(String(p.name), p.arguments ?? {}, (text) => text && toast(text), p.timeoutMs);
    answer(req.id, r.ok ? { ok: true, result: r.result } : { ok: false, error: { message: r.error } });
    return;
  }
  if (req.method === 'hook') {
    const type = String(p.type || '');
    const event = p.event || {};
    if (type === 'generation:prepare' || type === 'generation:success') {
      // seed 001: shouldRegister is asked before each generation; prepare comes before the
      // engine decides which tools the request carries.
      if (type === 'generation:prepare') {
        await refreshTools();
        await publish();
      }
      const r = await runHook(type, { ...event, text: String(event.text ?? '') }, { nonEmpty: type === 'generation:success' });
      answer(req.id, { ok: true, result: { text: r.text } });
      return;
    }
    if (type === 'generation:error' || type === 'generation:cancelled') notify(type, event);
    answer(req.id, { ok: true, result: {} });
    return;
  }
  if (req.method === 'input.send') {
    const given = typeof p.text === 'string';
    const text = given ? p.text : chatView.draft.value;
    const r = await sendInput(text, 'mcp');
    if (r.ok && !given) setDraft('');
    const result = r.ok
      ? { ok: true, text: r.text, via: 'page' }
      : { ok: false, reason: r.reason, cancelledBy: r.cancelledBy, message: r.message ?? (r.reason === 'cancelled' ? 'a plugin cancelled the send' : r.reason) };
    answer(req.id, { ok: true, result });
    return;
  }
  answer(req.id, { ok: false, error: { message: `this page does not know ${req.method}` } });
}

/**
 * Links the page while `chatId` is open; returns the function that unlinks it.
 * @param {number} chatId
 */
export function linkPage(chatId) {
  const ctl = new AbortController();
  const stop = onToolsChanged(() => publish());
  // isToolCallingSupported() follows Settings: a changed setting or connection asks again.
  const recheck = (/** @type {any} */ d) => {
    if (!d || (d.kind !== 'setting' && d.kind !== 'connection')) return;
    get('/api/pages/tool-calling').then((r) => { if (!ctl.signal.aborted) setToolCalling(!!r.toolCalling, chatId); }, () => {});
  };
  libraryListeners.add(recheck);
  followSse(`/api/pages/events?chat=${chatId}`, {
    signal: ctl.signal,
    onEvent: (e) => {
      if (e.event === 'page') {
        pageId = e.data && e.data.id;
        setToolCalling(!!(e.data && e.data.toolCalling), chatId);
        publish();
      } else if (e.event === 'request') {
        handle(e.data).catch((err) => e.data && answer(e.data.id, { ok: false, error: { message: String(err && err.message || err) } }));
      }
    },
  }).catch(() => {});
  return () => {
    stop();
    libraryListeners.delete(recheck);
    pageId = null;
    forgetToolCalling();
    ctl.abort();
  };
}
