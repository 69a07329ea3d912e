// How a message's display copy is shown under advanced rendering: as Markdown, as sanitised
// HTML + CSS (no frame), or in a sandboxed frame because it holds scripts or a whole HTML
// document (also inside a fenced code block, as SillyTavern community cards write it). Only
// the copy shown is looked at; the stored text never changes.

import { marked } from 'marked';
import DOMPurify from '../purify.js';
import { resolvingFilesOf } from '../files.js';

/**
 * @typedef {{mode: 'markdown'} | {mode: 'html', html: string}
 *   | {mode: 'frame', doc: string, before: string, after: string, light: string}} Rendering
 *   `light` is the same content as sanitised HTML, shown when scripts may not run.
 */

const SCRIPTED = /<script\b|<[a-z][^>]*\son[a-z]+\s*=|javascript:/i;
const DOCUMENT = /^\s*(?:<!--[\s\S]*?-->\s*)*(?:<!doctype\s+html|<html[\s>])/i;
const DOC_IN_BLOCK = /<!doctype\s+html|<html[\s>]|<body[\s>]|<head[\s>]|<script\b/i;
const FENCE = /(^|\n)(```|~~~)[^\n]*\n([\s\S]*?)\n\2[ \t]*(?=\n|$)/g;
const TAG = /<\/?[a-z][\w-]*(?:\s[^>]*)?>/i;

/** Markdown → HTML, as the app's renderer parses it (scripts kept: this feeds the frame). @param {string} text */
function markdown(text) {
  return /** @type {string} */ (marked.parse(text || '', { async: false, gfm: true, breaks: true }));
}

/** Script and style elements, which Markdown must not touch (a blank line inside a script
 * after an HTML block would turn the rest of it into paragraphs). */
const RAW = /<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>/gi;

/** Markdown → HTML with every script and style element kept byte for byte. @param {string} text */
function markdownKeepingScripts(text) {
  /** @type {string[]} */
  const kept = [];
  const mark = (/** @type {number} */ i) => `TAVORAWBLOCK${i}X`;
  const masked = text.replace(RAW, (m) => mark(kept.push(m) - 1));
  return markdown(masked).replace(/TAVORAWBLOCK(\d+)X/g, (m, i) => kept[Number(i)] ?? m);
}

/**
 * Sanitised HTML + CSS: styles kept (they are scoped to the bubble's shadow root, which is
 * clipped), scripts, handlers, forms, frames, and document-level tags removed.
 * @param {string} html
 */
export function sanitize(html) {
  return DOMPurify.sanitize(html, {
    FORCE_BODY: true,
    ADD_TAGS: ['style'],
    FORBID_TAGS: ['script', 'form', 'input', 'textarea', 'select', 'iframe', 'frame', 'object', 'embed', 'link', 'meta', 'base', 'portal'],
    FORBID_ATTR: ['formaction', 'action', 'srcdoc'],
  });
}

/** @type {Map<string, Rendering>} */
const cache = new Map();

/**
 * @param {string} text the display copy
 * @param {number|null} [chatId] the chat whose files `files/chat/…` names
 * @returns {Rendering}
 */
export function classify(text, chatId = null) {
  // The chat is part of the key: its virtual file paths resolve under it.
  const key = `${chatId ?? ''}\u0000${text}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const r = resolvingFilesOf(chatId, () => compute(text || '', chatId));
  if (cache.size > 400) cache.clear();
  cache.set(key, r);
  return r;
}

/**
 * A frame rendering whose sanitised copy (`light`, shown only when scripts do not run) is made
 * when first read: sanitising a card's inline handlers costs a parse and makes the browser
 * report each handler against the app's policy, for nothing when the frame runs.
 * @param {string} doc @param {string} before @param {string} after @param {() => string} make @param {number|null} chatId
 * @returns {Rendering}
 */
function frame(doc, before, after, make, chatId) {
  /** @type {string|undefined} */
  let made;
  return {
    mode: 'frame', doc, before, after,
    get light() {
      if (made === undefined) made = resolvingFilesOf(chatId, make);
      return made;
    },
  };
}

/** @param {string} text @param {number|null} chatId @returns {Rendering} */
function compute(text, chatId) {
  for (const m of text.matchAll(FENCE)) {
    const body = m[3];
    if (DOC_IN_BLOCK.test(body)) {
      const start = (m.index || 0) + m[1].length;
      const before = text.slice(0, start);
      const after = text.slice((m.index || 0) + m[0].length);
      return frame(body, before, after, () => sanitize(markdown(before) + body + markdown(after)), chatId);
    }
  }
  if (DOCUMENT.test(text)) return frame(text, '', '', () => sanitize(text), chatId);
  if (SCRIPTED.test(text)) {
    const html = markdownKeepingScripts(text);
    return frame(html, '', '', () => sanitize(html), chatId);
  }
  if (TAG.test(text)) return { mode: 'html', html: sanitize(markdown(text)) };
  return { mode: 'markdown' };
}
