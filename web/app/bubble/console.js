// The JavaScript console of the open chat (seed 002: "侧边栏的 JavaScript 控制台"): what the
// chat's bubbles and plugin frames wrote with console.log / info / warn / error / debug, and
// their uncaught errors, each line with the message it came from. Kept for the page's life,
// the newest MAX_LINES per chat.
import { signal } from '@preact/signals';

/** Lines kept per chat. */
export const MAX_LINES = 500;

/** @typedef {{seq: number, chatId: number, messageId: number, source: string, level: string, text: string, at: number}} ConsoleLine
 *   `messageId` 0 is a plugin frame without a message; `source` names the card or plugin. */

/** Every chat's lines, by chat id. @type {import('@preact/signals').Signal<Map<number, ConsoleLine[]>>} */
export const consoleLines = signal(new Map());
let seq = 0;

const LEVELS = new Set(['log', 'info', 'warn', 'error', 'debug']);

/** @param {{chatId: number, messageId: number, source: string, level: any, text: string}} line */
export function addConsoleLine({ chatId, messageId, source, level, text }) {
  const all = new Map(consoleLines.value);
  const list = [...(all.get(chatId) || []), { seq: ++seq, chatId, messageId, source, level: LEVELS.has(level) ? level : 'log', text, at: Date.now() }];
  all.set(chatId, list.length > MAX_LINES ? list.slice(list.length - MAX_LINES) : list);
  consoleLines.value = all;
}

/** @param {number} chatId */
export function clearConsole(chatId) {
  const all = new Map(consoleLines.value);
  all.delete(chatId);
  consoleLines.value = all;
}
