// The preset prompt manager (/presets/{id}): the entries in assembly order with their switches,
// reordered by drag or by keyboard (Alt+↑/↓ on a row, or its buttons); markers (chat history,
// examples, card fields) shown as markers; search across a preset of hundreds of entries; the
// selected entry's content, role, injection position and depth; the preset's sampler and
// context values. Whole preset in one draft (drafts.js), exported in SillyTavern's format.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { link } from '../router.js';
import { assetDraft, loadDraft, edit, setField } from '../drafts.js';
import { EditorBar } from './EditorBar.js';
import { PresetEntryForm, isMarker } from './PresetEntryForm.js';

/** SillyTavern sampler and context keys a preset may carry (issue 14 reads them). */
const SAMPLERS = [
  ['temperature', 'Temperature', 0.01], ['top_p', 'Top P', 0.01], ['top_k', 'Top K', 1], ['min_p', 'Min P', 0.01],
  ['frequency_penalty', 'Frequency penalty', 0.01], ['presence_penalty', 'Presence penalty', 0.01],
  ['repetition_penalty', 'Repetition penalty', 0.01], ['openai_max_context', 'Context size', 1], ['openai_max_tokens', 'Reply tokens', 1],
];

/** @param {{id: number}} props */
export function PresetEditor({ id }) {
  const d = assetDraft('preset', id);
  const [query, setQuery] = useState('');
  const [selected, setSelected] = useState(/** @type {string|null} */ (null));
  const [dragging, setDragging] = useState(/** @type {string|null} */ (null));
  const [archived, setArchived] = useState(false);
  useEffect(() => {
    loadDraft(d);
  }, [id]);
  const preset = d.draft.value;
  if (d.error.value && !preset) return html`<section class="screen"><p class="error" role="alert">${d.error.value}</p></section>`;
  if (!preset) return html`<section class="screen"><p class="muted" aria-busy="true">Loading…</p></section>`;
  const entries = /** @type {any[]} */ (preset.entries || []);
  const q = query.trim().toLowerCase();
  const shown = entries.filter((e) => (archived || e.active !== false)
    && (!q || (e.name || '').toLowerCase().includes(q) || (e.identifier || '').toLowerCase().includes(q) || (e.content || '').toLowerCase().includes(q)));
  /** @param {string} identifier @param {Record<string, any>} change */
  const change = (identifier, change) => edit(d, (p) => ({ ...p, entries: p.entries.map((/** @type {any} */ e) => (e.identifier === identifier ? { ...e, ...change } : e)) }));
  /** Moves `identifier` to just before `before` (or to the end). @param {string} identifier @param {string|null} before */
  const moveBefore = (identifier, before) => edit(d, (p) => {
    const list = [...p.entries];
    const from = list.findIndex((e) => e.identifier === identifier);
    if (from < 0) return p;
    const [e] = list.splice(from, 1);
    const to = before == null ? list.length : list.findIndex((x) => x.identifier === before);
    list.splice(to < 0 ? list.length : to, 0, e);
    return { ...p, entries: list };
  });
  /** Moves one place among the shown entries. @param {string} identifier @param {number} by */
  const step = (identifier, by) => {
    const i = shown.findIndex((e) => e.identifier === identifier);
    const j = i + by;
    if (i < 0 || j < 0 || j >= shown.length) return;
    if (by < 0) moveBefore(identifier, shown[j].identifier);
    else moveBefore(identifier, j + 1 < shown.length ? shown[j + 1].identifier : nextAfter(shown[j].identifier));
    requestAnimationFrame(() => /** @type {HTMLElement|null} */ (document.querySelector(`[data-entry="${CSS.escape(identifier)}"]`))?.focus());
  };
  /** The entry after `identifier` in the whole list (moving past the last shown one). @param {string} identifier */
  const nextAfter = (identifier) => {
    const i = entries.findIndex((e) => e.identifier === identifier);
    return i >= 0 && i + 1 < entries.length ? entries[i + 1].identifier : null;
  };
  const current = entries.find((e) => e.identifier === selected) || null;
  return html`<section class="screen editor preset-editor" aria-label=${'Preset ' + preset.name}>
    <div class="toolbar"><h1 class="grow">${preset.name}</h1><a href="/presets" onClick=${link}>All presets</a></div>
    <${EditorBar} d=${d}>
      <details class="menu"><summary class="button">Export</summary>
        <ul>${[['st', 'SillyTavern preset'], ['tavo', 'Tavo JSON']].map(
          ([f, l]) => html`<li key=${f}><a href=${`/api/export/preset/${id}?format=${f}`} download>${l}</a></li>`)}</ul></details>
    <//>
    <div class="toolbar wrap">
      <input type="search" class="grow" placeholder="Search entries" aria-label="Search" value=${query} onInput=${(/** @type {any} */ e) => setQuery(e.currentTarget.value)} />
      <label class="check"><input type="checkbox" checked=${archived} onChange=${(/** @type {any} */ e) => setArchived(e.currentTarget.checked)} /> Show entries outside the active list</label>
      <span class="muted" role="status">${shown.length} of ${entries.length} entries</span>
    </div>
    <div class="split">
      <ol class="prompt-entries" aria-label="Prompt entries">
        ${shown.map((e) => {
          const label = e.name || e.identifier;
          const marker = isMarker(e);
          return html`<li key=${e.identifier} data-entry=${e.identifier} tabindex="0" draggable="true"
              aria-label=${label} aria-current=${e.identifier === selected ? 'true' : undefined}
              class=${'prompt-entry' + (marker ? ' marker' : '') + (e.enabled === false ? ' disabled' : '') + (dragging === e.identifier ? ' dragging' : '')}
              onDragStart=${(/** @type {DragEvent} */ ev) => { setDragging(e.identifier); ev.dataTransfer?.setData('text/plain', e.identifier); }}
              onDragEnd=${() => setDragging(null)}
              onDragOver=${(/** @type {DragEvent} */ ev) => ev.preventDefault()}
              onDrop=${(/** @type {DragEvent} */ ev) => {
                ev.preventDefault();
                const from = ev.dataTransfer?.getData('text/plain') || dragging;
                if (from && from !== e.identifier) moveBefore(from, e.identifier);
                setDragging(null);
              }}
              onKeyDown=${(/** @type {KeyboardEvent} */ ev) => {
                if (ev.target !== ev.currentTarget) return;
                if (ev.altKey && ev.key === 'ArrowUp') { ev.preventDefault(); step(e.identifier, -1); }
                else if (ev.altKey && ev.key === 'ArrowDown') { ev.preventDefault(); step(e.identifier, 1); }
                else if (ev.key === 'Enter') setSelected(e.identifier);
              }}>
            <span class="handle" aria-hidden="true">⠿</span>
            <input type="checkbox" aria-label=${'Enabled: ' + label} checked=${e.enabled !== false}
              onChange=${(/** @type {any} */ ev) => change(e.identifier, { enabled: ev.currentTarget.checked })} />
            <button type="button" class="entry-open" onClick=${() => setSelected(e.identifier)}>${label}</button>
            ${marker ? html`<span class="pill small marker-pill">marker</span>` : html`<span class="muted small">${e.role || 'system'}</span>`}
            ${e.injectionPosition === 'absolute' ? html`<span class="pill small">depth ${e.injectionDepth ?? 0}</span>` : null}
            ${e.active === false ? html`<span class="muted small">inactive</span>` : null}
            <button type="button" class="small" aria-label=${'Move ' + label + ' up'} onClick=${() => step(e.identifier, -1)}>↑</button>
            <button type="button" class="small" aria-label=${'Move ' + label + ' down'} onClick=${() => step(e.identifier, 1)}>↓</button>
          </li>`;
        })}
      </ol>
      <div class="split-detail">
        ${current ? html`<${PresetEntryForm} key=${current.identifier} entry=${current} onChange=${(/** @type {any} */ c) => change(current.identifier, c)} />`
          : html`<p class="muted">Choose an entry to edit it. Drag rows, or focus one and press Alt+↑ / Alt+↓, to reorder.</p>`}
        <fieldset class="samplers"><legend>Samplers and context</legend>
          <div class="row wrap">${SAMPLERS.map(([key, label, stepBy]) => html`<label class="field narrow" key=${key}>${label}
            <input type="number" step=${stepBy} value=${preset[key] ?? ''} placeholder="connection's"
              onInput=${(/** @type {any} */ e) => setField(d, String(key), e.currentTarget.value === '' ? undefined : Number(e.currentTarget.value))} /></label>`)}</div>
        </fieldset>
      </div>
    </div>
  </section>`;
}
