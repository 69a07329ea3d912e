// A form over an asset's main fields (a character's card, a persona). The write carries the
// `revision` the form was opened at; when someone else wrote the asset since (409), nothing is
// overwritten: the form keeps the user's text and says so, and the user chooses to load the
// newer version (losing their edits) or to keep editing and save over it knowingly.
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { get, put, ApiError } from '../api.js';
import { errorText } from '../store.js';

/**
 * @typedef {{key: string, label: string, multiline?: boolean, list?: boolean, required?: boolean}} Field
 */

/**
 * @param {{kind: 'character'|'persona', asset: any, fields: Field[], title: string,
 *   onSaved: (asset: any) => void, onCancel: () => void}} props
 */
export function AssetEditor({ kind, asset, fields, title, onSaved, onCancel }) {
  const [base, setBase] = useState(asset);
  /** @param {any} a */
  const valuesOf = (a) => Object.fromEntries(fields.map((f) => [f.key, f.list ? (a[f.key] || []).join('\n\n---\n\n') : a[f.key] ?? '']));
  const [values, setValues] = useState(() => valuesOf(asset));
  const [error, setError] = useState(/** @type {string|null} */ (null));
  const [conflict, setConflict] = useState(/** @type {any} */ (null));
  const [busy, setBusy] = useState(false);
  const body = () => {
    /** @type {Record<string, any>} */
    const out = { ...base };
    for (const f of fields) {
      const v = values[f.key];
      out[f.key] = f.list ? v.split(/\n\s*---\s*\n/).map((/** @type {string} */ s) => s.trim()).filter(Boolean) : v;
    }
    return out;
  };
  /** @param {Event} e */
  const save = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const written = await put(`/api/library/${kind}/${asset.id}`, body());
      onSaved({ ...body(), revision: written.revision });
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) {
        try {
          setConflict(await get(`/api/library/${kind}/${asset.id}`));
        } catch (again) {
          setError(errorText(again));
        }
      } else setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  const loadTheirs = () => {
    setBase(conflict);
    setValues(valuesOf(conflict));
    setConflict(null);
  };
  const keepMine = () => {
    // Save over the newer version only after the user has seen it changed: rebase on it.
    setBase({ ...base, ...conflict, revision: conflict.revision });
    setConflict(null);
  };
  return html`<form class="asset-editor" aria-label=${title} onSubmit=${save}>
    <h2>${title}</h2>
    ${conflict
      ? html`<div class="conflict" role="alert">
          <p><strong>Not saved: ${conflict.name || 'this ' + kind} was changed elsewhere</strong> while you edited it
            (you opened revision ${base.revision}; it is now at revision ${conflict.revision}). Your text is still here; nothing was overwritten.</p>
          <div class="row wrap"><button type="button" onClick=${loadTheirs}>Load the newer version</button>
            <button type="button" onClick=${keepMine}>Keep my edits</button></div>
          <p class="muted">“Keep my edits” lets you save over the newer version with the Save button.</p>
        </div>`
      : null}
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    ${fields.map(
      (f) => html`<label key=${f.key} class="field">${f.label}${f.list ? html` <span class="muted">(separate with a line of ---)</span>` : null}
        ${f.multiline || f.list
          ? html`<textarea rows=${f.list ? 6 : 4} required=${!!f.required} value=${values[f.key]}
              onInput=${(/** @type {any} */ e) => setValues({ ...values, [f.key]: e.currentTarget.value })}></textarea>`
          : html`<input required=${!!f.required} value=${values[f.key]}
              onInput=${(/** @type {any} */ e) => setValues({ ...values, [f.key]: e.currentTarget.value })} />`}
      </label>`,
    )}
    <div class="row end"><button type="button" onClick=${onCancel}>Cancel</button>
      <button type="submit" class="primary" disabled=${busy || !!conflict}>Save</button></div>
  </form>`;
}

/** A character's main fields. @type {Field[]} */
export const CHARACTER_FIELDS = [
  { key: 'name', label: 'Name', required: true },
  { key: 'description', label: 'Description', multiline: true },
  { key: 'personality', label: 'Personality', multiline: true },
  { key: 'scenario', label: 'Scenario', multiline: true },
  { key: 'firstMes', label: 'First message', multiline: true, required: true },
  { key: 'alternateGreetings', label: 'Alternate greetings', list: true },
  { key: 'creatorNotes', label: "Creator's notes", multiline: true },
];
