// Reading a big lorebook in pages (`GET /api/library/lorebook/{id}/entries`): the editor draws
// the first rows from a small first page while the rest arrives in larger ones, instead of
// waiting for a 10,000-entry book as one answer. Every page must be of the revision the first
// one had; a book changed meanwhile is read again from the start.
import { get } from './api.js';

/** Entries in the first page: enough to fill the screen. */
const FIRST_PAGE = 100;
/** Entries in each later page. */
const PAGE = 5000;
/** Reads from the start when the book changed while being read, at most this often. */
const ATTEMPTS = 3;

/** @typedef {{book: any, loaded: number, total: number}} LorebookProgress */

/**
 * The whole book (as `GET /api/library/lorebook/{id}` gives it); `onPage` sees the book with
 * the entries read so far after every page.
 * @param {number} id @param {(progress: LorebookProgress) => void} onPage
 */
export async function readLorebook(id, onPage) {
  const url = `/api/library/lorebook/${id}/entries`;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const first = await get(`${url}?limit=${FIRST_PAGE}`);
    const { entryCount: total, offset: _offset, entries: firstEntries, ...book } = first;
    /** @type {any[]} */
    const entries = [...firstEntries];
    onPage({ book: { ...book, entries: entries.slice() }, loaded: entries.length, total });
    // The rest in pages asked for at once (the server answers them side by side), shown in
    // book order as far as they have arrived.
    /** @type {Promise<any>[]} */
    const pages = [];
    for (let offset = entries.length; offset < total; offset += PAGE) pages.push(get(`${url}?offset=${offset}&limit=${PAGE}`));
    /** @type {any[][]} */
    const parts = [];
    let changed = false;
    await Promise.all(pages.map(async (request, i) => {
      const page = await request;
      if (page.revision !== book.revision) changed = true;
      parts[i] = page.entries;
      if (changed) return;
      // Show what is contiguous from the start.
      let loaded = [...entries];
      for (let j = 0; j < parts.length && parts[j]; j++) loaded = loaded.concat(parts[j]);
      onPage({ book: { ...book, entries: loaded }, loaded: loaded.length, total });
    }));
    for (const part of parts) for (const e of part || []) entries.push(e);
    if (!changed) return { ...book, entries };
  }
  // Written to faster than it can be read in pages: read it whole.
  return get(`/api/library/lorebook/${id}`);
}
