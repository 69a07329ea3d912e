// What bubble scripts asked the user, one request at a time: a confirmation (the app's
// ConfirmDialog, Allow / Deny), a picker (`tavo.utils.select`) or the image viewer
// (`tavo.utils.preview`). Answers go back to the waiting script through the store.
import { html } from '../html.js';
import { bubbleRequests, answerBubble } from '../store.js';
import { ConfirmDialog } from './ConfirmDialog.js';
import { SelectDialog } from './SelectDialog.js';
import { ImageViewer } from './ImageViewer.js';

export function BubbleDialogs() {
  const req = bubbleRequests.value[0];
  if (!req) return null;
  if (req.kind === 'confirm')
    return html`<${ConfirmDialog} key=${req.id} title=${req.title} text=${req.text}
      onAnswer=${(/** @type {'allow'|'deny'} */ c) => answerBubble(req.id, c === 'allow')} />`;
  if (req.kind === 'select')
    return html`<${SelectDialog} key=${req.id} title=${req.title} options=${req.options} defaultValue=${req.defaultValue}
      onAnswer=${(/** @type {string|null} */ v) => answerBubble(req.id, v)} />`;
  return html`<${ImageViewer} key=${req.id} src=${req.src} onClose=${() => answerBubble(req.id, undefined)} />`;
}
