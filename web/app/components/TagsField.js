// A comma-separated tags field. While it has focus the text stays as typed (a trailing comma
// or space is not swallowed by a re-render), and every keystroke updates the tags, so a save
// at any moment carries what the field shows; on blur it shows the tags normalised.
import { useState } from 'preact/hooks';
import { html } from '../html.js';

/** @param {string} text */
export const tagsOf = (text) => text.split(',').map((t) => t.trim()).filter(Boolean);

/** @param {{tags: string[], onChange: (tags: string[]) => void}} props */
export function TagsField({ tags, onChange }) {
  const [text, setText] = useState(/** @type {string|null} */ (null));
  return html`<label class="field">Tags <span class="muted small" aria-hidden="true">(comma-separated)</span>
    <input value=${text ?? tags.join(', ')}
      onInput=${(/** @type {any} */ e) => {
        const value = e.currentTarget.value;
        setText(value);
        onChange(tagsOf(value));
      }}
      onBlur=${() => setText(null)} />
  </label>`;
}
