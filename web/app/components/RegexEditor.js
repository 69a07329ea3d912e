// The regex editor (/regex/{id}): the group's rules in order, each with find / replace / trim,
// placements, timing, substitution, depth bounds and its switch, and the live tester beside
// the selected rule. One draft for the group (drafts.js); export in SillyTavern's format.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { link } from '../router.js';
import { assetDraft, loadDraft, edit, setField } from '../drafts.js';
import { EditorBar } from './EditorBar.js';
import { RegexTester } from './RegexTester.js';

const PLACEMENTS = [['user', 'User input'], ['char', 'AI output'], ['reasoning', 'Reasoning'], ['lorebook', 'Lorebook']];
const TIMINGS = [
  ['display', 'Display only'], ['send', 'Sent to the model only'], ['sendAndDisplay', 'Display and sent'],
  ['receive', 'On receive (stored)'], ['editAndReceive', 'On receive and edit (stored)'],
];

function newIdentifier() {
  return typeof crypto !== 'undefined' && crypto.randomUUID ? crypto.randomUUID() : 'r' + Date.now().toString(36) + Math.random().toString(36).slice(2);
}

/** @param {{id: number}} props */
export function RegexEditor({ id }) {
  const d = assetDraft('regex', id);
  const [selected, setSelected] = useState(/** @type {string|null} */ (null));
  useEffect(() => {
    loadDraft(d);
  }, [id]);
  const group = d.draft.value;
  if (d.error.value && !group) return html`<section class="screen"><p class="error" role="alert">${d.error.value}</p></section>`;
  if (!group) return html`<section class="screen"><p class="muted" aria-busy="true">Loading…</p></section>`;
  const rules = /** @type {any[]} */ (group.entries || []);
  const current = rules.find((r) => r.identifier === selected) || rules[0] || null;
  /** @param {string} identifier @param {Record<string, any>} change */
  const change = (identifier, change) => edit(d, (g) => ({ ...g, entries: g.entries.map((/** @type {any} */ r) => (r.identifier === identifier ? { ...r, ...change } : r)) }));
  const add = () => {
    const identifier = newIdentifier();
    edit(d, (g) => ({ ...g, entries: [...(g.entries || []), { identifier, name: 'New rule', findRegex: '', replaceString: '', trimStrings: [], placements: ['char'], timing: 'display', substitution: 'none', enabled: true }] }));
    setSelected(identifier);
  };
  /** @param {string} identifier @param {number} by */
  const move = (identifier, by) => edit(d, (g) => {
    const list = [...g.entries];
    const i = list.findIndex((r) => r.identifier === identifier);
    const j = i + by;
    if (i < 0 || j < 0 || j >= list.length) return g;
    const [r] = list.splice(i, 1);
    list.splice(j, 0, r);
    return { ...g, entries: list };
  });
  /** @param {string} identifier */
  const remove = (identifier) => edit(d, (g) => ({ ...g, entries: g.entries.filter((/** @type {any} */ r) => r.identifier !== identifier) }));
  return html`<section class="screen editor regex-editor" aria-label=${'Regex ' + group.name}>
    <div class="toolbar"><h1 class="grow">${group.name}</h1><a href="/regex" onClick=${link}>All regex groups</a></div>
    <${EditorBar} d=${d}>
      <details class="menu"><summary class="button">Export</summary>
        <ul>${[['st', 'SillyTavern regex'], ['tavo', 'Tavo JSON']].map(
          ([f, l]) => html`<li key=${f}><a href=${`/api/export/regex/${id}?format=${f}`} download>${l}</a></li>`)}</ul></details>
    <//>
    <label class="field">Group name <input value=${group.name} onInput=${(/** @type {any} */ e) => setField(d, 'name', e.currentTarget.value)} /></label>
    <div class="split">
      <div>
        <ol class="prompt-entries" aria-label="Rules">${rules.map((r, i) => html`<li key=${r.identifier} class=${'prompt-entry' + (r.enabled === false ? ' disabled' : '')}
            aria-current=${current && r.identifier === current.identifier ? 'true' : undefined}>
          <input type="checkbox" aria-label=${'Enabled: ' + (r.name || r.identifier)} checked=${r.enabled !== false}
            onChange=${(/** @type {any} */ e) => change(r.identifier, { enabled: e.currentTarget.checked })} />
          <button type="button" class="entry-open" onClick=${() => setSelected(r.identifier)}>${r.name || r.identifier}</button>
          <button type="button" class="small" aria-label=${'Move ' + (r.name || r.identifier) + ' up'} disabled=${i === 0} onClick=${() => move(r.identifier, -1)}>↑</button>
          <button type="button" class="small" aria-label=${'Move ' + (r.name || r.identifier) + ' down'} disabled=${i === rules.length - 1} onClick=${() => move(r.identifier, 1)}>↓</button>
        </li>`)}</ol>
        <button type="button" class="small" onClick=${add}>Add rule</button>
      </div>
      ${current
        ? html`<div class="split-detail" key=${current.identifier}>
            <form class="entry-form" aria-label=${'Rule ' + (current.name || current.identifier)} onSubmit=${(/** @type {Event} */ e) => e.preventDefault()}>
              <label class="field">Name <input value=${current.name || ''} onInput=${(/** @type {any} */ e) => change(current.identifier, { name: e.currentTarget.value })} /></label>
              <label class="field">Find <span class="muted small" aria-hidden="true">(JavaScript; /pattern/flags, a bare pattern replaces the first match only)</span>
                <input class="mono" value=${current.findRegex || ''} onInput=${(/** @type {any} */ e) => change(current.identifier, { findRegex: e.currentTarget.value })} /></label>
              <label class="field">Replace <span class="muted small" aria-hidden="true">(${'$1, $<name>, {{match}}, macros'})</span>
                <textarea rows="3" class="mono" value=${current.replaceString || ''} onInput=${(/** @type {any} */ e) => change(current.identifier, { replaceString: e.currentTarget.value })}></textarea></label>
              <label class="field">Trim <span class="muted small" aria-hidden="true">(one per line, removed from captures)</span>
                <textarea rows="2" value=${(current.trimStrings || []).join('\n')}
                  onInput=${(/** @type {any} */ e) => change(current.identifier, { trimStrings: e.currentTarget.value.split('\n').filter((/** @type {string} */ t) => t !== '') })}></textarea></label>
              <fieldset><legend>Placements</legend><div class="row wrap">${PLACEMENTS.map(([v, l]) => html`<label class="check" key=${v}>
                <input type="checkbox" checked=${(current.placements || []).includes(v)}
                  onChange=${(/** @type {any} */ e) => change(current.identifier, { placements: e.currentTarget.checked ? [...(current.placements || []), v] : (current.placements || []).filter((/** @type {string} */ p) => p !== v) })} /> ${l}</label>`)}</div></fieldset>
              <div class="row wrap">
                <label class="field">Timing <select value=${current.timing || 'display'} onChange=${(/** @type {any} */ e) => change(current.identifier, { timing: e.currentTarget.value })}>
                  ${TIMINGS.map(([v, l]) => html`<option value=${v}>${l}</option>`)}</select></label>
                <label class="field narrow">Macros in Find <select value=${current.substitution || 'none'} onChange=${(/** @type {any} */ e) => change(current.identifier, { substitution: e.currentTarget.value })}>
                  <option value="none">None</option><option value="raw">Raw</option><option value="escaped">Escaped</option></select></label>
                <label class="field narrow">Min depth <input type="number" value=${current.minDepth ?? ''} placeholder="none"
                  onInput=${(/** @type {any} */ e) => change(current.identifier, { minDepth: e.currentTarget.value === '' ? null : Number(e.currentTarget.value) })} /></label>
                <label class="field narrow">Max depth <input type="number" value=${current.maxDepth ?? ''} placeholder="none"
                  onInput=${(/** @type {any} */ e) => change(current.identifier, { maxDepth: e.currentTarget.value === '' ? null : Number(e.currentTarget.value) })} /></label>
              </div>
              <div class="row end"><button type="button" class="danger" onClick=${() => remove(current.identifier)}>Delete rule</button></div>
            </form>
            <${RegexTester} rule=${current} />
          </div>`
        : html`<p class="muted">No rules yet: add one.</p>`}
    </div>
  </section>`;
}
