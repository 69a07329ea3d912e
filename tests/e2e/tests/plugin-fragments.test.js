// A plugin's HTML fragment registers with `tavo.plugin.on` (issue 31, item 16): its sidebar
// action runs from the chat panel, its `message:added` handler gets the notification, and a
// generation hook — the entry's alone (seed 002, Tavo §6.8) — is refused with a clear error.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock, startTavo, launchBrowser, shot, watchErrors } from '../lib/harness.js';
import { bubbleChat, vars, until } from '../lib/bubbles.js';
import { installFixturePlugin } from '../lib/tpg.js';

/** @type {Awaited<ReturnType<typeof startMock>>} */ let mock;
/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let browser;

before(async () => {
  mock = await startMock({ turns: [{ text: 'A reply the fragment hears about.' }], repeatLast: true });
  tavo = await startTavo({ mock });
  await installFixturePlugin(tavo, 'fragment-actions');
  browser = await launchBrowser({ locale: 'en-US' });
});

after(async () => {
  await browser?.close();
  await tavo?.stop();
  mock?.stop();
});

test('a fragment\'s tavo.plugin.on: its sidebar action runs, its notification arrives, a generation hook is refused', async () => {
  const { chatId } = await bubbleChat(tavo, ['Counter'], 'Fragments');
  await tavo.api('POST', `/api/ops/tavo_chat_update?chat=${chatId}`, { chat: { advancedRendering: true } });
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chatId}`);
  const report = await until(async () => (await vars(tavo, chatId)).chat.fragment_report ?? null, 20000, 'the fragment ran');
  assert.match(report.hook, /generation:prepare can be registered only by the plugin's entry script/);

  await page.getByRole('button', { name: 'Chat settings' }).click();
  const panel = page.getByRole('complementary', { name: 'Chat settings' });
  const row = panel.getByRole('region', { name: 'Plugin · Fragment Actions' }).getByRole('button', { name: 'Tally from the fragment' });
  await row.click();
  await until(async () => (await vars(tavo, chatId)).chat.fragment_tally === 1, 10000, 'the first tally');
  await row.click();
  await until(async () => (await vars(tavo, chatId)).chat.fragment_tally === 2, 10000, 'the second tally');
  await page.frameLocator('.plugin-fragment iframe').getByText('tally 2').waitFor();
  await page.locator('.toast', { hasText: 'missing handler' }).waitFor({ state: 'detached', timeout: 1000 }).catch(() => {});
  assert.equal(await page.locator('.toast', { hasText: 'missing handler' }).count(), 0);

  await page.getByRole('button', { name: 'Close chat settings' }).click();
  await page.getByRole('textbox', { name: 'Message' }).fill('Hello, counter.');
  await page.getByRole('button', { name: 'Send' }).click();
  const added = await until(async () => (await vars(tavo, chatId)).chat.fragment_added ?? null, 20000, 'the notification');
  assert.equal(added.type, 'message:added');
  assert.equal(added.pluginId, 'test.fragment-actions');
  await shot(page, 'plugin-fragment-actions');
  assert.deepEqual(errors, []);
  await page.close();
});
