// The library's virtual file paths (seed 002: `files/chat/NAME`, `files/global/NAME`) as the
// page loads them. Messages, variables and cards keep the virtual path ("paths in messages
// need no rewriting"); only what the page shows is pointed at the server: a chat's files under
// that chat, global files under /api/files. Sanitising (plain HTML and Markdown bubbles) rewrites
// `src`, `href` and `poster` through one DOMPurify hook; script frames get signed URLs instead.

import DOMPurify from './purify.js';

/** The address of a virtual path, or null for anything else.
 * @param {unknown} ref @param {number|null|undefined} chatId */
export function fileUrl(ref, chatId) {
  if (typeof ref !== 'string') return null;
  const chat = /^files\/chat\/([^/\\:?#]+)$/.exec(ref);
  if (chat && chatId != null && chat[1] !== '..' && chat[1] !== '.') return `/api/chats/${chatId}/files/${encodeURIComponent(chat[1])}`;
  const global = /^files\/global\/([^/\\:?#]+)$/.exec(ref);
  if (global && global[1] !== '..' && global[1] !== '.') return `/api/files/${encodeURIComponent(global[1])}`;
  return null;
}

/** The chat whose files the sanitiser is resolving (DOMPurify runs synchronously). @type {number|null} */
let resolving = null;

/**
 * Runs `f` (a sanitiser call) with the virtual paths it meets resolved against `chatId`.
 * @template T @param {number|null|undefined} chatId @param {() => T} f @returns {T}
 */
export function resolvingFilesOf(chatId, f) {
  const before = resolving;
  resolving = chatId ?? null;
  try {
    return f();
  } finally {
    resolving = before;
  }
}

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  for (const name of ['src', 'href', 'poster']) {
    const v = node.getAttribute(name);
    if (!v || !v.startsWith('files/')) continue;
    const url = fileUrl(v, resolving);
    if (url) node.setAttribute(name, url);
  }
});
