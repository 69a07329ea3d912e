// The lists of presets, lorebooks and regex groups (/presets, /lorebooks, /regex): search,
// import a file, create an empty one, open one in its editor.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { link, navigate } from '../router.js';
import { get, post, importFiles } from '../api.js';
import { toast, errorText, libraryTick } from '../store.js';

const TITLES = { preset: 'Presets', lorebook: 'Lorebooks', regex: 'Regex groups' };
const PATHS = { preset: '/presets/', lorebook: '/lorebooks/', regex: '/regex/' };

/** @param {{kind: 'preset'|'lorebook'|'regex'}} props */
export function AssetList({ kind }) {
  const [list, setList] = useState(/** @type {any[]|null} */ (null));
  const [query, setQuery] = useState('');
  const [name, setName] = useState('');
  const load = () => get('/api/library/' + kind).then(setList, (e) => toast(errorText(e), 'error'));
  useEffect(() => {
    load();
  }, [kind, libraryTick.value]);
  const q = query.trim().toLowerCase();
  const shown = (list || []).filter((a) => !q || a.name.toLowerCase().includes(q));
  /** @param {Event} e */
  const create = async (e) => {
    e.preventDefault();
    try {
      const body = kind === 'preset' ? { name: name.trim() } : { name: name.trim(), entries: [] };
      const answer = await post('/api/library/' + kind, body);
      navigate(PATHS[kind] + answer.id);
    } catch (err) {
      toast(errorText(err), 'error');
    }
  };
  /** @param {any} e */
  const upload = async (e) => {
    const files = [...e.currentTarget.files];
    e.currentTarget.value = '';
    try {
      const answer = await importFiles(files);
      toast(`${answer.imported} imported, ${answer.failed} failed`, answer.failed ? 'error' : 'ok');
      load();
    } catch (err) {
      toast(errorText(err), 'error');
    }
  };
  return html`<section class="screen">
    <div class="toolbar">
      <h1>${TITLES[kind]}</h1>
      <input type="search" class="grow" placeholder="Search" aria-label="Search" value=${query}
        onInput=${(/** @type {any} */ e) => setQuery(e.currentTarget.value)} />
      <label class="button" for="asset-import">Import…</label>
      <input id="asset-import" class="visually-hidden" type="file" aria-label="Import" multiple accept=".json,application/json" onChange=${upload} />
    </div>
    <form class="row wrap" onSubmit=${create} aria-label=${'New ' + kind}>
      <input placeholder="Name" aria-label=${'New ' + kind + ' name'} value=${name} required onInput=${(/** @type {any} */ e) => setName(e.currentTarget.value)} />
      <button type="submit" disabled=${!name.trim()}>Create</button>
    </form>
    ${list === null
      ? html`<p class="muted" aria-busy="true">Loading…</p>`
      : html`<ul class="asset-list" aria-label=${TITLES[kind]}>${shown.map(
          (a) => html`<li key=${a.id}><a href=${PATHS[kind] + a.id} onClick=${link}>${a.name}</a>
            <span class="muted small">revision ${a.revision}</span></li>`,
        )}</ul>
        ${shown.length === 0 ? html`<p class="muted">${list.length ? `Nothing matches “${query}”.` : 'None yet.'}</p>` : null}`}
  </section>`;
}
