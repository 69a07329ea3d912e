// One plugin HTML fragment at a mount: its package HTML in a sandboxed frame like a script
// bubble (the same frame document, channel and bridge), with `tavo.plugin` (its fragment id)
// and, at /messages mounts, the message as `tavo.message.current()`.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { BubbleFrame } from './BubbleFrame.js';
import { pluginText, pluginInit } from '../plugins/files.js';

/** @param {{plugin: import('../plugins/store.js').PluginDetail, fragment: {id: string, src: string, mount: string}, chatId: number, messageId?: number}} props */
export function PluginFragment({ plugin: p, fragment: f, chatId, messageId = 0 }) {
  const [doc, setDoc] = useState(/** @type {string|null} */ (null));
  useEffect(() => {
    let live = true;
    pluginText(p, f.src).then((t) => live && setDoc(t), () => live && setDoc(null));
    return () => {
      live = false;
    };
  }, [p.id, p.version, p.updatedAt, f.src]);
  if (doc === null) return null;
  return html`<div class="plugin-fragment" data-plugin=${p.id} data-fragment=${f.id}>
    <${BubbleFrame} doc=${doc} chatId=${chatId} messageId=${messageId} card=${{ key: `plugin:${p.id}`, name: p.name }}
      plugin=${pluginInit(p, f.id)} title=${`${p.name} · ${f.id}`} bare=${true} />
  </div>`;
}
