// Tool calls in the chat: cards as they happen, the confirmation dialog (Allow, Deny) for a
// `confirm` tool, and the tavo_ask_user form.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock, startTavo, launchBrowser, shot, watchErrors } from '../lib/harness.js';

/** @type {Awaited<ReturnType<typeof startMock>>} */ let mock;
/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let browser;
/** @type {number} */ let chatId;

const create = (/** @type {string} */ name) => ({
  toolCalls: [{ name: 'tavo_character_create', arguments: { character: { name, firstMes: 'Hi.' } } }],
});

before(async () => {
  mock = await startMock({
    turns: [
      create('Zed'),
      { text: 'Zed is in your library now.' },
      create('Nobody'),
      { text: 'Understood, I did not create it.' },
      { toolCalls: [{ name: 'tavo_ask_user', arguments: { question: 'Which season?', options: ['Spring', { value: 'Winter', label: 'Winter', description: 'Cold and clear', meta: 'snow likely' }] } }] },
      { text: 'Winter it is.' },
    ],
  });
  tavo = await startTavo({ mock, settings: { 'tools.enabled': true, 'tools.dynamicLoading': false } });
  const c = await tavo.api('POST', '/api/library/character', { name: 'Helper', firstMes: 'How can I help?' });
  chatId = (await tavo.api('POST', '/api/chats', { characters: [c.id] })).id;
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await tavo?.stop();
  mock?.stop();
});

/** @param {import('playwright-core').Page} page @param {string} text */
async function send(page, text) {
  await page.getByRole('textbox', { name: 'Message' }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
}

test('a confirm tool waits for the dialog: Allow runs it, Deny refuses it', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chatId}`);
  await page.getByText('How can I help?').waitFor();

  await send(page, 'Create a character named Zed.');
  const dialog = page.getByRole('dialog');
  await dialog.getByRole('heading', { name: /tavo_character_create/ }).waitFor();
  await dialog.getByText('"Zed"').waitFor();
  await page.locator('.tool-card.waiting').waitFor();
  await shot(page, 'tool-confirm');
  await dialog.getByRole('button', { name: 'Allow' }).click();
  await page.locator('article.message.assistant').last().getByText('Zed is in your library now.').waitFor({ timeout: 15000 });
  await page.locator('article.message.assistant').last().locator('.tool-card.ok').waitFor();
  const names = (await tavo.api('GET', '/api/library/character')).map((/** @type {any} */ c) => c.name);
  assert.ok(names.includes('Zed'), 'allowed: the character exists');

  await page.getByRole('button', { name: 'Send' }).waitFor();
  await send(page, 'Now one named Nobody.');
  await dialog.getByText('"Nobody"').waitFor();
  await dialog.getByRole('button', { name: 'Deny' }).click();
  await page.locator('article.message.assistant').last().getByText('Understood, I did not create it.').waitFor({ timeout: 15000 });
  await page.locator('article.message.assistant').last().locator('.tool-card.error').waitFor();
  const after = (await tavo.api('GET', '/api/library/character')).map((/** @type {any} */ c) => c.name);
  assert.ok(!after.includes('Nobody'), 'denied: nothing was created');
  await shot(page, 'tool-cards');
  assert.deepEqual(errors, []);
  await page.close();
});

test('tavo_ask_user shows its question; the chosen option goes back to the model', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chatId}`);
  await page.getByRole('button', { name: 'Send' }).waitFor();
  await send(page, 'Ask me about seasons.');
  const form = page.getByRole('form', { name: 'Which season?' });
  await form.waitFor();
  await shot(page, 'ask-user');
  // An option shows its description and its meta note (seed 000).
  const winter = form.getByRole('button', { name: /^Winter/ });
  await winter.getByText('Cold and clear').waitFor();
  await winter.getByText('snow likely').waitFor();
  await winter.click();
  await page.locator('article.message.assistant').last().getByText('Winter it is.').waitFor({ timeout: 15000 });
  const requests = (await import('node:fs')).readFileSync(`${mock.dir}/requests.jsonl`, 'utf8');
  assert.match(requests, /Winter/, 'the answer reached the model');
  assert.deepEqual(errors, []);
  await page.close();
});
