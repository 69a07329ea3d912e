// A plugin's settings page (/settings/plugins/{id}/settings): its facts, the enable switch, and the
// form the server resolved from `contributes.settings.schema` (labels, texts and defaults in
// the plugin locale). `break` starts a new group. Each field saves itself; Reset deletes the
// saved values, so every field with a default shows it again.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { toast, errorText } from '../store.js';
import { pluginDetail, pluginDetailError, pluginLocaleTick, loadPluginDetail, resetPluginConfig, setPluginEnabled } from '../plugins/store.js';
import { PluginCover } from './PluginCover.js';
import { PluginTags } from './PluginTags.js';
import { PluginField } from './PluginField.js';
import { PluginCrumbs } from './PluginCrumbs.js';

/** @param {{id: string}} props */
export function PluginSettings({ id }) {
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    loadPluginDetail(id);
  }, [id, pluginLocaleTick.value]);
  const p = pluginDetail.value && pluginDetail.value.id === id ? pluginDetail.value : null;
  const error = pluginDetailError.value;
  const crumbs = html`<${PluginCrumbs} trail=${[{ href: '/settings', label: 'Settings' }, { href: '/settings/plugins', label: 'Plugins' }]}
    current=${p ? p.name : error ? 'Not found' : 'Loading…'} />`;
  if (error) return html`<section class="screen">${crumbs}<p class="error" role="alert">${error}</p></section>`;
  if (!p) return html`<section class="screen">${crumbs}<p class="muted" aria-busy="true">Loading…</p></section>`;
  const schema = p.contributes?.settings?.schema || [];
  /** @type {{el: import('../plugins/store.js').SettingElement, index: number}[][]} */
  const groups = [[]];
  schema.forEach((el, index) => {
    if (el.type === 'break') groups.push([]);
    else groups[groups.length - 1].push({ el, index });
  });
  /** @param {() => Promise<any>} f */
  const act = async (f) => {
    setBusy(true);
    try {
      await f();
    } catch (e) {
      toast(errorText(e), 'error');
    } finally {
      setBusy(false);
    }
  };
  const hasOverrides = Object.keys(p.overrides || {}).length > 0;
  return html`<section class="screen plugin-settings" aria-labelledby="plugin-title">
    ${crumbs}
    <header class="plugin-head">
      <${PluginCover} plugin=${p} />
      <div class="grow">
        <div class="row wrap"><h1 id="plugin-title">${p.name}</h1><span class="pill" aria-label="Version">${p.version}</span>
          ${p.author ? html`<span class="muted">by ${p.author}</span>` : null}</div>
        <div class="muted"><code>${p.id}</code></div>
        ${p.description ? html`<p>${p.description}</p>` : null}
        <${PluginTags} tags=${p.tags} />
      </div>
      <label class="check switch"><input type="checkbox" role="switch" aria-label=${`Enable ${p.name}`} checked=${p.enabled} disabled=${busy}
        onChange=${(/** @type {any} */ e) => act(() => setPluginEnabled(p.id, e.currentTarget.checked))} /> Enabled</label>
    </header>
    <div class="row spread"><h2>Settings</h2>
      <button type="button" disabled=${busy || !schema.length} title=${hasOverrides ? 'Restore every field to its default' : 'Nothing saved yet'}
        onClick=${() => act(async () => { await resetPluginConfig(p.id); toast('Settings reset to their defaults', 'ok'); })}>Reset</button></div>
    ${schema.length
      ? groups.filter((g) => g.length).map((g, gi) => html`<div class="card plugin-group" role="group" aria-label=${`Settings group ${gi + 1}`} key=${gi}>
          ${g.map(({ el, index }) => html`<${PluginField} key=${index} index=${index} pluginId=${p.id} element=${el}
            value=${el.key ? p.config?.[el.key] ?? null : null} changed=${!!el.key && Object.prototype.hasOwnProperty.call(p.overrides || {}, el.key)} />`)}
        </div>`)
      : html`<p class="muted">This plugin has no settings.</p>`}
  </section>`;
}
