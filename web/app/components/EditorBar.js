// The bar every workbench editor shares: Save (with the revision the draft was read at),
// Discard, Undo last save, what state the draft is in, errors, and the conflict panel.
import { html } from '../html.js';
import { save, discard, undoSave, isDirty } from '../drafts.js';
import { toast } from '../store.js';
import { ConflictPanel } from './ConflictPanel.js';

/**
 * @param {{d: import('../drafts.js').AssetDraft, labels?: Record<string, string>, children?: any}} props
 *   `children`: extra buttons (export, duplicate …).
 */
export function EditorBar({ d, labels, children }) {
  const dirty = isDirty(d);
  const onSave = async () => {
    if (await save(d)) toast('Saved', 'ok');
  };
  const onUndo = async () => {
    if (await undoSave(d)) toast('Last save undone', 'ok');
  };
  return html`<div class="editor-bar">
    <div class="row wrap">
      <button type="button" class="primary" onClick=${onSave} disabled=${d.busy.value || !!d.conflict.value || !dirty}>Save</button>
      <button type="button" onClick=${() => discard(d)} disabled=${!dirty}>Discard changes</button>
      <button type="button" onClick=${onUndo} disabled=${!d.undo.value || dirty || d.busy.value} title="Write back the version before the last save">Undo</button>
      ${children}
      <span class="muted" role="status">${d.busy.value
        ? 'Saving…'
        : dirty
          ? d.restored.value ? 'Unsaved changes (restored after reload)' : 'Unsaved changes'
          : d.savedAt.value ? 'Saved' : 'No changes'} · revision ${d.draft.value?.revision ?? '?'}</span>
    </div>
    ${d.error.value ? html`<p class="error" role="alert">${d.error.value}</p>` : null}
    ${d.conflict.value ? html`<${ConflictPanel} key=${d.conflict.value.revision} d=${d} labels=${labels} />` : null}
  </div>`;
}
