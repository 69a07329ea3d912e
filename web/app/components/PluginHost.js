// The open chat's plugin runtime: when the chat has advanced rendering on, each enabled
// plugin's entry runs (hidden frames) and the page's notifications reach them; otherwise
// nothing runs and hooks are skipped (Tavo §6.2). The runtime list itself is read whether or
// not it runs, so actions stay visible.
import { useEffect } from 'preact/hooks';
import { html } from '../html.js';
import { runtimePlugins } from '../plugins/store.js';
import { orderEntries } from '../plugins/hooks.js';
import { watchChat } from '../plugins/events.js';
import { linkPage } from '../plugins/pageLink.js';
import { PluginEntryFrame } from './PluginEntryFrame.js';

/** @param {{chatId: number}} props */
export function PluginHost({ chatId }) {
  const list = runtimePlugins.value.filter((p) => p.entry);
  useEffect(() => watchChat(), [chatId]);
  // The engine reaches this chat's plugins (function tools, generation hooks, MCP sends) over
  // the page link while the runtime is mounted.
  useEffect(() => linkPage(chatId), [chatId]);
  useEffect(() => orderEntries(runtimePlugins.value.map((p) => p.id)));
  return html`<div class="plugin-host" aria-hidden="true">
    ${list.map((p) => html`<${PluginEntryFrame} key=${p.id} plugin=${p} chatId=${chatId} />`)}
  </div>`;
}
