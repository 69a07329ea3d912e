// Personas: who the user is in chats; create one, choose the default, edit one
// (PersonaEditor: name, description, avatar with the same 2:3 crop as cards).
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { get } from '../api.js';
import { personas, loadPersonas, createPersona, setDefaultPersona, toast, errorText, libraryTick } from '../store.js';
import { Avatar } from './Avatar.js';
import { PersonaEditor } from './PersonaEditor.js';

export function Personas() {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [active, setActive] = useState(/** @type {Record<number, boolean>} */ ({}));
  /** The id of the persona being edited. */
  const [editing, setEditing] = useState(/** @type {number|null} */ (null));
  /** Bumped after an avatar upload, so the pictures reload. */
  const [avatarTick, setAvatarTick] = useState(0);
  useEffect(() => {
    loadPersonas();
  }, [libraryTick.value]);
  const list = personas.value || [];
  useEffect(() => {
    // Which one is the default needs the full objects (summaries do not carry `active`).
    Promise.all(list.map((p) => get('/api/library/persona/' + p.id)))
      .then((full) => {
        /** @type {Record<number, boolean>} */
        const map = {};
        for (const p of full) map[p.id] = !!p.active;
        setActive(map);
      })
      .catch(() => {});
  }, [personas.value]);
  /** @param {Event} e */
  const submit = async (e) => {
    e.preventDefault();
    try {
      await createPersona({ name: name.trim(), description });
      setName('');
      setDescription('');
    } catch (err) {
      toast(errorText(err), 'error');
    }
  };
  return html`<section class="personas" aria-label="Personas">
    <h2>Personas</h2>
    ${list.length
      ? html`<ul class="persona-list">${list.map(
          (p) => html`<li key=${p.id}><${Avatar} key=${avatarTick} src=${`/api/personas/${p.id}/avatar?v=${avatarTick}`} name=${p.name} /><span>${p.name}</span>
            ${active[p.id]
              ? html`<span class="pill">default</span>`
              : html`<button type="button" class="small" onClick=${() => setDefaultPersona(p.id).catch((err) => toast(errorText(err), 'error'))}>Make default</button>`}
            <button type="button" class="small" aria-label=${'Edit ' + p.name} onClick=${() => setEditing(p.id)}>Edit</button>
          </li>`,
        )}</ul>`
      : html`<p class="muted">No personas: chats call you “User”.</p>`}
    ${editing != null
      ? html`<${PersonaEditor} key=${editing} id=${editing} onClose=${() => setEditing(null)}
          onAvatar=${() => setAvatarTick(avatarTick + 1)} />`
      : null}
    <form class="row wrap" onSubmit=${submit} aria-label="New persona">
      <input placeholder="Persona name" aria-label="Persona name" value=${name} required onInput=${(/** @type {any} */ e) => setName(e.currentTarget.value)} />
      <input class="grow" placeholder="Description" aria-label="Persona description" value=${description} onInput=${(/** @type {any} */ e) => setDescription(e.currentTarget.value)} />
      <button type="submit" disabled=${!name.trim()}>Add persona</button>
    </form>
  </section>`;
}
