// One installed plugin in the list: cover, name, version, author, description, function tags,
// the enable switch, its settings page and uninstall (after a question).
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { link } from '../router.js';
import { toast, errorText } from '../store.js';
import { setPluginEnabled, uninstallPlugin, pluginPage } from '../plugins/store.js';
import { PluginCover } from './PluginCover.js';
import { PluginTags } from './PluginTags.js';
import { PluginUninstallDialog } from './PluginUninstallDialog.js';

/** @param {{plugin: import('../plugins/store.js').PluginSummary}} props */
export function PluginRow({ plugin: p }) {
  const [busy, setBusy] = useState(false);
  const [asking, setAsking] = useState(false);
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
  const titleId = `plugin-${p.id.replace(/[^a-z0-9]/gi, '-')}`;
  return html`<li class="card plugin-row" aria-labelledby=${titleId} data-plugin=${p.id}>
    <${PluginCover} plugin=${p} />
    <div class="plugin-main">
      <div class="row wrap plugin-title">
        <strong id=${titleId}>${p.name}</strong>
        <span class="pill" aria-label="Version">${p.version}</span>
        ${p.author ? html`<span class="muted">by ${p.author}</span>` : null}
        ${!p.enabled ? html`<span class="pill off">disabled</span>` : null}
      </div>
      <div class="muted plugin-id"><code>${p.id}</code></div>
      ${p.description ? html`<p class="plugin-description">${p.description}</p>` : null}
      <${PluginTags} tags=${p.tags} />
    </div>
    <div class="plugin-actions">
      <label class="check switch"><input type="checkbox" role="switch" aria-label=${`Enable ${p.name}`} checked=${p.enabled} disabled=${busy}
        onChange=${(/** @type {any} */ e) => act(() => setPluginEnabled(p.id, e.currentTarget.checked))} /> Enabled</label>
      <a class="button small" href=${pluginPage(p.id)} onClick=${link} aria-label=${`Settings of ${p.name}`}>Settings</a>
      <button type="button" class="small danger" disabled=${busy} onClick=${() => setAsking(true)} aria-label=${`Uninstall ${p.name}`}>Uninstall</button>
    </div>
    ${asking
      ? html`<${PluginUninstallDialog} plugin=${p} onAnswer=${(/** @type {boolean} */ yes) => {
          setAsking(false);
          if (yes) act(async () => { await uninstallPlugin(p.id); toast(`Uninstalled ${p.name}`, 'ok'); });
        }} />`
      : null}
  </li>`;
}
