// One bubble frame's channel to the app: the MessagePort the app created and handed to the
// frame, the checks every message passes (shape, size, rate), and the frame's life (stop,
// navigated away). A frame can only talk on its own port; nothing listens to `window`
// messages, so a forged `postMessage` to the app goes nowhere.

import { effect } from '@preact/signals';
import { get, post, op } from '../api.js';
import { chatView, currentReply } from '../store.js';
import { METHODS } from './bridge.js';
import { addConsoleLine } from './console.js';
import { chatNews } from '../plugins/events.js';

/** Calls a frame may make in a burst, and per second after it. */
export const BURST = 40;
export const PER_SECOND = 20;
/** Calls over the rate that may wait for their turn; one more is refused at once (a catchable
 * `limit_exceeded`), so no call is ever left without an answer. */
export const MAX_WAITING = 400;
/** Variable writes that may wait in a frame's queue. They take no turn of the rate: they go
 * one at a time already (each waits for the previous one's answer), so a loop of writes costs
 * the server one request at a time and every write lands, in order. */
export const MAX_QUEUED_WRITES = 10000;
/** Refused calls (within one second) after which the frame is stopped as a flood. */
export const FLOOD = 400;
/** The largest call a frame may send (its JSON), in characters: the server's limit on an
 * operation's body (`POST /api/ops`, 56 MiB), so a 40 MiB file (the most `tavo.file.save`
 * stores) fits as a data URL. */
export const MAX_CALL = 56 * 1024 * 1024;
/** How long the signed file URLs a frame gets live, in seconds, and how often they are renewed. */
export const SIGNED_TTL = 3600;
const RENEW_MS = 30 * 60 * 1000;
/** The tallest a frame grows, in CSS pixels (then it scrolls inside). */
export const MAX_HEIGHT = 4000;

/** Every open frame's channel, so variable writes reach the other bubbles of the chat. @type {Set<Channel>} */
const open = new Set();

/**
 * @typedef {{chatId: number, messageId: number, card: {key: string, name: string}, plugin?: any, entry?: string}} FrameInfo
 *   `plugin` (a plugin's frame: its id, fragment id, config, i18n) becomes `tavo.plugin`; `entry` is the plugin's
 *   entry code, run with the lexical `tavo`. A frame without a message has `messageId` 0.
 * @typedef {{onSize: (h: number) => void, onStop: (reason: string) => void, onLog: (text: string) => void, onKeep: () => void,
 *   onPlugin?: (d: any) => void}} FrameHooks
 */

export class Channel {
  /**
   * @param {HTMLIFrameElement} iframe
   * @param {FrameInfo} info
   * @param {FrameHooks} hooks
   */
  constructor(iframe, info, hooks) {
    this.iframe = iframe;
    this.info = info;
    this.hooks = hooks;
    this.channel = new MessageChannel();
    this.port = this.channel.port1;
    this.tokens = BURST;
    this.at = performance.now();
    this.refused = 0;
    this.refusedAt = this.at;
    /** Calls waiting for a turn of the rate, first come first served. @type {((ok: boolean) => void)[]} */
    this.waiting = [];
    this.turnTimer = 0;
    /** Variable writes queued or in flight. */
    this.queuedWrites = 0;
    this.stopped = false;
    /** The frame's variable writes, one after the other. @type {Promise<any>} */
    this.writes = Promise.resolve();
    this.doc = '';
    /** 'blank' → (load) 'starting' → (written) 'written' → (its load) 'running' */
    this.state = 'blank';
    this.loads = 0;
    this.initSent = false;
    this.calls = 0;
    /** The frame's questions to the user (see bridge.js askUser). */
    this.dialogs = { open: 0, cancelled: 0 };
    /** @type {number} */
    this.sizeFrame = 0;
    this.pendingHeight = 0;
    /** The files whose signed URLs the frame holds. @type {{name: string, scope: string}[]} */
    this.signed = [];
    /** @type {number} */
    this.renew = 0;
    this.port.onmessage = (e) => this.receive(e.data);
    watchMessages();
    this.onLoad = () => this.loaded();
    iframe.addEventListener('load', this.onLoad);
    open.add(this);
  }

  /** The first load is our frame document: start it. The runtime then writes the card's
   * document, whose closing causes one more load; any other load means the frame navigated
   * itself away (a link, a meta refresh, a form): it is stopped. */
  async loaded() {
    this.loads++;
    // The written document's load can overtake the runtime's `written` message (the frame is
    // another process): before the card's document exists, nothing but that write loads.
    if (this.state === 'written' || (this.state === 'starting' && this.loads === 2 && this.initSent)) {
      this.state = 'running';
      return;
    }
    if (this.state !== 'blank') return this.stop('the bubble tried to navigate away');
    this.state = 'starting';
    const [vars, files] = await Promise.all([
      get(`/api/chats/${this.info.chatId}/variables${this.info.messageId ? `?message=${this.info.messageId}` : ''}`).catch(() => null),
      this.signStored().catch(() => ({ chat: {}, global: {} })),
    ]);
    if (this.stopped || !this.iframe.contentWindow) return;
    // Signed URLs live an hour; the frame gets fresh ones well before.
    this.renew = window.setInterval(() => this.renewFiles(), RENEW_MS);
    const style = getComputedStyle(this.iframe.parentElement || document.body);
    this.initSent = true;
    this.iframe.contentWindow.postMessage(
      {
        type: 'tavo-init',
        html: this.doc,
        chatId: this.info.chatId,
        messageId: this.info.messageId,
        vars,
        files,
        base: `${location.origin}/api/chats/${this.info.chatId}/`,
        look: { color: style.color, font: style.font, scheme: getComputedStyle(document.documentElement).colorScheme },
        plugin: this.info.plugin,
        entry: this.info.entry,
      },
      '*',
      [this.channel.port2],
    );
  }

  /** @param {string} doc */
  start(doc) {
    this.doc = doc;
  }

  /** @param {any} d */
  receive(d) {
    if (this.stopped || d === null || typeof d !== 'object') return;
    if (d.type === 'size') {
      if (typeof d.height === 'number' && Number.isFinite(d.height)) this.size(d.height);
      return;
    }
    if (d.type === 'written') {
      if (this.state === 'starting') this.state = 'written';
      return;
    }
    if (d.type === 'plugin') {
      if (this.hooks.onPlugin) this.hooks.onPlugin(d);
      return;
    }
    if (d.type === 'log') {
      // Never String() a payload: an object without toString would throw in the app.
      if (typeof d.text !== 'string') return;
      const text = d.text.slice(0, 2000);
      this.hooks.onLog(text.slice(0, 500));
      const source = this.info.plugin ? `plugin ${this.info.plugin.pluginId}` : this.info.card.name;
      addConsoleLine({ chatId: this.info.chatId, messageId: this.info.messageId, source, level: d.level, text });
      return;
    }
    if (d.type === 'sign') {
      // `<img src="files/chat/x.png">` for a file the frame had no URL for: sign it (the
      // server answers only for files of this chat and the global scope that exist).
      if (!Array.isArray(d.files)) return;
      const list = d.files
        .filter((/** @type {any} */ f) => f && (f.scope === 'chat' || f.scope === 'global') && typeof f.name === 'string' && f.name.length <= 255)
        .slice(0, 50)
        .map((/** @type {any} */ f) => ({ scope: f.scope, name: f.name }));
      for (const f of list) if (this.signed.length < 1000 && !this.signed.some((x) => x.name === f.name && x.scope === f.scope)) this.signed.push(f);
      if (list.length) this.sign(list).then((files) => this.post({ type: 'files', files }), () => {});
      return;
    }
    if (d.type !== 'call' || !Number.isInteger(d.id) || typeof d.method !== 'string' || !Array.isArray(d.args)) return;
    const id = d.id;
    if (d.method.startsWith('variable.')) {
      if (this.queuedWrites >= MAX_QUEUED_WRITES) {
        this.refuse();
        return this.answer(id, false, limited(`${MAX_QUEUED_WRITES} variable writes are already waiting; await some before writing more`));
      }
      this.queuedWrites++;
      return this.call(d);
    }
    this.turn().then((ok) => {
      if (ok) this.call(d);
      else this.answer(id, false, limited(`too many tavo calls at once (${MAX_WAITING} are waiting; ${PER_SECOND} run per second); await them before calling again`));
    });
  }

  /** Runs one admitted call and answers it. @param {{id: number, method: string, args: any[]}} d */
  call(d) {
    const id = d.id;
    const write = d.method.startsWith('variable.');
    const done = () => {
      if (write) this.queuedWrites--;
    };
    const f = METHODS.get(d.method);
    if (!f) return (done(), this.answer(id, false, `tavo.${d.method} is not a TavoJS method`));
    let size = 0;
    try {
      size = JSON.stringify(d.args).length;
    } catch {
      return (done(), this.answer(id, false, 'the arguments are not JSON data'));
    }
    if (size > MAX_CALL) return (done(), this.answer(id, false, `the arguments are too large (${size} characters; at most ${MAX_CALL})`));
    this.calls++;
    const caller = {
      chatId: this.info.chatId,
      messageId: this.info.messageId,
      card: this.info.card,
      keep: () => this.hooks.onKeep(),
      varsChanged: () => varsChanged(this),
      refreshVars: () => this.refreshVars(),
      fileSaved: (/** @type {string} */ scope, /** @type {string} */ name) => this.fileSaved(scope, name),
      dialogs: this.dialogs,
    };
    // Variable writes land in the order the script made them: `tavo.set()` then
    // `tavo.update()` without awaiting is the seed's synchronous style, and two requests in
    // flight at once could otherwise be applied the other way round.
    const start = () => f(caller, d.args);
    /** @type {Promise<any>} */
    let run;
    if (d.method.startsWith('variable.')) {
      run = this.writes.then(start);
      this.writes = run.catch(() => {});
    } else {
      run = Promise.resolve().then(start);
    }
    run
      .finally(done)
      .then(
        (v) => this.answer(id, true, v),
        (e) => this.answer(id, false, e),
      );
  }

  /** Refills the token bucket for the time passed. */
  refill() {
    const now = performance.now();
    this.tokens = Math.min(BURST, this.tokens + ((now - this.at) / 1000) * PER_SECOND);
    this.at = now;
  }

  /**
   * A turn of the frame's rate (a token bucket: a burst, then a steady rate). Over the rate a
   * call waits its turn, in order; with too many waiting it is refused (`false`), and a frame
   * refused that often within a second is stopped as a flood.
   * @returns {Promise<boolean>}
   */
  turn() {
    this.refill();
    if (!this.waiting.length && this.tokens >= 1) {
      this.tokens -= 1;
      return Promise.resolve(true);
    }
    if (this.waiting.length >= MAX_WAITING) {
      this.refuse();
      return Promise.resolve(false);
    }
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.serveWaiting();
    });
  }

  /** Counts a refusal; a frame refused that often within a second is stopped as a flood. */
  refuse() {
    const now = performance.now();
    if (now - this.refusedAt > 1000) {
      this.refused = 0;
      this.refusedAt = now;
    }
    this.refused++;
    if (this.refused > FLOOD) this.stop('the bubble made too many calls');
    else if (this.refused <= 20) this.hooks.onLog('too many tavo calls: some were refused');
  }

  /** Lets waiting calls through as tokens come back. */
  serveWaiting() {
    if (this.turnTimer || !this.waiting.length || this.stopped) return;
    this.refill();
    const ms = Math.max(0, ((1 - this.tokens) / PER_SECOND) * 1000);
    this.turnTimer = window.setTimeout(() => {
      this.turnTimer = 0;
      this.refill();
      while (this.waiting.length && this.tokens >= 1) {
        this.tokens -= 1;
        /** @type {(ok: boolean) => void} */ (this.waiting.shift())(true);
      }
      this.serveWaiting();
    }, ms);
  }

  /** @param {number} id @param {boolean} ok @param {any} value */
  answer(id, ok, value) {
    if (this.stopped) return;
    try {
      // A failure crosses as its message and, when it has one, its stable code (the frame
      // rebuilds an Error with `code`); nothing else of the app's error object leaves.
      const code = !ok && value && typeof value.code === 'string' ? value.code : undefined;
      const error = value instanceof Error ? value.message : String(value);
      this.port.postMessage(ok ? { type: 'result', id, ok: true, value: value === undefined ? null : value } : { type: 'result', id, ok: false, error, ...(code ? { code } : {}) });
    } catch {
      this.port.postMessage({ type: 'result', id, ok: false, error: 'the answer could not be sent' });
    }
  }

  /** Sizes are applied once per frame of the page, clamped. @param {number} h */
  size(h) {
    this.pendingHeight = Math.max(24, Math.min(MAX_HEIGHT, Math.ceil(h)));
    if (this.sizeFrame) return;
    this.sizeFrame = requestAnimationFrame(() => {
      this.sizeFrame = 0;
      if (!this.stopped) this.hooks.onSize(this.pendingHeight);
    });
  }

  /** A message of the app to the frame (a plugin's hook or action, new config). @param {any} msg */
  post(msg) {
    if (!this.stopped) this.port.postMessage(msg);
  }

  /** Signed URLs (`POST /api/chats/{id}/files/sign`) of `list`, as `{chat: {name: url}, global: {…}}`
   * with absolute URLs (the frame's own origin is opaque). @param {{name: string, scope: string}[]} list */
  async sign(list) {
    /** @type {{chat: Record<string, string>, global: Record<string, string>}} */
    const out = { chat: {}, global: {} };
    if (!list.length) return out;
    const r = await post(`/api/chats/${this.info.chatId}/files/sign`, { files: list.slice(0, 200), ttl: SIGNED_TTL });
    for (const f of r.urls || []) if (f.scope === 'chat' || f.scope === 'global') out[/** @type {'chat'|'global'} */ (f.scope)][f.name] = location.origin + f.url;
    return out;
  }

  /** The chat's and the global stored files (the first page of each), signed for `tavo.file.url`. */
  async signStored() {
    /** @type {{name: string, scope: string}[]} */
    const list = [];
    for (const scope of ['chat', 'global']) {
      const page = await op('tavo_file_list', { options: { scope, limit: 100 } }, { chat: this.info.chatId }).catch(() => null);
      for (const f of (page && page.files) || []) if (f && typeof f.name === 'string') list.push({ name: f.name, scope });
    }
    this.signed = list;
    return this.sign(list);
  }

  /** A file the frame saved: signed and sent before the save's answer. @param {string} scope @param {string} name */
  async fileSaved(scope, name) {
    if (this.stopped) return;
    if (!this.signed.some((f) => f.name === name && f.scope === scope)) this.signed.push({ name, scope });
    const files = await this.sign([{ name, scope }]).catch(() => null);
    if (files && !this.stopped) this.port.postMessage({ type: 'files', files });
  }

  async renewFiles() {
    if (this.stopped) return;
    const files = await this.sign(this.signed).catch(() => null);
    if (files && !this.stopped) this.port.postMessage({ type: 'files', files });
  }

  /** Sends this frame a fresh snapshot of its variables. */
  async refreshVars() {
    const v = await get(`/api/chats/${this.info.chatId}/variables${this.info.messageId ? `?message=${this.info.messageId}` : ''}`);
    this.pushVars(v);
  }

  /** @param {any} vars */
  pushVars(vars) {
    if (!this.stopped && vars) this.port.postMessage({ type: 'vars', vars });
  }

  /** Ends the frame: its document goes, so its scripts stop. @param {string} reason */
  stop(reason) {
    if (this.stopped) return;
    this.stopped = true;
    open.delete(this);
    clearInterval(this.renew);
    clearTimeout(this.turnTimer);
    for (const w of this.waiting.splice(0)) w(false);
    this.iframe.removeEventListener('load', this.onLoad);
    this.port.onmessage = null;
    this.port.close();
    this.iframe.remove();
    this.hooks.onStop(reason);
  }

  /** Closes without a notice (the bubble left the screen or re-renders). */
  close() {
    if (this.stopped) return;
    this.hooks = { ...this.hooks, onStop: () => {} };
    this.stop('closed');
  }
}

/** A refusal for being over a limit, with the operations' code for it. @param {string} message */
function limited(message) {
  const e = /** @type {Error & {code: string}} */ (new Error(message));
  e.code = 'limit_exceeded';
  return e;
}

/** After one frame wrote a variable, the other frames of its chat get fresh snapshots. @type {Map<number, number>} */
const refresh = new Map();
/** @param {Channel} from */
function varsChanged(from) {
  const chat = from.info.chatId;
  clearTimeout(refresh.get(chat));
  refresh.set(chat, window.setTimeout(() => {
    refresh.delete(chat);
    for (const ch of open) {
      if (ch === from || ch.info.chatId !== chat || ch.stopped) continue;
      get(`/api/chats/${chat}/variables${ch.info.messageId ? `?message=${ch.info.messageId}` : ''}`).then((v) => ch.pushVars(v), () => {});
    }
  }, 150));
}

/** How many frames are open (the benchmark reads it). */
export const openFrames = () => open.size;

// ---- message events for the frames (the TavernHelper shim's eventOn) -------------------------
// The open chat's messages as the app holds them, compared after each change: a new user
// message is `message_sent`, a new character or narrator message `message_received`, a changed
// text `message_updated` (and `message_edited`), a removed one `message_deleted`, each with the
// message's floor, as SillyTavern's events carry it. Sent to the chat's running frames.

let watching = false;
function watchMessages() {
  if (watching) return;
  watching = true;
  /** @type {number|null} */
  let chat = null;
  /** @type {Map<number, {floor: number, content: string}>} */
  let seen = new Map();
  effect(() => {
    const id = chatView.id.value;
    const list = chatView.messages.value;
    // The message a reply is still writing is not received yet (SillyTavern fires
    // message_received once the generation ended): it stays unseen until the reply is over.
    const live = currentReply.value;
    const status = live ? live.status.value : '';
    const writing = live && live.chatId === id && (status === 'running' || status === 'waiting') ? live.messageId.value : null;
    /** @type {Map<number, {floor: number, content: string}>} */
    const now = new Map();
    for (const m of list) if (typeof m.id === 'number' && (m.id !== writing || seen.has(m.id))) now.set(m.id, { floor: m.floor, content: m.content });
    if (id !== chat) {
      chat = id;
      seen = now;
      return;
    }
    /** @type {[string, number][]} */
    const events = [];
    for (const [mid, m] of now) {
      const before = seen.get(mid);
      const msg = list.find((x) => x.id === mid);
      if (!before) {
        // A message that came into view by loading older pages is not new.
        if (seen.size && m.floor < Math.max(...[...seen.values()].map((x) => x.floor))) continue;
        if (msg?.role === 'user') events.push(['message_sent', m.floor], ['user_message_rendered', m.floor]);
        else events.push(['message_received', m.floor], ['character_message_rendered', m.floor]);
      } else if (before.content !== m.content) events.push(['message_updated', m.floor], ['message_edited', m.floor]);
    }
    for (const [mid, m] of seen) if (!now.has(mid) && list.length) {
      const first = list[0]?.floor ?? 0;
      if (m.floor >= first) events.push(['message_deleted', m.floor]);
    }
    seen = now;
    if (id == null || !events.length) return;
    for (const ch of open) {
      if (ch.info.chatId !== id || ch.stopped) continue;
      for (const [name, floor] of events) ch.post({ type: 'event', name, args: [floor] });
    }
  });
}

// ---- tavo.events: the chat's notifications (plugins/events.js), for the chat's frames --------
chatNews.add((type, payload) => {
  const at = new Date().toISOString();
  for (const ch of open) {
    if (ch.info.chatId !== payload.chatId || ch.stopped) continue;
    ch.post({ type: 'event', name: type, args: [{ ...payload, type, at }] });
  }
});
