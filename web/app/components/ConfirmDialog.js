// A `confirm` tool call waits: show what it would do; Allow, Deny, or remember for this chat.
// With `onAnswer` (a bubble script's question: its title and text), the same dialog asks for
// the page instead of a reply.
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../html.js';
import { decide, toast, errorText } from '../store.js';

/** @param {{pending?: import('../store.js').Pending, title?: string, text?: string, rememberLabel?: string,
 *   onAnswer?: (choice: 'allow'|'deny', remember: boolean) => void}} props
 *   `rememberLabel` adds a "remember" box to a page question; `onAnswer` gets its state. */
export function ConfirmDialog({ pending, title, text, rememberLabel, onAnswer }) {
  const ref = useRef(/** @type {HTMLDialogElement|null} */ (null));
  const [remember, setRemember] = useState(false);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    return () => {
      if (d && d.open) d.close();
    };
  }, [pending ? pending.pendingId : title]);
  /** @param {'allow'|'deny'} choice */
  const answer = (choice) =>
    onAnswer ? onAnswer(choice, remember) : decide(choice, remember).catch((e) => toast(errorText(e), 'error'));
  if (onAnswer || !pending)
    return html`<dialog ref=${ref} class="confirm" aria-labelledby="confirm-title"
        onCancel=${(/** @type {Event} */ e) => { e.preventDefault(); answer('deny'); }}>
      <h2 id="confirm-title">${title}</h2>
      <p>${text}</p>
      ${rememberLabel
        ? html`<label class="check"><input type="checkbox" checked=${remember} onChange=${(/** @type {any} */ e) => setRemember(e.currentTarget.checked)} /> ${rememberLabel}</label>`
        : null}
      <div class="row end">
        <button type="button" onClick=${() => answer('deny')}>Deny</button>
        <button type="button" class="primary" onClick=${() => answer('allow')}>Allow</button>
      </div>
    </dialog>`;
  return html`<dialog ref=${ref} class="confirm" aria-labelledby="confirm-title"
      onCancel=${(/** @type {Event} */ e) => { e.preventDefault(); answer('deny'); }}>
    <h2 id="confirm-title">Allow <code>${pending.tool}</code>?</h2>
    <p>${pending.tool.startsWith('mcp_')
      ? 'The model wants to run a tool of an outside MCP server: it can do whatever that server can, on this machine or the network.'
      : pending.safety === 'read'
        ? 'The model wants to run a tool you set to ask before it runs.'
        : `The model wants to run a tool that changes your library${pending.safety ? ` (${pending.safety})` : ''}.`}</p>
    <pre class="arguments" aria-label="Arguments">${JSON.stringify(pending.arguments ?? {}, null, 2)}</pre>
    <label class="check"><input type="checkbox" checked=${remember} onChange=${(/** @type {any} */ e) => setRemember(e.currentTarget.checked)} /> Remember for this tool in this chat</label>
    <div class="row end">
      <button type="button" onClick=${() => answer('deny')}>Deny</button>
      <button type="button" class="primary" onClick=${() => answer('allow')}>Allow</button>
    </div>
  </dialog>`;
}
