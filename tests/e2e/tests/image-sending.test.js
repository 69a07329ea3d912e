// Image sending in the app (issue 19, Tavo §14.4): an image attached in the composer — picked
// with "Attach image", pasted or dropped — is saved as a chat file and sent as the message's
// image; with image sending on, the server first has the model describe it and the reply's
// prompt carries the description, not the image. A file that is not an image is refused
// before anything is uploaded.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startMock, startTavo, launchBrowser, shot, watchErrors } from '../lib/harness.js';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

/** @type {Awaited<ReturnType<typeof startMock>>} */ let mock;
/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let browser;
let chatId = 0;

before(async () => {
  mock = await startMock({ turns: [{ text: 'A small black square.' }, { text: 'What a tiny picture!' }], repeatLast: true });
  tavo = await startTavo({ mock, settings: { 'imageSending.enabled': true } });
  const mira = (await tavo.api('POST', '/api/library/character', { name: 'Mira', firstMes: 'Show me something.' })).id;
  chatId = (await tavo.api('POST', '/api/chats', { characters: [mira] })).id;
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await tavo?.stop();
  mock?.stop();
});

/** The model requests the mock received, oldest first. */
function requests() {
  return readFileSync(join(mock.dir, 'requests.jsonl'), 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

test('an attached image is sent with the message, described once, and shown in the chat', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chatId}`);
  await page.getByRole('article', { name: 'Mira' }).first().waitFor();
  const send = page.getByRole('button', { name: 'Send' });
  assert.equal(await send.isDisabled(), true);

  // Not an image: refused in the page, nothing saved.
  await page.getByLabel('Attach image').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello') });
  await page.getByText('notes.txt is not an image').waitFor();
  assert.deepEqual((await tavo.api('POST', `/api/ops/tavo_file_list?chat=${chatId}`, {})).result.files, []);

  // Attached, removed, attached again: the preview follows, and Send needs no words.
  await page.getByLabel('Attach image').setInputFiles({ name: 'dot.png', mimeType: 'image/png', buffer: Buffer.from(PNG, 'base64') });
  await page.getByRole('img', { name: 'Attached: dot.png' }).waitFor();
  await page.getByRole('button', { name: 'Remove image' }).click();
  await page.getByRole('img', { name: 'Attached: dot.png' }).waitFor({ state: 'detached' });
  await page.getByLabel('Attach image').setInputFiles({ name: 'dot.png', mimeType: 'image/png', buffer: Buffer.from(PNG, 'base64') });
  await page.getByRole('img', { name: 'Attached: dot.png' }).waitFor();
  await page.getByRole('textbox', { name: 'Message' }).fill('Look at this');
  await shot(page, 'image-sending-attached');
  await send.click();
  await page.getByText('What a tiny picture!').waitFor();
  await page.getByRole('img', { name: 'Attached: dot.png' }).waitFor({ state: 'detached' });

  // The user's message shows its image, a file of the chat.
  const mine = page.locator('article.message', { hasText: 'Look at this' });
  const img = mine.locator('.message-image img');
  await img.waitFor();
  assert.match((await img.getAttribute('src')) || '', new RegExp(`^/api/chats/${chatId}/files/upload-[a-z0-9]+-dot\\.png$`));
  await shot(page, 'image-sending-sent');

  // The description request carried the image; the reply's request carried the description.
  const reqs = requests();
  assert.equal(reqs.length, 2, JSON.stringify(reqs.map((r) => r.path)));
  assert.ok(JSON.stringify(reqs[0].body).includes(PNG), 'the description request has the image');
  const reply = JSON.stringify(reqs[1].body);
  assert.ok(reply.includes('[发送了一张图片：A small black square.]'), reply);
  assert.ok(!reply.includes(PNG), 'the reply request does not carry the image');
  assert.deepEqual(errors, []);
  await page.close();
});
