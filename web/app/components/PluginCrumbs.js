// The breadcrumb of the plugin screens: links to the screens above, then the current one
// (not a link, `aria-current="page"`), `›` only between items — never after the last.
import { html } from '../html.js';
import { link } from '../router.js';

/** @param {{trail: {href: string, label: string}[], current: string}} props */
export function PluginCrumbs({ trail, current }) {
  return html`<nav class="crumbs" aria-label="Breadcrumb"><ol>
    ${trail.map((t) => html`<li><a href=${t.href} onClick=${link}>${t.label}</a></li>`)}
    <li aria-current="page">${current}</li>
  </ol></nav>`;
}
