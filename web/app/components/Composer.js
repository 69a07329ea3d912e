// The composer: the message box (Enter sends, Shift+Enter breaks the line), Send or Stop, and
// the other kinds of reply; an image to send with the message (picked, dropped or pasted); in
// a group chat, "Reply as" — the member who answers the next message (else the chat's reply
// mode decides).
import { html } from '../html.js';
import { chatView, currentReply, setDraft, setAttachment, startReply, stopReply, toast, errorText } from '../store.js';
import { IMAGE_TYPES, attachImage } from '../attachment.js';
import { sendInput, sending } from '../plugins/send.js';
import { PluginActionsMenu } from './PluginActionsMenu.js';

/** @param {{disabled: boolean}} props */
export function Composer({ disabled }) {
  const reply = currentReply.value;
  const live = !!reply && reply.status.value !== 'finished' && !reply.error.value;
  const draft = chatView.draft.value;
  /** @param {'normal'|'regenerate'|'swipe'|'continue'|'impersonate'} kind */
  const go = (kind) =>
    // A message goes through the plugins' input hooks first (they may rewrite or cancel it).
    (kind === 'normal' ? sendInput(draft, 'ui') : startReply(kind)).catch((e) => toast(errorText(e), 'error'));
  const hooks = sending.value;
  const chat = /** @type {any} */ (chatView.chat.value);
  const members = /** @type {{id: number, name: string}[]} */ (chat?.characters || []);
  const group = members.length > 1;
  const muted = /** @type {number[]} */ (chat?.mutedCharacterIds || []);
  const speaker = chatView.speaker.value;
  const attachment = chatView.attachment.value;
  const ready = !!draft.trim() || !!attachment;
  /** @param {File|null|undefined} file */
  const attach = (file) => {
    if (file) attachImage(file).catch((e) => toast(errorText(e), 'error'));
  };
  /** A choice of the "more" menu closes it. @param {'regenerate'|'continue'|'impersonate'} kind @returns {(e: Event) => void} */
  const pick = (kind) => (e) => {
    const menu = /** @type {HTMLElement} */ (e.currentTarget).closest('details');
    if (menu) menu.open = false;
    go(kind);
  };
  /** @param {Event} e */
  const submit = (e) => {
    e.preventDefault();
    if (!live && !hooks && ready) go('normal');
  };
  /** @param {DragEvent} e */
  const dropped = (e) => [...(e.dataTransfer?.files || [])].find((f) => f.type.startsWith('image/'));
  return html`<form class="composer" onSubmit=${submit} aria-label="Composer"
    onDragOver=${(/** @type {DragEvent} */ e) => { if (e.dataTransfer?.types.includes('Files')) e.preventDefault(); }}
    onDrop=${(/** @type {DragEvent} */ e) => {
      const file = dropped(e);
      if (file) {
        e.preventDefault();
        attach(file);
      }
    }}>
    <textarea aria-label="Message" placeholder="Message" rows="2" value=${draft} disabled=${disabled}
      onInput=${(/** @type {any} */ e) => setDraft(e.currentTarget.value)}
      onKeyDown=${(/** @type {KeyboardEvent} */ e) => {
        if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
          e.preventDefault();
          if (!live && !hooks && ready) go('normal');
        }
      }}
      onPaste=${(/** @type {ClipboardEvent} */ e) => {
        const file = [...(e.clipboardData?.files || [])].find((f) => f.type.startsWith('image/'));
        if (file) {
          e.preventDefault();
          attach(file);
        }
      }}></textarea>
    ${attachment
      ? html`<div class="composer-top composer-attachment">
          <img src=${attachment.url} alt=${'Attached: ' + attachment.name} />
          <span class="small">${attachment.name}</span>
          <button type="button" class="icon" aria-label="Remove image" disabled=${live} onClick=${() => setAttachment(null)}>×</button>
        </div>`
      : null}
    ${group
      ? html`<div class="composer-top"><select class="reply-as" aria-label="Reply as" disabled=${disabled || live} value=${speaker == null ? '' : String(speaker)}
          onChange=${(/** @type {any} */ e) => { chatView.speaker.value = e.currentTarget.value ? Number(e.currentTarget.value) : null; }}>
          <option value="">Reply mode: ${chat?.replyMode || 'natural'}</option>
          ${members.map((m) => html`<option key=${m.id} value=${String(m.id)}>${m.name}${muted.includes(m.id) ? ' (muted)' : ''} answers</option>`)}
        </select></div>`
      : null}
    <div class="composer-actions">
      ${live
        ? html`<button type="button" class="danger" onClick=${() => stopReply().catch((e) => toast(errorText(e), 'error'))}>Stop</button>`
        : html`<button type="submit" class="primary" disabled=${disabled || !ready || hooks} aria-busy=${hooks}>Send</button>`}
      <label class="button attach" title="Attach image"><svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round"><rect x="3" y="4" width="18" height="16" rx="2" /><circle cx="9" cy="10" r="2" /><path d="m21 17-5-5-9 8" /></svg><input type="file" accept=${IMAGE_TYPES.join(',')} aria-label="Attach image" class="visually-hidden" disabled=${disabled || live}
        onChange=${(/** @type {any} */ e) => {
          attach(e.currentTarget.files?.[0]);
          e.currentTarget.value = '';
        }} /></label>
      <${PluginActionsMenu} />
      <details class="menu up">
        <summary class="button" aria-label="More replies">⋯</summary>
        <ul>
          <li><button type="button" disabled=${live} onClick=${pick('regenerate')}>Regenerate</button></li>
          <li><button type="button" disabled=${live} onClick=${pick('continue')}>Continue</button></li>
          <li><button type="button" disabled=${live} onClick=${pick('impersonate')}>Impersonate</button></li>
        </ul>
      </details>
    </div>
  </form>`;
}
