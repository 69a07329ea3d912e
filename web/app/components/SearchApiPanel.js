// Settings → Web search: the saved search APIs `tavo_web_search` runs with (Tavily; what
// `tavo search-api` edits). The key is write-only: the field starts empty, leaving it empty
// keeps the stored key, and the list shows it masked. Without a complete default the model is
// not offered web search.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { get, post, del } from '../api.js';
import { toast, errorText } from '../store.js';

const DEPTHS = [
  ['basic', 'Basic'],
  ['advanced', 'Advanced'],
  ['fast', 'Fast'],
  ['ultra-fast', 'Ultra-fast'],
];

/** @typedef {{id: string, name: string, searchDepth: string, chunksPerSource: number, maxResults: number, complete: boolean, apiKey: string}} Api */

export function SearchApiPanel() {
  const [book, setBook] = useState(/** @type {{defaultId: string|null, apis: Api[]} | null} */ (null));
  const [editing, setEditing] = useState(/** @type {Partial<Api> | null} */ (null));
  useEffect(() => {
    get('/api/search-apis').then(setBook, (e) => toast(errorText(e), 'error'));
  }, []);
  /** @param {() => Promise<any>} f */
  const act = (f) => f().then(setBook, (e) => toast(errorText(e), 'error'));
  return html`<section aria-labelledby="search-apis-title">
    <div class="row spread"><h2 id="search-apis-title">Web search</h2>
      ${editing ? null : html`<button type="button" onClick=${() => setEditing({})}>Add search API</button>`}</div>
    <p class="muted">The model's <code>tavo_web_search</code> runs on the default API (Tavily, with your own key); without one it is not offered.</p>
    ${editing
      ? html`<${SearchApiForm} initial=${editing} onCancel=${() => setEditing(null)}
          onSaved=${(/** @type {any} */ b) => { setBook(b); setEditing(null); toast('Saved the search API', 'ok'); }} />`
      : null}
    ${book === null
      ? html`<p class="muted">Loading…</p>`
      : book.apis.length === 0
        ? html`<p class="muted">No search API yet.</p>`
        : html`<ul class="connections" aria-label="Search APIs">${book.apis.map((a) => html`<li key=${a.id} class="card" aria-label=${'Search API ' + a.name}>
            <div class="row spread wrap">
              <div><strong>${a.name}</strong>${book.defaultId === a.id ? html` <span class="pill">default</span>` : null}
                ${a.complete ? null : html` <span class="pill off" title="Saved without a key: it cannot run">no key</span>`}
                <div class="muted">Tavily · ${a.searchDepth} · ${a.chunksPerSource} chunks per source · ${a.maxResults} results${a.apiKey ? ` · key ${a.apiKey}` : ''}</div></div>
              <div class="row wrap">
                <button type="button" class="small" aria-label=${'Edit ' + a.name} onClick=${() => setEditing(a)}>Edit</button>
                ${book.defaultId !== a.id
                  ? html`<button type="button" class="small" aria-label=${'Make ' + a.name + ' the default'}
                      onClick=${() => act(() => post(`/api/search-apis/${encodeURIComponent(a.id)}/default`))}>Make default</button>`
                  : null}
                <button type="button" class="small danger" aria-label=${'Remove ' + a.name}
                  onClick=${() => { if (confirm(`Remove the search API “${a.name}”?`)) act(() => del(`/api/search-apis/${encodeURIComponent(a.id)}`)); }}>Remove</button>
              </div>
            </div></li>`)}</ul>`}
  </section>`;
}

/** @param {{initial: Partial<Api>, onSaved: (book: any) => void, onCancel: () => void}} props */
function SearchApiForm({ initial, onSaved, onCancel }) {
  const [f, setF] = useState({
    name: initial.name || '',
    apiKey: '',
    searchDepth: initial.searchDepth || 'basic',
    chunksPerSource: initial.chunksPerSource ?? 3,
    maxResults: initial.maxResults ?? 5,
    default: false,
  });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(/** @type {string|null} */ (null));
  /** @param {string} k @returns {(e: any) => void} */
  const field = (k) => (e) => {
    const t = e.currentTarget;
    setF({ ...f, [k]: t.type === 'checkbox' ? t.checked : t.type === 'number' ? Number(t.value) : t.value });
  };
  /** @param {Event} e */
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    /** @type {any} */
    const body = { name: f.name.trim(), searchDepth: f.searchDepth, chunksPerSource: f.chunksPerSource, maxResults: f.maxResults, default: f.default };
    if (initial.id) body.id = initial.id;
    if (f.apiKey.trim()) body.apiKey = f.apiKey.trim();
    try {
      onSaved(await post('/api/search-apis', body));
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return html`<form class="card form" onSubmit=${submit} aria-label=${initial.id ? 'Edit search API' : 'New search API'} aria-busy=${busy}>
    <label>Name <input value=${f.name} required onInput=${field('name')} /></label>
    <label>Tavily API key <input type="password" autocomplete="off" value=${f.apiKey} onInput=${field('apiKey')}
      placeholder=${initial.apiKey ? `stored (${initial.apiKey}); type to replace` : 'tvly-…'} /></label>
    <label>Search depth <select value=${f.searchDepth} onChange=${field('searchDepth')}>
      ${DEPTHS.map(([v, l]) => html`<option key=${v} value=${v}>${l}</option>`)}</select></label>
    <label>Chunks per source <input type="number" min="1" max="3" value=${f.chunksPerSource} onInput=${field('chunksPerSource')} /></label>
    <label>Results <input type="number" min="1" max="20" value=${f.maxResults} onInput=${field('maxResults')} /></label>
    <label class="check"><input type="checkbox" checked=${f.default} onChange=${field('default')} /> Make it the default</label>
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    <div class="row"><button type="submit" class="primary" disabled=${busy}>Save</button>
      <button type="button" onClick=${onCancel}>Cancel</button></div>
  </form>`;
}
