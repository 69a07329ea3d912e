// Settings → MCP: tavo's own MCP server (on/off and scope are settings rows above; here the
// connection text to copy, as Tavo shows it) and the outside MCP servers whose tools join
// replies: add (a command on stdio, or a streamable-HTTP URL), enable/disable, remove, their
// state, tools and last error, and each tool's standing approval (allow / ask / deny). Header
// and env values are write-only: the server shows them as "(hidden)".
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { get, post, put, del } from '../api.js';
import { toast, errorText } from '../store.js';

/** @typedef {{name: string, command?: string, args?: string[], env?: Record<string, string>, url?: string,
 *   headers?: Record<string, string>, enabled: boolean, approvals?: Record<string, string>,
 *   status?: {state: string, tools: string[], lastError?: string}}} Server */

export function McpPanel() {
  const [info, setInfo] = useState(/** @type {any} */ (null));
  const [servers, setServers] = useState(/** @type {Server[] | null} */ (null));
  const [adding, setAdding] = useState(false);
  const [busy, setBusy] = useState(/** @type {string | null} */ (null));
  const reload = () => get('/api/mcp-servers').then((r) => setServers(r.servers), (e) => toast(errorText(e), 'error'));
  useEffect(() => {
    get('/api/mcp/info').then(setInfo, (e) => toast(errorText(e), 'error'));
    reload();
  }, []);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(info.text);
      toast('Connection text copied', 'ok');
    } catch (e) {
      toast(errorText(e), 'error');
    }
  };
  /** One change to one server, then the list again. @param {string} name @param {() => Promise<any>} f */
  const act = async (name, f) => {
    setBusy(name);
    try {
      await f();
    } catch (e) {
      toast(errorText(e), 'error');
    } finally {
      setBusy(null);
      await reload();
    }
  };
  /** Shows a change at once (a switch or a select must not spring back while the call runs). @param {string} name @param {(s: Server) => Server} f */
  const patch = (name, f) => setServers((ss) => ss && ss.map((x) => (x.name === name ? f(x) : x)));
  /** @param {Server} s */
  const remove = (s) => {
    if (!confirm(`Remove the MCP server “${s.name}”? Its tools leave the next replies.`)) return;
    act(s.name, () => del(`/api/mcp-servers/${encodeURIComponent(s.name)}`).then(() => toast(`Removed ${s.name}`, 'ok')));
  };
  return html`<section aria-labelledby="mcp-title">
    <h2 id="mcp-title">MCP</h2>
    ${info === null
      ? html`<p class="muted">Loading…</p>`
      : html`<p>tavo's MCP server is <strong>${info.enabled ? 'on' : 'off'}</strong> (scope ${info.scope}).
          Agents connect with:</p>
        <pre class="arguments" aria-label="MCP connection text">${info.text}</pre>
        <button type="button" onClick=${copy}>Copy connection text</button>`}
    <div class="row spread"><h3 id="mcp-servers-title">Outside MCP servers</h3>
      ${adding ? null : html`<button type="button" onClick=${() => setAdding(true)}>Add MCP server</button>`}</div>
    <p class="muted">Their tools join replies as <code>mcp_‹server›_‹tool›</code>; each asks before it runs unless you allow it below or in the dialog.</p>
    ${adding
      ? html`<${McpServerForm} onCancel=${() => setAdding(false)}
          onAdded=${(/** @type {any} */ status) => {
            setAdding(false);
            toast(status && status.state === 'failed' ? `Added ${status.name}; it did not start: ${status.lastError ?? ''}` : `Added ${status?.name ?? 'the server'}`, status?.state === 'failed' ? 'error' : 'ok');
            reload();
          }} />`
      : null}
    ${servers === null
      ? html`<p class="muted">Loading…</p>`
      : servers.length === 0
        ? html`<p class="muted">None yet. Add one here or with <code>tavo mcp-server add NAME --command … | --url …</code>.</p>`
        : html`<ul class="mcp-servers" aria-labelledby="mcp-servers-title">${servers.map((s) => html`<${McpServerRow} key=${s.name} server=${s}
            busy=${busy === s.name} act=${act} patch=${patch} remove=${remove} />`)}</ul>`}
  </section>`;
}

/** @param {{server: Server, busy: boolean, act: (name: string, f: () => Promise<any>) => void,
 *   patch: (name: string, f: (s: Server) => Server) => void, remove: (s: Server) => void}} props */
function McpServerRow({ server: s, busy, act, patch, remove }) {
  const state = s.status?.state ?? (s.enabled ? 'idle' : 'stopped');
  const tools = s.status?.tools ?? [];
  const where = s.url ? s.url : [s.command, ...(s.args || [])].join(' ');
  const extra = [...Object.keys(s.env || {}).map((k) => `env ${k}`), ...Object.keys(s.headers || {}).map((k) => `header ${k}`)];
  const path = `/api/mcp-servers/${encodeURIComponent(s.name)}`;
  return html`<li class="card mcp-server" aria-label=${'MCP server ' + s.name} aria-busy=${busy}>
    <div class="row spread wrap">
      <div><strong>${s.name}</strong> — <span class=${'pill state-' + state}>${state}</span>${tools.length ? html` · ${tools.length} tools` : ''}
        <div class="muted"><code>${where}</code>${extra.length ? ` · ${extra.join(', ')} (hidden)` : ''}</div></div>
      <div class="row wrap">
        <label class="check"><input type="checkbox" checked=${s.enabled} disabled=${busy} aria-label=${'Enable ' + s.name}
          onChange=${(/** @type {any} */ e) => { const on = e.currentTarget.checked; patch(s.name, (x) => ({ ...x, enabled: on })); act(s.name, () => put(`${path}/enabled`, { enabled: on })); }} /> Enabled</label>
        <button type="button" class="small danger" disabled=${busy} onClick=${() => remove(s)}>Remove ${s.name}</button>
      </div>
    </div>
    ${s.status?.lastError ? html`<p class="error" role="alert">Last error: ${s.status.lastError}</p>` : null}
    ${tools.length
      ? html`<details class="mcp-tools"><summary>Tools and approval</summary>
          <table class="mcp-tool-table"><thead><tr><th scope="col">Tool</th><th scope="col">Approval</th></tr></thead>
          <tbody>${tools.map((t) => {
            const approval = s.approvals?.[t] ?? 'ask';
            return html`<tr key=${t}><td><code>${t}</code></td><td>
              ${s.approvals
                ? html`<select aria-label=${'Approval for ' + t} value=${approval} disabled=${busy}
                    onChange=${(/** @type {any} */ e) => { const v = e.currentTarget.value; patch(s.name, (x) => ({ ...x, approvals: { ...x.approvals, [t]: v } })); act(s.name, () => put(`${path}/tools/${encodeURIComponent(t)}/approval`, { approval: v })); }}>
                    <option value="ask">Ask each time</option><option value="allow">Allow always</option><option value="deny">Deny always</option></select>`
                : html`<span class="muted">asks first</span>`}</td></tr>`;
          })}</tbody></table></details>`
      : null}
  </li>`;
}

/** `KEY=value` (env) or `Name: value` (headers) lines → an object; a bad line throws. @param {string} text @param {string} sep @param {string} what */
function pairs(text, sep, what) {
  /** @type {Record<string, string>} */
  const out = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    const at = line.indexOf(sep);
    if (at <= 0) throw new Error(`${what}: “${line}” is not ${sep === '=' ? 'KEY=value' : 'Name: value'}`);
    out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return out;
}

/** @param {{onCancel: () => void, onAdded: (status: any) => void}} props */
function McpServerForm({ onCancel, onAdded }) {
  const [f, setF] = useState({ name: '', transport: 'stdio', command: '', args: '', env: '', url: '', headers: '', enabled: true });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(/** @type {string | null} */ (null));
  /** @param {string} k @returns {(e: any) => void} */
  const field = (k) => (e) => setF({ ...f, [k]: e.currentTarget.type === 'checkbox' ? e.currentTarget.checked : e.currentTarget.value });
  /** @param {Event} e */
  const submit = async (e) => {
    e.preventDefault();
    setError(null);
    /** @type {any} */
    let body;
    try {
      body = f.transport === 'stdio'
        ? { name: f.name.trim(), command: f.command.trim(), args: f.args.split('\n').map((a) => a.trim()).filter(Boolean), env: pairs(f.env, '=', 'Environment'), enabled: f.enabled }
        : { name: f.name.trim(), url: f.url.trim(), headers: pairs(f.headers, ':', 'Headers'), enabled: f.enabled };
    } catch (err) {
      setError(errorText(err));
      return;
    }
    setBusy(true);
    try {
      onAdded(await post('/api/mcp-servers', body));
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  const stdio = f.transport === 'stdio';
  return html`<form class="card form" onSubmit=${submit} aria-label="New MCP server" aria-busy=${busy}>
    <label>Name <input value=${f.name} required maxLength="32" pattern="[A-Za-z0-9_\\-]{1,32}" title="1-32 of a-z, A-Z, 0-9, _ and -"
      onInput=${field('name')} /></label>
    <fieldset class="row wrap"><legend>Transport</legend>
      <label class="check"><input type="radio" name="mcp-transport" value="stdio" checked=${stdio} onChange=${field('transport')} /> Command (stdio)</label>
      <label class="check"><input type="radio" name="mcp-transport" value="http" checked=${!stdio} onChange=${field('transport')} /> URL (streamable HTTP)</label>
    </fieldset>
    ${stdio
      ? html`<label>Command <input value=${f.command} required placeholder="npx" onInput=${field('command')} /></label>
          <label>Arguments <small class="muted">(one per line)</small><textarea rows="3" value=${f.args} placeholder=${'-y\n@modelcontextprotocol/server-filesystem\n/srv/notes'} onInput=${field('args')}></textarea></label>
          <label>Environment <small class="muted">(KEY=value per line; stored, never shown again)</small><textarea rows="2" value=${f.env} onInput=${field('env')}></textarea></label>`
      : html`<label>URL <input type="url" value=${f.url} required placeholder="https://mcp.example.com/mcp" onInput=${field('url')} /></label>
          <label>Headers <small class="muted">(Name: value per line; stored, never shown again)</small><textarea rows="2" value=${f.headers} placeholder="Authorization: Bearer …" onInput=${field('headers')}></textarea></label>`}
    <label class="check"><input type="checkbox" checked=${f.enabled} onChange=${field('enabled')} /> Enabled (its tools join replies)</label>
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    <div class="row"><button type="submit" class="primary" disabled=${busy}>${busy ? 'Starting…' : 'Add server'}</button>
      <button type="button" onClick=${onCancel}>Cancel</button></div>
  </form>`;
}
