// Message text → sanitised HTML, in the page: a streamed reply is re-rendered as its tokens
// arrive (at most once per frame), which a server-side renderer could only do with a round
// trip per token. marked parses, DOMPurify removes scripts, handlers and unsafe URLs.

import { marked } from 'marked';
import DOMPurify from './purify.js';
import { resolvingFilesOf } from './files.js';

marked.setOptions({ gfm: true, breaks: true });

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

/** @type {Map<string, string>} */
const cache = new Map();

/**
 * @param {string} text
 * @param {number|null} [chatId] the chat whose files `files/chat/…` names (virtual paths load)
 * @returns {string} sanitised HTML
 */
export function render(text, chatId = null) {
  const key = `${chatId ?? ''}\u0000${text}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  const raw = /** @type {string} */ (marked.parse(text || '', { async: false }));
  const out = resolvingFilesOf(chatId, () =>
    DOMPurify.sanitize(raw, {
      FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe'],
      FORBID_ATTR: ['style'],
    }),
  );
  if (cache.size > 500) cache.clear();
  cache.set(key, out);
  return out;
}
