// Add or edit a connection, starting from the provider catalogue (`GET /api/connection-sources`:
// choosing a provider fills its protocol and base URL and shows its note). The API key is
// write-only: the field starts empty, leaving it empty keeps the stored key, and the saved key
// is only ever shown masked.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { get } from '../api.js';
import { toast, errorText } from '../store.js';

/** @typedef {{id: string, name: string, protocol: string, baseUrl: string | null, note: string}} Source */
/** The catalogue, read once per page. @type {Promise<Source[]> | null} */
let catalogue = null;

const PROTOCOLS = [
  ['openai-chat', 'OpenAI Chat Completions (and compatible servers)'],
  ['openai-responses', 'OpenAI Responses'],
  ['anthropic', 'Anthropic Messages'],
  ['gemini', 'Gemini'],
];

/** @param {{initial: any, onSave: (c: any) => Promise<void>, onCancel: () => void}} props */
export function ConnectionForm({ initial, onSave, onCancel }) {
  const [c, setC] = useState({
    name: initial.name || '',
    source: initial.source || 'custom',
    protocol: initial.protocol || 'openai-chat',
    baseUrl: initial.baseUrl || '',
    model: initial.model || '',
    apiKey: '',
    default: false,
  });
  const [busy, setBusy] = useState(false);
  const [sources, setSources] = useState(/** @type {Source[]} */ ([]));
  useEffect(() => {
    if (!catalogue) catalogue = get('/api/connection-sources').catch(() => { catalogue = null; return []; });
    catalogue.then(setSources);
  }, []);
  const source = sources.find((x) => x.id === c.source);
  /** @param {any} e */
  const pickSource = (e) => {
    const next = sources.find((x) => x.id === e.currentTarget.value);
    if (!next) return;
    setC({ ...c, source: next.id, protocol: next.protocol, baseUrl: next.baseUrl ?? (next.id === 'custom' ? c.baseUrl : '') });
  };
  /** @param {string} k @returns {(e: any) => void} */
  const field = (k) => (e) => setC({ ...c, [k]: e.currentTarget.type === 'checkbox' ? e.currentTarget.checked : e.currentTarget.value });
  /** @param {Event} e */
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    /** @type {any} */
    const body = { ...initial, name: c.name.trim(), source: c.source, protocol: c.protocol, baseUrl: c.baseUrl.trim(), model: c.model.trim(), default: c.default };
    delete body.apiKey;
    if (c.apiKey) body.apiKey = c.apiKey;
    try {
      await onSave(body);
    } catch (err) {
      toast(errorText(err), 'error');
    } finally {
      setBusy(false);
    }
  };
  return html`<form class="card form" onSubmit=${submit} aria-label=${initial.name ? 'Edit connection' : 'New connection'}>
    <label>Name <input value=${c.name} required onInput=${field('name')} /></label>
    <label>Provider <select value=${c.source} onChange=${pickSource}>
      ${sources.length ? sources.map((x) => html`<option key=${x.id} value=${x.id}>${x.name}</option>`) : html`<option value=${c.source}>${c.source}</option>`}</select></label>
    ${source?.note ? html`<p class="muted small provider-note">${source.note}</p>` : null}
    <label>Protocol <select value=${c.protocol} onChange=${field('protocol')}>
      ${PROTOCOLS.map(([v, l]) => html`<option key=${v} value=${v}>${l}</option>`)}</select></label>
    <label>Base URL <input value=${c.baseUrl} placeholder=${source && !source.baseUrl && source.id !== 'custom' ? 'your account’s endpoint' : 'http://127.0.0.1:8080/v1'} onInput=${field('baseUrl')} /></label>
    <label>Model <input value=${c.model} required onInput=${field('model')} /></label>
    <label>API key <input type="password" autocomplete="off" value=${c.apiKey} onInput=${field('apiKey')}
      placeholder=${initial.apiKey ? `stored (${initial.apiKey}); type to replace` : 'none'} /></label>
    <label class="check"><input type="checkbox" checked=${c.default} onChange=${field('default')} /> Make it the default</label>
    <div class="row"><button type="submit" class="primary" disabled=${busy}>Save</button>
      <button type="button" onClick=${onCancel}>Cancel</button></div>
  </form>`;
}
