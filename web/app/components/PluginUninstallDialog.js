// The question before a plugin is uninstalled (its files and saved settings go).
import { useEffect, useRef } from 'preact/hooks';
import { html } from '../html.js';

/** @param {{plugin: {id: string, name: string}, onAnswer: (yes: boolean) => void}} props */
export function PluginUninstallDialog({ plugin, onAnswer }) {
  const ref = useRef(/** @type {HTMLDialogElement|null} */ (null));
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    return () => {
      if (d && d.open) d.close();
    };
  }, []);
  return html`<dialog ref=${ref} class="confirm" aria-labelledby="uninstall-title"
      onCancel=${(/** @type {Event} */ e) => { e.preventDefault(); onAnswer(false); }}>
    <h2 id="uninstall-title">Uninstall ${plugin.name}?</h2>
    <p>The plugin <code>${plugin.id}</code>, its files and its saved settings are removed. Chats keep their messages.</p>
    <div class="row end">
      <button type="button" onClick=${() => onAnswer(false)}>Cancel</button>
      <button type="button" class="primary danger" onClick=${() => onAnswer(true)}>Uninstall</button>
    </div>
  </dialog>`;
}
