// Virtual paths (`files/chat/NAME`, `files/global/NAME`, seed 002: "paths in messages need no
// rewriting") load in plain HTML and Markdown bubbles too, not only in script frames (issue 31,
// item 8); the stored text keeps the virtual path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { until, shot } from '../lib/harness.js';
import { bubbleLab, bubbleChat, addMessage } from '../lib/bubbles.js';

const lab = bubbleLab();

/** A 1×1 PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

test('virtual paths load in plain HTML and Markdown bubbles', async () => {
  const { tavo } = lab;
  const { chatId, characters } = await bubbleChat(tavo, ['Gallery'], 'Paths');
  const url = `data:image/png;base64,${PNG}`;
  await tavo.api('POST', `/api/ops/tavo_file_save?chat=${chatId}`, { name: 'dot.png', content: url, options: { encoding: 'dataUrl' } });
  await tavo.api('POST', `/api/ops/tavo_file_save?chat=${chatId}`, { name: 'logo.png', content: url, options: { scope: 'global', encoding: 'dataUrl' } });
  const htmlText = '<p>HTML</p><img alt="chat file" src="files/chat/dot.png">';
  await addMessage(tavo, chatId, htmlText, characters[0]);
  await addMessage(tavo, chatId, 'Markdown: ![global file](files/global/logo.png)', characters[0]);
  const page = await lab.browser.context.newPage();
  await page.goto(`${tavo.url}/chats/${chatId}`);
  for (const alt of ['chat file', 'global file']) {
    const img = page.getByRole('img', { name: alt });
    await img.waitFor();
    await until(() => img.evaluate((el) => /** @type {HTMLImageElement} */ (el).naturalWidth > 0), 10000, `${alt} loaded`);
  }
  await shot(page, 'tavojs-virtual-paths');
  // The stored text keeps the virtual path.
  const msgs = await tavo.api('GET', `/api/chats/${chatId}/messages`);
  assert.ok(msgs.messages.some((/** @type {any} */ m) => m.content === htmlText));
  await page.close();
});
