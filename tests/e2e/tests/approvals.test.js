// "Remember for this tool in this chat" can be undone: the chat's settings panel lists the
// choices remembered in this chat (GET /api/chats/{id}/approvals) and Forget drops one, so the
// tool asks again.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock, startTavo, launchBrowser, shot, watchErrors } from '../lib/harness.js';

/** @type {Awaited<ReturnType<typeof startMock>>} */ let mock;
/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let browser;
/** @type {number} */ let chat;

const create = (/** @type {string} */ name) => ({
  toolCalls: [{ name: 'tavo_character_create', arguments: { character: { name, firstMes: 'Hi.' } } }],
});

before(async () => {
  mock = await startMock({
    turns: [create('Nobody'), { text: 'Not created.' }, create('Again'), { text: 'Refused without asking.' }, create('Somebody'), { text: 'Created.' }],
  });
  tavo = await startTavo({ mock, settings: { 'tools.enabled': true, 'tools.dynamicLoading': false } });
  const c = await tavo.api('POST', '/api/library/character', { name: 'Helper', firstMes: 'How can I help?' });
  chat = (await tavo.api('POST', '/api/chats', { characters: [c.id] })).id;
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

test('a remembered Deny is listed in the chat panel; Forget makes the tool ask again', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chat}`);
  await send(page, 'Create Nobody.');
  const dialog = page.getByRole('dialog');
  await dialog.getByRole('button', { name: 'Deny' }).waitFor({ timeout: 15000 });
  await dialog.getByLabel('Remember for this tool in this chat').check();
  await dialog.getByRole('button', { name: 'Deny' }).click();
  await page.getByText('Not created.').waitFor({ timeout: 15000 });
  assert.deepEqual((await tavo.api('GET', `/api/chats/${chat}/approvals`)).tools, { tavo_character_create: 'deny' });

  // Remembered: the next call is refused without a dialog.
  await page.getByRole('button', { name: 'Send' }).waitFor();
  await send(page, 'Create Again.');
  await page.getByText('Refused without asking.').waitFor({ timeout: 15000 });
  assert.ok(!(await tavo.api('GET', '/api/library/character')).some((/** @type {any} */ c) => c.name === 'Again'));

  await page.getByRole('button', { name: 'Chat settings' }).click();
  const panel = page.getByRole('complementary', { name: 'Chat settings' });
  const group = panel.getByRole('group', { name: 'Tool approvals in this chat' });
  await group.getByText('always denied').waitFor();
  await group.scrollIntoViewIfNeeded();
  await shot(page, 'chat-approvals');
  await group.getByRole('button', { name: 'Forget the choice for tavo_character_create' }).click();
  await group.getByText('None remembered').waitFor();
  assert.deepEqual((await tavo.api('GET', `/api/chats/${chat}/approvals`)).tools, {});
  await panel.getByRole('button', { name: 'Close chat settings' }).click();

  // Forgotten: it asks again, and Allow runs it.
  await page.getByRole('button', { name: 'Send' }).waitFor();
  await send(page, 'Create Somebody.');
  await dialog.getByRole('button', { name: 'Allow' }).waitFor({ timeout: 15000 });
  await dialog.getByRole('button', { name: 'Allow' }).click();
  await page.getByText('Created.', { exact: true }).waitFor({ timeout: 15000 });
  assert.ok((await tavo.api('GET', '/api/library/character')).some((/** @type {any} */ c) => c.name === 'Somebody'));
  assert.deepEqual(errors, []);
  await page.close();
});
