// Chats, most recent first (/chats), and the rows a character page reuses.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { link } from '../router.js';
import { get } from '../api.js';
import { liveReplies, libraryTick, errorText } from '../store.js';

export function ChatList() {
  const [rows, setRows] = useState(/** @type {any[] | null} */ (null));
  const [error, setError] = useState(/** @type {string|null} */ (null));
  useEffect(() => {
    get('/api/chats').then(setRows, (e) => setError(errorText(e)));
  }, [libraryTick.value]);
  return html`<section class="screen">
    <h1>Chats</h1>
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    ${rows === null ? html`<p class="muted">Loading…</p>` : rows.length ? html`<${ChatRows} rows=${rows} />` : html`<p class="muted">No chats yet: open a character and start one.</p>`}
  </section>`;
}

/** @param {{rows: any[]}} props */
export function ChatRows({ rows }) {
  const live = liveReplies.value;
  return html`<ul class="chat-rows">
    ${rows.map((c) => {
      const r = live[c.id];
      return html`<li key=${c.id}>
        <a href=${'/chats/' + c.id} onClick=${link}>
          <span class="grow"><strong>${c.name || 'Chat ' + c.id}</strong>
            <span class="muted"> · ${c.characters.map((/** @type {any} */ m) => m.name).join(', ')} · ${c.messages} messages</span></span>
          ${r ? html`<span class=${'badge ' + r.status}>${r.status === 'waiting' ? 'waiting for you' : 'replying'}</span>` : null}
          <time class="muted" datetime=${c.updatedAt}>${new Date(c.updatedAt).toLocaleDateString()}</time>
        </a>
      </li>`;
    })}
  </ul>`;
}
