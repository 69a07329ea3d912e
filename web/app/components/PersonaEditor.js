// One persona's fields (name, description) edited the way every workbench editor edits: a draft
// saved with the revision it was read at, a conflict shown side by side and merged by field,
// unsaved edits kept across a reload and the last save undoable (drafts.js, EditorBar). The
// avatar (uploaded and cropped 2:3) is written at once, outside the draft.
import { useEffect } from 'preact/hooks';
import { html } from '../html.js';
import { assetDraft, loadDraft, setField } from '../drafts.js';
import { EditorBar } from './EditorBar.js';
import { AvatarCrop } from './AvatarCrop.js';

/** Labels of the conflict panel. */
const LABELS = { name: 'Name', description: 'Description' };

/** @param {{id: number, onClose: () => void, onAvatar: () => void}} props */
export function PersonaEditor({ id, onClose, onAvatar }) {
  const d = assetDraft('persona', id);
  useEffect(() => {
    loadDraft(d);
  }, [id]);
  const persona = d.draft.value;
  if (d.error.value && !persona) return html`<p class="error" role="alert">${d.error.value}</p>`;
  if (!persona) return html`<p class="muted" aria-busy="true">Loading…</p>`;
  const title = 'Edit persona ' + (d.base.value?.name || persona.name);
  return html`<div class="persona-editor">
    <form class="asset-editor" aria-label=${title} onSubmit=${(/** @type {Event} */ e) => e.preventDefault()}>
      <h2>${title}</h2>
      <${EditorBar} d=${d} labels=${LABELS}>
        <button type="button" onClick=${onClose}>Close</button>
      <//>
      <label class="field">Name <input required value=${persona.name}
        onInput=${(/** @type {any} */ e) => setField(d, 'name', e.currentTarget.value)} /></label>
      <label class="field">Description <textarea rows="4" value=${persona.description || ''}
        onInput=${(/** @type {any} */ e) => setField(d, 'description', e.currentTarget.value)}></textarea></label>
    </form>
    <${AvatarCrop} key=${'crop-' + id} id=${id} target=${`/api/personas/${id}/avatar`} onDone=${onAvatar} />
  </div>`;
}
