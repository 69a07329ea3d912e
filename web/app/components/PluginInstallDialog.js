// Tavo's risk warning before a plugin is installed: what the checked package is (name, id,
// version, author), what it says it uses (permissions — declared, not enforced) and touches
// (function tags), and the server's warnings. Install installs; Cancel stores nothing.
import { useEffect, useRef } from 'preact/hooks';
import { html } from '../html.js';
import { confirmInstall, cancelInstall } from '../plugins/store.js';
import { PluginTags } from './PluginTags.js';

/** @param {{pending: import('../plugins/store.js').PendingInstall}} props */
export function PluginInstallDialog({ pending }) {
  const ref = useRef(/** @type {HTMLDialogElement|null} */ (null));
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    return () => {
      if (d && d.open) d.close();
    };
  }, []);
  const p = pending.plugin;
  return html`<dialog ref=${ref} class="confirm plugin-install" aria-labelledby="install-title" aria-describedby="install-risk"
      onCancel=${(/** @type {Event} */ e) => { e.preventDefault(); cancelInstall(); }}>
    <h2 id="install-title">Install ${p.name}?</h2>
    <p id="install-risk" class="risk" role="note"><strong>Plugins run code made by others.</strong> In chats with advanced rendering on,
      this plugin can read and change your chats, messages and library through the TavoJS API, rewrite or cancel what you send,
      and show its own content. Install it only if you trust its author.</p>
    <dl class="plugin-facts">
      <dt>Name</dt><dd>${p.name}</dd>
      <dt>Id</dt><dd><code>${p.id}</code></dd>
      <dt>Version</dt><dd>${p.version}${pending.replaces ? html` <span class="muted">(replaces ${pending.replaces.version})</span>` : null}</dd>
      <dt>Author</dt><dd>${p.author || html`<span class="muted">not given</span>`}</dd>
      <dt>Permissions</dt><dd>${p.permissions && p.permissions.length
        ? html`<ul class="tags" aria-label="Permissions">${p.permissions.map((x) => html`<li key=${x}>${x}</li>`)}</ul>`
        : html`<span class="muted">none declared</span>`}</dd>
      <dt>Function tags</dt><dd>${p.tags && p.tags.length ? html`<${PluginTags} tags=${p.tags} />` : html`<span class="muted">none</span>`}</dd>
    </dl>
    ${pending.warnings.length ? html`<ul class="warnings" aria-label="Warnings">${pending.warnings.map((w, i) => html`<li key=${i}>${w}</li>`)}</ul>` : null}
    <div class="row end">
      <button type="button" onClick=${cancelInstall}>Cancel</button>
      <button type="button" class="primary" onClick=${confirmInstall}>Install</button>
    </div>
  </dialog>`;
}
