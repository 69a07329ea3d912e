// `tavo.utils.select`: a picker of the script's options (label, subtitle, description); the
// chosen value, or null when cancelled.
import { useEffect, useRef } from 'preact/hooks';
import { html } from '../html.js';

/** @param {{title: string, options: {value: string, label: string, description?: string, subtitle?: string}[], defaultValue?: string, onAnswer: (v: string|null) => void}} props */
export function SelectDialog({ title, options, defaultValue, onAnswer }) {
  const ref = useRef(/** @type {HTMLDialogElement|null} */ (null));
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    const chosen = /** @type {HTMLElement|null} */ (d && (d.querySelector('[aria-pressed="true"]') || d.querySelector('.select-option')));
    if (chosen) chosen.focus();
    return () => {
      if (d && d.open) d.close();
    };
  }, []);
  return html`<dialog ref=${ref} class="confirm select-dialog" aria-labelledby="select-title"
      onCancel=${(/** @type {Event} */ e) => { e.preventDefault(); onAnswer(null); }}>
    <h2 id="select-title">${title}</h2>
    <ul class="select-options">${options.map((o) => html`<li key=${o.value}>
      <button type="button" class="select-option" aria-pressed=${o.value === defaultValue ? 'true' : 'false'} onClick=${() => onAnswer(o.value)}>
        <strong>${o.label}</strong>${o.subtitle ? html` <small class="muted">${o.subtitle}</small>` : null}
        ${o.description ? html`<span class="muted">${o.description}</span>` : null}
      </button></li>`)}</ul>
    <div class="row end"><button type="button" onClick=${() => onAnswer(null)}>Cancel</button></div>
  </dialog>`;
}
