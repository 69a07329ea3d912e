// A character's page (/characters/{id}): the card, its greetings, its chats; start a chat,
// export in every format, share with everyone (an admin of a server with accounts), delete.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { link, navigate } from '../router.js';
import { get } from '../api.js';
import { createChat, deleteAsset, toast, errorText, libraryTick } from '../store.js';
import { render } from '../markdown.js';
import { Avatar } from './Avatar.js';
import { ChatRows } from './ChatList.js';
import { AssetEditor, CHARACTER_FIELDS } from './AssetEditor.js';
import { ShareButton } from './ShareButton.js';

const FORMATS = [
  ['png', 'PNG card'],
  ['ccv3-json', 'CCv3 JSON'],
  ['ccv2-json', 'CCv2 JSON'],
  ['charx', 'charx'],
  ['tavo', 'Tavo JSON'],
];

/** @param {{id: number}} props */
export function CharacterPage({ id }) {
  const [card, setCard] = useState(/** @type {any} */ (null));
  const [chats, setChats] = useState(/** @type {any[] | null} */ (null));
  const [error, setError] = useState(/** @type {string|null} */ (null));
  const [busy, setBusy] = useState(false);
  const [editing, setEditing] = useState(false);
  // The card as stored (for editing) and as shown (macros expanded by the server).
  const [shown, setShown] = useState(/** @type {any} */ (null));
  useEffect(() => {
    get(`/api/library/character/${id}`).then(setCard, (e) => setError(errorText(e)));
    get(`/api/characters/${id}/display`).then(setShown, () => setShown(null));
  }, [id, libraryTick.value]);
  useEffect(() => {
    get(`/api/chats?character=${id}`).then(setChats, () => setChats([]));
  }, [id, libraryTick.value]);
  if (error) return html`<section class="screen"><p class="error" role="alert">${error}</p><p><a href="/" onClick=${link}>Back to the library</a></p></section>`;
  if (!card) return html`<section class="screen"><p class="muted" aria-busy="true">Loading…</p></section>`;
  const start = async () => {
    setBusy(true);
    try {
      const chat = await createChat({ characters: [id] });
      navigate('/chats/' + chat);
    } catch (e) {
      toast(errorText(e), 'error');
    } finally {
      setBusy(false);
    }
  };
  const remove = async () => {
    if (!confirm(`Delete ${card.name}? Its chats stay, without this member.`)) return;
    try {
      await deleteAsset('character', id);
      navigate('/', { replace: true });
    } catch (e) {
      toast(errorText(e), 'error');
    }
  };
  const view = shown || card;
  const greetings = [view.firstMes, ...(view.alternateGreetings || [])].filter((g) => g && g.trim());
  return html`<section class="screen character">
    <div class="character-head">
      <${Avatar} src=${`/api/characters/${id}/avatar`} name=${card.name} size="large" />
      <div class="grow">
        <h1>${card.name}</h1>
        ${card.creator ? html`<p class="muted">by ${card.creator}${card.characterVersion ? ' · ' + card.characterVersion : ''}</p>` : null}
        ${card.tags && card.tags.length ? html`<ul class="tags" aria-label="Tags">${card.tags.map((/** @type {string} */ t) => html`<li key=${t}>${t}</li>`)}</ul>` : null}
        <div class="row wrap">
          <button type="button" class="primary" onClick=${start} disabled=${busy}>New chat</button>
          <details class="menu">
            <summary class="button">Export</summary>
            <ul>${FORMATS.map(([f, label]) => html`<li key=${f}><a href=${`/api/export/character/${id}?format=${f}`} download>${label}</a></li>`)}</ul>
          </details>
          <button type="button" onClick=${() => setEditing(true)} disabled=${editing}>Edit</button>
          <a class="button" href=${`/characters/${id}/edit`} onClick=${link}>Open the editor</a>
          <${ShareButton} kind="character" id=${id} name=${card.name} />
          <button type="button" class="danger" onClick=${remove}>Delete</button>
        </div>
      </div>
    </div>
    ${editing
      ? html`<${AssetEditor} kind="character" asset=${card} fields=${CHARACTER_FIELDS} title=${'Edit ' + card.name}
          onCancel=${() => setEditing(false)}
          onSaved=${(/** @type {any} */ saved) => {
            setEditing(false);
            setCard(saved);
            toast('Saved', 'ok');
            get(`/api/characters/${id}/display`).then(setShown, () => setShown(null));
          }} />`
      : null}
    <h2>Chats</h2>
    ${chats === null ? html`<p class="muted">Loading…</p>` : chats.length ? html`<${ChatRows} rows=${chats} />` : html`<p class="muted">No chats with ${card.name} yet.</p>`}
    ${view.description ? html`<h2>Description</h2><div class="prose" dangerouslySetInnerHTML=${{ __html: render(view.description) }}></div>` : null}
    ${greetings.length
      ? html`<h2>Greetings</h2>
        <ol class="greetings">${greetings.map(
          (g, i) => html`<li key=${i}><details open=${i === 0}><summary>${i === 0 ? 'First message' : 'Alternate greeting ' + i}</summary>
            <div class="prose" dangerouslySetInnerHTML=${{ __html: render(g) }}></div></details></li>`,
        )}</ol>`
      : null}
    ${view.scenario ? html`<h2>Scenario</h2><div class="prose" dangerouslySetInnerHTML=${{ __html: render(view.scenario) }}></div>` : null}
    ${view.creatorNotes ? html`<h2>Creator's notes</h2><div class="prose" dangerouslySetInnerHTML=${{ __html: render(view.creatorNotes) }}></div>` : null}
  </section>`;
}
