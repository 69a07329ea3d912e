// The chat's JavaScript console in the chat panel: each line a bubble or plugin frame wrote,
// newest last, with its level and a link to the message it came from (its floor), and Clear.
import { html } from '../html.js';
import { consoleLines, clearConsole } from '../bubble/console.js';
import { chatView } from '../store.js';

/** @param {{chatId: number}} props */
export function ScriptConsole({ chatId }) {
  const lines = consoleLines.value.get(chatId) || [];
  const floorOf = (/** @type {number} */ id) => chatView.messages.value.find((m) => m.id === id)?.floor;
  /** Brings the message a line came from into view, when it is loaded. @param {number} id */
  const show = (id) => document.querySelector(`article.message[data-key="${id}"]`)?.scrollIntoView({ block: 'center' });
  return html`<fieldset class="script-console"><legend>JavaScript console</legend>
    ${lines.length === 0
      ? html`<p class="muted">Nothing logged. What scripts in this chat's messages write with console.log appears here.</p>`
      : html`<ol class="console-lines" aria-label="Console lines">${lines.map((l) => {
          const floor = l.messageId ? floorOf(l.messageId) : undefined;
          return html`<li key=${l.seq} class=${'console-' + l.level}>
            <span class="console-level">${l.level}</span>
            ${l.messageId
              ? html`<button type="button" class="link small" title=${l.source} onClick=${() => show(l.messageId)}>${floor != null ? `#${floor}` : `message ${l.messageId}`}</button>`
              : html`<span class="muted">${l.source}</span>`}
            <code class="console-text">${l.text}</code></li>`;
        })}</ol>
        <p><button type="button" class="small" onClick=${() => clearConsole(chatId)}>Clear the console</button></p>`}
  </fieldset>`;
}
