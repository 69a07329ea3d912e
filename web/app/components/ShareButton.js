// "Share with everyone": an admin of a server with accounts publishes an asset of their own
// library to the shared library (a copy: later edits of theirs stay theirs). Absent otherwise.
import { html } from '../html.js';
import { canPublish, publishShared } from '../shared.js';

/** @param {{kind: import('../shared.js').SharedItem['kind'], id: number, name: string}} props */
export function ShareButton({ kind, id, name }) {
  if (!canPublish()) return null;
  return html`<button type="button" onClick=${() => publishShared(kind, id, name)}>Share with everyone</button>`;
}
