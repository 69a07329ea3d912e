// Settings → Plugins (/settings/plugins): import a package (checked first, then a risk
// warning, then installed), search, and the installed plugins — cover, name, version, author,
// description, function tags, an enable switch, settings and uninstall.
import { useEffect } from 'preact/hooks';
import { html } from '../html.js';
import { plugins, pluginQuery, pluginLocaleTick, loadPlugins, searchPlugins, checkPackage, installing, installError, pendingInstall } from '../plugins/store.js';
import { PluginRow } from './PluginRow.js';
import { PluginCrumbs } from './PluginCrumbs.js';
import { PluginInstallDialog } from './PluginInstallDialog.js';

export function PluginList() {
  useEffect(() => {
    loadPlugins();
  }, [pluginLocaleTick.value]);
  const list = plugins.value;
  const q = pluginQuery.value;
  return html`<section class="screen plugins" aria-labelledby="plugins-title">
    <${PluginCrumbs} trail=${[{ href: '/settings', label: 'Settings' }]} current="Plugins" />
    <div class="toolbar">
      <h1 id="plugins-title">Plugins</h1>
      <input type="search" class="grow" role="searchbox" aria-label="Search plugins" placeholder="Search plugins (name, id, author, description, version)"
        value=${q} onInput=${(/** @type {any} */ e) => searchPlugins(e.currentTarget.value)} />
      <label class="button" for="plugin-import">Import plugin…</label>
      <input id="plugin-import" class="visually-hidden" type="file" aria-label="Import plugin" accept=".tpg,.zip,application/zip"
        onChange=${(/** @type {any} */ e) => { const f = e.currentTarget.files[0]; e.currentTarget.value = ''; if (f) checkPackage(f); }} />
    </div>
    <p class="muted">Plugins run only in chats with advanced rendering on. They are code made by others: install only what you trust.</p>
    ${installing.value ? html`<p role="status" class="muted">Checking the package…</p>` : null}
    ${installError.value ? html`<p class="error plugin-refused" role="alert"><strong>Not installed:</strong> ${installError.value}</p>` : null}
    ${list === null
      ? html`<p class="muted" aria-busy="true">Loading…</p>`
      : list.length === 0
        ? q.trim()
          ? html`<p class="muted">No plugin matches “${q}”.</p>`
          : html`<div class="empty"><p>No plugins yet.</p><p>Import a <code>.tpg</code> (or <code>.zip</code>) package with <strong>Import plugin…</strong>.</p></div>`
        : html`<ul class="plugin-list" aria-label="Installed plugins">${list.map((p) => html`<${PluginRow} key=${p.id} plugin=${p} />`)}</ul>`}
    ${pendingInstall.value ? html`<${PluginInstallDialog} pending=${pendingInstall.value} />` : null}
  </section>`;
}
