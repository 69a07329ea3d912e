// The shared library of a server with accounts: what admins publish for everyone (GET
// /api/shared), copied by a user into their own library, published and unpublished by an admin.
// State and actions only; SharedLibrary.js and ShareButton.js draw them.
import { signal } from '@preact/signals';
import { get, post, del } from './api.js';
import { accountsMode, currentUser, toast, errorText, loadCharacters } from './store.js';

/** @typedef {{kind: 'character'|'persona'|'preset'|'lorebook'|'regex'|'theme', id: number, name: string, publishedBy: string, publishedAt: string}} SharedItem */

/** What is published; null until loaded (and on a server without accounts). @type {import('@preact/signals').Signal<SharedItem[]|null>} */
export const sharedItems = signal(null);

/** Whether this browser's user may publish (an admin on a server with accounts). */
export const canPublish = () => accountsMode.value && !!currentUser.value?.admin;

export async function loadShared() {
  if (!accountsMode.value) return;
  try {
    sharedItems.value = (await get('/api/shared')).items;
  } catch (e) {
    toast(errorText(e), 'error');
  }
}

/** Copies a published item into the user's own library. @param {SharedItem} item */
export async function copyShared(item) {
  try {
    await post(`/api/shared/${item.kind}/${item.id}/copy`);
    toast(`Added ${item.name} to your library`, 'ok');
    if (item.kind === 'character') await loadCharacters();
  } catch (e) {
    toast(errorText(e), 'error');
  }
}

/** Publishes asset `id` of the admin's own library. @param {SharedItem['kind']} kind @param {number} id @param {string} name */
export async function publishShared(kind, id, name) {
  try {
    await post('/api/admin/shared', { kind, id });
    toast(`Shared ${name} with everyone`, 'ok');
    await loadShared();
  } catch (e) {
    toast(errorText(e), 'error');
  }
}

/** Takes an item out of the shared library; users' copies stay theirs. @param {SharedItem} item */
export async function unpublishShared(item) {
  try {
    await del(`/api/admin/shared/${item.kind}/${item.id}`);
    toast(`${item.name} is no longer shared`, 'ok');
    await loadShared();
  } catch (e) {
    toast(errorText(e), 'error');
  }
}
