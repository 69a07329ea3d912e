// The lorebook editor (/lorebooks/{id}): a virtualised list of the book's entries (instant at
// 10,000: only the rows in view are in the DOM), search over names, keys and content, filters
// by position, strategy and state, sorting, bulk enable / disable / delete, duplicate, and the
// selected entry's fields. The draft is the whole book (drafts.js: revision, conflicts per
// entry, reload survival, undo); export in SillyTavern's world-info format. The book is read in
// pages (lorebookPages.js): its first rows are drawn, searched and opened while the rest
// arrives; editing starts once the whole book is here.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { html } from '../html.js';
import { link } from '../router.js';
import { assetDraft, loadDraft, edit, setField } from '../drafts.js';
import { EditorBar } from './EditorBar.js';
import { VirtualList } from './VirtualList.js';
import { LorebookEntryForm, POSITION_NAMES } from './LorebookEntryForm.js';
import { readLorebook } from '../lorebookPages.js';

const ROW = 44;

/** Lower-cased searchable text of an entry, computed once per entry object. @type {WeakMap<object, string>} */
const hayCache = new WeakMap();
/** @param {any} e */
function hay(e) {
  let h = hayCache.get(e);
  if (h === undefined) {
    h = [e.name || '', (e.keywords || []).join('\n'), (e.secondaryKeywords || []).join('\n'), e.content || ''].join('\n').toLowerCase();
    hayCache.set(e, h);
  }
  return h;
}

function newIdentifier() {
  return typeof crypto !== 'undefined' && crypto.randomUUID ? crypto.randomUUID() : 'e' + Date.now().toString(36) + Math.random().toString(36).slice(2);
}

/** @param {{id: number}} props */
export function LorebookEditor({ id }) {
  const d = assetDraft('lorebook', id);
  const [query, setQuery] = useState('');
  const [position, setPosition] = useState('');
  const [strategy, setStrategy] = useState('');
  const [state, setState] = useState('');
  const [sort, setSort] = useState('book');
  const [selected, setSelected] = useState(/** @type {string|null} */ (null));
  const [checked, setChecked] = useState(/** @type {Set<string>} */ (new Set()));
  const [progress, setProgress] = useState(/** @type {import('../lorebookPages.js').LorebookProgress|null} */ (null));
  useEffect(() => {
    loadDraft(d, () => readLorebook(id, setProgress));
  }, [id]);
  // Until the whole book is here, the entries read so far, to look at but not to edit.
  const loading = !d.draft.value;
  const book = d.draft.value || progress?.book;
  const entries = /** @type {any[]} */ (book?.entries || []);
  const shown = useMemo(() => {
    const q = query.trim().toLowerCase();
    /** @type {number[]} */
    const out = [];
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i];
      if (position && (e.injectionPosition || 'lorebookBefore') !== position) continue;
      if (strategy && (e.strategy || 'keyword') !== strategy) continue;
      if (state === 'enabled' && e.enabled === false) continue;
      if (state === 'disabled' && e.enabled !== false) continue;
      if (q && !hay(e).includes(q)) continue;
      out.push(i);
    }
    if (sort === 'order') out.sort((a, b) => (entries[a].order ?? 0) - (entries[b].order ?? 0));
    else if (sort === 'name') out.sort((a, b) => String(entries[a].name || '').localeCompare(String(entries[b].name || '')));
    else if (sort === 'position') out.sort((a, b) => String(entries[a].injectionPosition || '').localeCompare(String(entries[b].injectionPosition || '')));
    return out;
  }, [entries, query, position, strategy, state, sort]);
  if (d.error.value && !book) return html`<section class="screen"><p class="error" role="alert">${d.error.value}</p></section>`;
  if (!book) return html`<section class="screen"><p class="muted" aria-busy="true">Loading…</p></section>`;
  const at = selected == null ? -1 : entries.findIndex((e) => e.identifier === selected);
  const current = at >= 0 ? entries[at] : null;
  /** @param {(list: any[]) => any[]} f */
  const setEntries = (f) => {
    if (!loading) edit(d, (b) => ({ ...b, entries: f(b.entries || []) }));
  };
  /** @param {string} identifier @param {Record<string, any>} change */
  const change = (identifier, change) => setEntries((list) => list.map((e) => (e.identifier === identifier ? { ...e, ...change } : e)));
  const add = () => {
    if (loading) return;
    const identifier = newIdentifier();
    setEntries((list) => [...list, { identifier, name: 'New entry', content: '', keywords: [], enabled: true, strategy: 'keyword' }]);
    setSelected(identifier);
  };
  /** @param {any} e */
  const duplicate = (e) => {
    if (loading) return;
    const identifier = newIdentifier();
    setEntries((list) => {
      const i = list.findIndex((x) => x.identifier === e.identifier);
      const next = [...list];
      next.splice(i + 1, 0, { ...structuredClone(e), identifier, name: (e.name || 'Entry') + ' (copy)' });
      return next;
    });
    setSelected(identifier);
  };
  /** @param {Set<string>} ids */
  const remove = (ids) => {
    if (loading) return;
    setEntries((list) => list.filter((e) => !ids.has(e.identifier)));
    if (selected && ids.has(selected)) setSelected(null);
    setChecked(new Set());
  };
  /** @param {boolean} on */
  const bulkEnable = (on) => setEntries((list) => list.map((e) => (checked.has(e.identifier) && (e.enabled !== false) !== on ? { ...e, enabled: on } : e)));
  /** @param {string} identifier */
  const toggleCheck = (identifier) => {
    const next = new Set(checked);
    if (next.has(identifier)) next.delete(identifier);
    else next.add(identifier);
    setChecked(next);
  };
  /** @param {number} row */
  const renderRow = (row) => {
    const e = entries[shown[row]];
    const label = e.name || e.identifier;
    return html`<div key=${e.identifier} role="listitem" aria-posinset=${row + 1} aria-setsize=${shown.length} class=${'entry-row' + (e.identifier === selected ? ' selected' : '') + (e.enabled === false ? ' disabled' : '')}
        style=${{ height: ROW + 'px' }}>
      <input type="checkbox" aria-label=${'Select ' + label} checked=${checked.has(e.identifier)} onChange=${() => toggleCheck(e.identifier)} />
      <button type="button" class="entry-open" aria-pressed=${e.identifier === selected} onClick=${() => setSelected(e.identifier)}>
        <span class="entry-name">${label}</span>
        <span class="muted small entry-keys">${(e.keywords || []).join(', ')}</span>
      </button>
      <span class="pill small">${e.strategy === 'constant' ? 'constant' : 'keyword'}</span>
      <span class="muted small entry-pos">${POSITION_NAMES[e.injectionPosition || 'lorebookBefore'] || e.injectionPosition}${e.injectionPosition === 'atDepth' ? ' ' + (e.injectionDepth ?? 0) : ''}</span>
      <span class="muted small">#${e.order ?? 0}</span>
      <label class="check small"><input type="checkbox" aria-label=${'Enabled: ' + label} checked=${e.enabled !== false} disabled=${loading}
        onChange=${(/** @type {any} */ ev) => change(e.identifier, { enabled: ev.currentTarget.checked })} /> on</label>
    </div>`;
  };
  const allShownChecked = shown.length > 0 && shown.every((i) => checked.has(entries[i].identifier));
  return html`<section class="screen editor lorebook-editor" aria-label=${'Lorebook ' + book.name}>
    <div class="toolbar">
      <h1 class="grow">${book.name}</h1>
      <a href="/lorebooks" onClick=${link}>All lorebooks</a>
    </div>
    <${EditorBar} d=${d}>
      <details class="menu"><summary class="button">Export</summary>
        <ul>${[['st', 'SillyTavern world info'], ['ccv3', 'CCv3 character book'], ['tavo', 'Tavo JSON']].map(
          ([f, l]) => html`<li key=${f}><a href=${`/api/export/lorebook/${id}?format=${f}`} download>${l}</a></li>`)}</ul></details>
    <//>
    <label class="field">Book name <input value=${book.name} disabled=${loading} onInput=${(/** @type {any} */ e) => setField(d, 'name', e.currentTarget.value)} /></label>
    <div class="toolbar wrap">
      <input type="search" class="grow" placeholder="Search names, keys and content" aria-label="Search" value=${query}
        onInput=${(/** @type {any} */ e) => setQuery(e.currentTarget.value)} />
      <label>Position <select aria-label="Filter by position" value=${position} onChange=${(/** @type {any} */ e) => setPosition(e.currentTarget.value)}>
        <option value="">All</option>${Object.entries(POSITION_NAMES).map(([v, l]) => html`<option value=${v}>${l}</option>`)}</select></label>
      <label>Strategy <select aria-label="Filter by strategy" value=${strategy} onChange=${(/** @type {any} */ e) => setStrategy(e.currentTarget.value)}>
        <option value="">All</option><option value="constant">Constant</option><option value="keyword">Keyword</option></select></label>
      <label>State <select aria-label="Filter by state" value=${state} onChange=${(/** @type {any} */ e) => setState(e.currentTarget.value)}>
        <option value="">All</option><option value="enabled">Enabled</option><option value="disabled">Disabled</option></select></label>
      <label>Sort <select aria-label="Sort" value=${sort} onChange=${(/** @type {any} */ e) => setSort(e.currentTarget.value)}>
        <option value="book">Book order</option><option value="order">Order</option><option value="name">Name</option><option value="position">Position</option></select></label>
    </div>
    <div class="row wrap">
      <span role="status" class="muted">${loading && progress
        ? `Loading entries: ${progress.loaded} of ${progress.total} read · showing ${shown.length}`
        : `Showing ${shown.length} of ${entries.length} entries · ${checked.size} selected`}</span>
      <button type="button" class="small" onClick=${() => setChecked(allShownChecked ? new Set() : new Set(shown.map((i) => entries[i].identifier)))}>
        ${allShownChecked ? 'Select none' : 'Select all shown'}</button>
      <button type="button" class="small" disabled=${loading || !checked.size} onClick=${() => bulkEnable(true)}>Enable selected</button>
      <button type="button" class="small" disabled=${loading || !checked.size} onClick=${() => bulkEnable(false)}>Disable selected</button>
      <button type="button" class="small danger" disabled=${loading || !checked.size}
        onClick=${() => confirm(`Delete ${checked.size} entries? (Undo: Discard changes before saving.)`) && remove(checked)}>Delete selected</button>
      <button type="button" class="small" disabled=${loading} onClick=${add}>Add entry</button>
    </div>
    <div class="split">
      <${VirtualList} label="Entries" count=${shown.length} rowHeight=${ROW} height=${520} renderRow=${renderRow} />
      <div class="split-detail">
        ${current
          ? html`<fieldset class="bare" disabled=${loading}><${LorebookEntryForm} key=${current.identifier} entry=${current}
              onChange=${(/** @type {Record<string, any>} */ c) => change(current.identifier, c)}
              onDuplicate=${() => duplicate(current)} onDelete=${() => remove(new Set([current.identifier]))} /></fieldset>`
          : html`<p class="muted">Choose an entry to edit it.</p>`}
      </div>
    </div>
  </section>`;
}
