// Function tools from plugin code (seed 001's SillyTavern.getContext().registerFunctionTool) in
// real Chromium against a real `tavo serve` and the mock model: the plugin's entry registers
// tools in its sandboxed frame, the page offers them to the server over /api/pages/events, the
// mock model calls them, and the call runs in the frame. Checked: what the model is offered
// (shouldRegister false leaves a tool out), the toast of formatMessage, the non-string result
// JSON-serialised into the model's next request, a throwing action reaching the model as an
// error, the tool card with SillyTavern's `mes toolCall` classes, generation:success rewriting
// the stored reply, and a second plugin's misbehaving hooks (6 s success handler, throwing
// prepare handler) rolled back without touching the reply.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startMock, startTavo, launchBrowser, shot, watchErrors } from '../lib/harness.js';
import { bubbleChat, until } from '../lib/bubbles.js';
import { installFixturePlugin } from '../lib/tpg.js';

/** @type {Awaited<ReturnType<typeof startMock>>} */ let mock;
/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let browser;
/** @type {number} */ let chatId;

before(async () => {
  mock = await startMock({
    turns: [
      { toolCalls: [{ name: 'roll_dice', arguments: { sides: 6 } }] },
      { text: 'You rolled a 4.' },
      { toolCalls: [{ name: 'explode', arguments: {} }] },
      { text: 'The die exploded.' },
      { toolCalls: [{ name: 'roll_dice', arguments: { sides: 6 } }] },
      { text: 'No dice in this chat.' },
    ],
  });
  // The default settings but tools on: dynamic loading stays on, and page tools are offered all
  // the same (seed 001; issue 30 item 5).
  tavo = await startTavo({ mock, settings: { 'tools.enabled': true } });
  for (const name of ['dice-tools', 'slow-hooks']) await installFixturePlugin(tavo, name);
  const chat = await bubbleChat(tavo, ['Dealer'], 'Dice');
  chatId = chat.chatId;
  await tavo.api('POST', `/api/ops/tavo_chat_update?chat=${chatId}`, { chat: { advancedRendering: true } });
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

/** @param {any} req */
const offered = (req) => (req.body.tools || []).map((/** @type {any} */ t) => t.function?.name || t.name);

/** @param {any} req */
const toolText = (req) => JSON.stringify((req.body.messages || []).filter((/** @type {any} */ m) => m.role === 'tool'));

/**
 * Opens the chat and waits until the page has published the plugin's tools to the server (the
 * dice entry ran and registered them): a send before that would offer none.
 * @param {import('playwright-core').Page} page @param {number} [chat]
 */
async function openWithTools(page, chat = chatId) {
  const published = page.waitForResponse((r) => r.request().method() === 'PUT' && /\/api\/pages\/[^/]+\/tools$/.test(new URL(r.url()).pathname)
    && r.ok() && ['roll_dice', 'explode'].every((n) => (r.request().postDataJSON()?.tools || []).some((/** @type {any} */ t) => t.name === n)));
  await page.goto(`${tavo.url}/chats/${chat}`);
  await published;
}

/** @param {import('playwright-core').Page} page @param {string} text */
async function send(page, text) {
  await page.getByRole('textbox', { name: 'Message' }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
}

test('a plugin registers function tools; the model calls one and its result comes back', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  /** @type {string[]} */
  const warnings = [];
  page.on('console', (m) => { if (m.type() === 'warning') warnings.push(m.text()); });
  // Both entries run before the first send: Dice Tools' tools are published, Slow Hooks'
  // hooks take part (its chat:opened handler says so).
  const slowHooks = page.waitForEvent('console', (m) => m.text() === 'Slow Hooks: running in this page');
  await openWithTools(page);
  await slowHooks;
  await send(page, 'roll a d6 for me');
  await page.getByText('Rolling a d6…').waitFor({ timeout: 20000 });
  const reply = page.locator('article.message.assistant').last();
  await reply.getByText('You rolled a 4. [checked by dice]').waitFor({ timeout: 30000 });
  const card = reply.locator('.mes.toolCall');
  assert.ok(await card.count() >= 1, 'the tool call is shown with SillyTavern classes');
  await shot(page, 'function-tools-roll');
  const reqs = requests();
  assert.ok(offered(reqs[0]).includes('roll_dice'), `roll_dice offered: ${offered(reqs[0])}`);
  assert.ok(!offered(reqs[0]).includes('secret_tool'), 'shouldRegister false keeps a tool out of the request');
  const result = toolText(reqs[1]);
  assert.match(result, /rolled\W+4/, result);
  assert.match(result, /supported\W+true/, "isToolCallingSupported() is true with tools on");
  assert.match(result, /quiet\W+false/, "quiet generations never call tools");
  const stored = await tavo.api('GET', `/api/chats/${chatId}/messages`);
  assert.match(JSON.stringify(stored), /You rolled a 4\. \[checked by dice\]/, 'generation:success rewrote the stored reply');
  assert.doesNotMatch(JSON.stringify(stored), /too slow/, 'a success handler that takes 6 s is rolled back at 5 s');
  assert.match(JSON.stringify(reqs[0].body.messages), /roll a d6 for me/, 'a throwing prepare handler changes nothing');
  // The misbehaving handlers did run, and were rolled back as the page says.
  assert.ok(warnings.some((w) => /test\.slow-hooks: a generation:prepare handler failed: .*prepare blew up/.test(w)), warnings.join('\n'));
  assert.ok(warnings.some((w) => w.includes('test.slow-hooks: a generation:success handler timed out')), warnings.join('\n'));
  assert.deepEqual(errors, []);
  await page.close();
});

test('a throwing action reaches the model as a tool error, and the reply goes on', async () => {
  const page = await browser.context.newPage();
  await openWithTools(page);
  await page.getByText('You rolled a 4. [checked by dice]').waitFor();
  // Every toast text shown while the reply runs (explode's formatMessage returns '').
  await page.evaluate(() => {
    const seen = /** @type {string[]} */ ([]);
    /** @type {any} */ (window).toastTexts = seen;
    new MutationObserver(() => {
      for (const el of document.querySelectorAll('.toast > span')) if (!seen.includes(el.textContent || '')) seen.push(el.textContent || '');
    }).observe(document.body, { childList: true, subtree: true, characterData: true });
  });
  await send(page, 'now throw it hard');
  await page.locator('article.message.assistant').last().getByText('The die exploded.').waitFor({ timeout: 30000 });
  const toasts = await page.evaluate(() => /** @type {any} */ (window).toastTexts);
  assert.ok(!toasts.some((/** @type {string} */ t) => !t.trim()), `an empty formatMessage shows no toast: ${JSON.stringify(toasts)}`);
  await until(async () => requests().length >= 4, 10000, 'the follow-up request');
  const result = toolText(requests()[3]);
  assert.match(result, /kaboom/, result);
  await shot(page, 'function-tools-error');
  await page.close();
});

test('isToolCallingSupported() follows Settings without a reload', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await openWithTools(page);
  await page.getByRole('button', { name: 'Chat settings' }).click();
  const report = page.getByRole('complementary', { name: 'Chat settings' }).getByRole('button', { name: 'Report tool calling' });
  // The page learns of the change from the library event and asks again: the entry reports what it
  // reads each time it is asked, until it reads the new answer.
  const said = async (/** @type {boolean} */ want, /** @type {string} */ what) => {
    await until(async () => {
      await report.click();
      return (await tavo.api('GET', `/api/chats/${chatId}/variables`)).chat.dice_tool_calling === want;
    }, 10000, what);
  };
  await said(true, 'tools on');
  await tavo.api('PUT', '/api/settings/tools.enabled', { value: false });
  try {
    await said(false, 'tools switched off in Settings, no reload');
  } finally {
    // The next tests need tools on, whatever happened here.
    await tavo.api('PUT', '/api/settings/tools.enabled', { value: true });
  }
  await said(true, 'and on again');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a page\'s tools belong to the chat it shows: a reply in another chat never sees or runs them', async () => {
  const elsewhere = await bubbleChat(tavo, ['Stranger'], 'Elsewhere');
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  // The page shows chat "Elsewhere", where the plugin's entry registered roll_dice.
  await openWithTools(page, elsewhere.chatId);
  const before = requests().length;
  // A reply in the dice chat, started at another door while no page shows it.
  await tavo.api('POST', `/api/chats/${chatId}/messages`, { content: 'roll it anyway' });
  await until(async () => JSON.stringify(await tavo.api('GET', `/api/chats/${chatId}/messages`)).includes('No dice in this chat.'), 30000, 'the reply stored');
  const reqs = requests().slice(before);
  assert.equal(reqs.length, 2);
  assert.ok(!offered(reqs[0]).includes('roll_dice'), `another chat's page tool is not offered: ${offered(reqs[0])}`);
  assert.match(toolText(reqs[1]), /does not show this chat/, toolText(reqs[1]));
  assert.equal(await page.getByText('Rolling a d6…').count(), 0, 'the page never ran it');
  assert.deepEqual(errors, []);
  await page.close();
});
