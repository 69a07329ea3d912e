// Picks a stored message as the regex tester's sample: a chat, then one of its latest
// messages; answers its text with the placement and depth a generation would give it.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { get } from '../api.js';

/** @param {{onPick: (sample: {text: string, placement: string, depth: number}) => void}} props */
export function MessagePicker({ onPick }) {
  const [chats, setChats] = useState(/** @type {any[]} */ ([]));
  const [chat, setChat] = useState('');
  const [page, setPage] = useState(/** @type {{messages: any[], total: number}|null} */ (null));
  useEffect(() => {
    get('/api/chats').then(setChats, () => setChats([]));
  }, []);
  useEffect(() => {
    if (!chat) return setPage(null);
    get(`/api/chats/${chat}/messages?limit=50`).then(setPage, () => setPage(null));
  }, [chat]);
  return html`<div class="row wrap">
    <label class="field narrow">From chat <select aria-label="Sample from chat" value=${chat} onChange=${(/** @type {any} */ e) => setChat(e.currentTarget.value)}>
      <option value="">(type a sample)</option>${chats.map((c) => html`<option key=${c.id} value=${String(c.id)}>${c.name}</option>`)}</select></label>
    ${page
      ? html`<label class="field grow">Message <select aria-label="Sample message" value=""
          onChange=${(/** @type {any} */ e) => {
            const m = page.messages.find((x) => String(x.id) === e.currentTarget.value);
            if (m) onPick({ text: m.content, placement: m.role === 'user' ? 'user' : 'char', depth: page.total - 1 - m.floor });
          }}>
          <option value="">Choose a message…</option>
          ${[...page.messages].reverse().map((m) => html`<option key=${m.id} value=${String(m.id)}>#${m.floor} ${m.name || m.role}: ${m.content.slice(0, 60)}</option>`)}
        </select></label>`
      : null}
  </div>`;
}
