// Message translation (Tavo §11.5) from the chat: Translate on a bubble asks the server
// (POST /api/messages/{id}/translate, the mock model answering), and the translation shows under
// the original, which stays as it was; a reload shows it again from the stored message.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock, startTavo, launchBrowser, shot, watchErrors } from '../lib/harness.js';
import { bubbleChat, addMessage } from '../lib/bubbles.js';

/** @type {Awaited<ReturnType<typeof startMock>>} */ let mock;
/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let browser;

before(async () => {
  mock = await startMock({ turns: [{ text: 'Bonjour, voyageur.' }] });
  tavo = await startTavo({ mock, settings: { 'translation.language': 'French' } });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await tavo?.stop();
  mock?.stop();
});

test('Translate shows the translation under the original and keeps it', async () => {
  const { chatId, characters } = await bubbleChat(tavo, ['Guide'], 'Translate');
  await addMessage(tavo, chatId, 'Hello, traveller.', characters[0]);
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chatId}`);
  const bubble = page.locator('article.message.assistant').last();
  await bubble.getByText('Hello, traveller.').waitFor();
  await bubble.getByRole('button', { name: 'Translate' }).click();
  const region = bubble.getByRole('region', { name: 'Translation (French)' });
  await region.getByText('Bonjour, voyageur.').waitFor({ timeout: 20000 });
  await shot(page, 'translate');
  await page.reload();
  await page.locator('article.message.assistant').last().getByRole('region', { name: 'Translation (French)' }).getByText('Bonjour, voyageur.').waitFor();
  await page.locator('article.message.assistant').last().getByText('Hello, traveller.').waitFor();
  assert.deepEqual(errors, []);
  await page.close();
});
