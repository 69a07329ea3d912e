// The library: characters as a grid of avatars, with search, import (file picker or drop)
// and the per-file results of the last import; personas; on a server with accounts, what is
// shared with everyone.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { link, navigate } from '../router.js';
import { characters, loadCharacters, importAll, importing, createCharacter, toast, errorText } from '../store.js';
import { ImportResults } from './ImportResults.js';
import { Avatar } from './Avatar.js';
import { Personas } from './Personas.js';
import { SharedLibrary } from './SharedLibrary.js';

export function Library() {
  const [query, setQuery] = useState('');
  const [dragging, setDragging] = useState(false);
  const [creating, setCreating] = useState(false);
  useEffect(() => {
    loadCharacters();
  }, []);
  const list = characters.value;
  const q = query.trim().toLowerCase();
  const shown = list ? list.filter((c) => !q || c.name.toLowerCase().includes(q)) : [];
  /** @param {DragEvent} e */
  const drop = (e) => {
    e.preventDefault();
    setDragging(false);
    importAll([...(e.dataTransfer?.files || [])]);
  };
  return html`<section class=${'screen library' + (dragging ? ' dragging' : '')}
      onDragOver=${(/** @type {DragEvent} */ e) => { e.preventDefault(); setDragging(true); }}
      onDragLeave=${() => setDragging(false)} onDrop=${drop}>
    <div class="toolbar">
      <h1>Characters</h1>
      <input type="search" class="grow" placeholder="Search characters" aria-label="Search characters"
        value=${query} onInput=${(/** @type {any} */ e) => setQuery(e.currentTarget.value)} />
      <label class="button" for="import-files">Import…</label>
      <input id="import-files" class="visually-hidden" type="file" name="Import" aria-label="Import" multiple
        accept=".png,.json,.jsonl,.charx,application/json,image/png"
        onChange=${(/** @type {any} */ e) => { importAll([...e.currentTarget.files]); e.currentTarget.value = ''; }} />
      <button type="button" onClick=${() => setCreating(!creating)} aria-expanded=${creating}>New character</button>
    </div>
    ${importing.value ? html`<p role="status" class="muted">Importing…</p>` : null}
    <${ImportResults} />
    ${creating ? html`<${NewCharacter} onDone=${() => setCreating(false)} />` : null}
    ${list === null
      ? html`<p class="muted" aria-busy="true">Loading…</p>`
      : list.length === 0
        ? html`<div class="empty"><p>No characters yet.</p><p>Import a card (PNG, JSON, charx) with <strong>Import…</strong>, drop files here, or create one.</p></div>`
        : html`<ul class="grid" aria-label="Characters">
            ${shown.map(
              (c) => html`<li key=${c.id}>
                <a class="tile" href=${'/characters/' + c.id} onClick=${link}>
                  <${Avatar} src=${'/api/characters/' + c.id + '/avatar'} name=${c.name} size="large" />
                  <span class="tile-name">${c.name}</span>
                </a>
              </li>`,
            )}
          </ul>
          ${shown.length === 0 ? html`<p class="muted">No character matches “${query}”.</p>` : null}`}
    <${Personas} />
    <${SharedLibrary} />
  </section>`;
}

/** @param {{onDone: () => void}} props */
function NewCharacter({ onDone }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [firstMes, setFirstMes] = useState('');
  const [busy, setBusy] = useState(false);
  /** @param {Event} e */
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    try {
      const id = await createCharacter({ name: name.trim(), description, firstMes });
      onDone();
      navigate('/characters/' + id);
    } catch (err) {
      toast(errorText(err), 'error');
    } finally {
      setBusy(false);
    }
  };
  return html`<form class="card form" onSubmit=${submit} aria-label="New character">
    <h2>New character</h2>
    <label>Name <input value=${name} required onInput=${(/** @type {any} */ e) => setName(e.currentTarget.value)} /></label>
    <label>Description <textarea rows="3" value=${description} onInput=${(/** @type {any} */ e) => setDescription(e.currentTarget.value)}></textarea></label>
    <label>Greeting (first message) <textarea rows="3" value=${firstMes} onInput=${(/** @type {any} */ e) => setFirstMes(e.currentTarget.value)}></textarea></label>
    <div class="row"><button type="submit" class="primary" disabled=${busy || !name.trim()}>Create</button>
    <button type="button" onClick=${onDone}>Cancel</button></div>
  </form>`;
}
