// Settings › Storage › Logs (seed 000): the tool-call audit log, newest first — which tool ran,
// through which door, in which chat, how it ended — each call opening to its arguments and
// result. Filter by chat and by tool; older pages on request; Clear empties the log (the
// compact cards in chat messages stay). The log is bounded: the screen says how many calls it
// keeps.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { get, del } from '../api.js';
import { link } from '../router.js';
import { toast, errorText, askBubble } from '../store.js';
import { ToolCallDetails } from './ToolCallDetails.js';

const PAGE = 50;

/** The chat of an entry's target (`chat:12`), or null. @param {any} e */
const chatOf = (e) => {
  const m = /^chat:(\d+)$/.exec(String(e.target || ''));
  return m ? Number(m[1]) : null;
};

export function AuditLog() {
  const [chats, setChats] = useState(/** @type {{id: number, name: string}[]} */ ([]));
  const [chat, setChat] = useState('');
  const [tool, setTool] = useState('');
  const [entries, setEntries] = useState(/** @type {any[]|null} */ (null));
  const [next, setNext] = useState(/** @type {number|null} */ (null));
  const [capacity, setCapacity] = useState(0);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    get('/api/chats').then((rows) => setChats(rows.map((/** @type {any} */ c) => ({ id: c.id, name: c.name || `Chat ${c.id}` }))), () => {});
  }, []);
  /** @param {number|null} before */
  const load = async (before) => {
    const q = new URLSearchParams({ limit: String(PAGE) });
    if (before != null) q.set('before', String(before));
    if (chat) q.set('chat', chat);
    if (tool.trim()) q.set('tool', tool.trim());
    setBusy(true);
    try {
      const page = await get(`/api/audit?${q}`);
      setEntries((old) => (before != null && old ? [...old, ...page.entries] : page.entries));
      setNext(page.nextBefore ?? null);
      setCapacity(page.capacity);
    } catch (e) {
      toast(errorText(e), 'error');
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => { load(null); }, [chat, tool]);
  const clear = async () => {
    const yes = await askBubble({ kind: 'confirm', title: 'Clear the tool-call log?', text: 'Every entry of the log goes. The tool cards in your chats stay as they are.' });
    if (!yes) return;
    try {
      const r = await del('/api/audit');
      toast(`Cleared ${r.removed} entr${r.removed === 1 ? 'y' : 'ies'}`, 'ok');
      load(null);
    } catch (e) {
      toast(errorText(e), 'error');
    }
  };
  const name = (/** @type {number|null} */ id) => (id == null ? 'no chat' : chats.find((c) => c.id === id)?.name || `chat ${id}`);
  const tools = entries ? entries.filter((e) => String(e.action).startsWith('tool.')) : [];
  return html`<section class="screen audit-log" aria-busy=${busy}>
    <p><a href="/settings" onClick=${link}>Settings</a> › Storage</p>
    <h1>Tool-call log</h1>
    <p class="muted">What each tool call did, through the model, the app, the CLI or MCP. The log keeps the newest ${capacity ? capacity.toLocaleString() : '…'} entries; older ones fall off.</p>
    <div class="row wrap">
      <label class="field">Chat
        <select value=${chat} onChange=${(/** @type {any} */ e) => setChat(e.currentTarget.value)}>
          <option value="">All chats</option>
          ${chats.map((c) => html`<option key=${c.id} value=${String(c.id)}>${c.name}</option>`)}
        </select></label>
      <label class="field">Tool
        <input type="search" value=${tool} placeholder="tavo_file_save" onChange=${(/** @type {any} */ e) => setTool(e.currentTarget.value)} /></label>
      <span class="grow"></span>
      <button type="button" class="danger" onClick=${clear}>Clear the log</button>
    </div>
    ${entries === null
      ? html`<p class="muted" aria-busy="true">Loading…</p>`
      : tools.length === 0
        ? html`<p class="muted">No tool calls${chat || tool ? ' match' : ' logged yet'}.</p>`
        : html`<ol class="audit-entries" aria-label="Tool calls">${tools.map((e) => {
            const d = e.details || {};
            const ok = d.status === 'ok' || (d.result && d.result.ok === true);
            const chatId = chatOf(e);
            return html`<li key=${e.id} class=${'card ' + (ok ? 'ok' : 'error')}>
              <details>
                <summary><code>${String(e.action).replace(/^tool\./, '')}</code>
                  <span class="muted">${name(chatId)} · ${d.door || 'reply'} · ${ok ? 'ok' : `failed${d.result?.error?.code ? ` (${d.result.error.code})` : ''}`} · ${d.runMs ?? 0} ms ·
                  <time datetime=${e.at}>${new Date(e.at).toLocaleString()}</time></span></summary>
                <${ToolCallDetails} entry=${e} chatId=${chatId} />
              </details></li>`;
          })}</ol>`}
    ${next != null ? html`<p><button type="button" disabled=${busy} onClick=${() => load(next)}>Older calls</button></p>` : null}
  </section>`;
}
