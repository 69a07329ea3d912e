// One preset entry's fields: name, content (markers have none: their text comes from the
// card, the chat or the examples), role, injection position and depth, the override switch.
import { html } from '../html.js';

/** Whether an entry is a marker (a place, not a text). @param {any} e */
export const isMarker = (e) => e.type === 'marker';

/** One entry's fields. @param {{entry: any, onChange: (c: Record<string, any>) => void}} props */
export function PresetEntryForm({ entry, onChange }) {
  const marker = isMarker(entry);
  return html`<form class="entry-form" aria-label=${'Entry ' + (entry.name || entry.identifier)} onSubmit=${(/** @type {Event} */ e) => e.preventDefault()}>
    <p class="muted small">${entry.identifier} · ${marker ? 'marker: its text comes from the card, the chat or the examples' : entry.type || 'custom'}</p>
    <label class="field">Name <input value=${entry.name || ''} onInput=${(/** @type {any} */ e) => onChange({ name: e.currentTarget.value })} /></label>
    ${marker ? null : html`<label class="field">Content <textarea rows="10" value=${entry.content || ''} onInput=${(/** @type {any} */ e) => onChange({ content: e.currentTarget.value })}></textarea></label>`}
    <div class="row wrap">
      <label class="field narrow">Role <select value=${entry.role || 'system'} onChange=${(/** @type {any} */ e) => onChange({ role: e.currentTarget.value })}>
        <option value="system">System</option><option value="user">User</option><option value="assistant">Assistant</option></select></label>
      <label class="field narrow">Position <select value=${entry.injectionPosition || 'relative'} onChange=${(/** @type {any} */ e) => onChange({ injectionPosition: e.currentTarget.value })}>
        <option value="relative">Relative</option><option value="absolute">In chat (at depth)</option></select></label>
      <label class="field narrow">Depth <input type="number" min="0" value=${entry.injectionDepth ?? 0}
        onInput=${(/** @type {any} */ e) => e.currentTarget.value !== '' && onChange({ injectionDepth: Number(e.currentTarget.value) })} /></label>
      <label class="check"><input type="checkbox" checked=${!!entry.forbidOverrides} onChange=${(/** @type {any} */ e) => onChange({ forbidOverrides: e.currentTarget.checked })} /> Cards may not override</label>
    </div>
  </form>`;
}
