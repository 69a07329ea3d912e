// A list of texts edited one box each (alternate greetings, group-only greetings): add,
// remove, reorder. The group is labelled by its field name.
import { html } from '../html.js';

/** @param {{label: string, items: string[], onChange: (items: string[]) => void, itemLabel: string}} props */
export function TextList({ label, items, onChange, itemLabel }) {
  /** @param {number} i @param {string} v */
  const set = (i, v) => onChange(items.map((x, j) => (j === i ? v : x)));
  /** @param {number} i @param {number} by */
  const move = (i, by) => {
    const next = [...items];
    const [x] = next.splice(i, 1);
    next.splice(i + by, 0, x);
    onChange(next);
  };
  return html`<fieldset class="text-list" role="group" aria-label=${label}>
    <legend>${label} <span class="muted">(${items.length})</span></legend>
    ${items.map(
      (text, i) => html`<div class="text-list-item" key=${i}>
        <textarea rows="3" aria-label=${`${itemLabel} ${i + 1}`} value=${text}
          onInput=${(/** @type {any} */ e) => set(i, e.currentTarget.value)}></textarea>
        <div class="column">
          <button type="button" class="small" aria-label=${`Move ${itemLabel} ${i + 1} up`} disabled=${i === 0} onClick=${() => move(i, -1)}>↑</button>
          <button type="button" class="small" aria-label=${`Move ${itemLabel} ${i + 1} down`} disabled=${i === items.length - 1} onClick=${() => move(i, 1)}>↓</button>
          <button type="button" class="small danger" aria-label=${`Remove ${itemLabel} ${i + 1}`} onClick=${() => onChange(items.filter((_, j) => j !== i))}>✕</button>
        </div>
      </div>`,
    )}
    <button type="button" class="small" onClick=${() => onChange([...items, ''])}>Add ${itemLabel.toLowerCase()}</button>
  </fieldset>`;
}
