// The notifications of Tavo §6.8 that the page sees happen: `chat:updated` (and its alias
// `chat:changed`), `message:added|updated|deleted` followed by `message:changed`. They are
// read off the open chat's state, which the chat's own streams and actions keep current (the
// reply's events, the re-read tail after each action): a message is `added` once it is saved
// and no longer streaming (one per streamed reply), `updated` when its text, reasoning,
// hidden flag or swipe changed, `deleted` when it left the loaded range. Older
// pages loaded by scrolling are not news. Nothing is queued while no plugin runs.
import { effect } from '@preact/signals';
import { chatView, currentReply } from '../store.js';
import { notify, running } from './hooks.js';

/** A chat as plugins see it (a light summary). @param {any} chat */
export function lightChat(chat) {
  if (!chat) return null;
  return {
    id: chat.id,
    name: chat.name,
    characters: (chat.characters || []).map((/** @type {any} */ c) => ({ id: c.id, name: c.name })),
    persona: chat.persona ? { id: chat.persona.id, name: chat.persona.name } : null,
  };
}

/** A message as plugins see it. @param {import('../store.js').Message} m */
export const lightMessage = (m) => ({ id: m.id, index: m.floor, isUser: m.role === 'user', role: m.role, hidden: !!m.hidden });

/** @param {import('../store.js').Message} m */
const signature = (m) => JSON.stringify([m.content, m.reasoning ?? null, !!m.hidden, m.swipeId ?? 0]);

/** Listeners of the same notifications besides the plugins: the bubble frames' `tavo.events`.
 * @type {Set<(type: string, payload: Record<string, any>) => void>} */
export const chatNews = new Set();
/** @param {string} type @param {Record<string, any>} payload */
function tell(type, payload) {
  if (running()) notify(type, payload);
  for (const f of chatNews) f(type, payload);
}

/** Starts watching the open chat; answers the function that stops it. */
export function watchChat() {
  let chatId = /** @type {number|null} */ (null);
  let chatKey = '';
  /** @type {Map<number, {m: import('../store.js').Message, sig: string, pending: boolean}>} */
  let known = new Map();
  let maxId = 0;

  /** @param {string} change @param {import('../store.js').Message} m */
  const emit = (change, m) => {
    const payload = { chatId, change, message: lightMessage(m) };
    tell(`message:${change}`, payload);
    tell('message:changed', payload);
  };

  return effect(() => {
    const id = chatView.id.value;
    const chat = chatView.chat.value;
    const msgs = chatView.messages.value;
    const reply = currentReply.value;
    const streaming = reply && reply.chatId === id && reply.status.value !== 'finished' && !reply.error.value ? reply.messageId.value : null;
    if (id == null || !chat || chat.id !== id) {
      chatId = null;
      return;
    }
    if (chatId !== id) {
      // A chat (re)opened: what it holds now is the baseline.
      chatId = id;
      chatKey = JSON.stringify(chat);
      known = new Map(msgs.map((m) => [m.id, { m, sig: signature(m), pending: m.id === streaming }]));
      maxId = msgs.reduce((a, m) => Math.max(a, m.id), 0);
      return;
    }
    const key = JSON.stringify(chat);
    if (key !== chatKey) {
      chatKey = key;
      tell('chat:updated', { chatId: id, chat: lightChat(chat) });
    }
    const seen = new Set();
    for (const m of msgs) {
      seen.add(m.id);
      const old = known.get(m.id);
      const sig = signature(m);
      if (!old) {
        const fresh = m.id > maxId;
        maxId = Math.max(maxId, m.id);
        const pending = fresh && m.id === streaming;
        known.set(m.id, { m, sig, pending });
        if (fresh && !pending) emit('added', m);
        continue;
      }
      if (old.pending) {
        if (m.id !== streaming) {
          known.set(m.id, { m, sig, pending: false });
          emit('added', m);
        } else known.set(m.id, { m, sig, pending: true });
        continue;
      }
      if (old.sig !== sig) {
        known.set(m.id, { m, sig, pending: m.id === streaming });
        // A swipe being written is news when it is done.
        if (m.id === streaming) known.set(m.id, { m, sig: old.sig, pending: false });
        else emit('updated', m);
      }
    }
    // The loaded messages are one contiguous run ending at the chat's tail: a message missing
    // from the range it covers was deleted (one before it was only unloaded, when a re-read
    // kept the newest page alone).
    const firstFloor = msgs.length ? msgs[0].floor : 0;
    for (const [mid, old] of [...known]) {
      if (seen.has(mid)) continue;
      known.delete(mid);
      if (!old.pending && old.m.floor >= firstFloor) emit('deleted', old.m);
    }
  });
}
