// Image generation in the app (issue 19 item 4, images): `/imagine a cat` from the composer
// asks the server, which generates on a mock OpenAI-compatible /v1/images/generations, stores
// the image as a chat file and writes a message with the injection template; the bubble shows
// the image. Settings → Image generation lists the connection with its key masked and saves the
// injection template.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { startTavo, launchBrowser, shot, watchErrors } from '../lib/harness.js';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const KEY = 'sk-image-secret-0123456789';

/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let browser;
/** @type {import('node:http').Server} */ let mock;
/** @type {any[]} */ const seen = [];
let chatId = 0;

before(async () => {
  mock = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ path: req.url, auth: req.headers.authorization, body: JSON.parse(body || 'null') });
      if (req.url !== '/v1/images/generations') {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"no"}}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ created: 1, data: [{ b64_json: PNG }] }));
    });
  });
  await new Promise((r) => mock.listen(0, '127.0.0.1', () => r(null)));
  const port = /** @type {any} */ (mock.address()).port;
  tavo = await startTavo();
  await tavo.api('POST', '/api/images/connections', {
    name: 'pictures', platform: 'openai', baseUrl: `http://127.0.0.1:${port}/v1`, model: 'dall-e-3', apiKey: KEY,
  });
  const mira = (await tavo.api('POST', '/api/library/character', { name: 'Mira', firstMes: 'Hello there.' })).id;
  chatId = (await tavo.api('POST', '/api/chats', { characters: [mira] })).id;
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await tavo?.stop();
  mock?.close();
});

test('/imagine a cat shows the generated image in the chat', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chatId}`);
  await page.getByRole('article', { name: 'Mira' }).first().waitFor();
  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill('/imagine a cat');
  await box.press('Enter');
  const img = page.locator('.message-image img');
  await img.waitFor();
  await page.waitForFunction(() => {
    const i = /** @type {HTMLImageElement|null} */ (document.querySelector('.message-image img'));
    return !!i && i.complete && i.naturalWidth === 1;
  });
  const src = await img.getAttribute('src');
  assert.match(src || '', new RegExp(`^/api/chats/${chatId}/files/image-[0-9-]+\\.png$`));
  assert.equal(await img.getAttribute('alt'), 'a cat');
  const message = page.locator('article.message', { has: page.locator('.message-image') });
  assert.match(await message.innerText(), /\[生成了一张图片：a cat\]/);
  // The provider got the prompt with the key; the composer is empty again, no reply ran.
  assert.equal(seen.length, 1, JSON.stringify(seen));
  assert.equal(seen[0].body.prompt, 'a cat');
  assert.equal(seen[0].auth, `Bearer ${KEY}`);
  assert.equal(await box.inputValue(), '');
  // The image opens in the viewer.
  await page.getByRole('button', { name: 'Open image: a cat' }).click();
  await page.getByRole('dialog', { name: 'Image' }).waitFor();
  await shot(page, 'images-imagine');
  await page.keyboard.press('Escape');
  // After a reload the stored message still shows it.
  await page.reload();
  await page.locator('.message-image img').waitFor();
  assert.deepEqual(errors, []);
  await page.close();
});

test('Settings → Image generation shows the masked connection and saves the template', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/settings`);
  const row = page.getByRole('listitem', { name: 'Image connection pictures' });
  await row.waitFor();
  const text = await row.innerText();
  assert.match(text, /openai · dall-e-3/);
  assert.ok(!text.includes(KEY), text);
  const template = page.getByRole('textbox', { name: 'Injection template' });
  assert.equal(await template.inputValue(), '[生成了一张图片：{{prompt}}]');
  await template.fill('[{{char}} drew {{prompt}}]');
  await page.getByRole('button', { name: 'Save template' }).click();
  await page.getByText('Saved the injection template').waitFor();
  const book = await tavo.api('GET', '/api/images/connections');
  assert.equal(book.injectionTemplate, '[{{char}} drew {{prompt}}]');
  await page.getByRole('button', { name: 'Restore default' }).click();
  await page.waitForFunction(async () => (await (await fetch('/api/images/connections')).json()).injectionTemplate === '[生成了一张图片：{{prompt}}]');
  assert.deepEqual(errors, []);
  await page.close();
});
