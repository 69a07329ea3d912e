// Short notices: results and errors of actions, in words.
import { html } from '../html.js';
import { toasts, dismiss } from '../store.js';

export function Toasts() {
  return html`<div class="toasts" role="status" aria-live="polite">
    ${toasts.value.map(
      (t) => html`<div key=${t.id} class=${'toast ' + t.kind}>
        <span>${t.text}</span>
        <button type="button" class="icon" aria-label="Dismiss" onClick=${() => dismiss(t.id)}>×</button>
      </div>`,
    )}
  </div>`;
}
