// "Shared with everyone" under the library, on a server with accounts: what admins published.
// A user adds an item to their own library (a copy, theirs to change); an admin also unpublishes.
import { useEffect } from 'preact/hooks';
import { html } from '../html.js';
import { accountsMode } from '../store.js';
import { sharedItems, loadShared, copyShared, unpublishShared, canPublish } from '../shared.js';
import { Avatar } from './Avatar.js';

const KIND_LABEL = { character: 'Character', persona: 'Persona', preset: 'Preset', lorebook: 'Lorebook', regex: 'Regex', theme: 'Theme' };

export function SharedLibrary() {
  useEffect(() => { loadShared(); }, [accountsMode.value]);
  if (!accountsMode.value) return null;
  const items = sharedItems.value;
  return html`<section class="shared-library" aria-labelledby="shared-title">
    <h2 id="shared-title">Shared with everyone</h2>
    ${items === null
      ? html`<p class="muted" aria-busy="true">Loading…</p>`
      : items.length === 0
        ? html`<p class="muted">Nothing is shared yet. An admin shares a card with <strong>Share with everyone</strong> on its page.</p>`
        : html`<ul class="shared-list" aria-label="Shared with everyone">
            ${items.map((it) => html`<li key=${it.kind + it.id}>
              ${it.kind === 'character'
                ? html`<${Avatar} src=${`/api/shared/character/${it.id}/avatar`} name=${it.name} />`
                : null}
              <span class="grow"><strong>${it.name}</strong>
                <span class="pill small">${KIND_LABEL[it.kind] || it.kind}</span>
                <span class="muted"> · shared by ${it.publishedBy}</span></span>
              <button type="button" onClick=${() => copyShared(it)} aria-label=${`Add ${it.name} to my library`}>Add to my library</button>
              ${canPublish()
                ? html`<button type="button" class="danger" onClick=${() => unpublishShared(it)} aria-label=${`Stop sharing ${it.name}`}>Stop sharing</button>`
                : null}
            </li>`)}
          </ul>`}
  </section>`;
}
