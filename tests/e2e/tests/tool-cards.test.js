// What a user sees of a tool call (issue 30, items 1–3; seed 000 "shown after this call", seed
// 001 "saved in the visible history with inspectable parameters and results"): a generated
// image right under its card, opening full size, still there after a reload; every card opens
// its call from the audit log (arguments, result, time, error code); and Settings › Storage ›
// Tool-call log lists the calls, filters by chat and tool, and clears (the cards stay); the next
// prompt sends the earlier calls and results back (issue 30 item 11), shown by the prompt
// inspector, until the log is cleared.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { imageProvider } from '../lib/images.js';
import { startMock, startTavo, launchBrowser, shot, watchErrors, until } from '../lib/harness.js';

/** @type {Awaited<ReturnType<typeof startMock>>} */ let mock;
/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let browser;
/** @type {Awaited<ReturnType<typeof imageProvider>>} */ let images;
/** @type {number} */ let chatId;
/** @type {number} */ let otherChat;

before(async () => {
  mock = await startMock({
    turns: [
      { toolCalls: [{ name: 'tavo_image_generate', arguments: { prompt: 'a red fox in the snow' } }] },
      { text: 'Here is your fox.' },
      { toolCalls: [{ name: 'tavo_file_save', arguments: { name: 'note.txt', content: 'fox notes' } }, { name: 'tavo_file_load', arguments: { name: 'missing.txt' } }] },
      { text: 'Saved one, the other was not there.' },
    ],
  });
  tavo = await startTavo({ mock, settings: { 'tools.enabled': true, 'tools.dynamicLoading': false } });
  images = await imageProvider(tavo);
  const c = await tavo.api('POST', '/api/library/character', { name: 'Painter', firstMes: 'What shall I draw?' });
  chatId = (await tavo.api('POST', '/api/chats', { characters: [c.id], name: 'Studio' })).id;
  otherChat = (await tavo.api('POST', '/api/chats', { characters: [c.id], name: 'Elsewhere' })).id;
  // A call in another chat, for the log's chat filter.
  await tavo.api('POST', `/api/ops/tavo_file_save?chat=${otherChat}`, { name: 'other.txt', content: 'x' });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await tavo?.stop();
  mock?.stop();
  images?.close();
});

/** @param {import('playwright-core').Page} page @param {string} text */
async function send(page, text) {
  await page.getByRole('textbox', { name: 'Message' }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
}

test('a generated image shows under its card, opens full size and stays after a reload; each card opens its call', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chatId}`);
  await page.getByText('What shall I draw?').waitFor();
  await send(page, 'Draw a fox.');
  await page.getByText('Here is your fox.').waitFor({ timeout: 20000 });
  const picture = page.getByRole('img', { name: /Image from tavo_image_generate/ });
  await until(() => picture.evaluate((el) => /** @type {HTMLImageElement} */ (el).naturalWidth === 1), 15000, 'the image under its card');
  await shot(page, 'tool-card-image');
  await picture.click();
  const viewer = page.getByRole('dialog', { name: 'Image' });
  await viewer.waitFor();
  await page.keyboard.press('Escape');
  await viewer.waitFor({ state: 'detached' });

  await page.reload();
  await until(() => page.getByRole('img', { name: /Image from tavo_image_generate/ }).evaluate((el) => /** @type {HTMLImageElement} */ (el).naturalWidth === 1), 15000, 'the image after a reload');

  // The card opens its call: the arguments the model gave, the result, the time.
  await page.getByRole('status', { name: /Tool tavo_image_generate: done/ }).click();
  const args = page.getByLabel('Arguments').first();
  await args.waitFor();
  assert.match(await args.innerText(), /"prompt": "a red fox in the snow"/);
  assert.match(await page.getByLabel('Result', { exact: true }).first().innerText(), /"path": "files\/chat\/image-/);
  assert.match(await page.locator('.tool-facts').first().innerText(), /Status\s+ok[\s\S]*Time\s+\d+ ms/);

  // A failed call says why, with its error code.
  await send(page, 'Save a note and read another.');
  await page.getByText('Saved one, the other was not there.').waitFor({ timeout: 20000 });
  const failed = page.getByRole('status', { name: /Tool tavo_file_load: failed/ });
  await failed.click();
  const facts = page.locator('.tool-card.error .tool-facts');
  await facts.waitFor();
  assert.match(await facts.innerText(), /Status\s+error resource_not_found/);
  await shot(page, 'tool-card-details');
  assert.deepEqual(errors, []);
  await page.close();
});

test('the next prompt sends the earlier calls and their results back; the prompt inspector shows them', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chatId}/prompt`);
  const earlier = page.getByRole('region', { name: 'Earlier tool calls' });
  await earlier.getByText('2 tool rounds sent back as calls and results.').waitFor();
  const calls = await page.getByRole('list', { name: 'Tool calls' }).locator('li > code:first-child').allInnerTexts();
  assert.deepEqual(calls, ['tavo_image_generate', 'tavo_file_save', 'tavo_file_load']);
  const messages = page.getByRole('region', { name: 'Messages' });
  await messages.getByText(/resource_not_found/).first().waitFor();
  await shot(page, 'prompt-inspector-tool-rounds');
  assert.deepEqual(errors, []);
  await page.close();
});

test('the tool-call log lists, filters by chat and tool, and clears; the cards stay', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/settings`);
  await page.getByRole('link', { name: 'Tool-call log' }).click();
  await page.getByRole('heading', { name: 'Tool-call log' }).waitFor();
  assert.equal(new URL(page.url()).pathname, '/settings/logs');
  await page.getByText(/keeps the newest 10,000 entries/).waitFor();
  const list = page.getByRole('list', { name: 'Tool calls' });
  await list.waitFor();
  const rows = async () => (await list.locator(':scope > li summary code').allInnerTexts());
  assert.deepEqual(await rows(), ['tavo_file_load', 'tavo_file_save', 'tavo_image_generate', 'tavo_file_save']);
  await page.getByLabel('Chat').selectOption({ label: 'Studio' });
  await until(async () => (await rows()).length === 3, 10000, 'the chat filter');
  await page.getByLabel('Tool', { exact: true }).fill('tavo_file_save');
  await page.getByLabel('Tool', { exact: true }).press('Enter');
  await until(async () => JSON.stringify(await rows()) === JSON.stringify(['tavo_file_save']), 10000, 'the tool filter');
  await list.locator('summary').first().click();
  assert.match(await list.getByLabel('Arguments').innerText(), /"name": "note.txt"/);
  await shot(page, 'tool-call-log');

  await page.getByRole('button', { name: 'Clear the log' }).click();
  const ask = page.getByRole('dialog', { name: 'Clear the tool-call log?' });
  await ask.getByRole('button', { name: 'Allow' }).click();
  await page.getByText('No tool calls match.').waitFor();
  assert.deepEqual((await tavo.api('GET', '/api/audit')).entries, []);
  // The cards in the chat stay; opening one says the log no longer holds it.
  await page.goto(`${tavo.url}/chats/${chatId}`);
  await page.getByRole('status', { name: /Tool tavo_file_save: done/ }).click();
  await page.getByText('The audit log no longer holds this call').waitFor();
  // The rounds kept for prompts went with the log: the calls go back as their summary lines.
  await page.goto(`${tavo.url}/chats/${chatId}/prompt`);
  await page.getByRole('region', { name: 'Earlier tool calls' }).getByText(/as their summary line: .*log cleared/).waitFor();
  assert.deepEqual(errors, []);
  await page.close();
});
