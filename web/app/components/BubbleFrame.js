// A message whose display copy holds scripts (or a whole HTML document) runs in its own
// sandboxed frame (`sandbox="allow-scripts allow-modals"`, never `allow-same-origin`): the document
// /app/bubble/frame.html, served with a policy of its own, gets the copy over the frame's
// MessageChannel and gives the card's scripts the `tavo` object. The frame is created only
// when the bubble comes near the screen, sized to its content, and can be stopped here.
import { useEffect, useRef, useState } from 'preact/hooks';
import { signal } from '@preact/signals';
import { html } from '../html.js';
import { Channel } from '../bubble/channel.js';
import { attachFragment, detachFragment, onPluginMessage } from '../plugins/hooks.js';
import { lightChat } from '../plugins/events.js';
import { chatView } from '../store.js';

export const FRAME_SRC = '/app/bubble/frame.html';
/** Permissions no bubble gets (the sandbox already withholds popups, forms, top navigation). */
const DENY = ['camera', 'microphone', 'geolocation', 'display-capture', 'clipboard-read', 'clipboard-write', 'payment', 'usb', 'serial', 'fullscreen', 'midi', 'screen-wake-lock']
  .map((p) => `${p} 'none'`)
  .join('; ');
/** How far from the screen a frame is created. */
const NEAR = '800px 0px';
/** How long a bubble stays near the screen before its frame is made: a fast scroll past it
 * loads no document at all. */
const SETTLE_MS = 120;
/** Frames waiting to be made, oldest first; one starts per idle moment (or every 60 ms at the
 * latest) once the page has not scrolled for SETTLE_MS, so opening a chat or stopping a scroll
 * never loads a dozen documents in one task, and a scroll in progress loads none. */
const startQueue = /** @type {(() => boolean)[]} */ ([]);
let draining = false;
/** When the page last scrolled: no document is loaded while the user is scrolling. */
let lastScroll = 0;
if (typeof document !== 'undefined') {
  document.addEventListener('scroll', (e) => {
    // A list resting at its bottom is not being scrolled through: the message list following a
    // growing bubble (or a stream) there scrolls too, and must not hold the next frames back.
    const el = /** @type {any} */ (e.target);
    if (el && typeof el.scrollHeight === 'number' && el.scrollHeight - el.scrollTop - el.clientHeight < 2) return;
    lastScroll = performance.now();
  }, { capture: true, passive: true });
}
function drain() {
  draining = true;
  const next = () => {
    const since = performance.now() - lastScroll;
    if (since < SETTLE_MS) {
      setTimeout(next, SETTLE_MS - since);
      return;
    }
    // A bubble that left the screen while it waited answers false and costs nothing.
    while (startQueue.length && !(/** @type {() => boolean} */ (startQueue.shift()))());
    if (!startQueue.length) {
      draining = false;
      return;
    }
    if (typeof requestIdleCallback === 'function') requestIdleCallback(next, { timeout: 60 });
    else setTimeout(next, 16);
  };
  next();
}
/** @param {() => boolean} start */
function queueStart(start) {
  startQueue.push(start);
  if (!draining) drain();
}

/** Frames kept alive off the message list's window, at most. */
export const MAX_KEPT = 40;
/**
 * The open chat's messages whose scripts have run, newest last (at most MAX_KEPT): the
 * message list keeps them mounted, hidden, when they leave its window, so scrolling a bubble
 * away and back never runs its script twice (a script that appends a message or sends would
 * repeat). Past MAX_KEPT the oldest is let go, and runs again when it comes back.
 */
export const keptFrames = signal(/** @type {{chatId: number, ids: number[]}} */ ({ chatId: 0, ids: [] }));
/** @param {number} chatId @param {number} messageId */
function keepFrame(chatId, messageId) {
  if (!messageId) return;
  const now = keptFrames.value;
  const ids = now.chatId === chatId ? now.ids.filter((x) => x !== messageId) : [];
  ids.push(messageId);
  keptFrames.value = { chatId, ids: ids.slice(-MAX_KEPT) };
}

/** Bubbles that updated themselves with `reuseContext: true`: their next new copy keeps the frame. @type {Set<number>} */
const keep = new Set();

/**
 * @param {{doc: string, source?: string, chatId: number, messageId: number, card: {key: string, name: string}, plugin?: any, title?: string, bare?: boolean}} props
 *   `source` is what `doc` is made from (a message's stored text): only a new source runs the
 *   bubble again. The display copy also changes with the world around the message — a macro
 *   such as `{{getvar::name}}` that the bubble's own script sets, a regex rule's depth as
 *   messages arrive — and re-running on that would run a script that calls `/send` or `/sys`
 *   once more and append its message twice. Without `source`, `doc` is its own source.
 *   `plugin`, `title` and `bare` make it a plugin's fragment frame (its `tavo.plugin`, its own title, no script bar).
 */
export function BubbleFrame({ doc, source, chatId, messageId, card, plugin, title, bare }) {
  const slot = useRef(/** @type {HTMLDivElement|null} */ (null));
  const channel = useRef(/** @type {Channel|null} */ (null));
  const origin = source ?? doc;
  const shownSource = useRef(origin);
  /** The newest copy: what a (re)started frame is given. */
  const latestDoc = useRef(doc);
  latestDoc.current = doc;
  const [near, setNear] = useState(false);
  const [height, setHeight] = useState(120);
  const [stopped, setStopped] = useState(/** @type {string|null} */ (null));
  const [run, setRun] = useState(0);
  const [logs, setLogs] = useState(/** @type {string[]} */ ([]));

  useEffect(() => {
    const el = slot.current;
    if (!el || near) return;
    if (typeof IntersectionObserver === 'undefined') return setNear(true);
    let inside = false;
    let gone = false;
    /** @type {number|undefined} */
    let settle;
    const io = new IntersectionObserver((entries) => {
      inside = entries[entries.length - 1].isIntersecting;
      clearTimeout(settle);
      if (!inside) return;
      settle = window.setTimeout(() => queueStart(() => {
        if (gone || !inside) return false;
        io.disconnect();
        setNear(true);
        return true;
      }), SETTLE_MS);
    }, { rootMargin: NEAR });
    io.observe(el);
    return () => {
      gone = true;
      clearTimeout(settle);
      io.disconnect();
    };
  }, [near]);

  // A new source re-renders the bubble, unless its script asked to keep running.
  useEffect(() => {
    if (origin === shownSource.current) return;
    shownSource.current = origin;
    if (keep.delete(messageId)) return;
    setRun((n) => n + 1);
  }, [origin]);

  useEffect(() => {
    const el = slot.current;
    if (!near || !el || stopped) return;
    const f = document.createElement('iframe');
    // A message's script may show the browser's own prompt(), confirm() and alert() (the
    // seed's demos ask with prompt(); the runtime caps them per minute); a plugin fragment
    // gets no dialogs.
    f.setAttribute('sandbox', plugin ? 'allow-scripts' : 'allow-scripts allow-modals');
    f.setAttribute('referrerpolicy', 'no-referrer');
    f.setAttribute('allow', DENY);
    f.setAttribute('title', title || `Message of ${card.name} (runs scripts)`);
    f.className = 'bubble-frame';
    f.style.height = height + 'px';
    // A plugin fragment's `tavo.plugin.on` handlers (actions, notifications) are the plugin's.
    const fragment = plugin ? attachFragment({ pluginId: String(plugin.pluginId), name: title || String(plugin.pluginId), chatId, chat: () => lightChat(chatView.chat.value) }) : null;
    const ch = new Channel(f, { chatId, messageId, card, plugin }, {
      onSize: (h) => {
        f.style.height = h + 'px';
        setHeight(h);
      },
      onStop: (reason) => setStopped(reason),
      onLog: (text) => setLogs((l) => [...l.slice(-4), text]),
      onKeep: () => keep.add(messageId),
      onPlugin: fragment ? (d) => onPluginMessage(fragment, d) : undefined,
    });
    if (fragment) fragment.channel = ch;
    ch.start(latestDoc.current);
    f.setAttribute('src', FRAME_SRC);
    el.appendChild(f);
    channel.current = ch;
    if (!plugin) keepFrame(chatId, messageId);
    return () => {
      if (fragment) detachFragment(fragment);
      ch.close();
      channel.current = null;
    };
  }, [near, run, stopped]);

  // A plugin fragment's new config or locale reaches its `tavo.plugin` in place: the fragment
  // is not run again, its i18n.onChange handlers run (Tavo §6.5).
  const pluginConfig = plugin ? JSON.stringify(plugin.config || {}) : '';
  const pluginI18n = plugin && plugin.i18n ? JSON.stringify(plugin.i18n) : '';
  useEffect(() => {
    if (plugin && channel.current) channel.current.post({ type: 'plugin-config', config: plugin.config || {} });
  }, [pluginConfig]);
  useEffect(() => {
    if (plugin && plugin.i18n && channel.current) channel.current.post({ type: 'plugin-i18n', i18n: plugin.i18n });
  }, [pluginI18n]);

  return html`<div class="bubble-script" data-frame-state=${stopped ? 'stopped' : near ? 'running' : 'waiting'}>
    <div class="bubble-slot" ref=${slot} style=${stopped ? 'display:none' : `min-height:${near ? 0 : height}px`}></div>
    ${stopped
      ? html`<p class="bubble-stopped muted" role="status">Scripts stopped: ${stopped}.
          <button type="button" class="small" onClick=${() => { setLogs([]); setStopped(null); setRun((n) => n + 1); }}>Run again</button></p>`
      : bare ? null : html`<div class="bubble-bar muted">
          <span title=${logs.join('\n')}>${logs.length ? `script · ${logs[logs.length - 1]}` : 'script'}</span>
          <button type="button" class="small" aria-label="Stop this message's scripts" onClick=${() => channel.current?.stop('stopped by you')}>Stop</button>
        </div>`}
  </div>`;
}
