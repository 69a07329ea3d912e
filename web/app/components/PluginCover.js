// A plugin's cover, cropped to a circle (the list), or its initial when it has none.
import { html } from '../html.js';
import { Avatar } from './Avatar.js';
import { pluginFile } from '../plugins/store.js';

/** @param {{plugin: import('../plugins/store.js').PluginSummary & {cover?: string|null, manifest?: any}}} props */
export function PluginCover({ plugin: p }) {
  const path = p.cover || p.manifest?.cover || (p.hasCover ? 'cover.png' : null);
  return html`<span class="plugin-cover"><${Avatar} src=${path ? pluginFile(p.id, path) : null} name=${p.name} /></span>`;
}
