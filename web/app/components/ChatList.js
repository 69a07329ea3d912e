// Chats, most recent first (/chats), a new group chat (several characters and a reply mode),
// and the rows a character page reuses.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { link, navigate } from '../router.js';
import { get } from '../api.js';
import { liveReplies, libraryTick, errorText, createChat } from '../store.js';
import { REPLY_MODES } from './ChatPanel.js';

export function ChatList() {
  const [rows, setRows] = useState(/** @type {any[] | null} */ (null));
  const [error, setError] = useState(/** @type {string|null} */ (null));
  useEffect(() => {
    get('/api/chats').then(setRows, (e) => setError(errorText(e)));
  }, [libraryTick.value]);
  const [grouping, setGrouping] = useState(false);
  return html`<section class="screen">
    <div class="row spread"><h1>Chats</h1>
      ${grouping ? null : html`<button type="button" onClick=${() => setGrouping(true)}>New group chat</button>`}</div>
    ${grouping ? html`<${NewGroupChat} onCancel=${() => setGrouping(false)} />` : null}
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    ${rows === null ? html`<p class="muted">Loading…</p>` : rows.length ? html`<${ChatRows} rows=${rows} />` : html`<p class="muted">No chats yet: open a character and start one.</p>`}
  </section>`;
}

/** @param {{rows: any[]}} props */
export function ChatRows({ rows }) {
  const live = liveReplies.value;
  return html`<ul class="chat-rows">
    ${rows.map((c) => {
      const r = live[c.id];
      return html`<li key=${c.id}>
        <a href=${'/chats/' + c.id} onClick=${link}>
          <span class="grow"><strong>${c.name || 'Chat ' + c.id}</strong>
            <span class="muted"> · ${c.characters.map((/** @type {any} */ m) => m.name).join(', ')} · ${c.messages} messages</span></span>
          ${r ? html`<span class=${'badge ' + r.status}>${r.status === 'waiting' ? 'waiting for you' : 'replying'}</span>` : null}
          <time class="muted" datetime=${c.updatedAt}>${new Date(c.updatedAt).toLocaleDateString()}</time>
        </a>
      </li>`;
    })}
  </ul>`;
}

/** A group chat from the library's characters: at least two, in the order ticked. @param {{onCancel: () => void}} props */
function NewGroupChat({ onCancel }) {
  const [all, setAll] = useState(/** @type {{id: number, name: string}[] | null} */ (null));
  const [picked, setPicked] = useState(/** @type {number[]} */ ([]));
  const [name, setName] = useState('');
  const [mode, setMode] = useState('natural');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(/** @type {string|null} */ (null));
  useEffect(() => {
    get('/api/library/character').then(setAll, (e) => setError(errorText(e)));
  }, []);
  /** @param {Event} e */
  const submit = async (e) => {
    e.preventDefault();
    if (picked.length < 2) return setError('Choose at least two characters.');
    setBusy(true);
    setError(null);
    try {
      const id = await createChat(/** @type {any} */ ({ characters: picked, name: name.trim() || undefined, replyMode: mode }));
      navigate('/chats/' + id);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return html`<form class="card form" onSubmit=${submit} aria-label="New group chat" aria-busy=${busy}>
    <fieldset><legend>Members <span class="muted small">(in the order you tick them; every member's greeting opens the chat)</span></legend>
      ${all === null
        ? html`<p class="muted">Loading…</p>`
        : all.length < 2
          ? html`<p class="muted">A group chat needs at least two characters in the library.</p>`
          : html`<div class="row wrap">${all.map((c) => html`<label key=${c.id} class="check"><input type="checkbox" checked=${picked.includes(c.id)}
              onChange=${(/** @type {any} */ e) => setPicked(e.currentTarget.checked ? [...picked, c.id] : picked.filter((x) => x !== c.id))} /> ${c.name}</label>`)}</div>`}
    </fieldset>
    <label>Name <input value=${name} placeholder="The tavern" onInput=${(/** @type {any} */ e) => setName(e.currentTarget.value)} /></label>
    <label>Reply mode <select value=${mode} onChange=${(/** @type {any} */ e) => setMode(e.currentTarget.value)}>
      ${REPLY_MODES.map(([v, l]) => html`<option key=${v} value=${v}>${l}</option>`)}</select></label>
    <p class="muted small">${(REPLY_MODES.find(([v]) => v === mode) || REPLY_MODES[0])[2]}</p>
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    <div class="row"><button type="submit" class="primary" disabled=${busy || picked.length < 2}>Create group chat</button>
      <button type="button" onClick=${onCancel}>Cancel</button></div>
  </form>`;
}
