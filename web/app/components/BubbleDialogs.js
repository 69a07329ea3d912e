// What bubble scripts asked the user, one request at a time: a confirmation (the app's
// ConfirmDialog, Allow / Deny, with a "remember" box when the asker offers one), a picker (`tavo.utils.select`), the image viewer
// (`tavo.utils.preview`) or a notice (a plugin action in a chat without advanced rendering).
// Answers go back to the waiting script through the store.
import { html } from '../html.js';
import { bubbleRequests, answerBubble } from '../store.js';
import { ConfirmDialog } from './ConfirmDialog.js';
import { SelectDialog } from './SelectDialog.js';
import { ImageViewer } from './ImageViewer.js';
import { NoticeDialog } from './NoticeDialog.js';

export function BubbleDialogs() {
  const req = bubbleRequests.value[0];
  if (!req) return null;
  if (req.kind === 'confirm')
    return html`<${ConfirmDialog} key=${req.id} title=${req.title} text=${req.text} rememberLabel=${req.remember}
      onAnswer=${(/** @type {'allow'|'deny'} */ c, /** @type {boolean} */ remember) =>
        answerBubble(req.id, req.remember ? { allow: c === 'allow', remember } : c === 'allow')} />`;
  if (req.kind === 'select')
    return html`<${SelectDialog} key=${req.id} title=${req.title} options=${req.options} defaultValue=${req.defaultValue}
      onAnswer=${(/** @type {string|null} */ v) => answerBubble(req.id, v)} />`;
  if (req.kind === 'notice')
    return html`<${NoticeDialog} key=${req.id} title=${req.title} text=${req.text} onClose=${() => answerBubble(req.id, undefined)} />`;
  return html`<${ImageViewer} key=${req.id} src=${req.src} onClose=${() => answerBubble(req.id, undefined)} />`;
}
