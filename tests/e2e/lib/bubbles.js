// Helpers of the TavoJS browser tests: a library with characters and a chat whose messages
// are bubbles written through the operation door, and reads of what the bubbles stored.
import { execFileSync } from 'node:child_process';
import { binary } from './harness.js';

// The condition poll lives with the harness (every test waits on conditions); re-exported for
// the TavoJS tests that import it from here.
export { until } from './harness.js';

/**
 * Characters named `names` and one chat with all of them (no greeting).
 * @param {{api: (m: string, p: string, b?: any) => Promise<any>}} tavo @param {string[]} names
 */
export async function bubbleChat(tavo, names, chatName = 'Bubbles') {
  /** @type {number[]} */
  const ids = [];
  for (const name of names) {
    const c = await tavo.api('POST', '/api/library/character', { name, firstMes: `I am ${name}.` });
    ids.push(c.id);
  }
  const chat = await tavo.api('POST', '/api/chats', { characters: ids, name: chatName, greeting: false });
  return { chatId: /** @type {number} */ (chat.id), characters: ids };
}

/**
 * Appends a message through `tavo_message_append` (as any door would).
 * @param {{api: (m: string, p: string, b?: any) => Promise<any>}} tavo @param {number} chatId @param {string} content @param {number} [characterId]
 * @returns {Promise<number>}
 */
export async function addMessage(tavo, chatId, content, characterId) {
  const env = await tavo.api('POST', `/api/ops/tavo_message_append?chat=${chatId}`, { message: characterId ? { content, characterId } : { content } });
  return env.result.id;
}

/** The chat's, the global and one message's variables. @param {{api: Function}} tavo @param {number} chatId @param {number} [messageId] */
export async function vars(tavo, chatId, messageId) {
  return tavo.api('GET', `/api/chats/${chatId}/variables${messageId ? `?message=${messageId}` : ''}`);
}

/** `tavo var get NAME --chat ID` on the test's library, as a user would check it. @param {string} dataDir @param {number} chatId @param {string} name */
export function cliVar(dataDir, chatId, name) {
  return execFileSync(binary('tavo'), ['--data-dir', dataDir, 'var', 'get', name, '--chat', String(chatId)], { encoding: 'utf8' }).trim();
}
