// Settings → Image generation (Tavo §14.3, 生图 API / 生图设置): the image connections
// (platform, model, key, options; keys write-only and shown masked), the default one, and the
// injection template written into the chat with an image `/imagine` generated ("restore
// default" puts Tavo's back). Every check happens on the server (`/api/images/connections`,
// `/api/settings/image.injectionTemplate`); a refusal names its field.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { get, post, put, del } from '../api.js';
import { toast, errorText } from '../store.js';

const PLATFORMS = [
  ['openai', 'OpenAI (and OpenAI-compatible)', 'dall-e-3'],
  ['gemini', 'Gemini', 'gemini-2.5-flash-image'],
  ['openrouter', 'OpenRouter', 'google/gemini-2.5-flash-image-preview'],
  ['novelai', 'NovelAI', 'nai-diffusion-4-5-full'],
];

/** @param {any} e */
const fail = (e) => {
  const text = errorText(e);
  const path = e && e.details && e.details.path;
  toast(path && !text.includes(path) ? `${path}: ${text}` : text, 'error');
};

export function ImageSettings() {
  const [book, setBook] = useState(/** @type {any} */ (null));
  const [adding, setAdding] = useState(false);
  const [template, setTemplate] = useState('');
  useEffect(() => {
    get('/api/images/connections').then((b) => { setBook(b); setTemplate(b.injectionTemplate); }, fail);
  }, []);
  /** @param {() => Promise<any>} f */
  const change = (f) => f().then(setBook, fail);
  /** @param {string} value */
  const saveTemplate = (value) =>
    put('/api/settings/image.injectionTemplate', { value }).then(() => {
      setTemplate(value);
      toast('Saved the injection template', 'ok');
    }, fail);
  return html`<section aria-labelledby="image-title" class="image-settings">
    <h2 id="image-title">Image generation</h2>
    <div class="row spread"><h3>Image connections</h3>
      ${adding ? null : html`<button type="button" onClick=${() => setAdding(true)}>Add image connection</button>`}</div>
    ${adding
      ? html`<${ImageConnectionForm} onCancel=${() => setAdding(false)}
          onSaved=${(/** @type {any} */ b) => { setBook(b); setAdding(false); toast('Saved the image connection', 'ok'); }} />`
      : null}
    ${book === null
      ? html`<p class="muted">Loading…</p>`
      : book.connections.length === 0
        ? html`<p class="muted">No image connection yet (OpenAI-compatible /v1/images/generations, Gemini, OpenRouter or NovelAI). <code>/imagine a cat</code> in a chat uses the default one.</p>`
        : html`<ul class="connections" aria-label="Image connections">${book.connections.map((/** @type {any} */ c) => html`<li key=${c.name} class="card" aria-label=${'Image connection ' + c.name}>
            <div class="row spread wrap">
              <div><strong>${c.name}</strong>${book.default === c.name ? html` <span class="pill">default</span>` : null}
                <div class="muted">${c.platform} · ${c.model} · ${c.baseUrl}${c.apiKey ? ` · key ${c.apiKey}` : c.apiKeyEnv ? ` · key from $${c.apiKeyEnv}` : ' · no key'}</div></div>
              <div class="row wrap">
                ${book.default !== c.name
                  ? html`<button type="button" class="small" aria-label=${'Make ' + c.name + ' the default image connection'}
                      onClick=${() => change(() => post(`/api/images/connections/${encodeURIComponent(c.name)}/default`))}>Make default</button>`
                  : null}
                <button type="button" class="small danger" aria-label=${'Remove ' + c.name}
                  onClick=${() => { if (confirm(`Remove ${c.name}?`)) change(() => del(`/api/images/connections/${encodeURIComponent(c.name)}`)); }}>Remove</button>
              </div></div></li>`)}</ul>`}
    <h3>Injection template</h3>
    <p class="muted">Written into the chat with each generated image, so the model knows about it. <code>{{prompt}}</code> is the prompt; the chat's macros (<code>{{char}}</code>, <code>{{user}}</code>) work too.</p>
    <div class="form">
      <textarea aria-label="Injection template" rows="2" value=${template}
        onInput=${(/** @type {any} */ e) => setTemplate(e.currentTarget.value)}></textarea>
      <div class="row end">
        <button type="button" class="small" disabled=${!book} onClick=${() => saveTemplate(book.defaultInjectionTemplate)}>Restore default</button>
        <button type="button" class="small primary" onClick=${() => saveTemplate(template)}>Save template</button>
      </div>
    </div>
  </section>`;
}

/** @param {{onCancel: () => void, onSaved: (book: any) => void}} props */
function ImageConnectionForm({ onCancel, onSaved }) {
  const [c, setC] = useState({ name: '', platform: 'openai', baseUrl: '', model: 'dall-e-3', apiKey: '', size: '' });
  /** @param {string} k @returns {(e: any) => void} */
  const field = (k) => (e) => setC({ ...c, [k]: e.currentTarget.value });
  /** @param {Event} e */
  const save = async (e) => {
    e.preventDefault();
    try {
      const body = { name: c.name, platform: c.platform, model: c.model, baseUrl: c.baseUrl || undefined,
        apiKey: c.apiKey || undefined, options: c.size ? { size: c.size } : {} };
      onSaved(await post('/api/images/connections', body));
    } catch (err) {
      fail(err);
    }
  };
  return html`<form class="form card" aria-label="New image connection" onSubmit=${save}>
    <label>Name <input required value=${c.name} onInput=${field('name')} /></label>
    <label>Platform <select value=${c.platform}
      onChange=${(/** @type {any} */ e) => { const p = PLATFORMS.find((x) => x[0] === e.currentTarget.value); setC({ ...c, platform: e.currentTarget.value, model: p ? p[2] : c.model }); }}>
      ${PLATFORMS.map(([id, label]) => html`<option key=${id} value=${id}>${label}</option>`)}</select></label>
    <label>Base URL <input placeholder="the platform's endpoint" value=${c.baseUrl} onInput=${field('baseUrl')} /></label>
    <label>Image model <input required value=${c.model} onInput=${field('model')} /></label>
    <label>API key <input type="password" autocomplete="off" value=${c.apiKey} onInput=${field('apiKey')} /></label>
    <label>Default size <input placeholder="1024x1024 (OpenAI-style platforms)" value=${c.size} onInput=${field('size')} /></label>
    <div class="row end"><button type="button" onClick=${onCancel}>Cancel</button><button type="submit" class="primary">Save</button></div>
  </form>`;
}
