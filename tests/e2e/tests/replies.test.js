// The other kinds of reply — regenerate, continue, impersonate —, the cross-chat "waiting"
// badge while a reply waits for the user in another chat, and import by drag and drop.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startMock, startTavo, launchBrowser, shot, watchErrors, SERAPHINA } from '../lib/harness.js';

/** @type {Awaited<ReturnType<typeof startMock>>} */ let mock;
/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let browser;
/** @type {number} */ let chatA;
/** @type {number} */ let chatB;

before(async () => {
  mock = await startMock({
    turns: [
      { text: 'First answer.', delayMs: 10 },
      { text: 'Regenerated answer.', delayMs: 10 },
      { text: ' And a continuation.', delayMs: 10 },
      { text: 'I would ask about the road north.', delayMs: 10 },
      { toolCalls: [{ name: 'tavo_character_create', arguments: { character: { name: 'Zed', firstMes: 'Hi.' } } }] },
      { text: 'Done waiting.' },
    ],
    repeatLast: true,
  });
  tavo = await startTavo({ mock, settings: { 'tools.enabled': true, 'tools.dynamicLoading': false } });
  const c = await tavo.api('POST', '/api/library/character', { name: 'Mira', firstMes: 'Welcome.' });
  chatA = (await tavo.api('POST', '/api/chats', { characters: [c.id], name: 'Chat A' })).id;
  chatB = (await tavo.api('POST', '/api/chats', { characters: [c.id], name: 'Chat B' })).id;
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await tavo?.stop();
  mock?.stop();
});

/** @param {import('playwright-core').Page} page @param {string} label */
async function more(page, label) {
  await page.getByLabel('More replies').click();
  await page.getByRole('button', { name: label }).click();
}

test('regenerate replaces the last answer, continue extends it, impersonate fills the composer', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chatA}`);
  await page.getByRole('textbox', { name: 'Message' }).fill('Hello.');
  await page.getByRole('button', { name: 'Send' }).click();
  const last = () => page.locator('article.message.assistant').last();
  await last().getByText('First answer.').waitFor({ timeout: 15000 });
  await page.getByRole('button', { name: 'Send' }).waitFor();

  await more(page, 'Regenerate');
  await last().getByText('Regenerated answer.').waitFor({ timeout: 15000 });
  await page.getByRole('button', { name: 'Send' }).waitFor();
  let stored = (await tavo.api('GET', `/api/chats/${chatA}/messages`)).messages;
  assert.equal(stored.length, 3, 'regenerate replaces, never appends');
  assert.equal(stored[2].content, 'Regenerated answer.');

  await more(page, 'Continue');
  await last().getByText('Regenerated answer. And a continuation.').waitFor({ timeout: 15000 });
  await page.getByRole('button', { name: 'Send' }).waitFor();
  stored = (await tavo.api('GET', `/api/chats/${chatA}/messages`)).messages;
  assert.equal(stored.length, 3, 'continue extends the same message');
  assert.equal(stored[2].content, 'Regenerated answer. And a continuation.');

  await more(page, 'Impersonate');
  const box = page.getByRole('textbox', { name: 'Message' });
  await page.waitForFunction(() => /** @type {HTMLTextAreaElement} */ (document.querySelector('textarea[aria-label="Message"]'))?.value === 'I would ask about the road north.', null, { timeout: 15000 });
  assert.equal(await box.inputValue(), 'I would ask about the road north.');
  stored = (await tavo.api('GET', `/api/chats/${chatA}/messages`)).messages;
  assert.equal(stored.length, 3, 'impersonate stores nothing');
  await shot(page, 'chat-impersonate');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a reply waiting for the user in one chat shows a badge while another chat is open', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chatB}`);
  await page.getByRole('textbox', { name: 'Message' }).fill('Create Zed, please.');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Allow' }).waitFor({ timeout: 15000 });

  // Switch to the other chat: the reply goes on waiting, and the app says so.
  await page.goto(`${tavo.url}/chats/${chatA}`);
  await page.getByRole('heading', { name: 'Chat A' }).waitFor();
  const badge = page.getByRole('navigation', { name: 'Main' }).getByRole('status');
  await badge.getByText('1 waiting').waitFor({ timeout: 10000 });
  assert.equal(await page.getByRole('dialog').count(), 0, "chat B's dialog is not shown over chat A");
  await page.getByRole('link', { name: 'Chats' }).click();
  const row = page.locator('.chat-rows li', { hasText: 'Chat B' });
  await row.getByText('waiting for you').waitFor();
  assert.equal(await page.locator('.chat-rows li', { hasText: 'Chat A' }).locator('.badge').count(), 0);
  await shot(page, 'chats-waiting-badge');

  // Back in chat B the dialog is there; answering clears the badge.
  await row.getByRole('link').click();
  await page.getByRole('dialog').getByRole('button', { name: 'Allow' }).click();
  await page.locator('article.message.assistant').last().getByText('Done waiting.').waitFor({ timeout: 15000 });
  await badge.waitFor({ state: 'detached' });
  assert.deepEqual(errors, []);
  await page.close();
});

test('dropping a card file on the library imports it', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/`);
  await page.getByRole('heading', { name: 'Characters' }).waitFor();
  const bytes = readFileSync(SERAPHINA).toString('base64');
  const data = await page.evaluateHandle((b64) => {
    const bin = atob(b64);
    const buf = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) buf[i] = bin.charCodeAt(i);
    const dt = new DataTransfer();
    dt.items.add(new File([buf], 'dropped-Seraphina.png', { type: 'image/png' }));
    return dt;
  }, bytes);
  const zone = page.locator('section.library');
  await zone.dispatchEvent('dragover', { dataTransfer: data });
  await page.locator('section.library.dragging').waitFor();
  await zone.dispatchEvent('drop', { dataTransfer: data });
  await page.getByRole('region', { name: 'Import results' }).getByText('dropped-Seraphina.png').waitFor({ timeout: 15000 });
  await page.locator('.grid').getByRole('link', { name: 'Seraphina' }).waitFor();
  const names = (await tavo.api('GET', '/api/library/character')).map((/** @type {any} */ c) => c.name);
  assert.ok(names.includes('Seraphina'));
  assert.equal(await page.locator('section.library.dragging').count(), 0, 'the drop zone highlight is gone');
  assert.deepEqual(errors, []);
  await page.close();
});
