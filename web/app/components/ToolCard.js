// One tool call as it happens: name, what it acts on, running / waiting / ok / error. It carries
// SillyTavern's `mes toolCall` classes (seed 001), so a theme's `.mes.toolCall { display: none; }`
// hides tool calls here as it does there. Opened, it shows the call as the audit log kept it
// (arguments, result, time, error code); a call whose result is a stored image shows the image
// right under the card, after a reload too (seed 000: "shown after this call").
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { get } from '../api.js';
import { ToolCallDetails, ToolImage, resultImage } from './ToolCallDetails.js';

const WORDS = /** @type {Record<string, string>} */ ({ running: 'running…', waiting: 'waiting for you', ok: 'done', error: 'failed' });
/** Tools whose result is a picture worth showing without a click. */
const PICTURES = new Set(['tavo_image_generate']);

/** The audit row of one call of `chatId` (the newest with that id), or null. @param {number|null} chatId @param {string} callId */
async function auditOf(chatId, callId) {
  const q = new URLSearchParams({ call: callId, limit: '1' });
  if (chatId != null) q.set('chat', String(chatId));
  const page = await get(`/api/audit?${q}`);
  return (page && page.entries && page.entries[0]) || null;
}

/** @param {{card: import('../store.js').ToolCard, chatId?: number|null}} props */
export function ToolCard({ card, chatId = null }) {
  const [open, setOpen] = useState(false);
  const [entry, setEntry] = useState(/** @type {any} */ (undefined));
  const picture = PICTURES.has(card.tool) && card.status === 'ok';
  useEffect(() => {
    if ((!open && !picture) || entry !== undefined || card.status === 'running' || card.status === 'waiting') return;
    let gone = false;
    auditOf(chatId, card.callId).then((e) => !gone && setEntry(e), () => !gone && setEntry(null));
    return () => { gone = true; };
  }, [open, picture, card.status]);
  const title = card.displayName || card.tool;
  const image = entry ? resultImage(entry.details, chatId) : null;
  return html`<div class=${'mes toolCall tool-card ' + card.status}>
    <details class="tool-call" onToggle=${(/** @type {any} */ e) => setOpen(e.currentTarget.open)}>
      <summary role="status" aria-label=${`Tool ${title}: ${WORDS[card.status] || card.status}`}>
        <span class="tool-dot" aria-hidden="true"></span>
        ${card.displayName ? html`<strong class="tool-title">${card.displayName}</strong> ` : null}<code class="tool-name">${card.tool}</code>
        ${card.label ? html`<span class="tool-label">${card.label}</span>` : null}
        <span class="tool-status">${WORDS[card.status] || card.status}${card.errorCode ? ` (${card.errorCode})` : ''}${card.truncated ? ' · truncated' : ''}</span>
      </summary>
      ${open
        ? entry === undefined
          ? html`<p class="muted" aria-busy="true">Loading the call…</p>`
          : entry === null
            ? html`<p class="muted">The audit log no longer holds this call (it was cleared, or it is older than what the log keeps).</p>`
            : html`<${ToolCallDetails} entry=${entry} chatId=${chatId} />`
        : null}
    </details>
    ${image && !open ? html`<${ToolImage} src=${image} alt=${`Image from ${card.tool}${card.label ? `: ${card.label}` : ''}`} />` : null}
  </div>`;
}
