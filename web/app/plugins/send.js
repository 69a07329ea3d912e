// Sending what the composer holds, as Tavo does it (§5.14, §6.8): `input:beforeSend` over the
// running plugins (a handler may rewrite the text or cancel: the composer then keeps the
// latest committed text and nothing is sent), the trimmed text sent as a normal reply, then
// `input:afterSend`. The UI's Send (`source: 'ui'`) and `tavo.input.send()` (`'tavojs'`) both
// come here.
import { signal } from '@preact/signals';
import { chatView, currentReply, setDraft, startReply } from '../store.js';
import { runHook, notify, running } from './hooks.js';

/** True while the input hooks run (the composer's Send waits). */
export const sending = signal(false);

/**
 * @param {string} text @param {'ui'|'tavojs'|'mcp'} source
 * @returns {Promise<{ok: true, text: string} | {ok: false, reason: 'cancelled'|'busy'|'rejected', text: string, cancelledBy?: string, message?: string}>}
 */
export async function sendInput(text, source) {
  const chatId = chatView.id.value;
  const r = currentReply.value;
  if (chatId == null) return { ok: false, reason: 'rejected', text, message: 'no chat is open' };
  if ((r && r.status.value !== 'finished' && !r.error.value) || sending.value) return { ok: false, reason: 'busy', text };
  let final = text;
  sending.value = true;
  try {
    if (running()) {
      const res = await runHook('input:beforeSend', { chatId, source, text }, { cancellable: true });
      if (res.cancelled) {
        if (chatView.id.value === chatId) setDraft(res.text);
        return { ok: false, reason: 'cancelled', text: res.text, cancelledBy: res.cancelledBy, message: res.reason ?? undefined };
      }
      final = res.text;
    }
  } finally {
    sending.value = false;
  }
  final = final.trim();
  // An attached image may go without words (as a photo is sent in a messenger).
  if (!final && !chatView.attachment.value) return { ok: false, reason: 'rejected', text: final, message: 'the input is empty' };
  if (chatView.id.value !== chatId) return { ok: false, reason: 'rejected', text: final, message: 'the chat was closed' };
  await startReply('normal', final);
  if (running()) notify('input:afterSend', { chatId, source, text: final });
  return { ok: true, text: final };
}
