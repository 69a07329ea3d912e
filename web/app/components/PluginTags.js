// A plugin's function tags (what it touches: input actions, the sidebar, fragments, settings, hooks).
import { html } from '../html.js';

const NAMES = /** @type {Record<string, string>} */ ({
  inputActions: 'Input actions',
  sidebar: 'Sidebar',
  htmlFragments: 'HTML fragments',
  settings: 'Settings',
  hooks: 'Hooks',
});

/** @param {{tags: string[], label?: string}} props */
export function PluginTags({ tags, label = 'Function tags' }) {
  if (!tags || !tags.length) return null;
  return html`<ul class="tags plugin-tags" aria-label=${label}>${tags.map((t) => html`<li key=${t}>${NAMES[t] || t}</li>`)}</ul>`;
}
