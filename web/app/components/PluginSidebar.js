// The chat's side panel rows of the enabled plugins: one group per plugin under the header
// "Plugin · <name>" (Tavo §6.6) with its sidebar actions (each row runs its action), and the
// function tools its entry registered (seed 001's registerFunctionTool) that the model is
// offered now — by display name, with the name the model calls and whether calls are stealth.
// Opening the panel asks the entries' shouldRegister again, so the list is current.
import { useEffect } from 'preact/hooks';
import { html } from '../html.js';
import { runtimePlugins } from '../plugins/store.js';
import { runAction } from '../plugins/actions.js';
import { offeredTools, refreshTools } from '../plugins/functionTools.js';

export function PluginSidebar() {
  useEffect(() => {
    refreshTools();
  }, []);
  const tools = new Map(offeredTools.value.map((e) => [e.pluginId, e.tools]));
  const groups = runtimePlugins.value.filter((p) => (p.contributes?.sidebar || []).length || (tools.get(p.id) || []).length);
  if (!groups.length) return null;
  return html`${groups.map((p) => {
    const id = `plugin-side-${p.id.replace(/[^a-z0-9]/gi, '-')}`;
    const own = tools.get(p.id) || [];
    return html`<section key=${p.id} class="plugin-sidebar" aria-labelledby=${id}>
      <h3 id=${id}>Plugin · ${p.name}</h3>
      ${(p.contributes?.sidebar || []).length
        ? html`<ul class="plugin-rows">${(p.contributes?.sidebar || []).map((a) => html`<li key=${a.id}>
            <button type="button" class="plugin-row-button" onClick=${() => runAction(p, 'sidebar', a)}>${a.label}</button></li>`)}</ul>`
        : null}
      ${own.length
        ? html`<p class="plugin-tools-caption muted">Function tools the model may call</p>
          <ul class="plugin-tools" aria-label=${`Function tools of ${p.name}`}>${own.map((t) => html`<li key=${t.name} title=${t.description}>
            <span class="plugin-tool-name">${t.displayName || t.name}</span> <code>${t.name}</code>${t.stealth ? html` <span class="pill">stealth</span>` : null}</li>`)}</ul>`
        : null}
    </section>`;
  })}`;
}
