// One element of a plugin's settings schema (Tavo §6.6): switch, select, slider, text and
// textarea fields save themselves (one PUT per change, checked by the server against the
// schema); info is a note (icon info or warning); divider is a rule. (`break` starts a new
// group and is handled by the page.)
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { toast, errorText } from '../store.js';
import { savePluginConfig } from '../plugins/store.js';

/** @param {{pluginId: string, element: import('../plugins/store.js').SettingElement, value: any, changed: boolean, index: number}} props */
export function PluginField({ pluginId, element: el, value, changed, index }) {
  const id = `plugin-field-${index}`;
  const [draft, setDraft] = useState(value);
  const [busy, setBusy] = useState(false);
  useEffect(() => setDraft(value), [value]);
  /** @param {any} v */
  const save = async (v) => {
    if (!el.key) return;
    setBusy(true);
    try {
      await savePluginConfig(pluginId, el.key, v);
    } catch (e) {
      setDraft(value);
      toast(errorText(e), 'error');
    } finally {
      setBusy(false);
    }
  };
  const mark = changed ? html` <span class="pill" title="Saved by you (Reset restores the default)">changed</span>` : null;
  switch (el.type) {
    case 'switch':
      return html`<div class="plugin-field switch-field">
        <div class="plugin-field-head"><label class="check switch" for=${id}><input id=${id} type="checkbox" role="switch" checked=${!!draft} disabled=${busy}
          onChange=${(/** @type {any} */ e) => { setDraft(e.currentTarget.checked); save(e.currentTarget.checked); }} /> ${el.label}</label>${mark}</div>
      </div>`;
    case 'select': {
      const options = (el.options || []).map((o) => (typeof o === 'string' ? { value: o, label: o } : o));
      return html`<div class="plugin-field">
        <div class="plugin-field-head"><label for=${id}>${el.label}</label>${mark}</div>
        <select id=${id} disabled=${busy} value=${draft == null ? '' : String(draft)}
          onChange=${(/** @type {any} */ e) => { const o = options.find((x) => String(x.value) === e.currentTarget.value); if (o) { setDraft(o.value); save(o.value); } }}>
          ${draft == null ? html`<option value="" disabled>Choose…</option>` : null}
          ${options.map((o) => html`<option key=${String(o.value)} value=${String(o.value)}>${o.label}</option>`)}
        </select>
      </div>`;
    }
    case 'slider': {
      const n = typeof draft === 'number' ? draft : Number(el.min ?? 0);
      return html`<div class="plugin-field">
        <div class="plugin-field-head"><label for=${id}>${el.label}</label>${mark}</div>
        <div class="row"><input id=${id} class="grow" type="range" min=${el.min} max=${el.max} step=${el.step ?? 'any'} value=${n} disabled=${busy}
          onInput=${(/** @type {any} */ e) => setDraft(Number(e.currentTarget.value))}
          onChange=${(/** @type {any} */ e) => save(Number(e.currentTarget.value))} />
          <output for=${id} class="slider-value">${n}</output></div>
      </div>`;
    }
    case 'text':
      return html`<div class="plugin-field">
        <div class="plugin-field-head"><label for=${id}>${el.label}</label>${mark}</div>
        <input id=${id} type="text" value=${draft ?? ''} disabled=${busy}
          onInput=${(/** @type {any} */ e) => setDraft(e.currentTarget.value)}
          onChange=${(/** @type {any} */ e) => save(e.currentTarget.value)} />
      </div>`;
    case 'textarea':
      return html`<div class="plugin-field">
        <div class="plugin-field-head"><label for=${id}>${el.label}</label>${mark}</div>
        <textarea id=${id} rows="4" value=${draft ?? ''} disabled=${busy}
          onInput=${(/** @type {any} */ e) => setDraft(e.currentTarget.value)}
          onChange=${(/** @type {any} */ e) => save(e.currentTarget.value)}></textarea>
      </div>`;
    case 'info': {
      const warning = el.icon === 'warning';
      return html`<p class=${'plugin-info ' + (warning ? 'warning' : 'info')} role="note">
        <span class="plugin-info-icon" aria-label=${warning ? 'Warning' : 'Info'} role="img">${warning ? '⚠' : 'ℹ'}</span> ${el.text}</p>`;
    }
    case 'divider':
      return html`<hr class="plugin-divider" />`;
    default:
      return null;
  }
}
