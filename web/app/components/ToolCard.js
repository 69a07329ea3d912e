// One tool call as it happens: name, what it acts on, running / waiting / ok / error. It carries
// SillyTavern's `mes toolCall` classes (seed 001), so a theme's `.mes.toolCall { display: none; }`
// hides tool calls here as it does there.
import { html } from '../html.js';

const WORDS = /** @type {Record<string, string>} */ ({ running: 'running…', waiting: 'waiting for you', ok: 'done', error: 'failed' });

/** @param {{card: import('../store.js').ToolCard}} props */
export function ToolCard({ card }) {
  return html`<div class=${'mes toolCall tool-card ' + card.status} role="status" aria-label=${`Tool ${card.tool}: ${WORDS[card.status] || card.status}`}>
    <span class="tool-dot" aria-hidden="true"></span>
    <code class="tool-name">${card.tool}</code>
    ${card.label ? html`<span class="tool-label">${card.label}</span>` : null}
    <span class="tool-status">${WORDS[card.status] || card.status}${card.errorCode ? ` (${card.errorCode})` : ''}${card.truncated ? ' · truncated' : ''}</span>
  </div>`;
}
