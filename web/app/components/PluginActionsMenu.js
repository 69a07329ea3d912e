// The composer's "+" menu: the input actions of the enabled plugins (label, icon from the
// package). Shown whether or not advanced rendering is on; tapping decides (plugins/actions.js).
import { html } from '../html.js';
import { runtimePlugins, pluginFile } from '../plugins/store.js';
import { runAction } from '../plugins/actions.js';

export function PluginActionsMenu() {
  const items = runtimePlugins.value.flatMap((p) => (p.contributes?.inputActions || []).map((a) => ({ p, a })));
  if (!items.length) return null;
  /** @param {Event} e */
  const close = (e) => {
    const menu = /** @type {HTMLElement} */ (e.currentTarget).closest('details');
    if (menu) menu.open = false;
  };
  return html`<details class="menu up plugin-actions-menu">
    <summary class="button" aria-label="Plugin actions" title="Plugin actions">+</summary>
    <ul role="menu" aria-label="Plugin actions">
      ${items.map(({ p, a }) => html`<li role="none" key=${`${p.id}/${a.id}`}>
        <button type="button" role="menuitem" title=${`${a.label} (${p.name})`} onClick=${(/** @type {Event} */ e) => { close(e); runAction(p, 'inputActions', a); }}>
          <img class="plugin-action-icon" alt="" src=${a.icon ? pluginFile(p.id, a.icon) : '/favicon.svg'}
            onError=${(/** @type {any} */ e) => { if (!e.currentTarget.src.endsWith('/favicon.svg')) e.currentTarget.src = '/favicon.svg'; }} />
          <span class="plugin-action-label">${a.label}</span>
        </button></li>`)}
    </ul>
  </details>`;
}
