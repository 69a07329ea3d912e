// Function tools at the edges of seed 001, in real Chromium against a real `tavo serve` and
// the mock model (fixture plugin tests/e2e/fixtures/plugins/edge-tools): the entry's first
// isToolCallingSupported() is right even when the page's link opens late; a tool whose
// shouldRegister flips between replies is offered only while it says yes; a stealth call is
// not shown and starts no follow-up round; a tool that never answers fails after
// tools.pageCallTimeoutSeconds; a 10 MB answer reaches the model cut to the result budget;
// closing the page while its tool runs fails the call at once and the reply goes on; Stop and a
// provider failure reach the plugin as generation:cancelled (partial) and generation:error; a
// time-out above 115 s is the server's (the page's own timer no longer ends the call first).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startMock, startTavo, launchBrowser, shot, watchErrors } from '../lib/harness.js';
import { bubbleChat, vars, until } from '../lib/bubbles.js';
import { installFixturePlugin } from '../lib/tpg.js';

/** @type {Awaited<ReturnType<typeof startMock>>} */ let mock;
/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let browser;
/** @type {number} */ let chatId;

const call = (/** @type {string} */ name) => ({ toolCalls: [{ name, arguments: {} }] });

before(async () => {
  mock = await startMock({
    turns: [
      { text: 'Plain reply, no coin.' },
      call('flip_coin'),
      { text: 'It came up heads.' },
      { text: 'No coin this time.' },
      call('peek'),
      call('wait_forever'),
      { text: 'Gave up waiting.' },
      call('huge_answer'),
      { text: 'That was a lot.' },
      call('hold_on'),
      { text: 'The page went away.' },
      { text: 'This reply is long and slow, so the user has time to stop it before it ends.', delayMs: 250, chunk: 4 },
      { error: { status: 400, message: 'the provider refuses this request' } },
      call('flip_coin'),
      { text: 'Not flipped.' },
      call('flip_coin'),
      { text: 'Flipped it.' },
      { text: 'No coin any more.' },
      call('wait_forever'),
      { text: 'The plugin went away.' },
      call('wait_forever'),
      { text: 'Waited past the old cap.' },
    ],
  });
  tavo = await startTavo({ mock, settings: { 'tools.enabled': true, 'tools.dynamicLoading': false } });
  await installFixturePlugin(tavo, 'edge-tools');
  const chat = await bubbleChat(tavo, ['Dealer'], 'Edges');
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

/** The tool messages of a request. @param {any} req */
const toolText = (req) => JSON.stringify((req.body.messages || []).filter((/** @type {any} */ m) => m.role === 'tool'));

/** @param {import('playwright-core').Page} page @param {string} text */
async function send(page, text) {
  await page.getByRole('textbox', { name: 'Message' }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
}

/** Waits for the reply to end (Send is back). @param {import('playwright-core').Page} page */
const replyDone = (page) => page.getByRole('button', { name: 'Send' }).waitFor({ timeout: 30000 });

/** Opens the chat and waits until this page's entry ran (the mark an earlier page left is
 * dropped first: a send before the entry registered its tools would find none). @param {import('playwright-core').Page} page */
async function openChat(page) {
  await tavo.api('POST', `/api/ops/tavo_variable_unset?chat=${chatId}`, { name: 'edge_tools' });
  await page.goto(`${tavo.url}/chats/${chatId}`);
  await page.getByRole('textbox', { name: 'Message' }).waitFor();
  await until(async () => (await vars(tavo, chatId)).chat.edge_tools, 15000, 'the entry ran');
}

/** Switches the coin tool with the plugin's composer action. @param {import('playwright-core').Page} page @param {string} want the toast */
async function toggleCoin(page, want) {
  await page.locator('summary[aria-label="Plugin actions"]').click();
  await page.getByRole('menu', { name: 'Plugin actions' }).getByRole('menuitem', { name: 'Toggle coin tool' }).click();
  await page.locator('.toast', { hasText: want }).last().waitFor();
}

/**
 * The function tools the chat's side panel lists for Edge Tools (opened and closed again).
 * Opening the panel asks the entry for its tools again (shouldRegister may have flipped), so
 * the list is read once it is what `settled` expects, or as it is after the wait.
 * @param {import('playwright-core').Page} page @param {(items: string[]) => boolean} settled
 * @param {string} [shotName] a screenshot of the open panel
 */
async function panelTools(page, settled, shotName) {
  await page.getByRole('button', { name: 'Chat settings', exact: true }).click();
  const list = page.getByRole('complementary', { name: 'Chat settings' }).getByRole('list', { name: 'Function tools of Edge Tools' });
  await list.waitFor();
  const read = async () => (await list.getByRole('listitem').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
  const items = await until(async () => { const now = await read(); return settled(now) ? now : null; }, 10000, 'the panel listing the tools').catch(read);
  if (shotName) await shot(page, shotName);
  await page.getByRole('button', { name: 'Chat settings', exact: true }).click();
  return items;
}

test('isToolCallingSupported() is right at the entry\'s first line, even when the page link opens late', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  // The link (whose first event says whether tools are on) is held until the page has read
  // the entry's code, so the link opens after everything else the entry needs: the entry must
  // not start before the link's first event.
  /** @type {() => void} */
  let openLink = () => {};
  const linkHeld = new Promise((r) => { openLink = () => r(null); });
  await page.route('**/api/pages/events**', async (route) => {
    await linkHeld;
    await route.continue();
  });
  const entryRead = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/plugins/test.edge-tools/files/entry.js');
  await page.goto(`${tavo.url}/chats/${chatId}`);
  await (await entryRead).finished();
  assert.equal(await page.locator('iframe.plugin-entry-frame').count(), 0, 'the entry waits for the link');
  openLink();
  const seen = await until(async () => (await vars(tavo, chatId)).chat.edge_tools, 20000, 'the entry ran');
  assert.deepEqual(seen, { supportedAtStart: true, now: true });
  assert.deepEqual(errors, []);
  await page.close();
});

test('shouldRegister is asked before each generation: a tool switched on and off between replies', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await openChat(page);
  await send(page, 'just talk');
  await page.getByText('Plain reply, no coin.').waitFor({ timeout: 30000 });
  await replyDone(page);
  let reqs = requests();
  assert.equal(reqs.length, 1);
  assert.ok(offered(reqs[0]).includes('peek'), `the other tools are offered: ${offered(reqs[0])}`);
  assert.ok(!offered(reqs[0]).includes('flip_coin'), 'switched off: not offered');

  // The side panel lists the tools the model may call now, by display name.
  const offeredNow = ['peek peek stealth', 'wait_forever wait_forever', 'huge_answer huge_answer', 'hold_on hold_on'];
  assert.deepEqual(await panelTools(page, (items) => items.join('|') === offeredNow.join('|')), offeredNow);
  await toggleCoin(page, 'Coin tool on');
  assert.deepEqual((await panelTools(page, (items) => items[0] === 'Flip a coin flip_coin', 'function-tools-panel'))[0], 'Flip a coin flip_coin', 'listed once switched on');
  await send(page, 'flip a coin');
  await page.getByText('Flipping a coin…').waitFor({ timeout: 20000 });
  await page.getByText('It came up heads.').waitFor({ timeout: 30000 });
  await replyDone(page);
  reqs = requests();
  assert.equal(reqs.length, 3);
  assert.ok(offered(reqs[1]).includes('flip_coin'), `switched on: offered: ${offered(reqs[1])}`);
  assert.match(toolText(reqs[2]), /heads/);
  await shot(page, 'function-tools-coin');

  await toggleCoin(page, 'Coin tool off');
  await send(page, 'talk again');
  await page.getByText('No coin this time.').waitFor({ timeout: 30000 });
  await replyDone(page);
  reqs = requests();
  assert.equal(reqs.length, 4);
  assert.ok(!offered(reqs[3]).includes('flip_coin'), `switched off again: ${offered(reqs[3])}`);
  assert.ok(offered(reqs[3]).includes('peek'));
  assert.deepEqual(errors, []);
  await page.close();
});

test('a stealth call runs in the page, is not shown, and starts no follow-up round', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await openChat(page);
  await send(page, 'peek at the card');
  await page.getByText('Peeking…').waitFor({ timeout: 20000 });
  await replyDone(page);
  // A follow-up round would be part of the same reply: once the server has no live reply for
  // the chat, the requests it made are all in.
  await until(() => tavo.api('GET', `/api/chats/${chatId}/reply`).then(() => false, (e) => /: 404 /.test(String(e))), 20000, 'the reply over in the server');
  assert.equal(requests().length, 5, 'no request after the stealth call');
  assert.equal(await page.locator('.mes.toolCall', { hasText: 'peek' }).count(), 0, 'no tool card for a stealth call');
  const stored = JSON.stringify(await tavo.api('GET', `/api/chats/${chatId}/messages`));
  assert.doesNotMatch(stored, /queen of spades/, 'the stealth result is not in the visible history');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a tool that never answers fails after tools.pageCallTimeoutSeconds; the model is told', async () => {
  await tavo.api('PUT', '/api/settings/tools.pageCallTimeoutSeconds', { value: 2 });
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await openChat(page);
  await send(page, 'wait for it');
  await page.getByText('Waiting forever…').waitFor({ timeout: 20000 });
  const started = Date.now();
  await page.getByText('Gave up waiting.').waitFor({ timeout: 30000 });
  const took = Date.now() - started;
  await replyDone(page);
  const reqs = requests();
  assert.equal(reqs.length, 7);
  assert.match(toolText(reqs[6]), /wait_forever did not finish within 2s and was stopped/, toolText(reqs[6]));
  assert.ok(took >= 1000 && took < 20000, `gave up after ${took} ms (time-out 2 s)`);
  await tavo.api('PUT', '/api/settings/tools.pageCallTimeoutSeconds', { value: 120 });
  assert.deepEqual(errors, []);
  await page.close();
});

test('a 10 MB answer from the page reaches the model cut to the result budget', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await openChat(page);
  await send(page, 'say a lot');
  await page.getByText('Writing a lot…').waitFor({ timeout: 20000 });
  await page.getByText('That was a lot.').waitFor({ timeout: 60000 });
  await replyDone(page);
  const reqs = requests();
  assert.equal(reqs.length, 9);
  const result = toolText(reqs[8]);
  assert.ok(result.length < 80 * 1024, `${result.length} bytes reached the model`);
  assert.match(result, /xxxx/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('closing the page while its tool runs fails the call at once; the reply goes on in the server', async () => {
  const page = await browser.context.newPage();
  await openChat(page);
  await send(page, 'hold on');
  await page.getByText('Holding on…').waitFor({ timeout: 20000 });
  const closed = Date.now();
  await page.close();
  // The time-out is 120 s again: only the page going away can end the call this fast.
  await until(async () => requests().length >= 11, 20000, 'the follow-up request after the page closed');
  assert.ok(Date.now() - closed < 20000);
  assert.match(toolText(requests()[10]), /the page closed before it answered/, toolText(requests()[10]));
  await until(async () => JSON.stringify(await tavo.api('GET', `/api/chats/${chatId}/messages`)).includes('The page went away.'), 20000, 'the reply stored');
});

test('Stop reaches the plugin as generation:cancelled with partial; a provider failure as generation:error', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await openChat(page);
  await send(page, 'tell me a long story');
  await page.getByText('This reply is', { exact: false }).waitFor({ timeout: 20000 });
  await page.getByRole('button', { name: 'Stop' }).click();
  const cancelled = await until(async () => (await vars(tavo, chatId)).chat.edge_terminal, 20000, 'generation:cancelled');
  assert.deepEqual(cancelled, { type: 'generation:cancelled', partial: true, source: 'reply' });
  await replyDone(page);

  await send(page, 'and now fail');
  const failed = await until(async () => {
    const t = (await vars(tavo, chatId)).chat.edge_terminal;
    return t && t.type === 'generation:error' ? t : null;
  }, 20000, 'generation:error');
  assert.deepEqual(failed, { type: 'generation:error', code: 'generation_failed', message: 'string' });
  await replyDone(page);
  assert.deepEqual(errors.filter((e) => !/400|refuses|failed/i.test(e)), []);
  await page.close();
});

test('a page tool obeys the approval policy as a built-in one does: ask, Deny refuses without running it, Allow runs it', async () => {
  assert.deepEqual(await tavo.api('PUT', '/api/approvals/flip_coin', { approval: 'ask' }), { tool: 'flip_coin', approval: 'ask' });
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await openChat(page);
  await toggleCoin(page, 'Coin tool on');
  const before = requests().length;
  const dialog = page.getByRole('dialog');

  await send(page, 'flip, but I will say no');
  await dialog.getByRole('button', { name: 'Deny' }).waitFor({ timeout: 20000 });
  await shot(page, 'function-tools-ask');
  await dialog.getByRole('button', { name: 'Deny' }).click();
  await page.getByText('Not flipped.').waitFor({ timeout: 20000 });
  await replyDone(page);
  let reqs = requests().slice(before);
  assert.equal(reqs.length, 2);
  assert.match(toolText(reqs[1]), /the user declined this flip_coin call/, toolText(reqs[1]));
  assert.doesNotMatch(toolText(reqs[1]), /heads/, 'a denied page tool does not run');
  assert.equal(await page.locator('.toast', { hasText: 'Flipping a coin…' }).count(), 0, 'no toast: the action never ran');

  await send(page, 'flip, and I will allow it');
  await dialog.getByRole('button', { name: 'Allow' }).waitFor({ timeout: 20000 });
  await dialog.getByRole('button', { name: 'Allow' }).click();
  await page.getByText('Flipped it.').waitFor({ timeout: 20000 });
  await replyDone(page);
  reqs = requests().slice(before);
  assert.equal(reqs.length, 4);
  assert.match(toolText(reqs[3]), /heads/, 'allowed, the page ran it and the model got its result');
  assert.deepEqual(await tavo.api('DELETE', '/api/approvals/flip_coin'), { tools: {} });
  assert.deepEqual(errors, []);
  await page.close();
});

test('unregisterFunctionTool takes a tool out of the next request, switched on or not', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await openChat(page);
  await toggleCoin(page, 'Coin tool on');
  await page.locator('summary[aria-label="Plugin actions"]').click();
  await page.getByRole('menu', { name: 'Plugin actions' }).getByRole('menuitem', { name: 'Forget coin tool' }).click();
  await page.locator('.toast', { hasText: 'Coin tool forgotten' }).waitFor();
  const before = requests().length;
  await send(page, 'anything to flip?');
  await page.getByText('No coin any more.').waitFor({ timeout: 20000 });
  await replyDone(page);
  const reqs = requests().slice(before);
  assert.equal(reqs.length, 1);
  assert.ok(!offered(reqs[0]).includes('flip_coin'), `unregistered: ${offered(reqs[0])}`);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a tool whose plugin frame goes away mid-call fails at once, with the reason', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await openChat(page);
  const before = requests().length;
  await send(page, 'wait for it');
  await page.locator('.tool-card.running').waitFor({ timeout: 20000 });
  const started = Date.now();
  await tavo.api('PUT', '/api/plugins/test.edge-tools/enabled', { enabled: false });
  await page.getByText('The plugin went away.').waitFor({ timeout: 20000 });
  assert.ok(Date.now() - started < 15000, 'not the 120 s page-call time-out');
  const reqs = requests().slice(before);
  assert.match(toolText(reqs[1]), /wait_forever stopped: the plugin test\.edge-tools that ran it went away/, toolText(reqs[1]));
  await tavo.api('PUT', '/api/plugins/test.edge-tools/enabled', { enabled: true });
  assert.deepEqual(errors.filter((e) => !/went away/.test(e)), []);
  await page.close();
});

test('tools.pageCallTimeoutSeconds above 115 s is honoured: the page does not give up first', async () => {
  await tavo.api('PUT', '/api/settings/tools.pageCallTimeoutSeconds', { value: 300 });
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  // The page's timers run on a clock the test moves: 130 s pass in the page at once.
  await page.clock.install();
  await openChat(page);
  const before = requests().length;
  await send(page, 'wait for it, a long time');
  await page.locator('.tool-card.running').waitFor({ timeout: 20000 });
  await page.clock.runFor(130_000);
  // A page timer of its own (115 s before) would have answered the call with an error now,
  // and the server would have asked the model again.
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(requests().length, before + 1, 'the call still runs after 130 s of page time');
  assert.equal(await page.locator('.tool-card.running').count(), 1);
  // End it: the plugin goes away, the call fails at once with that reason (not a time-out).
  await tavo.api('PUT', '/api/plugins/test.edge-tools/enabled', { enabled: false });
  await until(async () => requests().length >= before + 2, 20000, 'the follow-up request');
  const result = toolText(requests()[before + 1]);
  assert.match(result, /went away/, result);
  assert.doesNotMatch(result, /did not answer in/, result);
  await tavo.api('PUT', '/api/plugins/test.edge-tools/enabled', { enabled: true });
  await tavo.api('PUT', '/api/settings/tools.pageCallTimeoutSeconds', { value: 120 });
  assert.deepEqual(errors.filter((e) => !/went away/.test(e)), []);
  await page.close();
});
