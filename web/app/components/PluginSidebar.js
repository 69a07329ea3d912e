// The sidebar rows of the enabled plugins, in the chat's side panel: one group per plugin
// under the header "Plugin · <name>" (Tavo §6.6), each row runs its action.
import { html } from '../html.js';
import { runtimePlugins } from '../plugins/store.js';
import { runAction } from '../plugins/actions.js';

export function PluginSidebar() {
  const groups = runtimePlugins.value.filter((p) => (p.contributes?.sidebar || []).length);
  if (!groups.length) return null;
  return html`${groups.map((p) => {
    const id = `plugin-side-${p.id.replace(/[^a-z0-9]/gi, '-')}`;
    return html`<section key=${p.id} class="plugin-sidebar" aria-labelledby=${id}>
      <h3 id=${id}>Plugin · ${p.name}</h3>
      <ul class="plugin-rows">${(p.contributes.sidebar || []).map((a) => html`<li key=${a.id}>
        <button type="button" class="plugin-row-button" onClick=${() => runAction(p, 'sidebar', a)}>${a.label}</button></li>`)}</ul>
    </section>`;
  })}`;
}
