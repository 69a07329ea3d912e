// Editing one asset safely, the same way in every editor of the workbench: the draft is the
// whole asset as read (unknown fields and `extensions` ride along untouched) and is saved with
// the `revision` it was read at; a 409 keeps the draft and fetches the other version so the
// page can show both; unsaved drafts live in sessionStorage (this tab, survives a reload, never
// the token); the version before the last save is kept so that save can be undone. The server
// decides every rule (validation, revisions); this module only carries the user's text.
//
// Drafts are never mutated: every edit builds a new object and keeps the untouched parts'
// objects, so "what changed" is a reference comparison for all but the edited entries.

import { signal, batch } from '@preact/signals';
import { get, put, ApiError } from './api.js';
import { errorText } from './store.js';

/**
 * @typedef {{
 *   kind: string, id: number,
 *   base: import('@preact/signals').Signal<any|null>,
 *   draft: import('@preact/signals').Signal<any|null>,
 *   conflict: import('@preact/signals').Signal<any|null>,
 *   undo: import('@preact/signals').Signal<any|null>,
 *   error: import('@preact/signals').Signal<string|null>,
 *   busy: import('@preact/signals').Signal<boolean>,
 *   restored: import('@preact/signals').Signal<boolean>,
 *   savedAt: import('@preact/signals').Signal<number>,
 *   read: (() => Promise<any>) | null,
 * }} AssetDraft
 */

/** Fields that are the server's bookkeeping, never a user's edit. */
const BOOKKEEPING = new Set(['id', 'revision', 'createdAt', 'updatedAt', 'modificationDate']);

/** @type {Map<string, AssetDraft>} */
const drafts = new Map();

/** @param {string} kind @param {number} id */
const storageKey = (kind, id) => `tavo.draft.${kind}.${id}`;

/** @param {string} key @returns {any} */
function readStored(key) {
  try {
    const raw = sessionStorage.getItem(key);
    return raw ? JSON.parse(raw) : null;
  } catch {
    return null;
  }
}

/** @param {string} key @param {any} value @returns {boolean} whether it was kept */
function writeStored(key, value) {
  try {
    if (value === null) sessionStorage.removeItem(key);
    else sessionStorage.setItem(key, JSON.stringify(value));
    return true;
  } catch {
    /* over the quota (a huge book): the draft stays in memory only */
    return false;
  }
}

/** The editing state of one asset (one per asset while the app is open). @param {string} kind @param {number} id */
export function assetDraft(kind, id) {
  const key = kind + '/' + id;
  let d = drafts.get(key);
  if (!d) {
    d = {
      kind,
      id,
      base: signal(null),
      draft: signal(null),
      conflict: signal(null),
      undo: signal(null),
      error: signal(null),
      busy: signal(false),
      restored: signal(false),
      savedAt: signal(0),
      read: null,
    };
    drafts.set(key, d);
  }
  return d;
}

/** The asset as the server has it now, read by the editor's own reader if it has one. @param {AssetDraft} d */
const readAsset = (d) => (d.read ? d.read() : get(`/api/library/${d.kind}/${d.id}`));

/**
 * Reads the asset; an unsaved draft of this tab (kept across reloads) is restored over it.
 * `read`: how to read the whole asset when a plain `GET` is not the best way (a big lorebook
 * comes in pages); kept for the conflict's re-read too.
 * @param {AssetDraft} d @param {() => Promise<any>} [read]
 */
export async function loadDraft(d, read) {
  d.error.value = null;
  if (read) d.read = read;
  try {
    const base = await readAsset(d);
    const stored = readStored(storageKey(d.kind, d.id));
    const undo = readStored(storageKey(d.kind, d.id) + '.undo');
    batch(() => {
      d.base.value = base;
      if (d.draft.value && d.draft.value.revision <= base.revision && isDirty(d)) {
        // Already editing in this page: keep it.
      } else if (stored && stored.value) {
        // The draft's own base (the version it was read from) tells the user's changes from
        // others' if the asset moved on meanwhile; saving then meets the 409 it should.
        if (stored.base && stored.base.revision === stored.value.revision) d.base.value = stored.base;
        d.draft.value = stored.value;
        d.restored.value = true;
      } else d.draft.value = base;
      if (undo && undo.revision === base.revision) d.undo.value = undo.previous;
    });
  } catch (e) {
    d.error.value = errorText(e);
  }
}

let persistTimer = 0;
/** @type {Set<AssetDraft>} */
const toPersist = new Set();
function persistSoon() {
  if (persistTimer) return;
  persistTimer = window.setTimeout(() => {
    persistTimer = 0;
    for (const d of toPersist) persist(d);
    toPersist.clear();
  }, 300);
}
addEventListener('pagehide', () => {
  for (const d of toPersist) persist(d);
});

/** Keeps a dirty draft (with the version it was read from) in this tab's storage. @param {AssetDraft} d */
function persist(d) {
  const key = storageKey(d.kind, d.id);
  if (!isDirty(d)) {
    writeStored(key, null);
    return;
  }
  // Too large for both: the draft alone still survives a reload.
  if (!writeStored(key, { value: d.draft.value, base: d.base.value })) writeStored(key, { value: d.draft.value });
}

/** Changes the draft: `f` gets the current draft and returns the next one (never mutate). @param {AssetDraft} d @param {(draft: any) => any} f */
export function edit(d, f) {
  d.draft.value = f(d.draft.value);
  toPersist.add(d);
  persistSoon();
}

/** Sets one top-level field. @param {AssetDraft} d @param {string} field @param {any} value */
export function setField(d, field, value) {
  edit(d, (x) => ({ ...x, [field]: value }));
}

/**
 * Deep equality by value, cheap for what editors do: an edit replaces one entry of a list of
 * thousands and keeps the others' objects, so equal references end the comparison early.
 * @param {any} a @param {any} b @returns {boolean}
 */
function same(a, b) {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/** Whether the draft differs from what was read. @param {AssetDraft} d */
export function isDirty(d) {
  const a = d.draft.value;
  const b = d.base.value;
  if (!a || !b) return false;
  if (a.revision !== b.revision) return true;
  return changedFields(a, b).length > 0;
}

/** Top-level fields whose values differ (bookkeeping excluded). @param {any} a @param {any} b */
export function changedFields(a, b) {
  const keys = new Set([...Object.keys(a || {}), ...Object.keys(b || {})]);
  return [...keys].filter((k) => !BOOKKEEPING.has(k) && !same(a[k], b[k]));
}

/** Saves the draft with the revision it was read at. Answers whether it was written. @param {AssetDraft} d */
export async function save(d) {
  const body = d.draft.value;
  if (!body || d.busy.value) return false;
  d.busy.value = true;
  d.error.value = null;
  try {
    const written = await put(`/api/library/${d.kind}/${d.id}`, body);
    const previous = d.base.value;
    const saved = { ...body, revision: written.revision };
    batch(() => {
      d.undo.value = previous;
      d.base.value = saved;
      d.draft.value = saved;
      d.restored.value = false;
      d.conflict.value = null;
      d.savedAt.value = Date.now();
    });
    toPersist.delete(d);
    writeStored(storageKey(d.kind, d.id), null);
    writeStored(storageKey(d.kind, d.id) + '.undo', { revision: written.revision, previous });
    return true;
  } catch (e) {
    if (e instanceof ApiError && e.status === 409) {
      try {
        d.conflict.value = await readAsset(d);
      } catch (again) {
        d.error.value = errorText(again);
      }
    } else d.error.value = errorText(e);
    return false;
  } finally {
    d.busy.value = false;
  }
}

/**
 * One difference between the user's draft and the other version: a top-level field, or one
 * entry of an `entries`/`prompts` list (matched by `identifier`), so two people editing different
 * entries of one book merge without choosing between whole books.
 * `changed`: whether the user changed it since reading (else only the other side did, and
 * theirs is the natural choice).
 * @typedef {{key: string, label: string, mine: any, theirs: any, changed: boolean}} Difference
 */

/** @param {any} list @returns {list is {identifier: string}[]} */
const isKeyedList = (list) => Array.isArray(list) && list.length > 0 && list.every((e) => e && typeof e.identifier === 'string' && e.identifier);

/**
 * The differences between the draft and the conflicting version; `base` is what the draft was
 * read from (to tell the user's changes from theirs).
 * @param {any} mine @param {any} theirs @param {any} [base] @returns {Difference[]}
 */
export function differences(mine, theirs, base) {
  /** @type {Difference[]} */
  const out = [];
  for (const k of changedFields(mine, theirs)) {
    const a = mine[k];
    const b = theirs[k];
    if ((isKeyedList(a) || !a) && (isKeyedList(b) || !b) && (a || b)) {
      const ma = new Map((a || []).map((/** @type {any} */ e) => [e.identifier, e]));
      const mb = new Map((b || []).map((/** @type {any} */ e) => [e.identifier, e]));
      for (const idf of new Set([...ma.keys(), ...mb.keys()])) {
        if (same(ma.get(idf), mb.get(idf))) continue;
        const e = ma.get(idf) || mb.get(idf);
        const was = base && Array.isArray(base[k]) ? base[k].find((/** @type {any} */ x) => x && x.identifier === idf) : undefined;
        out.push({ key: `${k}[${idf}]`, label: `${k}: ${e.comment || e.name || idf}`, mine: ma.get(idf), theirs: mb.get(idf), changed: !base || !same(ma.get(idf), was) });
      }
      if (!same((a || []).map((/** @type {any} */ e) => e.identifier), (b || []).map((/** @type {any} */ e) => e.identifier)) && out.every((x) => !x.key.startsWith(k + '['))) {
        out.push({ key: k, label: `${k} (order)`, mine: a, theirs: b, changed: !base || !same(a, base[k]) });
      }
    } else out.push({ key: k, label: k, mine: a, theirs: b, changed: !base || !same(a, base[k]) });
  }
  return out;
}

/**
 * Resolves a conflict: the result starts from their version (so its revision is current) and
 * takes the user's value wherever `choice[key]` is 'mine'; then it is saved.
 * @param {AssetDraft} d @param {Record<string, 'mine'|'theirs'>} choice
 */
export async function resolve(d, choice) {
  const mine = d.draft.value;
  const theirs = d.conflict.value;
  if (!mine || !theirs) return false;
  // A shallow copy: untouched fields and entries keep their objects, so comparing the result
  // with `theirs` stays cheap for a book of thousands of entries (edits never mutate).
  /** @type {any} */
  const out = { ...theirs };
  for (const diff of differences(mine, theirs, d.base.value)) {
    if (choice[diff.key] !== 'mine') continue;
    const m = /^(\w+)\[(.*)\]$/.exec(diff.key);
    if (!m) {
      out[diff.key] = structuredClone(mine[diff.key]);
      continue;
    }
    const [, list, idf] = m;
    const items = [...(out[list] || [])];
    const at = items.findIndex((e) => e.identifier === idf);
    if (diff.mine === undefined) {
      if (at >= 0) items.splice(at, 1);
    } else if (at >= 0) items[at] = structuredClone(diff.mine);
    else {
      // Theirs lacks it: put it after the entry it followed in the user's list.
      const mineList = mine[list] || [];
      const prev = mineList[mineList.findIndex((/** @type {any} */ e) => e.identifier === idf) - 1];
      const after = prev ? items.findIndex((e) => e.identifier === prev.identifier) : -1;
      items.splice(after + 1, 0, structuredClone(diff.mine));
    }
    out[list] = items;
  }
  batch(() => {
    d.base.value = theirs;
    d.draft.value = out;
    d.conflict.value = null;
  });
  if (!isDirty(d)) {
    writeStored(storageKey(d.kind, d.id), null);
    return true;
  }
  return save(d);
}

/** Drops the user's edits (back to what was last read). @param {AssetDraft} d */
export function discard(d) {
  batch(() => {
    d.draft.value = d.base.value;
    d.restored.value = false;
    d.conflict.value = null;
    d.error.value = null;
  });
  toPersist.delete(d);
  writeStored(storageKey(d.kind, d.id), null);
}

/** Writes back the version before the last save (with the current revision: a later write elsewhere is a conflict). @param {AssetDraft} d */
export async function undoSave(d) {
  const previous = d.undo.value;
  const base = d.base.value;
  if (!previous || !base) return false;
  batch(() => {
    d.draft.value = { ...previous, revision: base.revision };
  });
  const ok = await save(d);
  if (ok) {
    d.undo.value = null;
    writeStored(storageKey(d.kind, d.id) + '.undo', null);
  }
  return ok;
}
