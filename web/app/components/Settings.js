// Settings (/settings): provider connections (add, edit, test, default; the API key is
// write-only), the tool and web settings, the web-search APIs, plugins and MCP.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { link } from '../router.js';
import { get, put, post } from '../api.js';
import { connections, loadConnections, saveConnection, removeConnection, makeDefaultConnection, toast, errorText, authRequired, logout, rendering, askBubble, currentUser } from '../store.js';
import { ConnectionForm } from './ConnectionForm.js';
import { McpPanel } from './McpPanel.js';
import { SearchApiPanel } from './SearchApiPanel.js';
import { VoiceSettings } from './VoiceSettings.js';
import { ImageSettings } from './ImageSettings.js';

export function Settings() {
  const [editing, setEditing] = useState(/** @type {any} */ (null));
  const [tests, setTests] = useState(/** @type {Record<string, any>} */ ({}));
  useEffect(() => {
    loadConnections();
  }, []);
  const book = connections.value;
  /** @param {string} name */
  const test = async (name) => {
    setTests((t) => ({ ...t, [name]: { busy: true } }));
    try {
      const answer = await post(`/api/connections/${encodeURIComponent(name)}/test`);
      setTests((t) => ({ ...t, [name]: answer }));
    } catch (e) {
      setTests((t) => ({ ...t, [name]: { ok: false, error: { message: errorText(e) } } }));
    }
  };
  /** @param {() => Promise<any>} f */
  const act = (f) => f().catch((e) => toast(errorText(e), 'error'));
  return html`<section class="screen settings">
    <h1>Settings</h1>
    <section aria-labelledby="connections-title">
      <div class="row spread"><h2 id="connections-title">Connections</h2>
        <button type="button" onClick=${() => setEditing({})}>Add connection</button></div>
      ${editing
        ? html`<${ConnectionForm} initial=${editing}
            onCancel=${() => setEditing(null)}
            onSave=${async (/** @type {any} */ c) => {
              await saveConnection(c, editing.name || null);
              setEditing(null);
              toast(`Saved ${c.name}`, 'ok');
            }} />`
        : null}
      ${book === null
        ? html`<p class="muted">Loading…</p>`
        : book.connections.length === 0
          ? html`<p class="muted">No connection yet: add one to chat (any OpenAI-compatible server, OpenAI, Anthropic, Gemini…).</p>`
          : html`<ul class="connections">${book.connections.map((c) => {
              const t = tests[c.name];
              return html`<li key=${c.name} class="card">
                <div class="row spread wrap">
                  <div><strong>${c.name}</strong>${book.default === c.name ? html` <span class="pill">default</span>` : null}
                    <div class="muted">${c.protocol} · ${c.model} · ${c.baseUrl}${c.apiKey ? ` · key ${c.apiKey}` : ''}</div></div>
                  <div class="row wrap">
                    <button type="button" class="small" onClick=${() => test(c.name)} disabled=${t && t.busy}>Test</button>
                    <button type="button" class="small" onClick=${() => setEditing(c)}>Edit</button>
                    ${book.default !== c.name ? html`<button type="button" class="small" onClick=${() => act(() => makeDefaultConnection(c.name))}>Make default</button>` : null}
                    <button type="button" class="small danger" onClick=${() => { if (confirm(`Remove ${c.name}?`)) act(() => removeConnection(c.name)); }}>Remove</button>
                  </div>
                </div>
                ${t && !t.busy
                  ? t.ok
                    ? html`<p class="ok" role="status">Answered in ${t.latencyMs} ms: “${t.reply}”</p>`
                    : html`<p class="error" role="alert">Failed${t.error?.kind ? ` (${t.error.kind})` : ''}: ${t.error?.message}</p>`
                  : t && t.busy ? html`<p class="muted" role="status">Testing…</p>` : null}
              </li>`;
            })}</ul>`}
    </section>
    <${ToolSettings} />
    <${SearchApiPanel} />
    <${VoiceSettings} />
    <${ImageSettings} />
    <section aria-labelledby="plugins-link-title">
      <h2 id="plugins-link-title">Plugins</h2>
      <p><a class="button" href="/settings/plugins" onClick=${link}>Manage plugins</a>
        <span class="muted"> Install, enable and configure plugins (.tpg).</span></p>
    </section>
    <${McpPanel} />
    <section aria-labelledby="storage-title">
      <h2 id="storage-title">Storage</h2>
      <p><a class="button" href="/settings/logs" onClick=${link}>Tool-call log</a>
        <span class="muted"> Every tool call with its arguments and result; filter by chat and tool, or clear it.</span></p>
    </section>
    ${authRequired.value ? html`<${SessionPanel} act=${act} />` : null}
  </section>`;
}

/**
 * Who is logged in, logging out (this browser, or every browser of the user), and for an admin
 * of a server with accounts the way to the users screen.
 * @param {{act: (f: () => Promise<any>) => any}} props
 */
function SessionPanel({ act }) {
  const user = currentUser.value;
  return html`<section aria-labelledby="session-title"><h2 id="session-title">Session</h2>
    ${user ? html`<p>Logged in as <strong>${user.name}</strong>${user.admin ? ' (admin)' : ''}.</p>` : null}
    <p><button type="button" onClick=${() => act(() => logout())}>Log out</button>
      ${user ? html` <button type="button" onClick=${() => act(() => logout(true))}>Log out everywhere</button>` : null}</p>
    ${user && user.admin
      ? html`<p><a class="button" href="/settings/users" onClick=${link}>Users</a>
          <span class="muted"> Add people to this server, reset a password, disable or remove an account.</span></p>`
      : null}
  </section>`;
}

const LABELS = /** @type {Record<string, string>} */ ({
  'tools.enabled': 'Let the model call tools',
  'tools.dynamicLoading': 'Load tools on demand (tool search)',
  'tools.recursionLimit': 'Tool rounds per reply',
  'tools.maxCalls': 'Tool calls per reply',
  'tools.callTimeoutSeconds': 'Seconds per tool call',
  'tools.reasoningMode': 'Reasoning sent back with tool rounds',
  'web.fetchAddresses': 'Addresses web fetch may reach',
  'rendering.javascript': 'JavaScript in messages (advanced rendering)',
});

/** Tavo's risk warning before scripts of cards run without asking. */
const AUTO_WARNING =
  'Cards are made by strangers. With “auto”, every script in a message runs as soon as it is shown — in a sandboxed frame that cannot read this page, your cookies or the API, but that can show anything, load images from the internet and call the TavoJS API (the calls the TavoJS documentation marks — changing characters, importing presets, lorebooks and regex — still ask each time). Only choose auto for cards you trust.';

function ToolSettings() {
  const [rows, setRows] = useState(/** @type {any[] | null} */ (null));
  useEffect(() => {
    get('/api/settings').then(setRows, (e) => toast(errorText(e), 'error'));
  }, []);
  /** @param {string} key @param {any} value */
  const set = async (key, value) => {
    if (key === 'rendering.javascript' && value === 'auto' && rendering.javascript.value !== 'auto') {
      const yes = await askBubble({ kind: 'confirm', title: 'Run message scripts automatically?', text: AUTO_WARNING });
      if (!yes) {
        setRows((rs) => (rs ? [...rs] : rs));
        return;
      }
    }
    try {
      const row = await put(`/api/settings/${encodeURIComponent(key)}`, { value });
      setRows((rs) => (rs || []).map((r) => (r.key === key ? row : r)));
      if (key === 'rendering.javascript') rendering.javascript.value = row.value;
    } catch (e) {
      toast(errorText(e), 'error');
    }
  };
  return html`<section aria-labelledby="tools-title">
    <h2 id="tools-title">Tools and web</h2>
    ${rows === null
      ? html`<p class="muted">Loading…</p>`
      : html`<div class="form settings-grid">${rows.map((r) => {
          const id = 'setting-' + r.key.replace(/\W/g, '-');
          const label = LABELS[r.key] || r.key;
          let control;
          if (r.kind.type === 'bool')
            control = html`<input id=${id} type="checkbox" checked=${!!r.value} onChange=${(/** @type {any} */ e) => set(r.key, e.currentTarget.checked)} />`;
          else if (r.kind.type === 'int')
            control = html`<input id=${id} type="number" min=${r.kind.min} max=${r.kind.max} value=${r.value}
              onChange=${(/** @type {any} */ e) => set(r.key, Number(e.currentTarget.value))} />`;
          else if (r.kind.type === 'secret')
            // A secret is never shown; a new value replaces it (the CLI shows it where needed).
            control = html`<input id=${id} type="password" autocomplete="off" placeholder=${r.value || ''} minLength=${r.kind.minLength}
              onChange=${(/** @type {any} */ e) => { if (e.currentTarget.value) set(r.key, e.currentTarget.value); }} />`;
          else if (r.kind.type === 'text')
            // Free text (the memory extraction prompt, a connection name); saved when it loses focus.
            control = html`<textarea id=${id} rows=${r.kind.maxLength > 200 ? 6 : 1} maxLength=${r.kind.maxLength} value=${r.value ?? ''}
              onChange=${(/** @type {any} */ e) => { if (e.currentTarget.value.trim()) set(r.key, e.currentTarget.value); }}></textarea>`;
          else
            control = html`<select id=${id} value=${r.value} onChange=${(/** @type {any} */ e) => set(r.key, e.currentTarget.value)}>
              ${r.kind.values.map((/** @type {string} */ v) => html`<option key=${v} value=${v}>${v}</option>`)}</select>`;
          return html`<div class="setting" key=${r.key}>
            <label for=${id}>${label}</label>${control}
            <small class="muted">${r.about}</small></div>`;
        })}</div>`}
  </section>`;
}
