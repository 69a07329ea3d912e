// The per-file results of the last import: what was created, warnings, and why a file failed.
import { html } from '../html.js';
import { link } from '../router.js';
import { importResults } from '../store.js';

export function ImportResults() {
  const results = importResults.value;
  if (!results) return null;
  return html`<section class="card import-results" aria-label="Import results">
    <div class="row spread"><h2>Import results</h2>
      <button type="button" class="icon" aria-label="Close import results" onClick=${() => (importResults.value = null)}>×</button></div>
    <ul>
      ${results.map(
        (r, i) => html`<li key=${i} class=${r.ok ? 'ok' : 'failed'}>
          <strong>${r.file}</strong>
          ${r.ok
            ? html` — ${r.kind}${r.name ? html` “${r.characterId ? html`<a href=${'/characters/' + r.characterId} onClick=${link}>${r.name}</a>` : r.name}”` : null}`
            : html` — <span class="error">failed: ${r.error?.message || 'unknown error'}</span>`}
          ${r.warnings && r.warnings.length
            ? html`<ul class="warnings">${r.warnings.map(
                (/** @type {any} */ w, /** @type {number} */ j) => html`<li key=${j}><code>${w.code}</code> ${w.path ? html`<code>${w.path}</code> ` : null}${w.message}</li>`,
              )}</ul>`
            : null}
        </li>`,
      )}
    </ul>
  </section>`;
}
