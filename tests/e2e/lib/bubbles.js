// Helpers of the TavoJS browser tests: a library with characters and a chat whose messages
// are bubbles written through the operation door, and reads of what the bubbles stored.
import { execFileSync } from 'node:child_process';
import { before, after } from 'node:test';
import { binary, startMock, startTavo, launchBrowser, watchErrors, until } from './harness.js';

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

/**
 * One test file's lab for bubbles: a mock provider, `tavo serve` with bubble scripts running
 * (`rendering.javascript: auto`), and Chromium, started before the file's tests and stopped
 * after them. The fields are set once `before` has run.
 * @returns {{mock: Awaited<ReturnType<typeof startMock>>, tavo: Awaited<ReturnType<typeof startTavo>>, browser: Awaited<ReturnType<typeof launchBrowser>>}}
 */
export function bubbleLab() {
  const lab = /** @type {any} */ ({});
  before(async () => {
    lab.mock = await startMock({ turns: [{ text: 'A reply to the bubble.' }], repeatLast: true });
    lab.tavo = await startTavo({ mock: lab.mock, settings: { 'rendering.javascript': 'auto' } });
    lab.browser = await launchBrowser();
  });
  after(async () => {
    await lab.browser?.close();
    await lab.tavo?.stop();
    lab.mock?.stop();
  });
  return lab;
}

/**
 * Opens chat `chatId` in a new page and waits until its bubbles stored the chat variable
 * `name` (what a bubble's script reports); answers the value, the page and the page's errors.
 * With `allow`, the card's first question (a call the seed marks) is answered Allow, remembered.
 * @param {ReturnType<typeof bubbleLab>} lab @param {number} chatId @param {string} name
 * @param {{ms?: number, allow?: boolean}} [opts]
 */
export async function bubbleReport(lab, chatId, name, { ms = 20000, allow = false } = {}) {
  const page = await lab.browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${lab.tavo.url}/chats/${chatId}`);
  if (allow) {
    const dialog = page.getByRole('dialog', { name: /Allow scripts of/ });
    await dialog.getByRole('checkbox', { name: /Remember my answer/ }).check();
    await dialog.getByRole('button', { name: 'Allow' }).click();
    await dialog.waitFor({ state: 'detached' });
  }
  const value = await until(async () => (await vars(lab.tavo, chatId)).chat[name] ?? null, ms, `the bubble's ${name}`);
  return { value, page, errors };
}

/**
 * A bubble whose script runs `body` (statements of an async function that fill the object `R`)
 * and stores `R` as the chat variable `name`; an error thrown is stored as
 * `R.error = {code, message}`. The frame shows `done` once it stored the report.
 * @param {string} name @param {string} body
 */
export function reportingBubble(name, body) {
  return `<div id="out">running</div>
<script>
(async () => {
  const R = {};
  try {
${body}
  } catch (e) {
    R.error = { code: e.code ?? null, message: e.message };
  }
  tavo.set(${JSON.stringify(name)}, R);
  document.getElementById('out').textContent = 'done';
})();
</script>`;
}
