// Settings → MCP: tavo's own MCP server (on/off and scope are settings rows above; here the
// connection text to copy, as Tavo shows it) and the outside MCP servers whose tools join
// replies, with their state.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { get } from '../api.js';
import { toast, errorText } from '../store.js';

export function McpPanel() {
  const [info, setInfo] = useState(/** @type {any} */ (null));
  const [servers, setServers] = useState(/** @type {any[] | null} */ (null));
  useEffect(() => {
    get('/api/mcp/info').then(setInfo, (e) => toast(errorText(e), 'error'));
    get('/api/mcp-servers').then((r) => setServers(r.servers), (e) => toast(errorText(e), 'error'));
  }, []);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(info.text);
      toast('Connection text copied', 'ok');
    } catch (e) {
      toast(errorText(e), 'error');
    }
  };
  return html`<section aria-labelledby="mcp-title">
    <h2 id="mcp-title">MCP</h2>
    ${info === null
      ? html`<p class="muted">Loading…</p>`
      : html`<p>tavo's MCP server is <strong>${info.enabled ? 'on' : 'off'}</strong> (scope ${info.scope}).
          Agents connect with:</p>
        <pre class="arguments" aria-label="MCP connection text">${info.text}</pre>
        <button type="button" onClick=${copy}>Copy connection text</button>`}
    <h3>Outside MCP servers</h3>
    ${servers === null
      ? html`<p class="muted">Loading…</p>`
      : servers.length === 0
        ? html`<p class="muted">None. Add one with <code>tavo mcp-server add NAME --command … | --url …</code>; its tools then join replies, asking before each call.</p>`
        : html`<ul class="mcp-servers">${servers.map((s) => html`<li key=${s.name}>
            <strong>${s.name}</strong> — ${s.status?.state ?? (s.enabled ? 'idle' : 'stopped')}
            ${s.status?.tools?.length ? html`, ${s.status.tools.length} tools` : ''}
            ${s.status?.lastError ? html`<div class="error" role="alert">${s.status.lastError}</div>` : ''}</li>`)}</ul>`}
  </section>`;
}
