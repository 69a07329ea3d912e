// A mount point of plugin HTML fragments (Tavo §6.6): the fragments of every enabled plugin
// declared at `at`, shown only when the chat has advanced rendering on; at /messages mounts,
// once per message that matches the fragment's role and position filters.
import { html } from '../html.js';
import { chatView } from '../store.js';
import { runtimePlugins } from '../plugins/store.js';
import { parseMount, messageMatches } from '../plugins/mounts.js';
import { PluginFragment } from './PluginFragment.js';

/** @param {{at: string, message?: import('../store.js').Message}} props */
export function PluginMount({ at, message }) {
  const chat = /** @type {any} */ (chatView.chat.value);
  const list = runtimePlugins.value;
  if (!chat || chat.advancedRendering === false || !list.length) return null;
  const msgs = message ? chatView.messages.value : [];
  const hasMore = chatView.hasMore.value;
  const shown = [];
  for (const p of list) {
    for (const f of p.contributes?.htmlFragments || []) {
      const mount = parseMount(f.mount);
      if (mount.at !== at) continue;
      if (message && !messageMatches(mount, message, msgs, hasMore)) continue;
      shown.push(html`<${PluginFragment} key=${`${p.id}/${f.id}`} plugin=${p} fragment=${f} chatId=${chat.id} messageId=${message ? message.id : 0} />`);
    }
  }
  if (!shown.length) return null;
  return html`<div class="plugin-mount" data-mount=${at}>${shown}</div>`;
}
