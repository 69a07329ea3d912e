// The character editor (/characters/{id}/edit): every card field, the greetings as lists,
// tags, the card's bound lorebook and regex group, export. The draft is the whole card as
// read, so `extensions` and fields this form does not show are written back untouched; saving
// carries the revision read (see drafts.js for conflicts, reload survival and undo).
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { link } from '../router.js';
import { get, post } from '../api.js';
import { assetDraft, loadDraft, setField } from '../drafts.js';
import { EditorBar } from './EditorBar.js';
import { TextList } from './TextList.js';
import { TagsField } from './TagsField.js';
import { Avatar } from './Avatar.js';
import { AvatarCrop } from './AvatarCrop.js';

/** The card's text fields as the issue names them. @type {[string, string, number][]} key, label, rows (0 = one line) */
const TEXT_FIELDS = [
  ['name', 'Name', 0],
  ['nickname', 'Nickname', 0],
  ['description', 'Description', 8],
  ['personality', 'Personality', 4],
  ['scenario', 'Scenario', 4],
  ['firstMes', 'First message', 6],
];
/** @type {[string, string, number][]} */
const MORE_FIELDS = [
  ['mesExample', 'Example dialogue', 6],
  ['systemPrompt', 'System prompt', 4],
  ['postHistoryInstructions', 'Post-history instructions', 4],
  ['creatorNotes', 'Creator notes', 4],
  ['creator', 'Creator', 0],
  ['characterVersion', 'Version', 0],
];
/** Labels of the conflict panel. */
const LABELS = Object.fromEntries([...TEXT_FIELDS, ...MORE_FIELDS].map(([k, l]) => [k, l]).concat([
  ['alternateGreetings', 'Alternate greetings'], ['groupOnlyGreetings', 'Group-only greetings'], ['tags', 'Tags'], ['extensions', 'Extensions'],
]));

const FORMATS = [
  ['png', 'PNG card'],
  ['ccv3-json', 'CCv3 JSON'],
  ['ccv2-json', 'CCv2 JSON'],
  ['charx', 'charx'],
  ['tavo', 'Tavo JSON'],
];

/** @param {{id: number}} props */
export function CharacterEditor({ id }) {
  const d = assetDraft('character', id);
  /** The lorebook and regex group the card owns (its character_book and regex_scripts). */
  const [avatarTick, setAvatarTick] = useState(0);
  const [owned, setOwned] = useState(/** @type {{lorebooks: any[], regexes: any[]}|null} */ (null));
  useEffect(() => {
    loadDraft(d);
    get(`/api/characters/${id}/owned`).then(setOwned, () => setOwned(null));
  }, [id]);
  const card = d.draft.value;
  /** Live token counts per field, from the server's tokenizer (the model of the default connection). */
  const [tokens, setTokens] = useState(/** @type {Record<string, number>|null} */ (null));
  const counted = [...TEXT_FIELDS, ...MORE_FIELDS].map(([k]) => k).filter((k) => k !== 'name' && k !== 'nickname' && k !== 'creator' && k !== 'characterVersion');
  const textsKey = card ? JSON.stringify(counted.map((k) => card[k] || '')) : '';
  useEffect(() => {
    if (!card) return;
    const timer = setTimeout(() => {
      post('/api/tokens', { texts: counted.map((k) => card[k] || '') })
        .then((r) => setTokens(Object.fromEntries(counted.map((k, i) => [k, r.counts[i]]))), () => setTokens(null));
    }, 300);
    return () => clearTimeout(timer);
  }, [textsKey]);
  if (d.error.value && !card) return html`<section class="screen"><p class="error" role="alert">${d.error.value}</p></section>`;
  if (!card) return html`<section class="screen"><p class="muted" aria-busy="true">Loading…</p></section>`;
  /** @param {[string, string, number]} f */
  const field = ([key, label, rows]) => html`<label class="field" key=${key}>${label}
    ${rows
      ? html`<textarea rows=${rows} value=${card[key] ?? ''} onInput=${(/** @type {any} */ e) => setField(d, key, e.currentTarget.value)}></textarea>`
      : html`<input value=${card[key] ?? ''} required=${key === 'name'}
          onInput=${(/** @type {any} */ e) => setField(d, key, key === 'nickname' && !e.currentTarget.value ? null : e.currentTarget.value)} />`}
    <span class="muted small" aria-hidden="true" data-tokens=${key}>${tokens && tokens[key] != null ? `${tokens[key]} tokens · ` : ''}${(card[key] || '').length} characters</span>
  </label>`;
  const extensions = card.extensions && Object.keys(card.extensions).length ? Object.keys(card.extensions) : [];
  return html`<section class="screen editor character-editor" aria-label=${'Edit ' + card.name}>
    <div class="toolbar">
      <${Avatar} key=${avatarTick} src=${`/api/characters/${id}/avatar?v=${avatarTick}`} name=${card.name} size="large" />
      <h1 class="grow">Edit ${card.name}</h1>
      <a href=${'/characters/' + id} onClick=${link}>Back to the card</a>
    </div>
    <${EditorBar} d=${d} labels=${LABELS}>
      <details class="menu">
        <summary class="button">Export</summary>
        <ul>${FORMATS.map(([f, label]) => html`<li key=${f}><a href=${`/api/export/character/${id}?format=${f}`} download>${label}</a></li>`)}</ul>
      </details>
    <//>
    <div class="editor-columns">
      <div>
        ${TEXT_FIELDS.map(field)}
        <${TextList} label="Alternate greetings" itemLabel="Greeting" items=${card.alternateGreetings || []}
          onChange=${(/** @type {string[]} */ v) => setField(d, 'alternateGreetings', v)} />
        <${TextList} label="Group-only greetings" itemLabel="Group greeting" items=${card.groupOnlyGreetings || []}
          onChange=${(/** @type {string[]} */ v) => setField(d, 'groupOnlyGreetings', v)} />
      </div>
      <div>
        ${MORE_FIELDS.map(field)}
        <${TagsField} tags=${card.tags || []} onChange=${(/** @type {string[]} */ v) => setField(d, 'tags', v)} />
        <${AvatarCrop} id=${id} onDone=${() => setAvatarTick(avatarTick + 1)} />
        <section aria-label="The card's own assets">
          <h2>Embedded lorebook and regex</h2>
          ${owned && (owned.lorebooks.length || owned.regexes.length)
            ? html`<ul>
                ${owned.lorebooks.map((b) => html`<li key=${'l' + b.id}>Lorebook <a href=${'/lorebooks/' + b.id} onClick=${link}>${b.name}</a></li>`)}
                ${owned.regexes.map((g) => html`<li key=${'r' + g.id}>Regex group <a href=${'/regex/' + g.id} onClick=${link}>${g.name}</a></li>`)}
              </ul>
              <p class="muted small">Written back into the card on export.</p>`
            : html`<p class="muted">This card has no embedded lorebook or regex scripts.</p>`}
        </section>
        <p class="muted small">Extensions kept as they are: ${extensions.length ? extensions.join(', ') : 'none'}.</p>
      </div>
    </div>
  </section>`;
}
