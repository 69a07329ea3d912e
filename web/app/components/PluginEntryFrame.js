// One enabled plugin's `entry`, running in a hidden sandboxed frame for the open chat (the
// bubble frame and its channel: `sandbox="allow-scripts"`, no same origin, every tavo call
// through the operation layer). Its registered hooks and actions are run by plugins/hooks.js;
// new config and locale reach `tavo.plugin` without rerunning the entry.
import { useEffect, useRef } from 'preact/hooks';
import { html } from '../html.js';
import { Channel } from '../bubble/channel.js';
import { FRAME_SRC } from './BubbleFrame.js';
import { attachEntry, detachEntry, onPluginMessage, pushToEntry, hookLog } from '../plugins/hooks.js';
import { pluginText, pluginInit } from '../plugins/files.js';
import { lightChat } from '../plugins/events.js';
import { isToolCalling, toolCallingKnown } from '../plugins/functionTools.js';
import { chatView } from '../store.js';

/** @param {{plugin: import('../plugins/store.js').PluginDetail, chatId: number}} props */
export function PluginEntryFrame({ plugin: p, chatId }) {
  const slot = useRef(/** @type {HTMLDivElement|null} */ (null));
  const started = useRef(false);
  useEffect(() => {
    const el = slot.current;
    if (!el || !p.entry) return;
    let gone = false;
    /** @type {Channel|null} */
    let ch = null;
    const entry = attachEntry({ pluginId: p.id, name: p.name, chatId, chat: () => lightChat(chatView.chat.value) });
    // The entry starts once the page link has said whether tools are on, so its first
    // isToolCallingSupported() is already right.
    Promise.all([pluginText(p, p.entry), toolCallingKnown(chatId)]).then(
      ([code]) => {
        if (gone) return;
        const f = document.createElement('iframe');
        f.setAttribute('sandbox', 'allow-scripts');
        f.setAttribute('referrerpolicy', 'no-referrer');
        f.setAttribute('title', `Plugin ${p.name} (runs its entry)`);
        f.setAttribute('aria-hidden', 'true');
        f.setAttribute('tabindex', '-1');
        f.className = 'plugin-entry-frame';
        ch = new Channel(f, { chatId, messageId: 0, card: { key: `plugin:${p.id}`, name: p.name }, plugin: { ...pluginInit(p, null), toolCalling: isToolCalling() }, entry: code }, {
          onSize: () => {},
          onStop: (reason) => hookLog.push(`${p.id}: stopped (${reason})`),
          onLog: (text) => hookLog.push(`${p.id}: ${text}`),
          onKeep: () => {},
          onPlugin: (d) => onPluginMessage(entry, d),
        });
        entry.channel = ch;
        ch.start('');
        f.setAttribute('src', FRAME_SRC);
        el.appendChild(f);
        started.current = true;
      },
      (e) => hookLog.push(`${p.id}: cannot read ${p.entry}: ${e && e.message}`),
    );
    return () => {
      gone = true;
      started.current = false;
      detachEntry(entry, () => ch && ch.close());
    };
  }, [p.id, p.version, p.updatedAt, p.entry, chatId]);
  // New settings or locale: `tavo.plugin.config` and `i18n` change in place.
  useEffect(() => {
    if (started.current) pushToEntry(p.id, { type: 'plugin-config', config: p.config || {} });
  }, [JSON.stringify(p.config)]);
  useEffect(() => {
    if (started.current && p.i18n && p.specVersion >= 2) pushToEntry(p.id, { type: 'plugin-i18n', i18n: p.i18n });
  }, [JSON.stringify(p.i18n)]);
  return html`<div class="plugin-entry" ref=${slot} data-plugin=${p.id}></div>`;
}
