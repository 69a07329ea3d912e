// Settings → Voice (Tavo §14.1–14.2, 语音设置): the voice connections (platform, model, key,
// default voice; keys write-only and shown masked), each character's and persona's voice
// binding (角色语音绑定), the playback switches and regex rules, and the TTS cache. Every
// check happens on the server (`/api/tts/*`); a refusal names its field.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { get, post, put, del } from '../api.js';
import { characters, personas, loadCharacters, loadPersonas, toast, errorText } from '../store.js';

const PLATFORMS = [
  ['openai', 'OpenAI (and OpenAI-compatible)', 'tts-1'],
  ['gemini', 'Gemini', 'gemini-2.5-flash-preview-tts'],
  ['elevenlabs', 'ElevenLabs', 'eleven_multilingual_v2'],
];

const SWITCHES = [
  ['autoPlay', 'Auto-play replies'],
  ['backgroundPlayback', 'Background playback'],
  ['playNarration', 'Play narration'],
  ['onlyQuotes', 'Only play quotes'],
  ['playCodeBlocks', 'Play code blocks'],
  ['playTagContent', 'Play <tag> content'],
];

/** @param {any} e */
const fail = (e) => {
  const text = errorText(e);
  const path = e && e.details && e.details.path;
  toast(path && !text.includes(path) ? `${path}: ${text}` : text, 'error');
};

export function VoiceSettings() {
  const [book, setBook] = useState(/** @type {any} */ (null));
  const [bindings, setBindings] = useState(/** @type {any} */ (null));
  const [settings, setSettings] = useState(/** @type {any} */ (null));
  const [cache, setCache] = useState(/** @type {any} */ (null));
  const [adding, setAdding] = useState(false);
  useEffect(() => {
    get('/api/tts/connections').then(setBook, fail);
    get('/api/tts/bindings').then(setBindings, fail);
    get('/api/tts/settings').then(setSettings, fail);
    get('/api/tts/cache').then(setCache, () => {});
    if (!characters.value) loadCharacters();
    if (!personas.value) loadPersonas();
  }, []);
  /** @param {() => Promise<any>} f @param {(v: any) => void} then */
  const act = (f, then) => f().then(then, fail);
  /** @param {string} name */
  const test = (name) =>
    act(
      () => post('/api/tts/say', { text: 'This is a voice test.', connection: name }),
      (out) => {
        toast(`Synthesized ${out.size} bytes with ${out.voice}${out.cached ? ' (cached)' : ''}`, 'ok');
        new Audio(out.url).play().catch(() => {});
      },
    );
  return html`<section aria-labelledby="voice-title" class="voice-settings">
    <h2 id="voice-title">Voice</h2>
    <div class="row spread"><h3>Voice connections</h3>
      ${adding ? null : html`<button type="button" onClick=${() => setAdding(true)}>Add voice connection</button>`}</div>
    ${adding
      ? html`<${VoiceConnectionForm} onCancel=${() => setAdding(false)}
          onSaved=${(/** @type {any} */ b) => { setBook(b); setAdding(false); toast('Saved the voice connection', 'ok'); }} />`
      : null}
    ${book === null
      ? html`<p class="muted">Loading…</p>`
      : book.connections.length === 0
        ? html`<p class="muted">No voice connection yet (OpenAI-compatible /v1/audio/speech, Gemini or ElevenLabs).</p>`
        : html`<ul class="connections" aria-label="Voice connections">${book.connections.map((/** @type {any} */ c) => html`<li key=${c.name} class="card" aria-label=${'Voice connection ' + c.name}>
            <div class="row spread wrap">
              <div><strong>${c.name}</strong>${book.default === c.name ? html` <span class="pill">default</span>` : null}
                <div class="muted">${c.platform} · ${c.model}${c.options && c.options.voice ? ` · voice ${c.options.voice}` : ''} · ${c.baseUrl}${c.apiKey ? ` · key ${c.apiKey}` : ''}</div></div>
              <div class="row wrap">
                <button type="button" class="small" aria-label=${'Test ' + c.name} onClick=${() => test(c.name)}>Test</button>
                ${book.default !== c.name
                  ? html`<button type="button" class="small" aria-label=${'Make ' + c.name + ' the default voice'}
                      onClick=${() => act(() => post(`/api/tts/connections/${encodeURIComponent(c.name)}/default`), setBook)}>Make default</button>`
                  : null}
                <button type="button" class="small danger" aria-label=${'Remove ' + c.name}
                  onClick=${() => { if (confirm(`Remove ${c.name}?`)) act(() => del(`/api/tts/connections/${encodeURIComponent(c.name)}`), setBook); }}>Remove</button>
              </div></div></li>`)}</ul>`}
    <h3>Voice bindings</h3>
    ${bindings === null || book === null
      ? html`<p class="muted">Loading…</p>`
      : html`<div class="form settings-grid" aria-label="Voice bindings">
          ${(characters.value || []).map((/** @type {any} */ c) => html`<${BindingRow} key=${'c' + c.id} kind="characters" id=${c.id} name=${c.name}
              binding=${bindings.characters[String(c.id)]} book=${book} onSaved=${setBindings} />`)}
          ${(personas.value || []).map((/** @type {any} */ p) => html`<${BindingRow} key=${'p' + p.id} kind="personas" id=${p.id} name=${p.name + ' (persona)'}
              binding=${bindings.personas[String(p.id)]} book=${book} onSaved=${setBindings} />`)}
        </div>`}
    <h3>Playback</h3>
    ${settings === null
      ? html`<p class="muted">Loading…</p>`
      : html`<div class="form settings-grid">
          ${SWITCHES.map(([key, label]) => html`<div class="setting" key=${key}>
              <label for=${'tts-' + key}>${label}</label>
              <input id=${'tts-' + key} type="checkbox" checked=${!!settings[key]}
                onChange=${(/** @type {any} */ e) => act(() => put('/api/tts/settings', { [key]: e.currentTarget.checked }), setSettings)} /></div>`)}
        </div>
        <${RulesEditor} rules=${settings.rules} onSaved=${setSettings} />`}
    <h3>TTS cache</h3>
    <p class="row wrap"><span class="muted" role="status">${cache ? `${cache.files} files, ${Math.round((cache.bytes || 0) / 1024)} KiB` : '…'}</span>
      <button type="button" class="small" onClick=${() => act(() => del('/api/tts/cache'), () => get('/api/tts/cache').then(setCache))}>Clear TTS cache</button></p>
  </section>`;
}

/** @param {{onCancel: () => void, onSaved: (book: any) => void}} props */
function VoiceConnectionForm({ onCancel, onSaved }) {
  const [c, setC] = useState({ name: '', platform: 'openai', baseUrl: '', model: 'tts-1', apiKey: '', voice: '' });
  /** @param {string} k @returns {(e: any) => void} */
  const field = (k) => (e) => setC({ ...c, [k]: e.currentTarget.value });
  /** @param {Event} e */
  const save = async (e) => {
    e.preventDefault();
    try {
      const body = { name: c.name, platform: c.platform, model: c.model, baseUrl: c.baseUrl || undefined,
        apiKey: c.apiKey || undefined, options: c.voice ? { voice: c.voice } : {} };
      onSaved(await post('/api/tts/connections', body));
    } catch (err) {
      fail(err);
    }
  };
  return html`<form class="form card" aria-label="New voice connection" onSubmit=${save}>
    <label>Name <input required value=${c.name} onInput=${field('name')} /></label>
    <label>Platform <select value=${c.platform}
      onChange=${(/** @type {any} */ e) => { const p = PLATFORMS.find((x) => x[0] === e.currentTarget.value); setC({ ...c, platform: e.currentTarget.value, model: p ? p[2] : c.model }); }}>
      ${PLATFORMS.map(([id, label]) => html`<option key=${id} value=${id}>${label}</option>`)}</select></label>
    <label>Base URL <input placeholder="the platform's endpoint" value=${c.baseUrl} onInput=${field('baseUrl')} /></label>
    <label>Voice model <input required value=${c.model} onInput=${field('model')} /></label>
    <label>API key <input type="password" autocomplete="off" value=${c.apiKey} onInput=${field('apiKey')} /></label>
    <label>Default voice <input placeholder="alloy, Kore, an ElevenLabs voice id" value=${c.voice} onInput=${field('voice')} /></label>
    <div class="row end"><button type="button" onClick=${onCancel}>Cancel</button><button type="submit" class="primary">Save</button></div>
  </form>`;
}

/** @param {{kind: string, id: number, name: string, binding: any, book: any, onSaved: (b: any) => void}} props */
function BindingRow({ kind, id, name, binding, book, onSaved }) {
  const [connection, setConnection] = useState(binding ? binding.connection || '' : '');
  const [voice, setVoice] = useState(binding ? binding.voice : '');
  const path = `/api/tts/bindings/${kind}/${id}`;
  const save = () =>
    (voice.trim()
      ? put(path, { connection: connection || undefined, voice: voice.trim() })
      : del(path)
    ).then((b) => { onSaved(b); toast(`Saved the voice of ${name}`, 'ok'); }, fail);
  const fid = `voice-${kind}-${id}`;
  return html`<div class="setting row wrap">
    <label for=${fid}>${name}</label>
    <select aria-label=${'Voice connection of ' + name} value=${connection} onChange=${(/** @type {any} */ e) => setConnection(e.currentTarget.value)}>
      <option value="">default connection</option>
      ${book.connections.map((/** @type {any} */ c) => html`<option key=${c.name} value=${c.name}>${c.name}</option>`)}</select>
    <input id=${fid} placeholder="voice id" value=${voice} onInput=${(/** @type {any} */ e) => setVoice(e.currentTarget.value)} />
    <button type="button" class="small" aria-label=${'Save the voice of ' + name} onClick=${save}>Save</button>
  </div>`;
}

/** @param {{rules: any[], onSaved: (s: any) => void}} props */
function RulesEditor({ rules, onSaved }) {
  const [list, setList] = useState(rules);
  /** @param {number} i @param {any} patch */
  const edit = (i, patch) => setList(list.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  const save = () => put('/api/tts/settings', { rules: list }).then((s) => { onSaved(s); toast('Saved the playback rules', 'ok'); }, fail);
  return html`<div class="tts-rules" aria-label="Playback rules">
    <p class="muted">Regex rules run on the message as written: exclude removes what matches; with any include rule only matched text (its first group, if it has one) is spoken.</p>
    ${list.map((r, i) => html`<div class="row wrap" key=${i}>
        <input aria-label="Rule name" placeholder="name" value=${r.name} onInput=${(/** @type {any} */ e) => edit(i, { name: e.currentTarget.value })} />
        <input aria-label="Rule regex" placeholder="/pattern/flags" value=${r.regex} onInput=${(/** @type {any} */ e) => edit(i, { regex: e.currentTarget.value })} />
        <select aria-label="Rule mode" value=${r.mode} onChange=${(/** @type {any} */ e) => edit(i, { mode: e.currentTarget.value })}>
          <option value="include">include</option><option value="exclude">exclude</option></select>
        <label><input type="checkbox" checked=${r.enabled !== false} onChange=${(/** @type {any} */ e) => edit(i, { enabled: e.currentTarget.checked })} /> on</label>
        <button type="button" class="small danger" aria-label=${'Remove rule ' + (r.name || i + 1)} onClick=${() => setList(list.filter((_, j) => j !== i))}>Remove</button>
      </div>`)}
    <div class="row"><button type="button" class="small" onClick=${() => setList([...list, { name: '', regex: '', mode: 'exclude', enabled: true }])}>Add rule</button>
      <button type="button" class="small primary" onClick=${save}>Save rules</button></div>
  </div>`;
}
