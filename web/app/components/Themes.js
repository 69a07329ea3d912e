// Themes (/themes): every chat theme of the library (official ones read-only), the one this
// app is styled with (Apply), duplicate, edit the main style fields, delete, import a .thm file
// and export one. Reads and writes go through the theme operations (`tavo_theme_*`), the same
// the model and the CLI use; the page only maps a theme to CSS (themeCss.js).
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { op } from '../api.js';
import { toast, errorText } from '../store.js';
import { currentThemeId, setCurrentTheme, themeCss } from '../themeCss.js';

/** Editable fields: [label, path in the theme, kind]. @type {[string, string[], 'color'|'number'|'text'|'shape'][]} */
const FIELDS = [
  ['Background colour', ['background', 'color'], 'color'],
  ['Background image URL', ['background', 'image'], 'text'],
  ['User bubble colour', ['userBubble', 'color'], 'color'],
  ['Character bubble colour', ['characterBubble', 'color'], 'color'],
  ['Bubble corner radius', ['characterBubble', 'borderRadius'], 'number'],
  ['User text colour', ['userBubbleFont', 'textStyle', 'color'], 'color'],
  ['Character text colour', ['characterBubbleFont', 'textStyle', 'color'], 'color'],
  ['Font family', ['characterBubbleFont', 'textStyle', 'fontFamily'], 'text'],
  ['Font size', ['characterBubbleFont', 'textStyle', 'fontSize'], 'number'],
  ['Avatar shape', ['avatar', 'shape'], 'shape'],
];

/** @param {any} o @param {string[]} path */
const at = (o, path) => path.reduce((x, k) => (x == null ? undefined : x[k]), o);
/** @param {any} o @param {string[]} path @param {any} v */
function setAt(o, path, v) {
  const out = { ...o };
  let cur = out;
  for (let i = 0; i < path.length - 1; i++) {
    cur[path[i]] = { ...(cur[path[i]] || {}) };
    cur = cur[path[i]];
  }
  if (v === '' || v == null) delete cur[path[path.length - 1]];
  else cur[path[path.length - 1]] = v;
  return out;
}
/** The theme without bookkeeping, as create/update take it. @param {any} t */
function body(t) {
  const { id, revision, official, ...rest } = t;
  return rest;
}

export function Themes() {
  const [list, setList] = useState(/** @type {any[]|null} */ (null));
  const [open, setOpen] = useState(/** @type {any} */ (null));
  const [draft, setDraft] = useState(/** @type {any} */ (null));
  const load = () => op('tavo_theme_all', {}).then((r) => setList(Array.isArray(r) ? r : r.themes || []), (e) => toast(errorText(e), 'error'));
  useEffect(() => {
    load();
  }, []);
  /** @param {number} id */
  const choose = async (id) => {
    try {
      const t = await op('tavo_theme_get', { id });
      setOpen(t);
      setDraft(t);
    } catch (e) {
      toast(errorText(e), 'error');
    }
  };
  /** @param {any} t */
  const duplicate = async (t) => {
    try {
      const names = new Set((list || []).map((x) => x.name));
      let name = t.name + ' (copy)';
      for (let n = 2; names.has(name); n++) name = `${t.name} (copy ${n})`;
      const created = await op('tavo_theme_create', { theme: { ...body(t), name } });
      await load();
      await choose(created.id);
      toast('Duplicated as ' + name, 'ok');
    } catch (e) {
      toast(errorText(e), 'error');
    }
  };
  const save = async () => {
    try {
      await op('tavo_theme_update', { theme: { id: draft.id, ...body(draft) } });
      await load();
      await choose(draft.id);
      toast('Saved', 'ok');
    } catch (e) {
      toast(errorText(e), 'error');
    }
  };
  /** @param {any} t */
  const remove = async (t) => {
    if (!confirm(`Delete the theme ${t.name}?`)) return;
    try {
      await op('tavo_theme_delete', { id: t.id }, { confirm: true });
      if (currentThemeId.value === t.id) setCurrentTheme(null);
      setOpen(null);
      load();
    } catch (e) {
      toast(errorText(e), 'error');
    }
  };
  /** @param {any} t */
  const exportFile = (t) => {
    const doc = { format: 'tavo-theme', version: 1, theme: body(t) };
    const a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob([JSON.stringify(doc, null, 2)], { type: 'application/json' }));
    a.download = (t.name.replace(/[\\/:*?"<>|]+/g, '_') || 'theme') + '.thm';
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  };
  /** @param {any} e */
  const importFile = async (e) => {
    const file = e.currentTarget.files[0];
    e.currentTarget.value = '';
    if (!file) return;
    try {
      const doc = JSON.parse(await file.text());
      const theme = doc && doc.format === 'tavo-theme' ? doc.theme : doc;
      if (!theme || typeof theme.name !== 'string') throw new Error(`${file.name}: not a theme file (no name)`);
      const created = await op('tavo_theme_create', { theme: body(theme) });
      await load();
      await choose(created.id);
      toast('Imported ' + theme.name, 'ok');
    } catch (err) {
      toast(errorText(err), 'error');
    }
  };
  const readOnly = !!(open && open.official);
  return html`<section class="screen themes">
    <div class="toolbar">
      <h1 class="grow">Themes</h1>
      <label class="button" for="theme-import">Import…</label>
      <input id="theme-import" class="visually-hidden" type="file" aria-label="Import theme" accept=".thm,.json,application/json" onChange=${importFile} />
      <button type="button" onClick=${() => setCurrentTheme(null)} disabled=${currentThemeId.value == null}>Use the app's own look</button>
    </div>
    <div class="split">
      <ul class="asset-list" aria-label="Themes">
        ${(list || []).map((t) => html`<li key=${t.id} aria-current=${open && open.id === t.id ? 'true' : undefined}>
          <button type="button" class="entry-open" onClick=${() => choose(t.id)}>${t.name}</button>
          ${t.official ? html`<span class="pill small">official</span>` : null}
          ${currentThemeId.value === t.id ? html`<span class="pill small live">current</span>` : null}
        </li>`)}
      </ul>
      <div class="split-detail">
        ${open && draft
          ? html`<form class="entry-form" aria-label=${'Theme ' + open.name} onSubmit=${(/** @type {Event} */ e) => { e.preventDefault(); save(); }}>
              <div class="row wrap">
                <button type="button" class="primary" onClick=${() => setCurrentTheme(open.id)} disabled=${currentThemeId.value === open.id}>Apply</button>
                <button type="button" onClick=${() => duplicate(open)}>Duplicate</button>
                <button type="button" onClick=${() => exportFile(open)}>Export</button>
                ${readOnly ? html`<span class="muted">Official themes are read-only: duplicate to edit.</span>`
                  : html`<button type="button" class="danger" onClick=${() => remove(open)}>Delete</button>`}
              </div>
              <label class="field">Name <input value=${draft.name} disabled=${readOnly} onInput=${(/** @type {any} */ e) => setDraft({ ...draft, name: e.currentTarget.value })} /></label>
              <div class="row wrap">${FIELDS.map(([label, path, kind]) => html`<label class="field narrow" key=${path.join('.')}>${label}
                ${kind === 'shape'
                  ? html`<select disabled=${readOnly} value=${at(draft, path) || ''} onChange=${(/** @type {any} */ e) => setDraft(setAt(draft, path, e.currentTarget.value))}>
                      <option value="">Default</option><option value="circle">Circle</option><option value="rounded">Rounded</option><option value="square">Square</option></select>`
                  : html`<input disabled=${readOnly} type=${kind === 'number' ? 'number' : 'text'} placeholder=${kind === 'color' ? '#RRGGBB' : 'default'}
                      value=${at(draft, path) ?? ''}
                      onChange=${(/** @type {any} */ e) => setDraft(setAt(draft, path, kind === 'number' && e.currentTarget.value !== '' ? Number(e.currentTarget.value) : e.currentTarget.value))} />`}
              </label>`)}</div>
              <label class="field">Custom CSS <textarea rows="4" class="mono" disabled=${readOnly} value=${draft.customCss || ''}
                onInput=${(/** @type {any} */ e) => setDraft({ ...draft, customCss: e.currentTarget.value })}></textarea></label>
              ${readOnly ? null : html`<div class="row end"><button type="submit" class="primary">Save</button></div>`}
              <h3>Preview</h3>
              <div class="theme-preview" data-theme-preview>
                <style>${themeCss(draft, '.theme-preview')}</style>
                <article class="message assistant"><div class="avatar initial">M</div><div class="bubble"><p>The fire is lit. Come in.</p></div></article>
                <article class="message user"><div class="avatar initial">A</div><div class="bubble"><p>Thank you, Mira.</p></div></article>
              </div>
            </form>`
          : html`<p class="muted">Choose a theme.</p>`}
      </div>
    </div>
  </section>`;
}
